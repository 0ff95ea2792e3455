"""server/http/protocol.py on uvicorn's real protocol and cycle, with a transport that records its
writes and its pauses: a request that arrives while the last reply is still going out (what a
reader process's hand-off makes of most Items pages) waits in uvicorn's pipeline without pausing
the socket's reading; a second one pauses it as uvicorn always did; the replies go out in order."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.server import ServerState

from server.http.protocol import BoundedHttpToolsProtocol

REQUEST = b"GET /page?n=%d HTTP/1.1\r\nHost: localhost\r\n\r\n"


class Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.pauses = 0
        self.resumes = 0
        self.closing = False

    def write(self, data: bytes) -> None:
        self.written.append(bytes(data))

    def close(self) -> None:
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def pause_reading(self) -> None:
        self.pauses += 1

    def resume_reading(self) -> None:
        self.resumes += 1

    def get_write_buffer_size(self) -> int:
        return 0


def test_one_request_waits_without_pausing_the_reading_a_second_pauses_it() -> None:
    async def main() -> None:
        gate = asyncio.Event()
        asked: list[bytes] = []

        async def app(scope: Any, receive: Any, send: Any) -> None:
            asked.append(scope["query_string"])
            await gate.wait()  # the reply is not done until the test says so
            body = scope["query_string"]
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        config = uvicorn.Config(app, lifespan="off", log_level="warning", http=BoundedHttpToolsProtocol)
        config.load()
        protocol = BoundedHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
        transport = Transport()
        protocol.connection_made(transport)  # type: ignore[arg-type]
        protocol.data_received(REQUEST % 1)
        await asyncio.sleep(0)
        assert asked == [b"n=1"]
        protocol.data_received(REQUEST % 2)  # arrives while the first reply is not done
        assert transport.pauses == 0 and not protocol.flow.read_paused
        assert len(protocol.pipeline) == 1
        protocol.data_received(REQUEST % 3)  # a second one waiting: reading paused, as uvicorn does
        assert transport.pauses == 1 and protocol.flow.read_paused
        gate.set()
        for _ in range(50):
            await asyncio.sleep(0)
            if len(asked) == 3 and not protocol.pipeline and protocol.cycle.response_complete:
                break
        assert asked == [b"n=1", b"n=2", b"n=3"]
        bodies = [chunk.rpartition(b"\r\n\r\n")[2] for chunk in transport.written]
        assert bodies == [b"n=1", b"n=2", b"n=3"]  # in order, each after its own head
        assert transport.resumes == 1 and not protocol.flow.read_paused
        protocol.connection_lost(None)

    asyncio.run(main())
