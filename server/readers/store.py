"""The owner's fragment store as a reader process sees it (``<cache>/fragments.sqlite3``).

A reader answers GET /Items pages with the catalog's own ``ItemService.query_reply``, and that
path reads the fragment store (server/library/catalog/fragment_store.py) when it has one. The
store's rules stay the owner's:

- **Epochs are the owner's.** A reader never starts a series of its own (it does not bump the
  file's start counter): each request carries the epoch the owner took for it *before* handing
  it over (``ItemService.store_use``, the same call the owner's own pages make), and ``epoch()``
  answers that number whatever the stamp. So a fragment is current in a reader exactly when it
  is current in the owner: stored for that epoch, or (``mark_valid``) its digest found to hold
  by a read of that epoch in this process.
- **Nothing is written here.** The file is read on query-only connections (WAL: the owner's
  writer never waits for a reader). Fragments the reader builds and the digests it finds still
  holding are kept in ``outbox`` and travel back with the reply; the owner hands them to its own
  writer and its own marks (``ReaderPool``), stamped with the epoch it gave.
- **Failures stay here.** A read that fails turns the store off in this process for a while (the
  page is built from rows, as without a store); the file is never removed or started over from a
  reader. When the owner starts the file over (a new inode) the reader reconnects.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from server.library.catalog.fragment_store import FORMAT, FragmentStore, Write

log = logging.getLogger("reelroom.reader")

RETRY_SECONDS = 5.0  # a file that could not be opened (not there yet, another format) is tried again
#: SQLite's memory-mapped I/O on the reader's connection to the store (``PRAGMA mmap_size``, bytes;
#: SQLite caps it at its build's maximum, ~2 GiB): a page's 100 rows are then read in place from
#: the OS page cache, not copied out with a ``pread`` of each 8 KiB page (in-process, 100 random
#: rows of the 100k store: ~520 -> ~360 us of CPU on this machine). The mapped pages the reader
#: touched count in its RSS while it is busy (file pages, shared with the page cache, not its
#: heap); ``release`` unmaps them once the owner is quiet.
MMAP_BYTES = 1 << 30


class ReaderStore(FragmentStore):
    """The owner's store, read at the owner's epochs (see the module's notes). ``adopt(epoch)``
    before each request; ``take()`` after it gives what goes back to the owner."""

    def __init__(self, path: Path, stamp: Any) -> None:
        super().__init__(path, 0, stamp)
        self.current = 0  # the epoch the owner sent with the request being answered
        self._opened = False
        self._inode: tuple[int, int] | None = None
        self._retry_at = 0.0
        self._writes: list[Write] = []
        self._hits_before = 0
        self._valid_out: list[tuple[int, int, list[bytes]]] = []

    # -- opening: no schema, no new series of epochs -----------------------------------------

    def _connect(self, cache_kib: int = 1024) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=2.0)
        conn.execute(f"PRAGMA cache_size=-{cache_kib}")
        conn.execute("PRAGMA query_only=1")
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        return conn

    def release(self) -> None:
        """Close this thread's connection (a quiet moment: its mapping of the file goes, so the
        pages it touched leave the process's RSS); the next read opens another."""
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def open(self, adopt: Any = None) -> bool:
        """Use the owner's file as it is: it must exist in this build's format (``adopt`` is the
        owner's business: a reader takes every epoch from the owner)."""
        if callable(self._stamp_source):
            self.stamp = self._stamp_source()
            self._shapes.clear()
        try:
            st = os.stat(self.path)
            conn = self._connect()
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                conn.execute("SELECT 1 FROM fragments LIMIT 1").fetchall()
            finally:
                conn.close()
        except (sqlite3.Error, OSError) as exc:
            self._retry_at = time.monotonic() + RETRY_SECONDS
            log.debug("The fragment store %s is not readable here yet (%s)", self.path, exc)
            return False
        if version != FORMAT:
            self._retry_at = time.monotonic() + RETRY_SECONDS
            return False
        self._inode = (st.st_dev, st.st_ino)
        self._opened = True
        self._generation += 1  # per-thread connections opened before reconnect
        return True

    def _start_over(self, exc: BaseException, generation: int) -> None:
        """A read failed: never touch the owner's file; read without the store for a while."""
        log.warning("Reading the fragment store %s failed (%s); pages are built here for now", self.path, exc)
        self._opened = False
        self.enabled = False
        self._generation += 1
        self._retry_at = time.monotonic() + RETRY_SECONDS

    # -- the request's epoch --------------------------------------------------------------

    def adopt(self, epoch: int) -> None:
        """The owner's epoch for the next request (0: the owner has no store, or took none): the
        store is used at that epoch, or not at all."""
        self.current = epoch
        self._writes, self._valid_out = [], []
        self._hits_before = self.hits
        if not epoch:
            self.enabled = False
            return
        if self._opened:
            try:  # the owner started the file over (another inode): read the new one
                st = os.stat(self.path)
                if (st.st_dev, st.st_ino) != self._inode:
                    self._opened = False
            except OSError:
                self._opened = False
        if not self._opened and time.monotonic() >= self._retry_at:
            self.open()
        self.enabled = self._opened
        with self._epoch_lock:
            self._newest = epoch  # marks are kept for the owner's newest epoch this reader saw

    def epoch(self, stamp: Any) -> int:
        return self.current

    # -- what goes back to the owner ------------------------------------------------------

    def put(self, writes: list[Write]) -> None:
        if writes and self.enabled:
            self._writes.extend(writes)

    def mark_valid(self, epoch: int, shape: int, digests: Iterable[bytes]) -> None:
        found = list(digests)
        super().mark_valid(epoch, shape, found)
        if found:
            self._valid_out.append((epoch, shape, found))

    def take(self) -> tuple[list[Write], list[tuple[int, int, list[bytes]]], int] | None:
        """What answering the request left for the owner: the fragments built (for its writer),
        the digests found holding (for its marks) and how many fragments of the epoch were used
        as they were (a count); None when the store was not used."""
        writes, valid, hits = self._writes, self._valid_out, self.hits - self._hits_before
        self._writes, self._valid_out, self._hits_before = [], [], self.hits
        return (writes, valid, hits) if writes or valid or hits else None

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
