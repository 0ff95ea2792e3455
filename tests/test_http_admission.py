"""Admission (server/http/admission.py) on a real uvicorn server with Reelroom's HTTP protocol:
browsing requests past the limit wait in line and go first come first served; playback and
anything that is not a GET or HEAD never waits; a slot is given back when a response starts; a
request whose client left while it waited is not run; a lone client never waits."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from server.http.admission import Admission
from server.http.protocol import BoundedHttpToolsProtocol


class App:
    """``/slow/<name>`` waits until ``POST /release/<name>``; ``?stream=1`` starts its reply first
    and waits before the body. ``GET /Videos/entered`` tells who entered the app, in order."""

    def __init__(self, limit: int, hold: float) -> None:
        self.admission = Admission(limit, hold_seconds=hold)
        self.entered: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}

    def gate(self, name: str) -> asyncio.Event:
        return self.gates.setdefault(name, asyncio.Event())

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return
        path: str = scope["path"]
        name = path.rsplit("/", 1)[-1]
        body = b"ok"
        if path.startswith("/release/"):
            self.gate(name).set()
        elif path == "/Videos/entered":
            body = json.dumps(self.entered).encode()
        else:
            self.entered.append(name)
        headers = [(b"content-type", b"text/plain")]
        if path.startswith("/slow/") and b"stream=1" in scope["query_string"]:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await self.gate(name).wait()
            await send({"type": "http.response.body", "body": body})
            return
        if path.startswith("/slow/"):
            await self.gate(name).wait()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class Served:
    def __init__(self, app: App, url: str, loop: asyncio.AbstractEventLoop) -> None:
        self.app, self.url, self.loop = app, url, loop

    def entered(self) -> list[str]:
        return httpx.get(self.url + "/Videos/entered", timeout=5).json()

    def wait_for(self, names: list[str]) -> None:
        deadline = time.monotonic() + 10
        while self.entered() != names:
            assert time.monotonic() < deadline, (self.entered(), names)
            time.sleep(0.02)

    def waiting(self) -> int:
        return self.app.admission.waiting


def serve(limit: int, hold: float = 60.0) -> Iterator[Served]:
    app = App(limit, hold)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", http=BoundedHttpToolsProtocol,
                                           loop="asyncio"))
    loops: list[asyncio.AbstractEventLoop] = []

    def run() -> None:
        async def main() -> None:
            loops.append(asyncio.get_running_loop())
            await server.serve(sockets=[sock])
        asyncio.run(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield Served(app, f"http://127.0.0.1:{port}", loops[0])
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture()
def one() -> Iterator[Served]:
    yield from serve(1)


def _background(url: str, method: str = "GET") -> tuple[threading.Thread, list[int]]:
    out: list[int] = []

    def go() -> None:
        out.append(httpx.request(method, url, timeout=20).status_code)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread, out


def _release(s: Served, name: str) -> None:
    assert httpx.post(f"{s.url}/release/{name}", timeout=5).status_code == 200


def test_browsing_past_the_limit_waits_and_goes_first_come_first_served(one: Served) -> None:
    first, _ = _background(one.url + "/slow/a")
    one.wait_for(["a"])
    later = []
    for name in ("b", "c", "d"):
        later.append(_background(f"{one.url}/slow/{name}"))
        deadline = time.monotonic() + 10
        while one.waiting() < len(later):  # each in line before the next is sent
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert one.entered() == ["a"]
    for name, seen in (("a", ["a", "b"]), ("b", ["a", "b", "c"]), ("c", ["a", "b", "c", "d"])):
        _release(one, name)
        one.wait_for(seen)
    _release(one, "d")
    for thread in [first, *(t for t, _ in later)]:
        thread.join(20)
    assert all(o == [200] for _, o in later)
    assert one.app.admission.inflight == 0 and one.app.admission.stats.waited == 3


def test_playback_and_writes_never_wait_behind_browsing(one: Served) -> None:
    _background(one.url + "/slow/a")
    one.wait_for(["a"])
    queued, out = _background(one.url + "/Items")
    deadline = time.monotonic() + 10
    while one.waiting() < 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with httpx.Client(base_url=one.url, timeout=5) as client:
        for method, path in [("GET", "/Videos/v1/stream"), ("GET", "/emby/Audio/a1/universal"),
                             ("GET", "/videos/v1/main.m3u8"), ("POST", "/Sessions/Playing/Progress"),
                             ("GET", "/Items/i1/Download"), ("POST", "/Users/AuthenticateByName"),
                             ("HEAD", "/LiveTv/LiveStreamFiles/x/stream.ts")]:
            assert client.request(method, path).status_code == 200, path
    assert one.entered() == ["a", "stream", "universal", "main.m3u8", "Progress", "Download",
                             "AuthenticateByName", "stream.ts"]
    assert out == []  # the browsing request still waits
    _release(one, "a")
    queued.join(10)
    assert out == [200] and one.entered()[-1] == "Items"


def test_a_slot_is_given_back_when_the_response_starts(one: Served) -> None:
    """A reply that has started (a long or streamed body) holds no slot while its body goes out."""
    streamed, out = _background(one.url + "/slow/s?stream=1")
    one.wait_for(["s"])
    with httpx.Client(base_url=one.url, timeout=5) as client:
        assert client.get("/UserViews").status_code == 200  # not held back by the started reply
    _release(one, "s")
    streamed.join(10)
    assert out == [200]


def test_a_request_whose_client_left_while_waiting_is_not_run(one: Served) -> None:
    _background(one.url + "/slow/a")
    one.wait_for(["a"])
    host, port = one.url.rsplit("/", 1)[1].split(":")
    with socket.create_connection((host, int(port))) as raw:
        raw.sendall(b"GET /gone HTTP/1.1\r\nHost: x\r\n\r\n")
        deadline = time.monotonic() + 10
        while one.waiting() < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    time.sleep(0.2)  # the server sees the connection close
    _release(one, "a")
    with httpx.Client(base_url=one.url, timeout=5) as client:
        assert client.get("/after").status_code == 200
    assert one.entered() == ["a", "after"]
    assert one.app.admission.inflight == 0


def test_no_admission_when_turned_off() -> None:
    served = serve(0)
    s = next(served)
    try:
        _background(s.url + "/slow/a")
        s.wait_for(["a"])
        with httpx.Client(base_url=s.url, timeout=5) as client:
            assert client.get("/Items").status_code == 200
        assert s.app.admission.stats.admitted == 0
        _release(s, "a")
    finally:
        next(served, None)


def test_a_request_slow_to_answer_runs_on_without_its_slot() -> None:
    """A GET still without a response after ``hold_seconds`` (a remote lookup, a sleeping disk)
    no longer holds browsing back."""
    served = serve(1, hold=0.3)
    s = next(served)
    try:
        _background(s.url + "/slow/a")
        s.wait_for(["a"])
        with httpx.Client(base_url=s.url, timeout=10) as client:
            assert client.get("/Items").status_code == 200  # in after a's 0.3 s, a still running
        assert s.entered() == ["a", "Items"] and s.app.admission.stats.overdue == 1
        _release(s, "a")  # its late answer gives back no slot it no longer holds
        with httpx.Client(base_url=s.url, timeout=10) as client:
            assert client.get("/Items/x").status_code == 200
        assert s.app.admission.inflight == 0 and s.app.admission.stats.waited == 1
    finally:
        next(served, None)
