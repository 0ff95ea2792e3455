"""The dialect layer: everything that differs between SQLite (the default) and PostgreSQL.

Queries elsewhere are written with SQLAlchemy constructs that both databases understand
(``coalesce``, ``lower(..) LIKE``, ``CASE``, window functions). What cannot be said the same way
lives here:

- URLs: ``postgresql://`` (and Heroku-style ``postgres://``) use psycopg 3, the driver of the
  ``postgres`` extra, whatever SQLAlchemy's default driver is.
- Engines: SQLite gets its pragmas (WAL, synchronous=NORMAL, ...) on every connection;
  PostgreSQL a connect timeout, UTC sessions and a pool sized for the readers plus the writer.
- ``check_database``: a missing driver or an unreachable server becomes one clear sentence
  (``DatabaseUnavailable``) instead of a traceback.
- ``binary(expr)``: a string compared byte by byte (SQLite's only collation; ``COLLATE "C"`` on
  PostgreSQL, whose database collation may be a locale's).
- Full-text search (SQLite FTS5, PostgreSQL pg_trgm) is in ``server/library/catalog/search_index.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import and_, create_engine, event, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import Boolean, String

CONNECT_TIMEOUT_SECONDS = 10


class DatabaseUnavailable(Exception):
    """The configured database cannot be used; ``str()`` is one line meant for a person."""


def normalize_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` without a driver mean psycopg 3."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url[len(scheme):]
    return url


def is_sqlite_url(url: str) -> bool:
    return url.startswith("sqlite")


def describe(url: str | URL) -> str:
    """The URL without its password, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<invalid URL>"


# SQLite's page cache per connection, in KiB. Every pooled connection (readers, the writer) fills
# its own as a large library is browsed, so this is paid up to six times; the OS page cache
# still holds the file, so a smaller cache costs a system call per page, not a disk read.
SQLITE_CACHE_KIB = 8192


#: The page cache (KiB) while a statement reads an index or a table once (``single_pass``).
SINGLE_PASS_CACHE_KIB = 256


@contextmanager
def single_pass(session: Any) -> Iterator[None]:
    """SQLite: a small page cache on the session's (or Connection's) connection while the statements inside read a
    whole index or table once (a count over every item: ~9 MiB of pages at 100k items, never
    read again). With the usual ``SQLITE_CACHE_KIB`` those pages would stay in the connection's
    cache, resident, until the memory trimmer's next quiet look (``Database.release_memory``);
    a single pass needs no more than its interior pages, and the OS caches the file. Lowering the
    size also lets go of what the connection held; the size it had is set again after. Elsewhere
    nothing happens."""
    # (a Connection has its dialect; asking a session for anything but get_bind would make the ORM
    # session of a CoreSession, and import SQLAlchemy's ORM)
    dialect = session.dialect if isinstance(session, Connection) else session.get_bind().dialect
    if dialect.name != "sqlite":
        yield
        return
    # the size it had (a reader process's connections, or a background read's, have their own)
    before = session.execute(text("PRAGMA cache_size")).scalar()
    session.execute(text(f"PRAGMA cache_size=-{SINGLE_PASS_CACHE_KIB}"))
    try:
        yield
    finally:
        session.execute(text(f"PRAGMA cache_size={int(before)}"))


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA temp_store=MEMORY")
    cur.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cur.close()


def _driver_missing_message(url: URL, exc: BaseException) -> str:
    if url.get_backend_name() == "postgresql":
        return ("PostgreSQL needs the psycopg driver, which is not installed: "
                "pip install 'reelroom[postgres]' (or psycopg[binary])")
    return f"The database driver for {url.drivername} is not installed ({exc})"


