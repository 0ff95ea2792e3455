"""The hand-off of a client's connection to a reader process (server/http/handoff.py): on a real
server with a reader process, a page a reader writes to the client's socket itself is byte for byte
the reply the owner relays (the switch off: Windows' path) and the one the owner builds itself, on
keep-alive connections and pipelined; a client that leaves mid-reply, one that stops reading, a
reader killed while it holds the socket, and the whole-reply cache all behave."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from server.readers import protocol
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan, wait_for_artwork
from tests.raw_http import RawConnection
from tests.readers.test_reader_pool import FIELDS, alive, reader_running, wait_until

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc"),
    pytest.mark.skipif(not protocol.FD_PASSING, reason="no socket passing on this OS (the relay is tested below)"),
]

CAMEL = 'application/json; profile="CamelCase"'


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, library_source: Path) -> Iterator[LiveServer]:
    """A server whose Items pages go to a reader process whenever one runs, reply cache off."""
    root = tmp_path_factory.mktemp("handoff")
    media = root / "media"
    shutil.copytree(library_source, media)
    live = start_server(root / "data", readers=1, readers_busy=0, reply_cache_mib=0)
    complete_wizard(live)
    for kind, ctype in (("movies", "movies"), ("shows", "tvshows"), ("music", "music")):
        add_library_and_scan(live, kind.title(), ctype, [media / kind])
    wait_for_artwork(live)  # (it changes items' images: replies compared over time would differ)
    yield live
    pids = live.ctx.readers.pids()
    stop_server(live)
    assert not [pid for pid in pids if alive(pid)], "a reader process outlived its server"


@pytest.fixture(params=["handoff", "relay"])
def mode(request: pytest.FixtureRequest, live: LiveServer) -> Iterator[str]:
    """Each test runs with the hand-off on, and with it off (the relay: what Windows does)."""
    pool = live.ctx.readers
    settings = pool.settings
    pool.settings = dataclasses.replace(settings, handoff=request.param == "handoff")
    try:
        yield request.param
    finally:
        pool.settings = settings


# -- raw HTTP/1.1 -------------------------------------------------------------------------------

def page_request(live: LiveServer, start: int = 0, camel: bool = False, extra: str = "",
                 close: bool = False) -> bytes:
    query = urlencode({"recursive": "true", "fields": FIELDS, "startIndex": start, "limit": 50,
                       "sortBy": "SortName", "enableUserData": "true"})
    lines = [f"GET /Items?{query}{extra} HTTP/1.1", "Host: 127.0.0.1",
             f'Authorization: MediaBrowser Client="t", Device="d", DeviceId="handoff", Version="1", '
             f'Token="{live.admin_token}"', "Origin: http://example.test"]
    if camel:
        lines.append(f"Accept: {CAMEL}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class Conn(RawConnection):
    def reply(self) -> tuple[bytes, bytes]:
        """(head without its Date line, body)."""
        head, body = self.raw_reply()
        return re.sub(rb"\r\ndate: [^\r]*", b"", head), body


def settled(live: LiveServer, quiet: float = 0.0) -> None:
    """No page in flight (and, with ``quiet``, none began for that many seconds: requests of
    clients that left may still be read)."""
    pool = live.ctx.readers
    wait_until(lambda: pool._inflight == 0, timeout=20, what="the pages in flight")
    while quiet:
        seen = (pool.served, pool.answered_here)
        time.sleep(quiet)
        wait_until(lambda: pool._inflight == 0, timeout=20, what="the pages in flight")
        if (pool.served, pool.answered_here) == seen:
            return


def exchange(live: LiveServer, data: bytes) -> tuple[bytes, bytes]:
    conn = Conn(live)
    try:
        conn.send(data)
        return conn.reply()
    finally:
        conn.close()


def by_owner(live: LiveServer, data: bytes) -> tuple[bytes, bytes]:
    """The reply the owner builds itself (the readers take no page)."""
    pool = live.ctx.readers
    settled(live)
    settings = pool.settings
    pool.settings = dataclasses.replace(settings, busy=10**6)
    try:
        return exchange(live, data)
    finally:
        pool.settings = settings


def through_reader(live: LiveServer, data: bytes, mode: str) -> tuple[bytes, bytes]:
    pool = live.ctx.readers
    reader_running(live)
    settled(live)
    served, handed = pool.served, pool.handed
    reply = exchange(live, data)
    settled(live)
    assert pool.served == served + 1, "a reader did not answer"
    assert pool.handed == handed + (mode == "handoff"), "the hand-off was (not) used"
    return reply


# -- tests --------------------------------------------------------------------------------------

def test_replies_equal_the_relays_and_the_owners(live: LiveServer, mode: str) -> None:
    """Status line, every header (CORS, content-type with its charset, keep-alive) in its order and
    casing, and body: the same whoever writes them."""
    for start, camel, extra, close in ((0, False, "", False), (3, True, "", False), (1, False, "&Limit=7", True),
                                       (0, False, "&ParentId=00000000000000000000000000000bad", False)):
        data = page_request(live, start, camel, extra, close)
        reader = through_reader(live, data, mode) if "bad" not in extra else exchange(live, data)
        owner = by_owner(live, data)
        assert reader == owner
        assert owner[0].startswith(b"HTTP/1.1 200 OK") or "bad" in extra
        if close:
            assert b"\r\nconnection: close" in owner[0]


def test_a_kept_hand_off_head_is_the_head_it_would_build(live: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hand-off's head is built once and kept for the pages after it that would build the same
    (same second's Date, keep-alive, CORS headers of the origin): each reply still equals the
    owner's, another origin, a closing connection or a CORS setting changed a moment before
    each get their own head, and a page asked again in the same second builds none."""
    from server.http import items_lane

    pool = live.ctx.readers
    pool.settings = dataclasses.replace(pool.settings, handoff=True)
    builds: list[int] = []
    build = items_lane._Offer._build_head

    async def counted(offer: items_lane._Offer) -> tuple[bytes, bytes] | None:
        builds.append(1)
        return await build(offer)

    monkeypatch.setattr(items_lane._Offer, "_build_head", counted)
    page = page_request(live, 1)
    variants = [page, page.replace(b"http://example.test", b"https://app.example"),
                page.replace(b"Origin: http://example.test\r\n", b""), page_request(live, 1, close=True)]
    with live.admin() as admin:
        cfg = admin.get("/System/Configuration").json()
        hosts = cfg["CorsHosts"]
        try:
            for allowed in (["*"], ["https://app.example"]):
                cfg["CorsHosts"] = allowed
                assert admin.post("/System/Configuration", json=cfg).status_code == 204
                for data in variants:
                    owner = by_owner(live, data)
                    assert through_reader(live, data, "handoff") == owner
                    if allowed != ["*"] and b"app.example" in data:
                        assert b"access-control-allow-origin: https://app.example" in owner[0]
                    elif allowed != ["*"]:
                        assert b"access-control-allow-origin" not in owner[0]
            builds.clear()
            reader_running(live)
            conn = Conn(live)
            try:
                for _ in range(3):  # (one connection: one Date second may turn between two pages)
                    conn.send(page)
                    conn.reply()
            finally:
                conn.close()
            settled(live)
            assert 1 <= len(builds) < 3
        finally:
            cfg["CorsHosts"] = hosts
            assert admin.post("/System/Configuration", json=cfg).status_code == 204


