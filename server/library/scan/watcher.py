"""Real-time monitoring of library folders with watchfiles.

Every library path of a library whose options do not disable EnableRealtimeMonitor is
watched (inotify on Linux, FSEvents / ReadDirectoryChangesW elsewhere). Changes are debounced
(``DEBOUNCE_MS``), mapped to the parts of the library they touch (``walk.units_of``: a movie
folder, a series, an artist, or the root's own files) and only those parts are rescanned, so a
new, changed or deleted file shows in /Items within a couple of seconds even in a large
library; the scan publishes ``LibraryChanged``. Files still being written are waited for
until their size and mtime settle.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from server.library.scan.virtual_folders import LibraryInfo
from server.library.scan.walk import units_of

if TYPE_CHECKING:
    import watchfiles

    from server.library.scan.virtual_folders import LibraryService

log = logging.getLogger("reelroom.watcher")

DEBOUNCE_MS = 400
SETTLE_SECONDS = 0.5  # a file modified more recently than this is still being written
MAX_SETTLE_WAIT = 3.0
STOP_SECONDS = 5.0  # how long stop() waits for changes being applied, then for the cancelled watch
_TEMP_SUFFIXES = (".part", ".tmp", ".crdownload", ".!qb", "~")


def _interesting(change: watchfiles.Change, path: str) -> bool:
    name = os.path.basename(path)
    return not name.startswith(".") and not name.lower().endswith(_TEMP_SUFFIXES)


class _Applied(Protocol):  # what a rescan of parts reports (the scanner's ScanStats)
    written: int
    removed: int


class LibraryWatcher:
    def __init__(self, library: LibraryService,
                 scan_units: Callable[[LibraryInfo, list[str]], Awaitable[_Applied]]) -> None:
        self.library = library
        self.scan_units = scan_units  # Scanner.scan_units: rescan parts of a library
        self._task: asyncio.Task | None = None
        self._stop: asyncio.Event | None = None
        self._libraries: list[LibraryInfo] = []
        self.watched: list[str] = []

    async def start(self) -> None:
        await self.refresh()

    async def refresh(self) -> None:
        """(Re)start watching the current libraries' paths."""
        await self.stop()
        libraries = [lib for lib in await self.library.libraries() if lib.realtime_monitor]
        paths = sorted({p for lib in libraries for p in lib.paths if os.path.isdir(p)})
        self._libraries = libraries
        self.watched = paths
        if not paths:
            return
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(paths, self._stop), name="library-watcher")

    async def stop(self) -> None:
        """Stop watching: the changes being applied are finished (5 s at most), then the watch
        ends; a watch that does not end in time is cancelled, and waited for (5 s more)."""
        task, stop = self._task, self._stop
        self._task = self._stop = None
        if stop is not None:
            stop.set()
        if task is None:
            return
        done, _ = await asyncio.wait({task}, timeout=STOP_SECONDS)
        if not done:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=STOP_SECONDS)
            if not done:
                log.warning("The library watcher did not stop")
                return
        if not task.cancelled() and task.exception() is not None:
            log.error("The library watcher failed", exc_info=task.exception())

    async def _run(self, paths: list[str], stop: asyncio.Event) -> None:
        log.info("Watching %d library folder(s)", len(paths))
        import watchfiles  # here: a server with no watched library never loads it (~1 MiB)

        try:
            async for changes in watchfiles.awatch(*paths, watch_filter=_interesting, debounce=DEBOUNCE_MS,
                                                   step=50, stop_event=stop, recursive=True,
                                                   ignore_permission_denied=True):
                try:
                    await self.handle([p for _, p in changes])
                except Exception:
                    log.exception("Could not apply library changes")
        except Exception:
            log.exception("The library watcher stopped")

    async def handle(self, changed: list[str]) -> None:
        await self._settle(changed)
        work: dict[str, tuple[LibraryInfo, set[str]]] = {}
        for path in changed:
            for lib in self._libraries:
                for root in lib.paths:
                    if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
                        entry = work.setdefault(lib.id, (lib, set()))
                        entry[1].update(units_of(root, path))
        for lib, units in work.values():
            t0 = time.monotonic()
            stats = await self.scan_units(lib, sorted(units))
            log.info("Applied changes in %s (%d part(s)) in %.2f s: %d written, %d removed", lib.name,
                     len(units), time.monotonic() - t0, stats.written, stats.removed)

    @staticmethod
    async def _settle(paths: list[str]) -> None:
        deadline = time.monotonic() + MAX_SETTLE_WAIT
        while time.monotonic() < deadline:
            now = time.time()
            busy = False
            for p in paths:
                try:
                    if now - os.stat(p).st_mtime < SETTLE_SECONDS:
                        busy = True
                        break
                except OSError:
                    continue
            if not busy:
                return
            await asyncio.sleep(0.1)