def create_db_engine(url: str, readers: int) -> Engine:
    """An engine for the Database class: ``readers`` pooled reader connections plus the writer's.
    Raises DatabaseUnavailable for a bad URL or a missing driver."""
    url = normalize_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseUnavailable(f"Not a database URL: {url!r} ({exc})") from None
    kwargs: dict[str, Any] = {"pool_size": readers + 2}
    if is_sqlite_url(url):
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 10}
    elif parsed.get_backend_name() == "postgresql":
        # UTC sessions: naive timestamps and date arithmetic never depend on the server's zone.
        kwargs["connect_args"] = {"connect_timeout": CONNECT_TIMEOUT_SECONDS, "options": "-c timezone=UTC"}
        kwargs["max_overflow"] = 4
        kwargs["pool_pre_ping"] = True  # a restarted PostgreSQL does not fail the next request
    try:
        engine = create_engine(parsed, **kwargs)
    except (ModuleNotFoundError, ImportError) as exc:
        raise DatabaseUnavailable(_driver_missing_message(parsed, exc)) from None
    except NoSuchModuleError:
        raise DatabaseUnavailable(f"Unknown database type {parsed.drivername!r} in {describe(parsed)}") from None
    if is_sqlite_url(url):
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def check_database(url: str) -> None:
    """Connect once; raise DatabaseUnavailable (one line: what failed and where) if that fails."""
    if is_sqlite_url(normalize_url(url)):
        return
    engine = create_db_engine(url, readers=1)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except Exception as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        raise DatabaseUnavailable(f"Could not connect to the database {describe(engine.url)}: "
                                  f"{reason[0] if reason else type(exc).__name__}") from None
    finally:
        engine.dispose()


# ------------------------------------------------------------------ SQL constructs


class binary(FunctionElement[str]):  # noqa: N801  (reads like a function in queries)
    """``expr`` compared byte-wise (code point order): plain on SQLite, whose default collation
    is BINARY, and ``COLLATE "C"`` on PostgreSQL. Range tricks such as ``prefix + '\\uffff'``
    depend on it."""

    type = String()
    inherit_cache = True


@compiles(binary)
def _binary_default(element: binary, compiler: Any, **kw: Any) -> str:
    return compiler.process(element.clauses, **kw)


@compiles(binary, "postgresql")
def _binary_postgresql(element: binary, compiler: Any, **kw: Any) -> str:
    return f'({compiler.process(element.clauses, **kw)}) COLLATE "C"'


def starts_with(expr: ColumnElement, prefix: str) -> ColumnElement:
    """``expr`` begins with ``prefix`` (case as given), as an index-friendly range."""
    return and_(binary(expr) >= prefix, binary(expr) < prefix + "\uffff")


class like_ci(FunctionElement[bool]):  # noqa: N801
    """``expr LIKE pattern`` ignoring ASCII case, as SQLite's LIKE does; ILIKE on PostgreSQL,
    whose LIKE is case-sensitive. (Patterns here use no escape character.)"""

    type = Boolean()
    inherit_cache = True
    _is_implicitly_boolean = True  # a predicate itself, not a column SQLite must compare with 1


@compiles(like_ci)
def _like_ci_default(element: like_ci, compiler: Any, **kw: Any) -> str:
    expr, pattern = list(element.clauses)
    return f"({compiler.process(expr, **kw)} LIKE {compiler.process(pattern, **kw)})"


@compiles(like_ci, "postgresql")
def _like_ci_postgresql(element: like_ci, compiler: Any, **kw: Any) -> str:
    expr, pattern = list(element.clauses)
    return f"({compiler.process(expr, **kw)} ILIKE {compiler.process(pattern, **kw)})"


BYTEWISE_COLLATIONS = ("C", "POSIX", "C.UTF-8", "C.utf8", "ucs_basic")


def warn_about_collation(engine: Engine) -> str | None:
    """PostgreSQL sorts names by the database's collation; SQLite (and Jellyfin) by code point.
    Log, once at start-up, when they differ; returns the collation."""
    if engine.dialect.name != "postgresql":
        return None
    with engine.connect() as conn:
        collation = conn.exec_driver_sql(
            "SELECT datcollate FROM pg_database WHERE datname = current_database()").scalar()
    if collation not in BYTEWISE_COLLATIONS:
        logging.getLogger("reelroom.db").info(
            "The database's collation is %s: names sort by it. A database created with "
            "--locale=C sorts them as SQLite does.", collation)
    return collation


def optimize_statements(dialect_name: str) -> tuple[str, ...]:
    """The daily "Optimize database" task's SQL: refresh the planner's statistics (and, on
    SQLite, fold the WAL back into the database file)."""
    if dialect_name == "sqlite":
        return ("PRAGMA optimize", "PRAGMA wal_checkpoint(TRUNCATE)")
    return ("ANALYZE",)


def quick_statistics_statements(dialect_name: str) -> tuple[str, ...]:
    """A cheap ANALYZE after library changes (SQLite: sampled; PostgreSQL's autovacuum does this
    on its own, so nothing)."""
    if dialect_name == "sqlite":
        return ("PRAGMA analysis_limit=1000", "ANALYZE")
    return ()