def test_keep_alive_and_pipelined_pages(live: LiveServer, mode: str) -> None:
    """Several pages on one connection, one after the other and then pipelined in one write: each
    reply whole and in order, the connection still usable after."""
    pool = live.ctx.readers
    reader_running(live)
    want = [by_owner(live, page_request(live, k)) for k in range(6)]
    settled(live)
    handed = pool.handed
    conn = Conn(live)
    try:
        for k in range(3):
            conn.send(page_request(live, k))
            assert conn.reply() == want[k]
        conn.send(b"".join(page_request(live, k) for k in range(6)))
        assert [conn.reply() for _ in range(6)] == want
        conn.send(page_request(live, 2))
        assert conn.reply() == want[2]
    finally:
        conn.close()
    settled(live)
    assert (pool.handed > handed) == (mode == "handoff")


def test_a_client_that_leaves_mid_reply(live: LiveServer, mode: str) -> None:
    """A client closing (reset) before it read the reply costs nothing: the same reader answers the
    next client, nothing stays in flight."""
    pids = reader_running(live)
    for _ in range(5):
        conn = Conn(live)
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")  # close = RST
        conn.send(page_request(live, 1))
        conn.sock.recv(100)
        conn.close()
    for _ in range(5):  # and some that leave before anything came
        conn = Conn(live)
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        conn.send(page_request(live, 2))
        conn.close()
    settled(live, quiet=0.5)
    assert live.ctx.readers.pids() == pids
    assert through_reader(live, page_request(live, 1), mode) == by_owner(live, page_request(live, 1))


