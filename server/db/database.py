"""One writer, many readers.

Every write runs on a single dedicated thread, one transaction at a time, so SQLite never
answers "database is locked" under concurrent requests. Reads run on a small thread pool
against WAL snapshots and never block the writer. Both are awaitable from the event loop
and callable from worker threads (the scanner) alike.

PostgreSQL works the same way (READ COMMITTED, the default): one writer keeps write order and
the ``generation`` counter simple, readers take pooled connections. Engines come from the
dialect layer (``server/db/dialect.py``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.engine import Engine
from sqlmodel import Session

from server.db.dialect import create_db_engine, is_sqlite_url, normalize_url

T = TypeVar("T")


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


class Database:
    def __init__(self, url: str, readers: int = 4) -> None:
        self.url = normalize_url(url)
        self.is_sqlite = is_sqlite_url(self.url)
        self.engine: Engine = create_db_engine(self.url, readers)  # raises DatabaseUnavailable
        self.dialect = self.engine.dialect.name
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="db-writer")
        self._readers = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="db-reader")
        self._writer_thread: threading.Thread | None = None
        self.generation = 0  # bumped after every committed write

    # -- sync API (for worker threads) -------------------------------------------------

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    def _run_write(self, fn: Callable[..., T], args: tuple) -> T:
        self._writer_thread = threading.current_thread()
        with self.session() as s:
            result = fn(s, *args)
            s.commit()
            self.generation += 1  # readers' caches (e.g. query counts) compare against this
            return result

    def _run_read(self, fn: Callable[..., T], args: tuple) -> T:
        with self.session() as s:
            return fn(s, *args)

    def write_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(session, *args)`` in the writer and commit; blocks the calling thread."""
        if threading.current_thread() is self._writer_thread:
            return self._run_write(fn, args)
        fut: Future[T] = self._writer.submit(self._run_write, fn, args)
        return fut.result()

    def read_sync(self, fn: Callable[..., T], *args: Any) -> T:
        return self._run_read(fn, args)

    # -- async API (for handlers) ------------------------------------------------------

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._writer.submit(self._run_write, fn, args))

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._readers.submit(self._run_read, fn, args))

    def close(self) -> None:
        self._writer.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        self.engine.dispose()
