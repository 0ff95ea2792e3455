"""Memory handed back in quiet moments: SQLite's page caches (``Database.release_memory``), the
trimmer's quiet looks (``memory.MemoryTrimmer(quiet=...)``) and a reader process's quiet trim
(``server/readers/worker.py``). What is released must never change an answer."""

from __future__ import annotations

import asyncio
import ctypes
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from server import memory
from server.db.database import Database, sqlite_url


def _sqlite_memory() -> Any:
    """SQLite's own count of the memory it holds (the process's, all connections), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL("libsqlite3.so.0")
    except OSError:
        return None
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return lib.sqlite3_memory_used


def _filled(tmp_path: Path) -> Database:
    db = Database(sqlite_url(tmp_path / "big.db"), readers=3)
    with db.engine.begin() as c:
        c.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"))
        c.execute(text("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000) "
                       "INSERT INTO t SELECT i, printf('%0900d', i) FROM n"))  # ~6 MB of pages
    return db


def _read_all(db: Database) -> list[tuple[int, int]]:
    """Three sessions at once (three pooled connections), each reading the whole table."""
    sessions = [db.session() for _ in range(3)]
    try:
        return [tuple(s.execute(text("SELECT count(*), sum(length(v)) FROM t")).one()) for s in sessions]
    finally:
        for s in sessions:
            s.close()


def test_release_empties_the_idle_connections_caches_and_answers_stay_the_same(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    try:
        used = _sqlite_memory()
        before = _read_all(db)
        assert before == [(6000, 6000 * 900)] * 3
        full = used() if used else None
        busy = db.session()  # a connection in use (an open read): left alone, and still works
        busy.execute(text("SELECT v FROM t WHERE id = 7")).one()
        released = db.release_memory()
        assert released >= 2  # the three that read the table, but the one in use
        if used is not None:
            assert used() < full - (7 << 20), (full, used())  # ~5 MB a cache: two of the three emptied
        assert busy.execute(text("SELECT v FROM t WHERE id = 7")).scalar_one() == f"{7:0900d}"
        busy.close()
        assert _read_all(db) == before  # the same answers, read again from the file
        db.write_sync(lambda s: s.execute(text("UPDATE t SET v = 'x' WHERE id = 1")))
        assert db.read_sync(lambda s: s.execute(text("SELECT v FROM t WHERE id = 1")).scalar_one()) == "x"
    finally:
        db.close()


def test_nothing_is_released_once_the_database_is_closed(tmp_path: Path) -> None:
    """The trimmer's release runs in a thread: one that comes after close opens nothing."""
    db = _filled(tmp_path)
    _read_all(db)
    db.close()
    assert db.release_memory() == 0
    assert db.engine.pool.checkedin() == 0


