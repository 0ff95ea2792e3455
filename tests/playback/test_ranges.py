"""Byte-range serving: header parsing and a real Litestar app on a real uvicorn socket."""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path

import anyio
import httpx
import pytest
import uvicorn
from litestar import Litestar, route
from litestar.params import FromPath
from litestar.types import Scope

from server.http.protocol import BoundedHttpToolsProtocol
from server.playback.range_response import RangeFileResponse
from server.playback.ranges import (
    ByteRange,
    RangeNotSatisfiableError,
    media_type_for,
    parse_range_header,
    plan_file_reply,
    send_file_range,
)

SMALL_SIZE = 10_000
BIG_SIZE = 20 * 1024 * 1024


# --- pure parsing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-99", ByteRange(0, 99)),
        ("bytes=100-", ByteRange(100, 999)),
        ("bytes=-500", ByteRange(500, 999)),
        ("bytes=-5000", ByteRange(0, 999)),
        ("bytes=990-5000", ByteRange(990, 999)),
        ("BYTES = 5-9", ByteRange(5, 9)),
        ("bytes=0-0, 5-9", ByteRange(0, 0)),
        ("bytes=2000-3000, 5-9", ByteRange(5, 9)),
    ],
)
def test_parse_range_satisfiable(header: str, expected: ByteRange) -> None:
    assert parse_range_header(header, 1000) == expected


@pytest.mark.parametrize(
    "header",
    [None, "", "bytes", "bytes=", "items=0-5", "bytes=abc", "bytes=5-2", "bytes=-", "bytes=1-2-3", "bytes=+1-5"],
)
def test_parse_range_malformed_means_whole_file(header: str | None) -> None:
    assert parse_range_header(header, 1000) is None


@pytest.mark.parametrize("header", ["bytes=1000-", "bytes=5000-6000", "bytes=-0", "bytes=1000-1001, 2000-"])
def test_parse_range_unsatisfiable(header: str) -> None:
    with pytest.raises(RangeNotSatisfiableError):
        parse_range_header(header, 1000)


def test_media_types_follow_container() -> None:
    assert media_type_for("a/film.mkv") == "video/x-matroska"
    assert media_type_for("a/film.bin", container="mov,mp4,m4a,3gp") == "video/quicktime"
    assert media_type_for("song.FLAC") == "audio/flac"
    assert media_type_for("x.unknownext") == "application/octet-stream"


def test_plan_conditionals() -> None:
    common = {"size": 1000, "mtime_ns": 1_700_000_000_000_000_000, "media_type": "video/mp4"}
    full = plan_file_reply(method="GET", request_headers={}, **common)
    etag = dict(full.headers)["etag"]
    assert plan_file_reply(method="GET", request_headers={"if-none-match": etag}, **common).status == 304
    assert plan_file_reply(method="GET", request_headers={"if-none-match": f"W/{etag}"}, **common).status == 304
    assert plan_file_reply(method="GET", request_headers={"if-match": '"other"'}, **common).status == 412
    since = formatdate(1_700_000_000, usegmt=True)
    assert plan_file_reply(method="GET", request_headers={"if-modified-since": since}, **common).status == 304
    ranged = {"range": "bytes=0-9", "if-range": since}
    assert plan_file_reply(method="GET", request_headers=ranged, **common).status == 206
    weak = {"range": "bytes=0-9", "if-range": f"W/{etag}"}
    assert plan_file_reply(method="GET", request_headers=weak, **common).status == 200


# --- send_file_range without a server ---------------------------------------------------------


def test_send_file_range_stops_when_client_disconnects(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(8 * 1024 * 1024))
    messages: list[dict[str, object]] = []
    gone = anyio.Event()

    async def send(message: dict[str, object]) -> None:
        messages.append(message)
        if len(messages) == 2:
            gone.set()
        await anyio.sleep(0.01)

    async def receive() -> dict[str, object]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def main() -> int:
        return await send_file_range(send, path, path.stat().st_size, 0, path.stat().st_size - 1,
                                     chunk_size=1024 * 1024, receive=receive)

    sent = anyio.run(main)
    assert 0 < sent < 8 * 1024 * 1024
    assert len(messages) < 8
    assert all(m["more_body"] for m in messages)


