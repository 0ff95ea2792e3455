"""Counts that read a whole index once leave nothing in the connection's page cache
(``dialect.single_pass``): the desktop app asks ``/Items/Counts`` at every start, and with the
connection's usual cache (``SQLITE_CACHE_KIB``) the index's pages stayed resident until the
memory trimmer's next quiet look (8 MiB at 100k items). The answers are the same; the usual
cache size is back after, also when the statement fails."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from server.db import migrate
from server.db.database import Database, sqlite_url
from server.db.dialect import SQLITE_CACHE_KIB, single_pass
from server.library.catalog.query import ItemQuery, count_by_type

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads SQLite's own memory count")

ITEMS = 40_000
# as bench/items_query.py's rows, only what count_by_type reads filled in: a covering index of
# (library_id, type, owner_id, ...) over 40k rows is ~3.5 MB of pages
FILL = text(
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :count) "
    "INSERT INTO items (id, type, media_type, is_folder, name, sort_name, date_created, genres_json, studios_json, "
    "tags_json, artists_json, album_artists_json, provider_ids_json, media_streams_json, chapters_json, images_json, "
    "is_locked, locked_fields_json, is_virtual, library_id, production_year) "
    "SELECT printf('%032x', i), CASE i % 3 WHEN 0 THEN 'Movie' WHEN 1 THEN 'Episode' ELSE 'Audio' END, 'Video', "
    "false, 'Item ' || i, 'item ' || i, '2024-01-01 00:00:00', '[]', '[]', '[]', '[]', '[]', '{}', '[]', '[]', '[]', "
    "false, '[]', false, printf('%032x', 1000000 + i % 2), 1950 + i % 70 FROM n")


def _memory_used() -> Any:
    lib = ctypes.CDLL("libsqlite3.so.0")
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return lambda: lib.sqlite3_memory_used()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path: Path = tmp_path_factory.mktemp("single-pass") / "reelroom.db"
    database = Database(sqlite_url(path))
    migrate.upgrade(database.engine, database.url)
    with database.engine.begin() as c:
        c.execute(FILL, {"count": ITEMS})
    database.release_memory()
    yield database
    database.close()


def _cache_size(s: Any) -> int:
    return s.execute(text("PRAGMA cache_size")).scalar_one()


def test_the_item_counts_leave_no_pages_in_the_connections_cache(db: Database) -> None:
    used = _memory_used()
    expected = {"Movie": ITEMS // 3, "Episode": ITEMS - ITEMS // 3 - (ITEMS + 1) // 3, "Audio": (ITEMS + 1) // 3}

    def counted(s: Any) -> tuple[dict[str, int], int, int]:
        s.execute(text("PRAGMA shrink_memory"))  # whatever this pooled connection held before
        before = used()
        counts = count_by_type(s, ItemQuery(recursive=True))
        return counts, used() - before, _cache_size(s)

    counts, grew, cache_size = db.read_sync(counted)
    assert counts == expected
    assert cache_size == -SQLITE_CACHE_KIB  # the connection's usual cache for what comes next
    assert grew < 1 << 20, grew  # (the whole index is ~3.5 MB)

    def without_single_pass(s: Any) -> int:  # the same statement with the usual cache: what main did
        s.execute(text("PRAGMA shrink_memory"))
        before = used()
        rows = s.execute(text("SELECT type, count(*) FROM items WHERE coalesce(owner_id, '') = '' "
                              "AND type != 'CollectionFolder' GROUP BY library_id, type")).all()
        assert sum(n for _, n in rows) == ITEMS
        grown = used() - before
        s.execute(text("PRAGMA shrink_memory"))
        return grown

    assert db.read_sync(without_single_pass) > 2 << 20  # so the figure above can tell


def test_the_usual_cache_size_is_back_after_a_failed_statement(db: Database) -> None:
    def failing(s: Any) -> int:
        with pytest.raises(Exception, match="no_such_table"), single_pass(s):
            assert _cache_size(s) < 0 and -_cache_size(s) < SQLITE_CACHE_KIB
            s.execute(text("SELECT count(*) FROM no_such_table"))
        return _cache_size(s)

    assert db.read_sync(failing) == -SQLITE_CACHE_KIB



def test_a_single_pass_gives_the_connection_back_its_own_size(db: Database) -> None:
    """Not the server's usual size: a fill's background read (or a reader process's connection)
    has a smaller one, which a single pass inside it keeps."""
    from server.db.database import BACKGROUND_CACHE_KIB

    def counted(s: Any) -> tuple[int, int]:
        before = _cache_size(s)
        with single_pass(s):
            count_by_type(s, ItemQuery(recursive=True))
        return before, _cache_size(s)

    before, after = db.read_background(counted)
    assert before == after == -BACKGROUND_CACHE_KIB


SCRIPT = """
import asyncio, json, sys
from server.db import schema
from server.db.database import Database
from server.db.dialect import single_pass
from server.library.catalog.query import ItemQuery, count_by_type
db = Database(sys.argv[1])
schema.metadata.create_all(db.engine)
before = "sqlalchemy.orm" in sys.modules
def read(s):
    with single_pass(s):
        return count_by_type(s, ItemQuery(recursive=True))
counts = asyncio.run(db.read(read))
db.close()
print(json.dumps({"orm_before": before, "orm_after": "sqlalchemy.orm" in sys.modules, "counts": counts}))
"""


def test_a_single_pass_on_a_reads_session_imports_no_orm(tmp_path: Path) -> None:
    """A read's session (``CoreSession``) makes the ORM session, and imports SQLAlchemy's ORM
    (~6 MiB), for anything it is asked but Core statements and ``get_bind``: ``single_pass``
    asks it only those (in a fresh interpreter: the server's start runs it, with no ORM)."""
    import json
    import subprocess

    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", SCRIPT, sqlite_url(tmp_path / "fresh.db")], cwd=root,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"orm_before": False, "orm_after": False, "counts": {}}


def test_the_planner_statistics_and_background_reads_leave_the_content_generation(db: Database) -> None:
    """A single pass's cache size, read and set around the statistics' ``ANALYZE`` on the writer,
    and a background read's, write nothing: counted as content writes they started a new content
    generation (every kept count and reply, the fragment store's epoch) after each statistics run."""
    import asyncio

    from server.library.catalog.planner_stats import PlannerStats

    content = db.content_generation
    asyncio.run(PlannerStats(db).run())
    db.read_background(lambda s: count_by_type(s, ItemQuery(recursive=True)))
    assert db.content_generation == content