def test_release_is_a_no_op_but_for_sqlite(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    try:
        db.is_sqlite = False  # (what a PostgreSQL Database says: its server keeps its own caches)
        assert db.release_memory() == 0
    finally:
        db.close()


def test_the_trimmer_releases_once_per_quiet_spell() -> None:
    activity = [0]
    released: list[int] = []
    trimmer = memory.MemoryTrimmer(quiet=(lambda: activity[0], lambda: released.append(activity[0])))

    def look() -> None:
        asyncio.run(trimmer.check(memory.rss_bytes()))

    look()  # the first look only notes the counter
    assert released == []
    activity[0] += 5
    look()  # busy since the last look: nothing released
    assert released == []
    look()  # quiet for a whole look: released, once
    assert released == [5] and trimmer.releases == 1
    look()
    look()  # still quiet: nothing more to release
    assert released == [5]
    activity[0] += 1
    look()
    look()  # busy again, then quiet again: released again
    assert released == [5, 6] and trimmer.releases == 2


def test_reads_writes_and_statements_count_as_activity(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    try:
        before = db.activity
        _read_all(db)
        assert db.activity >= before + 3
        before = db.activity

        def raw(s: Any) -> Any:  # (as a warm page's user data: a DBAPI cursor, no statement event)
            cur = s.connection().connection.dbapi_connection.cursor()
            try:
                return cur.execute("SELECT count(*) FROM t").fetchone()
            finally:
                cur.close()

        assert db.read_sync(raw) == (6000,)
        assert db.activity > before
        before = db.activity
        assert asyncio.run(db.read_lean(lambda s: 1)) == 1  # a read that ran nothing still counts
        assert db.activity > before
        db.release_memory()  # its own pragmas are not activity
        after = db.activity
        db.release_memory()
        assert db.activity == after
    finally:
        db.close()


def test_a_reader_keeps_a_small_cache_and_trims_when_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader's connection: query-only with a 1 MiB page cache; its serve loop releases, unmaps
    the fragment store and trims once the owner has been quiet, and goes on answering after."""
    from server.readers import protocol, worker

    db = _filled(tmp_path)
    db.close()
    rdb = worker.ReaderDatabase(sqlite_url(tmp_path / "big.db"))
    try:
        with rdb.engine.connect() as c:
            assert c.execute(text("PRAGMA cache_size")).scalar_one() == -worker.CACHE_KIB
            assert c.execute(text("PRAGMA query_only")).scalar_one() == 1
    finally:
        rdb.close()

    trims: list[str] = []
    monkeypatch.setattr(worker, "trim", lambda: trims.append("trim"))

    class FakeDb:
        def release_memory(self) -> int:
            trims.append("release")
            return 1

    class FakeStore:
        def release(self) -> None:
            trims.append("unmap")

    class FakeReader:
        db = FakeDb()
        store = FakeStore()

        def handle(self, message: Any) -> tuple[int, str, Any, Any]:
            return message[0], protocol.OK, b"page %d" % message[0], None

    owner, reader_end = socket.socketpair()
    thread = threading.Thread(target=worker.serve, args=(reader_end, FakeReader(), 0.2), daemon=True)
    thread.start()

    def ask(n: int) -> bytes:
        owner.sendall(protocol.frame((n, protocol.ITEMS, (0, 0), ())))
        head = b""
        while len(head) < protocol.REPLY_HEADER.size:
            head += owner.recv(protocol.REPLY_HEADER.size - len(head))
        size = protocol.REPLY_HEADER.unpack(head)[0]
        body = b""
        while len(body) < size:
            body += owner.recv(size - len(body))
        return protocol.read_reply(head, body)[2]

    try:
        assert ask(1) == b"page 1" and ask(2) == b"page 2"
        assert trims == []  # busy: no trim between requests that come at once
        deadline = 50
        while not trims and deadline:
            threading.Event().wait(0.1)
            deadline -= 1
        assert trims == ["release", "unmap", "trim"]
        threading.Event().wait(0.5)
        assert trims == ["release", "unmap", "trim"]  # once per quiet spell
        assert ask(3) == b"page 3"
    finally:
        owner.close()
        thread.join(5)
        reader_end.close()
    assert not thread.is_alive()


def test_a_background_read_is_not_activity_and_keeps_a_small_page_cache(tmp_path: Path) -> None:
    """``Database.read_background`` (the fragment store's fills): the read moves no ``activity``
    (what tells the trimmer and the fills that clients use the database), its connection keeps
    at most ``BACKGROUND_CACHE_KIB`` of pages, and gets its own cache size back when returned."""
    from server.db.database import BACKGROUND_CACHE_KIB
    from server.db.dialect import SQLITE_CACHE_KIB

    db = _filled(tmp_path)
    used = _sqlite_memory()
    try:
        whole = text("SELECT count(*), sum(length(v)) FROM t")
        db.read_sync(lambda s: s.execute(text("SELECT 1")).one())  # (connections open, schema read)
        before, memory_before = db.activity, used() if used else 0
        assert tuple(db.read_background(lambda s: s.execute(whole).one())) == (6000, 6000 * 900)
        assert db.activity == before  # statements and the read itself: not counted
        if used is not None:
            grown = used() - memory_before
            assert grown < (BACKGROUND_CACHE_KIB + 512) << 10, grown  # not the table's ~6 MB
        sizes = _cache_sizes(db)
        assert sizes == {-SQLITE_CACHE_KIB}, sizes  # every connection back at its own size
        if used is not None:  # a request's read of the same table fills its cache as before
            memory_before = used()
            assert tuple(db.read_sync(lambda s: s.execute(whole).one())) == (6000, 6000 * 900)
            assert used() - memory_before > 4 << 20
        assert db.activity > before
    finally:
        db.close()


def _cache_sizes(db: Database) -> set[int]:
    """``PRAGMA cache_size`` of every pooled connection (all taken at once: each a different one)."""
    taken = [db.engine.raw_connection() for _ in range(db.engine.pool.checkedin())]
    try:
        found = set()
        for conn in taken:
            cur = conn.cursor()
            found.add(cur.execute("PRAGMA cache_size").fetchone()[0])
            cur.close()
        return found
    finally:
        for conn in taken:
            conn.close()


def test_the_trimmer_releases_while_a_background_fill_reads(tmp_path: Path) -> None:
    """After a browse the page fill reads a big library's listings for a minute or more: its reads
    are not the clients', so the trimmer's quiet rule releases the browse's caches meanwhile (on
    main the fill's reads kept the counter moving and the caches full until the fill ended)."""
    db = _filled(tmp_path)
    used = _sqlite_memory()
    stop = threading.Event()
    pages = [0]

    def fill() -> None:  # (as page_fill: one small read after another, each on a pooled connection)
        n = 0
        while not stop.is_set():
            n = n % 6000 + 1
            db.read_background(lambda s, at: s.execute(text("SELECT v FROM t WHERE id >= :n LIMIT 50"), {"n": at}).all(),
                               n)
            pages[0] += 1
            stop.wait(0.005)

    try:
        browsed = _read_all(db)  # the clients' reads: three connections' caches full
        full = used() if used else None
        trimmer = memory.MemoryTrimmer(quiet=(lambda: db.activity, db.release_memory))
        thread = threading.Thread(target=fill, daemon=True)
        thread.start()

        async def looks() -> None:
            last = memory.rss_bytes()
            for _ in range(3):  # the trimmer's looks, closer together than its interval
                last = await trimmer.check(last)
                await asyncio.sleep(0.3)

        asyncio.run(looks())
        assert pages[0] > 10  # the fill read all along
        assert trimmer.releases == 1
        if used is not None:
            assert used() < full - (7 << 20), (full, used())  # the browse's caches (one may be the fill's)
        stop.set()
        thread.join(5)
        assert _read_all(db) == browsed
    finally:
        stop.set()
        db.close()


def _open_connections(db_file: Path) -> int:
    """sqlite3 connections of this process still open on ``db_file`` (a closed one refuses
    ``total_changes``). Only that file's: connections other tests left open in the same process,
    or a background thread of theirs opening one meanwhile, do not count."""
    import gc
    import sqlite3

    def is_ours(conn: sqlite3.Connection) -> bool:
        try:
            conn.total_changes  # noqa: B018  (raises once closed)
            files = conn.execute("PRAGMA database_list").fetchall()  # (the server's: check_same_thread off)
        except sqlite3.Error:  # closed, or another thread's connection that refuses this one
            return False
        return any(row[1] == "main" and row[2] and Path(row[2]).resolve() == db_file.resolve() for row in files)

    return sum(1 for o in gc.get_objects() if type(o) is sqlite3.Connection and is_ours(o))


def test_release_closes_the_idle_connections_so_their_statements_and_schema_go(tmp_path: Path) -> None:
    """A browse leaves each pooled connection's prepared statements (0.1-0.7 MiB) and its copy of
    the schema (0.16 MiB) beside its page cache; ``PRAGMA shrink_memory`` gave back only the pages.
    The release closes the idle connections; the next read opens one again, with the server's
    pragmas, and answers the same."""
    opened = _open_connections(tmp_path / "big.db")
    db = _filled(tmp_path)
    used = _sqlite_memory()
    try:
        before = _read_all(db)
        shapes = [text(f"SELECT count(*) FROM t WHERE id > {n} AND v LIKE '%{n}%'") for n in range(60)]
        sessions = [db.session() for _ in range(3)]  # (three connections, each with 60 statements prepared)
        try:
            counts = [[s.execute(q).scalar_one() for q in shapes] for s in sessions]
        finally:
            for s in sessions:
                s.close()
        assert _open_connections(tmp_path / "big.db") == opened + 3
        if used is not None:
            db.release_memory()
            kept = used()
            _read_all(db)  # (open them again: pages, statements and schema)
            assert db.release_memory() == 3
            assert used() <= kept + (64 << 10), (kept, used())
        else:
            assert db.release_memory() == 3
        assert _open_connections(tmp_path / "big.db") == opened  # the three closed
        assert db.release_memory() == 0  # none opened since: none taken (taking one would open it)
        assert db.read_sync(lambda s: [s.execute(q).scalar_one() for q in shapes]) == counts[0]
        assert _read_all(db) == before
        pragmas = db.read_sync(lambda s: (s.execute(text("PRAGMA foreign_keys")).scalar_one(),
                                          s.execute(text("PRAGMA journal_mode")).scalar_one(),
                                          s.execute(text("PRAGMA cache_size")).scalar_one()))
        from server.db.dialect import SQLITE_CACHE_KIB
        assert pragmas == (1, "wal", -SQLITE_CACHE_KIB)
        db.write_sync(lambda s: s.execute(text("UPDATE t SET v = 'y' WHERE id = 2")))
        assert db.read_sync(lambda s: s.execute(text("SELECT v FROM t WHERE id = 2")).scalar_one()) == "y"
    finally:
        db.close()


def test_a_connection_in_use_during_the_release_is_left_open_and_closed_by_the_next(tmp_path: Path) -> None:
    opened = _open_connections(tmp_path / "big.db")
    db = _filled(tmp_path)
    try:
        _read_all(db)
        busy = db.session()
        assert busy.execute(text("SELECT v FROM t WHERE id = 7")).scalar_one() == f"{7:0900d}"
        assert db.release_memory() >= 2
        assert busy.execute(text("SELECT v FROM t WHERE id = 8")).scalar_one() == f"{8:0900d}"  # still works
        busy.close()
        assert _open_connections(tmp_path / "big.db") == opened + 1
        assert db.release_memory() == 1  # the one that was in use
        assert _open_connections(tmp_path / "big.db") == opened
    finally:
        db.close()