def test_send_file_range_rejects_out_of_file_ranges(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"x" * 10)

    async def send(message: dict[str, object]) -> None:
        raise AssertionError("nothing should be sent")

    with pytest.raises(ValueError):
        anyio.run(send_file_range, send, path, 10, 5, 10)


# --- a real server ----------------------------------------------------------------------------


class _Served:
    def __init__(self, base_url: str, small: Path, big: Path, server: str) -> None:
        self.server = server
        self.base_url = base_url
        self.small = small
        self.big = big


@pytest.fixture(scope="module", params=["uvicorn", "reelroom"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Served]:
    """The same app on uvicorn's own httptools protocol (bodies read in a thread, chunk by chunk)
    and on Reelroom's (server/http/protocol.py: zero-copy ``os.sendfile`` where available)."""
    root = tmp_path_factory.mktemp("files")
    small = root / "clip.mp4"
    small.write_bytes(os.urandom(SMALL_SIZE))
    big = root / "movie.mkv"
    with big.open("wb") as fh:
        for _ in range(BIG_SIZE // (1024 * 1024)):
            fh.write(os.urandom(1024 * 1024))

    @route("/files/{name:str}", http_method=["GET", "HEAD"])
    async def serve_file(name: FromPath[str]) -> RangeFileResponse:
        return RangeFileResponse(root / name, headers={"cache-control": "no-cache"})

    @route("/extensions", http_method=["GET"])
    async def extensions(scope: Scope) -> list[str]:
        return sorted(scope.get("extensions") or {})

    app = Litestar(route_handlers=[serve_file, extensions])
    http = BoundedHttpToolsProtocol if request.param == "reelroom" else "httptools"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    loop = "asyncio" if request.param == "reelroom" else "auto"  # the server runs on asyncio.run
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", http=http, loop=loop))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield _Served(f"http://127.0.0.1:{port}", small, big, request.param)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture()
def client(served: _Served) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.base_url, trust_env=False, timeout=30) as c:
        yield c


def test_full_file(served: _Served, client: httpx.Client) -> None:
    reply = client.get("/files/clip.mp4")
    assert reply.status_code == 200
    assert reply.content == served.small.read_bytes()
    assert reply.headers["content-length"] == str(SMALL_SIZE)
    assert reply.headers["accept-ranges"] == "bytes"
    assert reply.headers["content-type"] == "video/mp4"
    assert reply.headers["cache-control"] == "no-cache"
    assert reply.headers["etag"].startswith('"')
    assert reply.headers["last-modified"].endswith("GMT")


@pytest.mark.parametrize(
    ("range_header", "start", "end"),
    [
        ("bytes=0-99", 0, 99),
        ("bytes=4000-4999", 4000, 4999),
        ("bytes=9000-", 9000, SMALL_SIZE - 1),
        ("bytes=-500", SMALL_SIZE - 500, SMALL_SIZE - 1),
        ("bytes=9990-20000", 9990, SMALL_SIZE - 1),
    ],
)
def test_ranges_are_byte_exact(
    served: _Served, client: httpx.Client, range_header: str, start: int, end: int
) -> None:
    reply = client.get("/files/clip.mp4", headers={"Range": range_header})
    assert reply.status_code == 206
    assert reply.content == served.small.read_bytes()[start : end + 1]
    assert reply.headers["content-range"] == f"bytes {start}-{end}/{SMALL_SIZE}"
    assert reply.headers["content-length"] == str(end - start + 1)


def test_range_past_end_is_416(client: httpx.Client) -> None:
    reply = client.get("/files/clip.mp4", headers={"Range": f"bytes={SMALL_SIZE}-"})
    assert reply.status_code == 416
    assert reply.headers["content-range"] == f"bytes */{SMALL_SIZE}"
    assert reply.content == b""


def test_malformed_range_gets_whole_file(served: _Served, client: httpx.Client) -> None:
    reply = client.get("/files/clip.mp4", headers={"Range": "bytes=9-2"})
    assert reply.status_code == 200
    assert reply.content == served.small.read_bytes()


def test_head_sends_headers_only(client: httpx.Client) -> None:
    reply = client.head("/files/clip.mp4")
    assert reply.status_code == 200
    assert reply.headers["content-length"] == str(SMALL_SIZE)
    assert reply.headers["accept-ranges"] == "bytes"
    assert reply.content == b""
    ranged = client.head("/files/clip.mp4", headers={"Range": "bytes=0-99"})
    assert ranged.status_code == 206
    assert ranged.headers["content-length"] == "100"
    assert ranged.content == b""


def test_if_range(served: _Served, client: httpx.Client) -> None:
    etag = client.head("/files/clip.mp4").headers["etag"]
    stale = client.get("/files/clip.mp4", headers={"Range": "bytes=0-99", "If-Range": '"stale-tag"'})
    assert stale.status_code == 200
    assert stale.content == served.small.read_bytes()
    fresh = client.get("/files/clip.mp4", headers={"Range": "bytes=0-99", "If-Range": etag})
    assert fresh.status_code == 206
    assert fresh.content == served.small.read_bytes()[:100]


def test_if_none_match_gives_304(client: httpx.Client) -> None:
    etag = client.head("/files/clip.mp4").headers["etag"]
    reply = client.get("/files/clip.mp4", headers={"If-None-Match": etag})
    assert reply.status_code == 304
    assert reply.content == b""


def test_missing_file_is_404(client: httpx.Client) -> None:
    assert client.get("/files/nope.mp4").status_code == 404


def test_twenty_megabytes_stream_intact(served: _Served, client: httpx.Client) -> None:
    digest = hashlib.sha256()
    received = 0
    with client.stream("GET", "/files/movie.mkv") as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"] == "video/x-matroska"
        assert reply.headers["content-length"] == str(BIG_SIZE)
        for chunk in reply.iter_bytes():
            digest.update(chunk)
            received += len(chunk)
    assert received == BIG_SIZE
    assert digest.hexdigest() == hashlib.sha256(served.big.read_bytes()).hexdigest()


def test_client_hanging_up_mid_stream_leaves_server_healthy(served: _Served, client: httpx.Client) -> None:
    host, port = served.base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(b"GET /files/movie.mkv HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = raw.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
    reply = client.get("/files/movie.mkv", headers={"Range": "bytes=-10"})
    assert reply.status_code == 206
    assert reply.content == served.big.read_bytes()[-10:]


def test_zero_copy_is_offered_on_reelroom_protocol_only(served: _Served, client: httpx.Client) -> None:
    offered = client.get("/extensions").json()
    assert ("http.response.zerocopysend" in offered) == (served.server == "reelroom" and hasattr(os, "sendfile"))


def test_keep_alive_after_ranges_on_one_connection(served: _Served) -> None:
    """Several range replies, a HEAD and a whole file one after another on one connection: each
    body is exactly its Content-Length, so the next reply starts where it should."""
    data = served.big.read_bytes()
    host, port = served.base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        reader = raw.makefile("rb")
        for method, first, last in (("GET", 0, 99), ("GET", 5_000_000, 9_999_999), ("HEAD", 0, 9),
                                    ("GET", len(data) - 3 * 1024 * 1024, len(data) - 1), ("GET", 7, 7)):
            raw.sendall(f"{method} /files/movie.mkv HTTP/1.1\r\nHost: x\r\nRange: bytes={first}-{last}\r\n\r\n"
                        .encode())
            status = reader.readline()
            assert status.startswith(b"HTTP/1.1 206"), status
            length = None
            while (line := reader.readline()) != b"\r\n":
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length == last - first + 1
            if method == "GET":
                assert reader.read(length) == data[first:last + 1]
