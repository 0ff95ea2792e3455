"""One writer, many readers.

Every write runs on a single dedicated thread, one transaction at a time, so SQLite never
answers "database is locked" under concurrent requests. Reads run on a small thread pool
(``server/db/threads.py``: the most recently idle thread first, results handed straight to the
event loop) against WAL snapshots and never block the writer. Both are awaitable from the event loop
and callable from worker threads (the scanner) alike.

PostgreSQL works the same way (READ COMMITTED, the default): one writer keeps write order and
the ``generation`` counter simple, readers take pooled connections. Engines come from the
dialect layer (``server/db/dialect.py``).

Two counters tell readers' caches what changed: ``generation`` is bumped after every committed
write, ``content_generation`` only after those that wrote more than user data (play state,
favourites: the writes a playing client makes every few seconds), what only sign-ins and sessions
read (``devices``: tokens and a device's last activity, written once a minute per signed-in client;
``device_options``, ``api_keys``, ``display_preferences``; a user's last sign-in and activity dates
written alone: ``_SESSION_WRITE``), the logs (``activity_log``: sign-ins, users created...;
``task_results``: every scheduled task's run) or the planner's statistics (``ANALYZE``), which no
catalog answer reads. (A sign-in used to start a new content generation: every kept count and
reply, and the fragment store's epoch, began again.) A user's policy, name or configuration is
content: views and access follow it. A cached answer that never read
``user_data`` stays valid while ``content_generation`` is unchanged
(``server/library/catalog/query.py`` CountCache).

User data is per user: a write made through ``write_user_data(user_ids, ...)`` declares whose
rows it touches and bumps only those users' ``user_generation``; any other write of ``user_data``
(undeclared) bumps ``user_data_generation``, which every user's stamp includes. So a cached reply
of one user (``server/http/reply_cache.py``) survives another user's play-state writes.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Engine

from server.db.dialect import SQLITE_CACHE_KIB, create_db_engine, is_sqlite_url, normalize_url
from server.db.threads import LoopThreads

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Result
    from sqlalchemy.orm import Session

T = TypeVar("T")


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


#: A statement that writes user data only (as SQLAlchemy spells INSERT, UPDATE and DELETE).
_USER_DATA_WRITE = re.compile(r'\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?user_data"?[\s(]', re.IGNORECASE)
#: What only sign-ins and sessions read, never part of any catalog answer: devices (tokens, last
#: activity), their options, API keys, display preferences; a user's sign-in and activity dates
#: when nothing else of the user is written (UserService.sign_in_by_name, touch).
_SESSION_WRITE = re.compile(
    r'\s*(?:(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(?:devices|device_options|api_keys|display_preferences)"?[\s(]'
    r'|UPDATE\s+"?users"?\s+SET\s+(?:"?last_login_date"?\s*=[^,]+,\s*)?"?last_activity_date"?\s*=[^,]+?'
    r'\s+WHERE\b)', re.IGNORECASE)  # (a value: a marker, on PostgreSQL with its ::TYPE cast)
#: Logs no catalog answer reads: the activity log and scheduled tasks' last results.
_LOG_WRITE = re.compile(r'\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(?:activity_log|task_results)"?[\s(]',
                        re.IGNORECASE)
#: Planner statistics (planner_stats.py): no answer reads them, so they leave content_generation
#: (and what is kept by it, e.g. the fragment store's epoch) as it was.
_STATS_WRITE = re.compile(r"\s*(?:ANALYZE\b|PRAGMA\s+(?:analysis_limit|optimize)\b)", re.IGNORECASE)
#: Statements that write nothing (a connection's page cache size, read or set: ``dialect.single_pass``,
#: around the planner statistics' ``ANALYZE`` on the writer, and the background reads).
_NO_WRITE = re.compile(r"\s*(?:SELECT|SAVEPOINT|RELEASE|ROLLBACK|BEGIN|PRAGMA\s+(?:cache_size|shrink_memory)\b)",
                       re.IGNORECASE)


def file_stamp(path: Path | None) -> list[int] | None:
    """What a SQLite database file looks like from outside (inode, size, mtime in ns, and the size
    of its -wal file; a missing WAL counts as empty), or None without a file. Any write to it
    (this server's, the sqlite3 shell's, a backup copied over it) changes it."""
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    try:
        wal = path.with_name(path.name + "-wal").stat().st_size
    except OSError:
        wal = 0
    return [st.st_ino, st.st_size, st.st_mtime_ns, wal]


#: read threads on SQLite. A read's Python work (rows to values, DTOs, JSON) holds the GIL, and
#: the sqlite3 module lets it go around every step of a statement, so reads on more threads than
#: cores mostly wait for each other: with four, 32 clients' Items pages with no reader process
#: cost 4.7 ms of CPU each on a quiet 2-core machine (2.4 for one client); with one or two the
#: same pages were cheaper and more of them were served (bench/items_query.py --readers 0;
#: docs/architecture.md). PostgreSQL's reads wait on the network and keep four.
SQLITE_READ_THREADS = 2
READ_THREADS = 4
#: SQLite's page cache, in KiB, of a pooled connection while a background job's read has it
#: (``Database.read_background``: the fragment store's fills, which read a whole listing in the
#: server's idle time). Set when the read takes the connection, which drops the rest of what it
#: held; emptied (``shrink_memory``) and the connection's own size back when it is returned. A
#: fill's page reads its rows through the OS page cache (a system call a page, at nice 19), and a
#: fill of a 100k library no longer keeps every pooled connection's 8 MiB full for the minute it
#: runs after a browse (it takes them in turn).
BACKGROUND_CACHE_KIB = 1024


def _nothing() -> None:
    return None


class _Background(threading.local):
    on = False  # this thread runs a ``read_background``


class Database:
    def __init__(self, url: str, readers: int | None = None) -> None:
        self.url = normalize_url(url)
        self.is_sqlite = is_sqlite_url(self.url)
        if readers is None:
            readers = SQLITE_READ_THREADS if self.is_sqlite else READ_THREADS
        self.engine: Engine = create_db_engine(self.url, readers)  # raises DatabaseUnavailable
        database = self.engine.url.database if self.is_sqlite else None
        #: the SQLite file (None: PostgreSQL, or in memory)
        self.file: Path | None = Path(database) if database and database != ":memory:" else None
        #: the file as this process found it, before it wrote anything (``file_stamp``): compared
        #: with what the previous process left (the artwork run's skip at start)
        self.opened_stamp = file_stamp(self.file)
        self._on_close: list[Callable[[], None]] = []
        self._on_release: list[Callable[[], None]] = []  # (``on_release``)
        self.dialect = self.engine.dialect.name
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="db-writer")
        self._readers = LoopThreads(readers, "db-reader")  # (server/db/threads.py: LIFO, lean hops)
        self._writer_thread: threading.Thread | None = None
        self._in_write = False
        self.generation = 0  # bumped after every committed write
        self.content_generation = 0  # bumped after every committed write of more than user data
        self._wrote_content = False
        self._wrote_user_data = False
        self._declared_users: frozenset[str] | None = None  # write_user_data's users, while it runs
        #: bumped after a write of user data that did not say whose (write, not write_user_data)
        self.user_data_generation = 0
        self._user_generations: dict[str, int] = {}  # per user, by write_user_data
        #: reads, writes and statements so far (approximate: counted without a lock; a read on a
        #: raw DBAPI cursor passes no statement event, so reads count themselves); what
        #: ``release_memory``'s caller compares to know the database was left alone for a while
        self.activity = 0
        self._release_lock = threading.Lock()
        self._connects = 0  # pooled connections opened since the last ``close_idle`` (SQLite)
        self._closed = False
        #: SQLite's page cache of a pooled connection, in KiB (what a background read's gives back)
        self.cache_kib = SQLITE_CACHE_KIB
        #: hands the heap's free pages back to the system (``memory.trim``, set by ``ServerContext``;
        #: nothing by default): what the fills call after their passes, the layer below the server's
        self.trim_heap: Callable[[], object] = _nothing
        self._background = _Background()
        event.listen(self.engine, "before_cursor_execute", self._note_statement)
        if self.is_sqlite:
            event.listen(self.engine, "checkout", self._background_checkout)
            event.listen(self.engine, "checkin", self._background_checkin)
            event.listen(self.engine, "connect", self._connected)

    # -- sync API (for worker threads) -------------------------------------------------

    def session(self) -> Session:
        """An ORM ``Session`` of the engine (SQLAlchemy's ORM is imported by the first one). The reads
        and writes below hand their function a ``CoreSession``, which makes one only when asked for
        the ORM."""
        # ``info["database"]``: code handed only a session can read the generations (e.g.
        # query._distinct_ratings keeps the library's rating list per content_generation)
        session: Session = _orm_session_class()(self.engine, expire_on_commit=False, info={"database": self})
        return session

    def _note_statement(self, _conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        """On the writer: does this statement write anything but user data?"""
        if self._background.on:  # (a background read's: not the clients' activity)
            return
        self.activity += 1
        if threading.current_thread() is not self._writer_thread or _NO_WRITE.match(statement):
            return
        if _USER_DATA_WRITE.match(statement):
            self._wrote_user_data = True
        elif not self._wrote_content and not _SESSION_WRITE.match(statement) and not _LOG_WRITE.match(statement) \
                and not _STATS_WRITE.match(statement):
            self._wrote_content = True

    @property
    def generations(self) -> tuple[int, int]:
        """(content_generation, generation), read in that order (what CountCache compares)."""
        return self.content_generation, self.generation

    def user_generation(self, user_id: str | None) -> tuple[int, int]:
        """What a cached answer that read ``user_id``'s user data compares (with
        ``content_generation``): (``user_data_generation``, that user's own counter)."""
        return self.user_data_generation, self._user_generations.get(user_id, 0) if user_id else 0

    def user_data_stamp(self, user_id: str) -> tuple[int, ...]:
        """What moves whenever ``user_id``'s user data rows may have changed: a content write (items
        deleted with their rows), a user-data write that did not say whose, one of theirs."""
        return self.content_generation, *self.user_generation(user_id)

    def _run_write(self, fn: Callable[..., T], args: tuple[Any, ...], users: frozenset[str] | None = None) -> T:
        self.activity += 1
        outer = threading.current_thread() is not self._writer_thread or not self._in_write
        self._writer_thread = threading.current_thread()
        if outer:
            self._wrote_content = False
            self._wrote_user_data = False
            self._declared_users = users
        elif self._declared_users is not None:  # a nested write of its own: whose rows it writes is not known
            self._declared_users = None
        self._in_write = True
        try:
            with CoreSession(self) as s:
                result = fn(s, *args)
                s.commit()
                # readers' caches (query counts, id lists, whole replies) compare against these
                if self._wrote_content:
                    self.content_generation += 1
                if self._wrote_user_data:
                    declared = self._declared_users
                    if declared is None:
                        self.user_data_generation += 1
                    else:
                        for user_id in declared:
                            self._user_generations[user_id] = self._user_generations.get(user_id, 0) + 1
                self.generation += 1
                return result
        finally:
            if outer:
                self._in_write = False
                self._declared_users = None

    def _run_read(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        self.activity += 1
        with CoreSession(self) as s:
            return fn(s, *args)

    def _run_read_lean(self, fn: Callable[..., T], args: tuple[Any, ...], driver: bool = False) -> T:
        self.activity += 1
        lean = LeanSession(self, driver)
        try:
            return fn(lean, *args)
        finally:
            lean.close()

    def write_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(session, *args)`` in the writer and commit; blocks the calling thread."""
        if threading.current_thread() is self._writer_thread:
            return self._run_write(fn, args)
        fut: Future[T] = self._writer.submit(self._run_write, fn, args)
        return fut.result()

    def read_sync(self, fn: Callable[..., T], *args: Any) -> T:
        return self._run_read(fn, args)

    def read_background(self, fn: Callable[..., T], *args: Any) -> T:
        """``read_sync`` for a job of the server's idle time (the fragment store's fills): not counted
        in ``activity`` (what the memory trimmer and the fills compare to know that clients left the
        database alone: a fill of a big library reads for a minute after a browse, and its caches
        were kept full until it ended), and on SQLite with a page cache of ``BACKGROUND_CACHE_KIB``
        on every connection it takes (``_background_checkout``). Blocking: call it in a thread."""
        local = self._background
        if local.on:
            return self._run_read(fn, args)
        local.on = True
        try:
            with CoreSession(self) as s:
                return fn(s, *args)
        finally:
            local.on = False

    def _background_checkout(self, dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        if self._background.on:
            cur = dbapi_conn.cursor()
            try:
                cur.execute(f"PRAGMA cache_size=-{BACKGROUND_CACHE_KIB}")  # (drops the pages past it)
            finally:
                cur.close()
            record.info["background"] = True

    def _background_checkin(self, dbapi_conn: Any, record: Any) -> None:
        if record.info.pop("background", False) and dbapi_conn is not None:
            cur = dbapi_conn.cursor()
            try:
                cur.execute("PRAGMA shrink_memory")  # (nothing of a fill's page is kept between pages)
                cur.execute(f"PRAGMA cache_size=-{self.cache_kib}")
            finally:
                cur.close()

    # -- async API (for handlers) ------------------------------------------------------

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._writer.submit(self._run_write, fn, args))

    async def write_user_data(self, user_ids: Iterable[str], fn: Callable[..., T], *args: Any) -> T:
        """``write`` for a function that writes only the ``user_data`` rows of ``user_ids``:
        those users' ``user_generation`` moves, other users' cached answers stay valid."""
        users = frozenset(user_ids)
        return await asyncio.wrap_future(self._writer.submit(self._run_write, fn, args, users))

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        result: T = await self._readers.submit(self._run_read, fn, args)
        return result

    async def read_lean(self, fn: Callable[..., T], *args: Any) -> T:
        """``read`` for a function that often needs no session at all (a GetItems page of stored
        fragments reads its user data on a pooled connection, or from memory): ``fn`` gets a
        ``LeanSession``, which makes the real one on first use."""
        result: T = await self._readers.submit(self._run_read_lean, fn, args)
        return result

    async def read_driver(self, fn: Callable[..., T], *args: Any) -> T:
        """``read_lean`` for a function whose statements are mostly on the DB-API cursor
        (``query.driver_rows``): they run on one pooled connection, no ``Session`` is made
        unless something else asks for it (``LeanSession.driver_connection``)."""
        result: T = await self._readers.submit(self._run_read_lean, fn, args, True)
        return result

    def on_close(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` (blocking, on the closing thread) once the engine is disposed, when the
        file is as this process leaves it."""
        self._on_close.append(fn)

    def on_release(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` (blocking) on every ``release_memory``: a cache kept for this database
        (e.g. ``dto._KeptParents``) let go when the database was left alone for a while."""
        self._on_release.append(fn)

    def release_memory(self) -> int:
        """SQLite: close every pooled connection nobody is using and return how many were closed;
        0 elsewhere. For quiet moments (see ``memory.MemoryTrimmer``): each connection keeps up to
        ``SQLITE_CACHE_KIB`` of the pages it read (browsing a big library fills them all), its
        prepared statements (0.1-0.7 MiB after a browse) and its copy of the schema (0.16 MiB) until
        it closes; ``PRAGMA shrink_memory`` gave back only the pages. The pool opens a new one on
        the next checkout (~1 ms: the file, its pragmas, the schema), and the OS page cache still
        holds the file, so the next reads cost a system call per page, not a disk read. Blocking:
        call it in a thread."""
        for fn in list(self._on_release):
            fn()
        return self.close_idle()

    def close_idle(self) -> int:
        """SQLite: close the pooled connections nobody is using (``release_memory`` without the
        caches kept for the database: what a background job calls when its pass is over, as its
        reads filled a connection's statements again after the quiet release); 0 elsewhere."""
        if not self.is_sqlite:
            return 0
        with self._release_lock:  # (close waits for a release under way; none after it)
            return 0 if self._closed else self._release_pooled()

    #: whether a release closes the idle connections (``close_idle``) or only empties their page
    #: caches (a reader process's, whose quiet spell is a second long: ``readers/worker.py``)
    CLOSE_IDLE = True

    def _connected(self, _dbapi_conn: Any, _record: Any) -> None:
        self._connects += 1

    def _release_pooled(self) -> int:
        if not self._connects:  # (none opened since the last close: checking them out would open them)
            return 0
        close = self.CLOSE_IDLE
        pool = self.engine.pool
        taken: list[Any] = []
        reopened = 0
        try:
            # every idle connection at once (held until the end), so each is a different one; a
            # read that starts meanwhile gets a connection of its own. (A pooled slot closed by an
            # earlier release is opened by its checkout here: counted, it is not one of ours.)
            before = self._connects
            while len(taken) < 64 and getattr(pool, "checkedin", lambda: 0)() > 0:
                taken.append(self.engine.raw_connection())
            if close:
                reopened = self._connects - before
                self._connects = 0
                if getattr(pool, "checkedout", lambda: 0)() > len(taken):
                    self._connects = 1  # (one in use now, maybe opened before: the next release looks again)
            else:
                for conn in taken:
                    cur = conn.cursor()
                    try:
                        cur.execute("PRAGMA shrink_memory")
                    finally:
                        cur.close()
        finally:
            for conn in taken:
                if close and conn.dbapi_connection is not None:
                    conn.invalidate()  # closed, its record back in the pool: the next checkout connects again
                else:
                    conn.close()  # back to the pool
        return max(0, len(taken) - reopened)

    def close(self) -> None:
        with self._release_lock:
            self._closed = True
        self._writer.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        self.engine.dispose()
        for fn in self._on_close:
            fn()


class LeanSession:
    """A read's session made only when something uses it (``Database.read_lean``). Until then it
    answers what the pooled user-data read asks of a session (``info``, ``in_transaction``,
    ``get_bind``) itself: making and closing a ``Session`` that runs no statement cost ~0.1 ms,
    a warm GetItems page's read a few tenths. Anything else makes the session and is its. In a
    ``Database.read_driver`` read, statements on the DB-API cursor run on a pooled connection of
    its own until then (``driver_connection``)."""

    __slots__ = ("_db", "_driver", "_raw", "_real", "info")

    def __init__(self, db: Database, driver: bool = False) -> None:
        self._db = db
        self._driver = driver  # (Database.read_driver)
        self._real: CoreSession | None = None
        self._raw: Any = None  # a pooled connection for statements on the DB-API cursor
        self.info: dict[str, Any] = {"database": db}

    def _session(self) -> CoreSession:
        real = self._real
        if real is None:
            self._release_raw()  # (one connection per read: the session takes its own)
            real = self._real = CoreSession(self._db)
        return real

    def driver_connection(self) -> tuple[Any, str] | None:
        """For ``query.driver_rows`` in ``Database.read_driver``: a DB-API connection and the
        driver's parameter style while no session was made (one pooled connection for the read,
        taken on first use and given back on close: making, beginning and closing a ``Session``
        and asking it for its connection cost more than the few statements of one item,
        ``ItemService.item_reply``); None once the session exists (its connection is used
        then), or in a ``read_lean``."""
        if self._real is not None or not self._driver:
            return None
        raw = self._raw
        if raw is None:
            raw = self._raw = self._db.engine.raw_connection()
        return raw.dbapi_connection, self._db.engine.dialect.paramstyle

    def _release_raw(self) -> None:
        raw, self._raw = self._raw, None
        if raw is not None:
            raw.close()  # (back to the pool, reset by a rollback as a session's would be)

    def in_transaction(self) -> bool:
        return self._real is not None and self._real.in_transaction()

    def get_bind(self, *args: Any, **kwargs: Any) -> Any:
        if self._real is None and not args and not kwargs:
            return self._db.engine
        return self._session().get_bind(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session(), name)

    def close(self) -> None:
        self._release_raw()
        if self._real is not None:
            self._real.close()
            self._real = None


#: the ORM classes' module: with SQLModel, pydantic and SQLAlchemy's ORM, ~0.3 s to import
ORM_CLASSES = "server.db.tables"


async def load_orm_classes() -> None:
    """Import the ORM classes (``server/db/tables.py``) on a worker thread, the event loop free
    meanwhile. A served start, a sign-in and a signed-in client's browsing and playing load none of
    them (they run on the Core tables); the services still on them (editing, playlists, live TV's
    timers...) await this in their async methods before they import the classes, which would
    otherwise import them on the loop (~0.3 s with every request waiting;
    ``tests/db/test_orm_off_the_loop.py`` checks the rule). Two at once both wait for the one
    import (Python's module lock), each on its thread."""
    if ORM_CLASSES not in sys.modules:
        await asyncio.to_thread(importlib.import_module, ORM_CLASSES)


_session_class: Any = None


def _orm_session_class() -> Any:
    """``sqlalchemy.orm.Session``, imported on first use: the ORM (~0.26 G instructions, ~40 modules)
    is left out of a start, whose reads and writes are all Core statements (``CoreSession``)."""
    global _session_class
    if _session_class is None:
        from sqlalchemy.orm import Session

        _session_class = Session
    return _session_class


def _is_orm(statement: Any) -> bool:
    """Whether ``statement`` names an ORM class or attribute (``select(User)``, ``update(Item)``...):
    ``Session.execute`` runs those through the ORM (objects, not rows); Core statements it hands to
    its connection as they are."""
    attrs = getattr(statement, "_propagate_attrs", None)
    return attrs is not None and attrs.get("compile_state_plugin") == "orm"


class CoreSession:
    """What ``Database``'s reads and writes hand their function: a session that runs Core statements
    (``execute``, ``scalars``, ``scalar``, ``connection``) on a pooled connection of its own as an ORM
    ``Session`` does for them (the connection taken, and its transaction begun, on first use;
    ``commit`` or ``rollback`` ends the transaction and gives the connection back; ``close`` rolls
    back), without SQLAlchemy's ORM. Anything else (``add``, ``get``, ``delete``, ``begin_nested``, a
    statement on an ORM class...) makes the real ``Session`` on the same connection and transaction
    (``join_transaction_mode="control_fully"``: its commit and rollback are the transaction's, as if
    it had begun it), which from then on answers everything. A start and its tasks run Core
    statements only, so a served start never imports the ORM; the first read or write that uses it
    imports it, on the database thread that runs it. Before that no ORM object can exist in the
    session, so nothing is pending that ``Session.execute``'s autoflush would write."""

    __slots__ = ("_conn", "_db", "_real", "info")

    def __init__(self, db: Database) -> None:
        self._db = db
        self._conn: Connection | None = None
        self._real: Session | None = None
        self.info: dict[str, Any] = {"database": db}

    def __enter__(self) -> CoreSession:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _session(self) -> Session:
        real = self._real
        if real is None:
            session_class = _orm_session_class()
            conn = self._conn
            if conn is None:
                real = session_class(self._db.engine, expire_on_commit=False, info=self.info)
            else:
                real = session_class(bind=conn, expire_on_commit=False, info=self.info,
                                     join_transaction_mode="control_fully")
            self._real = real
        return real

    def connection(self, *args: Any, **kwargs: Any) -> Connection:
        if self._real is not None or args or kwargs:
            return self._session().connection(*args, **kwargs)
        conn = self._conn
        if conn is None:
            conn = self._conn = self._db.engine.connect()
            conn.begin()
        return conn

    def execute(self, statement: Any, params: Any = None, **kwargs: Any) -> Result[Any]:
        if self._real is not None or _is_orm(statement) or (kwargs and set(kwargs) != {"execution_options"}):
            return self._session().execute(statement, params, **kwargs)
        return self.connection().execute(statement, params or {}, **kwargs)

    # (``Session.scalars`` and ``scalar`` are its ``execute``'s result's, for Core and ORM statements alike)
    def scalars(self, statement: Any, params: Any = None, **kwargs: Any) -> Any:
        return self.execute(statement, params, **kwargs).scalars()

    def scalar(self, statement: Any, params: Any = None, **kwargs: Any) -> Any:
        return self.execute(statement, params, **kwargs).scalar()

    def get_bind(self, *args: Any, **kwargs: Any) -> Any:
        if self._real is not None:
            return self._real.get_bind(*args, **kwargs)
        return self._db.engine  # (a session of the engine binds everything to it)

    def in_transaction(self) -> bool:
        if self._real is not None:
            return self._real.in_transaction()
        return self._conn is not None and self._conn.in_transaction()

    def flush(self) -> None:
        if self._real is not None:
            self._real.flush()  # (else no ORM object was ever added: nothing to flush)

    def commit(self) -> None:
        self._end(commit=True)

    def rollback(self) -> None:
        self._end(commit=False)

    def _end(self, commit: bool) -> None:
        """End the transaction (the ORM session's, once made) and, as a ``Session`` does, give the
        connection back to the pool (the next statement takes one again)."""
        real = self._real
        if real is not None:
            if commit:
                real.commit()
            else:
                real.rollback()
            return
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                if commit:
                    conn.commit()
            finally:
                conn.close()  # (rolls back what was not committed)

    def close(self) -> None:
        real, self._real = self._real, None
        conn, self._conn = self._conn, None
        try:
            if real is not None:
                real.close()
        finally:
            if conn is not None:
                conn.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session(), name)
