"""What the page fill (server/library/catalog/page_fill.py) leaves in the served process, and how
long its pass runs: a used server's idle memory (issue 13, ``bench/idle_memory.py --use``).

- A pass's deep pages read the listing's whole ordered id list (``query._ordered_ids``: ~1.5 MiB
  at 100k). It is the pass's own: once the pass is over the clients' count cache holds no ordering
  no client asked for, and a client's deep page still answers the bytes the server builds.
- The pause after each page is ~10 ms, not 20: a 100k listing's pass (~1000 pages) ended ~30 s
  after a browse, so a server measured 30 s after its use was still inside it (1-2 MiB over).
- The store's writer closes its connection once idle: its page cache (1 MiB, full after a fill)
  stayed for the process's life.

Real parts: a served server, its SQLite library (1,100 items written in one transaction) and its
fragment store.
"""

from __future__ import annotations

import ctypes
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from server.db.tables import Item
from server.library.catalog import fragment_store, page_fill, query
from tests.conftest import LiveServer, complete_wizard, sqlite_only, start_server, stop_server
from tests.library.query.factory import Factory
from tests.library_helpers import open_store, store_off

BIG = 1100  # items of the listing: more than DEEP_PAGE (1000), so its last page is a deep one
PAGE = 50  # the fill's page here (22 pages; the last two start past DEEP_PAGE)

pytestmark = sqlite_only


@pytest.fixture
def served(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LiveServer, str]]:
    monkeypatch.setattr(page_fill, "PAGE", PAGE)
    monkeypatch.setattr(page_fill, "SETTLE_SECONDS", 0.3)
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        complete_wizard(live)
        f = Factory(live)
        big = f.library("Big", "homevideos")

        def fill(s: Any) -> None:
            for n in range(BIG):
                s.add(Item(id=uuid.uuid4().hex, type="Video", media_type="Video", library_id=big, parent_id=big,
                           name=f"Clip {n:04d}", sort_name=f"clip {n:04d}", path=f"/v/{n}"))

        live.ctx.db.write_sync(fill)
        open_store(live)
        yield live, big
    finally:
        stop_server(live)


def _params(big: str, start: int) -> dict[str, str]:
    return {"parentId": big, "recursive": "true", "sortBy": "SortName", "fields": "PrimaryImageAspectRatio",
            "startIndex": str(start), "limit": str(PAGE)}


def _page(c: httpx.Client, big: str, start: int) -> bytes:
    r = c.get("/Items", params=_params(big, start))
    assert r.status_code == 200, r.text
    return r.content


def _built(live: LiveServer, c: httpx.Client, big: str, start: int) -> bytes:
    """The page as the server builds it without the store, kept fragments or kept orderings."""
    with store_off(live):
        return _page(c, big, start)


def _one_pass(live: LiveServer, c: httpx.Client, big: str) -> None:
    """The listing's first page asked (the fill notes its family), then its pass, to its end."""
    fill = live.ctx.page_fill
    _page(c, big, 0)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not fill.passes:
        time.sleep(0.05)
    assert fill.passes >= 1 and fill.pages >= BIG // PAGE, (fill.passes, fill.pages)


def test_a_pass_leaves_no_ordering_in_the_clients_cache_and_deep_pages_answer_the_same(
        served: tuple[LiveServer, str]) -> None:
    live, big = served
    counts = live.ctx.items.count_cache
    with live.admin() as c:
        _one_pass(live, c, big)
        # (the pass read the whole ordering for its pages past DEEP_PAGE: its own, gone with it)
        assert counts.orderings() == 0
        for start in (0, query.DEEP_PAGE, BIG - PAGE):
            assert _page(c, big, start) == _built(live, c, big, start)
        # a client's own deep page keeps its ordering for the pages after it, as before
        _page(c, big, BIG - PAGE)
        assert counts.orderings() == 1


def test_the_pause_after_each_page_is_about_ten_milliseconds(served: tuple[LiveServer, str]) -> None:
    live, big = served
    db, fill = live.ctx.db, live.ctx.page_fill
    spans: list[tuple[float, float]] = []  # (start, end) of each page's read, while a pass runs
    read = db.read_background
    lock = threading.Lock()

    def timed(fn: Any) -> Any:
        began = time.monotonic()
        try:
            return read(fn)
        finally:
            if fill.busy and threading.current_thread().name == page_fill.PageFill.NAME:
                with lock:
                    spans.append((began, time.monotonic()))

    db.read_background = timed
    try:
        with live.admin() as c:
            _one_pass(live, c, big)
    finally:
        db.read_background = read
    pauses = [b[0] - a[1] for a, b in zip(spans, spans[1:], strict=False)]
    assert len(pauses) >= BIG // PAGE - 1, spans
    # (each pause is GAP and the look over it; 20 ms at least before: a 100k pass ran ~30 s)
    assert statistics.median(pauses) < 0.016, pauses



def _sqlite_memory() -> int:
    """Bytes SQLite holds in this process (its page caches, statements, schemas: every connection)."""
    lib = ctypes.CDLL("libsqlite3.so.0")
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return int(lib.sqlite3_memory_used())


def test_the_store_writer_closes_its_connection_when_idle_and_writes_again_after(
        served: tuple[LiveServer, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's connection (a 1 MiB page cache, full after a fill: 1.06 of SQLite's 1.44 MiB in a
    used 100k server) closes once no batch came for ``_WRITER_IDLE_SECONDS``, and the heap is
    trimmed; the next batch opens it again and is written. (A closed connection's file descriptor
    may stay open: SQLite keeps it while another connection of the process holds the file.)"""
    monkeypatch.setattr(fragment_store, "_WRITER_IDLE_SECONDS", 1.5, raising=False)
    live, big = served
    store = live.ctx.items.store
    trims: list[float] = []
    trim = getattr(store, "trim_heap", lambda: None)

    def counted() -> object:
        trims.append(time.monotonic())
        return trim()

    store.trim_heap = counted
    with live.admin() as c:
        _one_pass(live, c, big)
        store.flush()
        written, held = store.written, _sqlite_memory()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not trims:
            time.sleep(0.05)
        assert len(trims) == 1  # once, after the writer closed its connection
        assert _sqlite_memory() < held - 128 * 1024, (held, _sqlite_memory())  # its page cache went
        assert store.written == written
        params = {**_params(big, 0), "fields": "Overview"}  # (another shape: built and stored now)
        assert c.get("/Items", params=params).status_code == 200
        store.flush()
        assert store.written >= written + PAGE  # the next batch opened it again
        for start in (0, BIG - PAGE):
            assert _page(c, big, start) == _built(live, c, big, start)
