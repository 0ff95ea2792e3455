"""GET /Items/{id} misses read by a reader process (``ReaderPool.item``) on a real server with a
scanned library: the reply is the owner's byte for byte (head and body, both casings, both
routes), the access rules are the owner's (404 for an item outside the user's libraries, the
reader's own check too), a write shows at once, and a killed reader costs no request."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.library.catalog.items import Viewer
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan, wait_for_artwork
from tests.raw_http import RawConnection
from tests.readers.test_reader_pool import alive, reader_running, wait_until

CAMEL = 'application/json; profile="CamelCase"'

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, library_source: Path) -> Iterator[LiveServer]:
    """A server whose item misses go to a reader whenever one runs (readers_busy=0: an Items
    page starts it), and a user who may see the movies only."""
    root = tmp_path_factory.mktemp("reader-items")
    media = root / "media"
    shutil.copytree(library_source, media)
    live = start_server(root / "data", readers=1, readers_busy=0)
    complete_wizard(live)
    libraries = {kind: add_library_and_scan(live, kind.title(), ctype, [media / kind])
                 for kind, ctype in (("movies", "movies"), ("shows", "tvshows"), ("music", "music"))}
    wait_for_artwork(live)  # (it changes items' images: replies compared over time would differ)
    with live.admin() as c:
        uid = c.post("/Users/New", json={"Name": "moviegoer", "Password": "pw"}).json()["Id"]
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        policy.update(EnableAllFolders=False, EnabledFolders=[libraries["movies"]])
        assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
        with live.client(device="moviegoer") as own:
            r = own.post("/Users/AuthenticateByName", json={"Username": "moviegoer", "Pw": "pw"})
        live.extra["moviegoer"] = (r.json()["AccessToken"], uid)
        live.extra["ids"] = {kind: c.get("/Items", params={"recursive": "true", "includeItemTypes": kind,
                                                           "limit": 1}).json()["Items"][0]["Id"]
                             for kind in ("Movie", "Episode", "Audio", "Series", "MusicAlbum")}
    yield live
    pids = live.ctx.readers.pids()
    stop_server(live)
    assert not [pid for pid in pids if alive(pid)], "a reader process outlived its server"


def forget(live: LiveServer) -> None:
    """The owner forgets what it keeps of single items (verdicts, user data parts, fragments), so
    the next GET /Items/{id} is a miss. Run on the server's loop, where the items are kept."""
    items = live.ctx.items

    def clear() -> None:
        items._seen.clear()
        items.fragments.clear()

    live.runner.loop.call_soon_threadsafe(clear)
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), live.runner.loop).result(10)  # (after it)


def ask(live: LiveServer, token: str, path: str, camel: bool) -> tuple[list[bytes], bytes]:
    """One GET as raw bytes: the head's lines but the Date (its second moves), and the body."""
    conn = RawConnection(live)
    try:
        lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Origin: http://example.test",
                 f'Authorization: MediaBrowser Client="t", Device="d", DeviceId="reader-items", Version="1", '
                 f'Token="{token}"']
        if camel:
            lines.append(f"Accept: {CAMEL}")
        conn.send(("\r\n".join(lines) + "\r\n\r\n").encode())
        head, body = conn.raw_reply()
    finally:
        conn.sock.close()
    return [line for line in head.split(b"\r\n") if not line.lower().startswith(b"date:")], body


def both_ways(live: LiveServer, token: str, path: str, camel: bool
              ) -> tuple[tuple[list[bytes], bytes], tuple[list[bytes], bytes], str]:
    """A miss answered with a reader running, then the same miss with the pool off (the owner's
    own read), and what the reader did with the first: "read", "left" (to the owner) or "none"."""
    pool = live.ctx.readers
    reader_running(live)
    stats = pool.stats
    read, left = stats.items, stats.items_left
    forget(live)
    via_reader = ask(live, token, path, camel)
    did = "read" if stats.items > read else "left" if stats.items_left > left else "none"
    settings = pool.settings
    pool.settings = dataclasses.replace(settings, max_readers=0)  # the pool is off: the owner reads
    try:
        forget(live)
        via_owner = ask(live, token, path, camel)
    finally:
        pool.settings = settings
    return via_reader, via_owner, did


@pytest.mark.parametrize("camel", [False, True], ids=["pascal", "camel"])
def test_an_item_miss_through_a_reader_is_the_owners_reply(live: LiveServer, camel: bool) -> None:
    ids, admin = live.extra["ids"], live.admin_id
    for kind, item_id in ids.items():
        for path in (f"/Items/{item_id}?userId={admin}", f"/Users/{admin}/Items/{item_id}", f"/Items/{item_id}"):
            for _ in range(3):  # (a background write between the two asks makes them differ rightly)
                generation = live.ctx.db.generation
                via_reader, via_owner, did = both_ways(live, live.admin_token, path, camel)
                if live.ctx.db.generation == generation:
                    break
            assert via_reader == via_owner, (kind, path)
            assert via_reader[0][0] == b"HTTP/1.1 200 OK"
            # media items are read by the reader; folders are left to the owner
            assert did == ("read" if kind in ("Movie", "Episode", "Audio") else "left"), (kind, path, did)
    # a restricted user's movie, through the reader too
    token, uid = live.extra["moviegoer"]
    via_reader, via_owner, did = both_ways(live, token, f"/Items/{ids['Movie']}?userId={uid}", camel)
    assert via_reader == via_owner and did == "read"
    assert b"access-control-allow-origin" in b"\n".join(via_reader[0]).lower()


