"""server/http/protocol.py's response sender on uvicorn's real RequestResponseCycle with a
transport that records its writes: the head of a reply of known length goes out with the first
body message in one write; a close asked for by the cycle comes after that write; a streamed
(chunked) reply's head goes out at once; zero-copy messages keep the order."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from server.http.protocol import ZERO_COPY, response_sender


class RecordingTransport:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.events.append(bytes(data))

    def close(self) -> None:
        self.events.append("close")
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _cycle(transport: RecordingTransport, *, keep_alive: bool = True, method: str = "GET") -> RequestResponseCycle:
    scope = {"type": "http", "method": method, "path": "/", "http_version": "1.1", "headers": [],
             "query_string": b"", "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2), "scheme": "http"}
    return RequestResponseCycle(
        scope=scope, transport=transport, flow=FlowControl(transport), logger=logging.getLogger("t"),  # type: ignore[arg-type]
        access_logger=logging.getLogger("t"), access_log=False, default_headers=[],
        message_event=asyncio.Event(), expect_100_continue=False, keep_alive=keep_alive, on_response=lambda: None)


def _start(length: int | None) -> dict:
    headers = [(b"content-type", b"text/plain")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return {"type": "http.response.start", "status": 200, "headers": headers}


def test_head_and_body_in_one_write() -> None:
    transport = RecordingTransport()
    cycle = _cycle(transport)
    send = response_sender(cycle, zero_copy=False)

    async def run() -> None:
        await send(_start(5))
        assert transport.events == []  # held until the body
        await send({"type": "http.response.body", "body": b"hello", "more_body": False})

    asyncio.run(run())
    assert len(transport.events) == 1
    head, _, body = transport.events[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"content-length: 5" in head and body == b"hello"
    assert cycle.response_complete


def test_close_comes_after_the_write() -> None:
    transport = RecordingTransport()
    cycle = _cycle(transport, keep_alive=False)
    send = response_sender(cycle, zero_copy=False)

    async def run() -> None:
        await send(_start(2))
        await send({"type": "http.response.body", "body": b"ok", "more_body": False})

    asyncio.run(run())
    assert len(transport.events) == 2 and transport.events[1] == "close"
    assert transport.events[0].endswith(b"\r\n\r\nok") and b"connection: close" in transport.events[0]


def test_streamed_reply_sends_its_head_at_once_and_keeps_order() -> None:
    transport = RecordingTransport()
    cycle = _cycle(transport)
    send = response_sender(cycle, zero_copy=False)

    async def run_checking_head() -> None:
        await send(_start(None))  # chunked: a stream whose first bytes may take a while (ffmpeg, a tuner)
        assert len(transport.events) == 1 and transport.events[0].endswith(b"\r\n\r\n")  # the head is out
        await send({"type": "http.response.body", "body": b"a", "more_body": True})
        await send({"type": "http.response.body", "body": b"bc", "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    asyncio.run(run_checking_head())
    wire = b"".join(e for e in transport.events if isinstance(e, bytes))
    assert wire.endswith(b"\r\n\r\n1\r\na\r\n2\r\nbc\r\n0\r\n\r\n")


def test_zero_copy_message_after_a_held_head_sends_the_head_first(tmp_path: Path) -> None:
    """On a transport without sendfile support the message fails as a send would (the client
    is treated as gone and the connection closed) -- but the head was written before."""
    path = tmp_path / "f.bin"
    path.write_bytes(os.urandom(100))
    transport = RecordingTransport()
    cycle = _cycle(transport)
    send = response_sender(cycle, zero_copy=True)

    async def run() -> None:
        await send(_start(100))
        with path.open("rb") as handle:
            await send({"type": ZERO_COPY, "file": handle, "offset": 0, "count": 100, "more_body": False})

    asyncio.run(run())
    assert transport.events[0].startswith(b"HTTP/1.1 200") and transport.events[0].endswith(b"\r\n\r\n")
    assert transport.events[-1] == "close"


def test_head_request_and_empty_body() -> None:
    transport = RecordingTransport()
    cycle = _cycle(transport, method="HEAD")
    send = response_sender(cycle, zero_copy=False)

    async def run() -> None:
        await send(_start(10))
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    asyncio.run(run())
    assert len(transport.events) == 1 and transport.events[0].endswith(b"\r\n\r\n")
    assert cycle.response_complete


def test_failure_between_head_and_body_gives_a_clean_500() -> None:
    """The app fails after its head: uvicorn sends a 500, which replaces the held head (never
    written), so the client gets one whole reply instead of a head without its body."""
    transport = RecordingTransport()
    cycle = _cycle(transport)
    cycle.send = response_sender(cycle, zero_copy=False)  # type: ignore[assignment]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send(_start(5))
        raise RuntimeError("boom")

    logging.getLogger("t").disabled = True
    asyncio.run(cycle.run_asgi(app))
    wire = b"".join(e for e in transport.events if isinstance(e, bytes))
    assert wire.startswith(b"HTTP/1.1 500") and wire.endswith(b"Internal Server Error")
    assert wire.count(b"HTTP/1.1") == 1


def test_a_long_body_goes_out_whole_with_writev_on_a_real_socket(monkeypatch) -> None:
    """On asyncio's own socket transport a long body goes out with its head in one writev, not
    joined first; what the socket does not take at once follows through the transport's buffer
    (a client reading slowly), so the client gets the head and every byte of the body in order."""
    import random
    import socket

    body = random.Random(1).randbytes(3 * 1024 * 1024 + 17)  # more than the socket buffers take at once
    writes: list[int] = []
    real_writev = os.writev

    def writev(fd: int, parts: list[bytes]) -> int:
        assert [len(p) for p in parts][1] == len(body)  # head and body as they are, not joined
        writes.append(sent := real_writev(fd, parts))
        return sent

    monkeypatch.setattr(os, "writev", writev)

    async def run() -> bytes:
        loop = asyncio.get_running_loop()
        server_sock, client_sock = socket.socketpair()
        client_sock.setblocking(False)
        transport, _protocol = await loop.connect_accepted_socket(asyncio.Protocol, server_sock)
        cycle = _cycle(transport)  # type: ignore[arg-type]
        send = response_sender(cycle, zero_copy=True)
        await send(_start(len(body)))
        await send({"type": "http.response.body", "body": body, "more_body": False})
        assert transport.get_write_buffer_size() > 0  # the rest waits in the transport's buffer
        received = bytearray()
        head_len = None
        while head_len is None or len(received) < head_len + len(body):
            await asyncio.sleep(0.001)
            try:
                received += client_sock.recv(65536)
            except BlockingIOError:
                continue
            if head_len is None and b"\r\n\r\n" in received:
                head_len = received.index(b"\r\n\r\n") + 4
        transport.close()
        client_sock.close()
        return bytes(received)

    wire = asyncio.run(run())
    assert len(writes) == 1 and 0 < writes[0] < len(body)
    head, _, got = wire.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and f"content-length: {len(body)}".encode() in head
    assert got == body
