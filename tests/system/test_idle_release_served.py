"""A served server left alone after a client's browse gives back what the browse left in its
database connections: the memory trimmer's quiet release closes the idle pooled connections (their
page caches, prepared statements and copy of the schema; ``Database.release_memory``), and the
page fill's pass, which reads again after that release, closes the ones it opened when it ends.
The next requests open them again and get the same bytes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from server.library.catalog import page_fill
from server.memory import MemoryTrimmer
from tests.conftest import ON_POSTGRES, stop_server
from tests.library_helpers import songs_movie_show_server

pytestmark = pytest.mark.skipif(ON_POSTGRES, reason="SQLite's pooled connections")


def _open_in_pool(db: Any) -> int:
    """Pooled slots of the library's database holding an open connection, nobody using them (the
    pool's own queue: SQLAlchemy has no public count of it)."""
    pool = db.engine.pool
    return sum(1 for record in list(pool._pool.queue) if record.dbapi_connection is not None)


def _browse(live: Any, c: httpx.Client) -> list[bytes]:
    """What a client's first look at the libraries asks: each library's first page, an item."""
    pages = []
    for library in ("music", "movies", "shows"):
        r = c.get("/Items", params={"userId": live.admin_id, "parentId": live.extra[library], "recursive": "true",
                                    "sortBy": "SortName", "fields": "PrimaryImageAspectRatio,MediaSources,Overview",
                                    "startIndex": "0", "limit": "50"})
        assert r.status_code == 200, r.text
        pages.append(r.content)
    first = httpx.Response(200, content=pages[1]).json()["Items"][0]["Id"]
    r = c.get(f"/Users/{live.admin_id}/Items/{first}")
    assert r.status_code == 200, r.text
    pages.append(r.content)
    return pages


def test_a_used_server_closes_its_idle_connections_when_left_alone_and_answers_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the trimmer's looks every 0.3 s (10 s in the server), the fill's settle short
    monkeypatch.setattr(MemoryTrimmer.__init__, "__defaults__", (0.3, 8 << 20, None))
    monkeypatch.setattr(page_fill, "SETTLE_SECONDS", 0.2)
    live = songs_movie_show_server(tmp_path, reply_cache_mib=0)
    try:
        db, trimmer, fill = live.ctx.db, live.ctx.memory, live.ctx.page_fill
        with live.admin() as c:
            before = _browse(live, c)
            releases = trimmer.releases
            assert _open_in_pool(db) >= 1  # the browse's connections, back in the pool, open
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if trimmer.releases > releases and not fill.busy and _open_in_pool(db) == 0:
                    break
                time.sleep(0.05)
            assert trimmer.releases > releases, "no quiet release"
            assert _open_in_pool(db) == 0, "idle pooled connections still open after the quiet release"
            assert db.engine.pool.checkedout() == 0
            connects = []
            event.listen(db.engine, "connect", lambda *_: connects.append(1))
            after = _browse(live, c)
        assert after == before  # the same bytes, read on connections opened again
        assert connects, "the requests after the release ran on connections kept open"
    finally:
        stop_server(live)