def test_a_client_that_stops_reading(live: LiveServer, mode: str) -> None:
    """A client that sends pipelined pages and reads none never holds the reader: it gives what the
    socket did not take back to the owner (which holds it, with its flow control, as for any
    reply) and answers other clients at once; the stalled client, reading at last, gets every
    reply whole and in order."""
    pool = live.ctx.readers
    reader_running(live)
    n = 120
    want = [by_owner(live, page_request(live, k % 4)) for k in range(4)]
    settled(live)
    back = pool.handed_back
    stalled = Conn(live, rcvbuf=4096)
    try:
        stalled.send(page_request(live, 0))  # (the server's end of the connection exists now)
        assert stalled.reply() == want[0]
        small_send_buffer(live, stalled.sock.getsockname())
        stalled.send(b"".join(page_request(live, k % 4) for k in range(n)))
        time.sleep(1.0)  # the socket's buffers fill
        t0 = time.monotonic()
        other = through_reader(live, page_request(live, 3), mode)
        assert other == want[3]
        assert time.monotonic() - t0 < 15, "another client waited for the stalled one"
        stalled.sock.settimeout(60)
        got = [stalled.reply() for _ in range(n)]
        assert got == [want[k % 4] for k in range(n)]
    finally:
        stalled.close()
    settled(live)
    if mode == "handoff":
        assert pool.handed_back > back, "the reader never found the client's socket full"


def small_send_buffer(live: LiveServer, client: tuple[str, int]) -> None:
    """The server's end of the client's connection gets a small send buffer (the kernel's own
    grows to megabytes on loopback: a test would need that much to fill it)."""
    server = live.runner._server
    for proto in server.server_state.connections:
        transport = proto.transport
        if transport is not None and transport.get_extra_info("peername")[:2] == client[:2]:
            transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            return
    raise AssertionError("no such connection")


def test_a_reader_killed_while_it_holds_the_socket(live: LiveServer, mode: str) -> None:
    """A reader that dies once it has the client's socket (stopped, then killed): the owner cannot
    know what it wrote, so it closes the connection, never answers again on it; with the relay the
    page is answered by the owner as before. The next page starts a new reader."""
    pool = live.ctx.readers
    (pid,) = reader_running(live)
    settled(live)
    conn = Conn(live)
    os.kill(pid, signal.SIGSTOP)
    try:
        conn.send(page_request(live, 0))
        wait_until(lambda: pool._inflight == 1 and any(r._pending for r in pool.readers), timeout=10,
                   what="the page at the stopped reader")
        os.kill(pid, signal.SIGKILL)
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGCONT)
    try:
        if mode == "handoff":
            assert conn.closed(), "the connection stayed open after the reader holding it died"
        else:
            assert conn.reply() == by_owner(live, page_request(live, 0))
    finally:
        conn.close()
    settled(live)
    wait_until(lambda: pid not in pool.pids(), timeout=10, what="the killed reader to be gone")
    assert reader_running(live) != [pid]
    assert through_reader(live, page_request(live, 1), mode) == by_owner(live, page_request(live, 1))


