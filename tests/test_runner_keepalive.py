"""An idle keep-alive connection stays open as long as Kestrel keeps it (130 s), not uvicorn's
5 s: clients reuse connections after a pause, and a request sent as the server closes is reset."""

from __future__ import annotations

import gc
import socket
import time
from pathlib import Path

from server.runner import KEEP_ALIVE_SECONDS
from tests.conftest import start_server, stop_server

REQUEST = b"GET /System/Ping HTTP/1.1\r\nHost: localhost\r\n\r\n"


def read_response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def test_idle_connection_outlives_five_seconds(tmp_path: Path) -> None:
    assert KEEP_ALIVE_SECONDS >= 130
    live = start_server(tmp_path / "data")
    try:
        assert gc.get_freeze_count() > 0  # the server's start-up heap is kept out of the collector's walks
        port = int(live.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(REQUEST)
            assert read_response(sock).startswith(b"HTTP/1.1 200")
            time.sleep(6.5)  # past uvicorn's default of 5 s
            sock.sendall(REQUEST)
            assert read_response(sock).startswith(b"HTTP/1.1 200")
    finally:
        stop_server(live)