def test_a_user_without_access_gets_404_with_a_reader_running(live: LiveServer) -> None:
    token, uid = live.extra["moviegoer"]
    ids = live.extra["ids"]
    for kind in ("Episode", "Audio"):
        via_reader, via_owner, _ = both_ways(live, token, f"/Items/{ids[kind]}?userId={uid}", False)
        assert via_reader == via_owner
        assert via_reader[0][0] == b"HTTP/1.1 404 Not Found"
    # the reader's own verdict (the guard answers the request above before it): the same rules
    ctx = live.ctx
    reader_running(live)
    viewer = Viewer(asyncio.run_coroutine_threadsafe(ctx.users.get(uid), live.runner.loop).result(10))
    opts = ctx.items.options(viewer, all_fields=True)

    def through_reader(key: str) -> Any:
        future = asyncio.run_coroutine_threadsafe(ctx.readers.item(key, viewer, opts, False), live.runner.loop)
        return future.result(30)

    assert through_reader(ids["Audio"].replace("-", "")) is True  # not hers: 404 in the owner
    assert through_reader(ids["Episode"].replace("-", "")) is True
    assert through_reader("0" * 32) is False  # no such row: the owner's by-name and root paths
    head, tail = through_reader(ids["Movie"].replace("-", ""))
    assert head.startswith(b"{") and tail.endswith(b"}") and b'"UserData":' in tail


def test_a_rename_shows_at_once_through_a_reader(live: LiveServer) -> None:
    movie = live.extra["ids"]["Movie"]
    admin = live.admin_id
    pool = live.ctx.readers
    with live.admin() as c:
        item = c.get(f"/Items/{movie}", params={"userId": admin}).json()
        name = item["Name"]
        try:
            item.update(Name="Read Afresh")
            assert c.post(f"/Items/{movie}", json=item).status_code == 204
            reader_running(live)
            read = pool.stats.items
            assert c.get(f"/Items/{movie}", params={"userId": admin}).json()["Name"] == "Read Afresh"
            assert pool.stats.items == read + 1  # (a content write: a miss, read by the reader)
        finally:
            item.update(Name=name)
            assert c.post(f"/Items/{movie}", json=item).status_code == 204


def test_a_killed_reader_costs_no_item_request(live: LiveServer) -> None:
    (first,) = reader_running(live)
    pool = live.ctx.readers
    ids = [i for kind, i in live.extra["ids"].items() if kind in ("Movie", "Episode", "Audio")]
    admin = live.admin_id
    statuses: list[int] = []
    stop = threading.Event()

    def browse() -> None:
        with live.admin() as c:
            while not stop.is_set():
                for item_id in ids:
                    statuses.append(c.get(f"/Items/{item_id}", params={"userId": admin}).status_code)

    def misses() -> None:
        while not stop.is_set():
            forget(live)

    threads = [threading.Thread(target=browse) for _ in range(3)] + [threading.Thread(target=misses)]
    for t in threads:
        t.start()
    try:
        read = pool.stats.items
        wait_until(lambda: pool.stats.items > read + 20, what="items read by the reader before the kill")
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: first not in pool.pids(), what="the killed reader noticed")
        count = len(statuses)
        wait_until(lambda: len(statuses) > count + 20, what="items answered with no reader")
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert statuses and set(statuses) == {200}
    wait_until(lambda: not alive(first), what="the killed reader reaped")
    # an item request never starts a reader; the next Items page does, and items go to it again
    second = reader_running(live)
    assert first not in second
    read = pool.stats.items
    forget(live)
    with live.admin() as c:
        assert c.get(f"/Items/{ids[0]}", params={"userId": admin}).status_code == 200
    assert pool.stats.items == read + 1


def test_a_reader_that_read_pages_and_items_never_loaded_the_orm(live: LiveServer) -> None:
    """A reader builds its pages and items on the Core tables (server/db/schema.py): after an Items
    page with Fields and item misses (the reader's reads), it has not imported pydantic (its
    compiled core would be mapped) although the owner uses the ORM (the wizard, the scan)."""
    reader_running(live)
    ids = live.extra["ids"]
    with live.admin() as c:
        assert c.get("/Items", params={"recursive": "true", "limit": 50, "fields": "Overview,MediaSources,Path",
                                       "includeItemTypes": "Movie,Episode,Audio"}).status_code == 200
    stats = live.ctx.readers.stats
    read = stats.items
    for kind in ("Movie", "Episode", "Audio"):
        forget(live)
        head, _ = ask(live, live.admin_token, f"/Items/{ids[kind]}", camel=False)
        assert head[0] == b"HTTP/1.1 200 OK"
    assert stats.items > read  # (the reader did read them)
    owner = Path(f"/proc/{os.getpid()}/maps").read_text()
    assert "pydantic_core" in owner  # (the check can see it: this process has it)
    pids = [p for p in live.ctx.readers.pids() if alive(p)]
    assert pids
    for pid in pids:
        assert "pydantic_core" not in Path(f"/proc/{pid}/maps").read_text(), pid
