"""Keep the process's resident memory close to what it really uses (glibc only; elsewhere a no-op).

- ``limit_arenas()``: glibc gives every thread that allocates its own malloc arena (up to 8 per
  core), and memory freed in one arena cannot serve another. The server's thread pools (database
  readers, images, probing, password hashing, ``asyncio.to_thread``) then hold several
  half-empty arenas after a burst. Two arenas are plenty for a server whose CPU work is under the
  GIL. Call it at process start, before threads allocate (``MALLOC_ARENA_MAX`` set by the user
  wins).
- ``MemoryTrimmer``: after a burst of requests the freed memory stays in the arenas and RSS stays
  at its peak. Every ``interval`` seconds the trimmer looks at RSS and, when it grew by more than
  ``threshold`` since the last look, hands the free pages back to the system (``malloc_trim``,
  off the event loop). The first look, one interval after start, always trims (start-up's
  garbage). Cheap when idle: one read of /proc/self/statm. Given a ``quiet`` pair (an activity
  counter, a release function: the database's count of reads, writes and statements and ``Database.release_memory``),
  a look that finds the counter unchanged since the last look, after it moved, releases (SQLite's
  page caches, filled by browsing or by start-up's scans) and trims: once per quiet spell.
- ``pause_collector()`` / ``settle_collector()``: start-up creates some 135,000 tracked objects
  that live as long as the server (modules, tables, routes), and the cyclic garbage collector
  walked them again and again while they were made (~320 passes, two of them full): ~150 ms of
  start-up's CPU, for under 2,000 garbage objects. The entry points pause it before importing the
  server; a second after the server is ready (the first requests do not wait for it),
  ``settle_collector`` collects start-up's garbage once, moves everything alive out of the
  collector's reach (``gc.freeze``: a full collection would otherwise walk the whole heap
  again, measured at 40% of the CPU of an Items page) and resumes it.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import os
import sys
from collections.abc import Callable

log = logging.getLogger("reelroom.memory")

M_ARENA_MAX = -8  # glibc's mallopt parameter number
ARENAS = 2
_libc: ctypes.CDLL | None | bool = False  # False: not looked up yet
_paused = False  # the collector was paused by pause_collector and not resumed yet


def pause_collector() -> None:
    """Pause the cyclic garbage collector for start-up (an entry point, before the server's
    imports); :func:`settle_collector` resumes it. A no-op when it is already off."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def collector_paused() -> bool:
    return _paused


def settle_collector() -> None:
    """Start-up is over: what is alive now lives as long as the server. When the collector was
    paused, collect start-up's garbage first and resume it; in both cases freeze the survivors."""
    global _paused
    if _paused:
        gc.collect()
    gc.freeze()
    if _paused:
        _paused = False
        gc.enable()


def resume_collector() -> None:
    """Resume a paused collector without freezing anything (start-up failed or was stopped)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is False:
        _libc = None
        if sys.platform.startswith("linux"):
            try:
                # glibc's soname first: find_library runs ``ldconfig -p`` in a child process
                # (10-30 ms on the way to the first request)
                try:
                    libc = ctypes.CDLL("libc.so.6")
                except OSError:
                    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt"):
                    _libc = libc
            except OSError:
                pass
    return _libc if isinstance(_libc, ctypes.CDLL) else None


def limit_arenas(arenas: int = ARENAS) -> bool:
    """At most ``arenas`` malloc arenas from now on; True when applied."""
    libc = _glibc()
    if libc is None or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    return bool(libc.mallopt(M_ARENA_MAX, arenas))


def trim() -> bool:
    """Give free heap pages back to the system; True when some were."""
    libc = _glibc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


def rss_bytes() -> int:
    """Resident set size of this process (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class MemoryTrimmer:
    def __init__(self, interval: float = 10.0, threshold: int = 8 * 1024 * 1024,
                 quiet: tuple[Callable[[], int], Callable[[], object]] | None = None) -> None:
        self.interval = interval
        self.threshold = threshold
        self.trims = 0
        #: (activity counter, release): see the module's docstring
        self.quiet = quiet
        self.releases = 0
        self._seen: int | None = None  # the counter at the last look
        self._released_at: int | None = None  # the counter when last released
        self._task: asyncio.Task[None] | None = None

    @property
    def available(self) -> bool:
        return _glibc() is not None and rss_bytes() > 0

    def start(self) -> None:
        if self._task is None and (self.available or self.quiet is not None):  # (releasing works everywhere)
            self._task = asyncio.get_running_loop().create_task(self._run(), name="memory-trimmer")

    async def check(self, last: int) -> int:
        """One look: trim when RSS grew past ``last`` + threshold; returns the new reference.
        With ``quiet``: release and trim when the activity counter stood still since the last look."""
        if self.quiet is not None:
            count, release = self.quiet
            seen, self._seen = self._seen, count()
            if seen == self._seen and self._seen != self._released_at:
                self._released_at = self._seen
                await asyncio.to_thread(release)
                await asyncio.to_thread(trim)
                self.releases += 1
                after = rss_bytes()
                log.debug("Quiet: released the database's caches, RSS %d MiB", after >> 20)
                return after
        now = rss_bytes()
        if now > last + self.threshold:
            await asyncio.to_thread(trim)
            self.trims += 1
            after = rss_bytes()
            log.debug("Trimmed the heap: RSS %d -> %d MiB", now >> 20, after >> 20)
            return after
        return min(last, now) if now else last

    async def _run(self) -> None:
        last = 0  # the first look trims what start-up left behind
        while True:
            await asyncio.sleep(self.interval)
            try:
                last = await self.check(last)
            except Exception:  # never let memory housekeeping take anything down
                log.exception("Memory trim failed")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