def test_the_reply_cache_keeps_pages_and_never_serves_a_stale_one(live: LiveServer, mode: str) -> None:
    """With the whole-reply cache on: a page's first answer is written by the reader (the cache
    only notes it), the second comes back to the owner and is kept, the third is the kept one; a
    change (a favourite) is seen on the next ask."""
    pool = live.ctx.readers
    replies = live.ctx.replies
    budget = replies.budget
    replies.budget = 16 * 1024 * 1024
    try:
        replies.clear()
        reader_running(live)
        data = page_request(live, 5, extra="&Limit=3")
        first = through_reader(live, data, mode)
        settled(live)
        served, handed, hits = pool.served, pool.handed, replies.hits
        second = exchange(live, data)
        settled(live)
        assert second == first and pool.served == served + 1 and pool.handed == handed  # (relayed: kept)
        assert len(replies) == 1
        third = exchange(live, data)
        assert third == first and replies.hits == hits + 1
        item_id = re.search(rb'"Id":"([0-9a-f]{32})"', first[1]).group(1).decode()  # type: ignore[union-attr]
        with live.admin() as c:
            me = c.get("/Users/Me").json()["Id"]
            assert c.post(f"/Users/{me}/FavoriteItems/{item_id}").status_code == 200
        try:
            fourth = exchange(live, data)
            assert b'"IsFavorite":true' in fourth[1] and fourth != first
            assert fourth == by_owner(live, data)
        finally:
            with live.admin() as c:
                c.delete(f"/Users/{me}/FavoriteItems/{item_id}")
    finally:
        replies.budget = budget
        replies.clear()


def test_the_switch_and_the_os_fallback() -> None:
    assert protocol.handoff_enabled({}) is protocol.FD_PASSING
    assert protocol.handoff_enabled({protocol.ENV_HANDOFF: "0"}) is False
    from server.readers.pool import ReaderSettings

    assert ReaderSettings.resolve(1, environ={protocol.ENV_HANDOFF: "off"}).handoff is False
    assert ReaderSettings.resolve(1, environ={}).handoff is protocol.FD_PASSING


def test_write_reply_gives_up_on_a_full_socket_and_reports_a_broken_one() -> None:
    """The reader's write (protocol.write_reply) on a non-blocking socket: all of it when the peer
    reads; what fits, within its wait, when the peer does not (not failed: the rest goes back to
    the owner); failed when the peer is gone."""
    a, b = socket.socketpair()
    try:
        a.setblocking(False)
        head, body = b"HEAD\r\n\r\n", os.urandom(50_000)
        got = bytearray()
        reader = threading.Thread(target=lambda: got.extend(_read_all(b, len(head) + len(body))))
        reader.start()
        assert protocol.write_reply(a.fileno(), head, body, wait=5.0) == (len(head) + len(body), False)
        reader.join(10)
        assert bytes(got) == head + body
        big = os.urandom(8 << 20)
        t0 = time.monotonic()
        written, failed = protocol.write_reply(a.fileno(), head, big, wait=0.2)
        assert not failed and 0 < written < len(head) + len(big) and time.monotonic() - t0 < 5
        parts = protocol.handed_body(head, big, written, failed)
        rest = b"".join(bytes(p) for p in parts[1:])
        assert protocol.HANDED_HEAD.unpack(parts[0]) == (len(big), written, 0)
        assert (head + big)[written:] == rest
    finally:
        b.close()
    try:
        assert protocol.write_reply(a.fileno(), b"x", b"y" * 10, wait=0.2)[1] is True
    finally:
        a.close()


def _read_all(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)
