"""Whether the server's process is idle enough for a background batch, and the thread, wanted
entries, record and stop the fragment store's fills share (``BackgroundFill``: ``browse/mix_fill.py``,
``catalog/page_fill.py``).

A fill runs on a thread of its own at the lowest priority, but in the owner's process it shares
the GIL with the event loop: a batch goes only while the rest of the process (its CPU less the
fill thread's own and the store writer's, which writes what the fill made) used under ``busy`` of
a core since the last batch, so requests come first and the fill takes the idle time.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any


def lowest_priority() -> None:
    """This thread at nice 19 (Linux: a thread's own nice value; elsewhere nothing)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


class Quiet:
    """Whether the process is idle enough for the next batch: the CPU of the process less this
    thread's and the store writer's (the fill's own writes), since the last batch."""

    __slots__ = ("at", "busy", "check", "gap", "own", "process", "store", "writer")

    def __init__(self, store: Any, busy: float = 0.15, check: float = 0.5, gap: float = 0.0) -> None:
        self.store = store
        self.busy = busy  # of a core used by the rest of the process since the last batch: wait
        self.check = check  # seconds between looks while it is busy
        #: a look over this long a pause of the fill's own (``wait`` from a ``mark`` just after the
        #: batch): the rest of the process's CPU measured while the fill holds no GIL (over the batch
        #: itself, a loop kept waiting for the GIL by the batch looks idle)
        self.gap = gap
        self.mark()

    def mark(self) -> None:
        self.at = time.monotonic()
        self.process = time.process_time()
        self.own = time.thread_time()
        self.writer: float = self.store.write_seconds

    def others(self) -> float:
        """Cores the rest of the process used since ``mark``."""
        span = time.monotonic() - self.at
        if span <= 0:
            return 0.0
        writer: float = self.store.write_seconds
        used = (time.process_time() - self.process) - (time.thread_time() - self.own) - (writer - self.writer)
        return max(0.0, used) / span

    def wait(self, stop: threading.Event) -> bool:
        """Until the rest of the process is quiet (False: stopping). A short pause after each
        batch whatever the load: the event loop takes the GIL then if it wants it."""
        if stop.wait(max(0.002, self.gap)):
            return False
        while self.others() > self.busy:
            self.mark()
            if stop.wait(self.check):
                return False
        return True


class BackgroundFill:
    """What the store's fills (``browse/mix_fill.py``, ``catalog/page_fill.py``) share: a thread of
    their own at the lowest priority, started on the first want and woken by the next ones; the
    wanted entries (each with its ``asked`` time), the least recently asked going past a number;
    the wait for the library to be left alone before a pass; a record of the wanted entries
    beside the store, written whole (a temporary file, then a rename); a prompt stop.

    A fill says what is due (``_next``: None for nothing) and runs it (``_pass``); ``_tidy`` runs
    before each look (reading or writing the record), ``_closing`` after the thread has stopped."""

    NAME = "fill"  # the thread's name
    WHAT = "The fill"  # its name in log lines

    def __init__(self, db: Any, log: logging.Logger) -> None:
        self.db = db
        self.log = log
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        #: the database's activity when the running pass found the library settled (``_settled``)
        self._clients: int | None = None
        self._thread: threading.Thread | None = None
        self._dirty = False  # an entry was added since the record was written

    def _start(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._stop.is_set():
                    self._thread = threading.Thread(target=self._run, name=self.NAME, daemon=True)
                    self._thread.start()
        self._wake.set()

    @staticmethod
    def _trim(entries: dict[Any, Any], most: int) -> None:
        """The least recently asked entries go, past ``most`` (under the lock)."""
        while len(entries) > most:
            del entries[min(entries, key=lambda k: entries[k].asked)]

    def close(self) -> None:
        """Stop the fill (promptly: it looks at the stop between batches), then ``_closing``."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)
        self._closing()

    def _closing(self) -> None:
        """(After the thread stopped: keep the record.)"""

    def _tidy(self) -> None:
        """(On the thread, before each look for work: the record read or written.)"""

    def _next(self) -> Any:
        """What is due now (None: nothing)."""
        return None

    def _pass(self, work: Any) -> None:
        """Run what ``_next`` found due."""

    def _run(self) -> None:
        lowest_priority()
        try:
            while not self._stop.is_set():
                self._tidy()
                work = self._next()
                if work is None:
                    self._wake.wait(60.0)
                    self._wake.clear()
                    continue
                self._clients = None
                self._pass(work)
                if self._clients is not None and self.db.activity == self._clients:
                    # (no client asked anything since the pass settled: the memory trimmer's quiet
                    # release came while it ran, and its reads opened connections again)
                    self.db.close_idle()
                self.db.trim_heap()  # (a pass's garbage back to the system: the trimmer's quiet release came while it ran)
        except Exception:  # (a closed database at shutdown, a damaged store: the fill stops, requests go on)
            if not self._stop.is_set():
                self.log.exception("%s stopped", self.WHAT)

    def _settled(self, seconds: float) -> bool:
        """Wait until the library was left alone ``seconds`` (False: stopping)."""
        while not self._stop.is_set():
            generation = self.db.content_generation
            if self._stop.wait(seconds):
                return False
            if self.db.content_generation == generation:
                self._clients = self.db.activity
                return True
        return False

    def _write_record(self, path: Path, record: dict[str, Any]) -> None:
        part = path.with_name(path.name + ".part")
        try:
            part.write_text(json.dumps(record), encoding="utf-8")
            os.replace(part, path)
        except OSError as exc:  # (a cache: no record next time)
            self.log.debug("%s's record was not written: %s", self.WHAT, exc)
