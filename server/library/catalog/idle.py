"""Whether the server's process is idle enough for a background batch (the fragment store's fills:
``browse/mix_fill.py``, ``catalog/page_fill.py``).

A fill runs on a thread of its own at the lowest priority, but in the owner's process it shares
the GIL with the event loop: a batch goes only while the rest of the process (its CPU less the
fill thread's own and the store writer's, which writes what the fill made) used under ``busy`` of
a core since the last batch, so requests come first and the fill takes the idle time.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
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
