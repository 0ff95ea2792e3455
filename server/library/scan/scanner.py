"""The library scanner (``ctx.scanner``): full scans, one library, incremental updates of a few
paths (the watcher, PostUpdatedMedia, RefreshItem), and the "RefreshLibrary" scheduled task.

One pass over a library:
1. walk the library's folders (one stat per file);
2. probe what is new or changed: a file whose size and mtime match its cached probe
   (``media_probes``) is never probed again. Probing runs in a bounded worker pool
   (processes for big batches) and writes nothing;
3. resolve the tree into item rows with Jellyfin's naming rules (``resolve.py``);
4. hash each row; rows whose hash equals the stored ``scan_signature`` are not rewritten;
5. detect renames (a vanished item and a new one with the same content fingerprint) and move
   user data, locks and downloaded images; delete what vanished (never user data);
6. write through the single writer in batches (``store.py``) and publish ``LibraryChanged``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
from sqlalchemy import select

from server.db import schema
from server.db.database import load_orm_classes
from server.errors import NotFoundError
from server.guid import guid_from_text
from server.library.catalog import ids
from server.library.scan import probing, store
from server.library.scan.virtual_folders import LibraryInfo
from server.library.scan.walk import (
    FileStat,
    Tree,
    image_jobs,
    media_jobs,
    prune,
    unit_key,
    unit_signatures,
    units_of,
    walk,
    walk_units,
)
from server.media.images import image_tag
from server.tasks.scheduler import Progress, interval, startup
from server.wire import models as w

if TYPE_CHECKING:
    from server.db.database import Database
    from server.db.tables import Item
    from server.events.hub import EventHub
    from server.library.scan.resolve import ScannedItem
    from server.library.scan.virtual_folders import LibraryService
    from server.paths import ServerPaths
    from server.tasks.scheduler import TaskScheduler

log = logging.getLogger("reelroom.scanner")

_CHANGE_LIST_LIMIT = 2000  # ids per list in one LibraryChanged message


@dataclass
class ScanStats:
    """What the last pass did (tests and the bench read these)."""

    library_id: str = ""
    files: int = 0
    probed: int = 0
    probe_cached: int = 0
    images_measured: int = 0
    items: int = 0
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    renamed: int = 0
    units: list[str] | None = None  # the parts scanned (None: the whole library)
    units_skipped: int = 0  # parts whose files did not change since their last scan
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)


#: Bumped when the resolvers (resolve.py) change what they produce: every item is then rewritten
#: once. Here, not in resolve.py: an unchanged rescan (every start's) salts its signatures with it
#: and imports neither the resolver nor the ORM classes.
RESOLVER_VERSION = 1


def _signature(item: ScannedItem) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(str(RESOLVER_VERSION).encode())
    h.update(json.dumps(item.fields, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if item.people is not None:
        h.update(repr([(p.name, p.kind, p.role, p.order) for p in item.people]).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _image_key(path: str) -> str:
    return guid_from_text("image", path)


class Scanner:
    def __init__(self, db: Database, events: EventHub, library: LibraryService, paths: ServerPaths,
                 tasks: TaskScheduler) -> None:
        self.db = db
        self.events = events
        self.library = library
        self.paths = paths
        self.tasks = tasks  # request_scan starts the RefreshLibrary task (registered by the server context)
        self.pool = probing.WorkerPool()
        self.last_stats: dict[str, ScanStats] = {}
        self.probe_calls = 0  # files probed since start (tests prove incremental scans with it)
        self._lock = threading.Lock()  # one pass at a time
        self._pending: list[tuple[str | None, tuple[str, ...] | None, bool]] = []
        self.progress: dict[str, float] = {}  # library id -> percent while it scans
        self._listeners: list[Callable[[str, dict[str, list[str]]], None]] = []
        self.watcher = None
        self._background: set[asyncio.Task] = set()
        self._closing = threading.Event()  # set at shutdown: a running pass stops early
        self._task_progress: Progress | None = None  # the RefreshLibrary run (StopTask cancels it)
        self._cancelled: Callable[[], bool] = lambda: False  # the running pass's own stop check

    async def start(self) -> None:
        """Start watching library folders (after the database is ready)."""
        from server.library.scan.watcher import LibraryWatcher

        self.watcher = LibraryWatcher(self.library, self.scan_units)
        await self.watcher.start()

    async def aclose(self) -> None:
        self._closing.set()
        if self.watcher is not None:
            await self.watcher.stop()
        await asyncio.to_thread(self.pool.close)

    # -- service API ---------------------------------------------------------------------

    def add_listener(self, fn: Callable[[str, dict[str, list[str]]], None]) -> None:
        """fn(library_id, {"added": [...], "updated": [...], "removed": [...]}) after each pass."""
        self._listeners.append(fn)

    def request_scan(self, library_id: str | None = None, units: list[str] | None = None,
                     force: bool = False) -> asyncio.Task | None:
        """Queue a scan and make sure the RefreshLibrary task runs. ``library_id`` None means
        every library; ``units`` limits it to parts of the library; ``force`` re-resolves
        parts whose files did not change (from the probe cache: nothing is probed again)."""
        self._pending.append((library_id, tuple(units) if units else None, force))
        state = self.tasks.find(RefreshLibraryTask.key)
        return self.tasks.start(state.id)

    async def run_pending(self, progress: Progress | None = None) -> None:
        """The RefreshLibrary task body: scan what was requested (everything if nothing was)."""
        if not self._pending:
            self._pending.append((None, None, False))
        while self._pending:
            requests = list(self._pending)
            self._pending.clear()
            libraries = await self.library.libraries()
            plan: dict[str, tuple[set[str] | None, bool]] = {}
            for library_id, units, force in requests:
                for lib in libraries:
                    if library_id is not None and lib.id != library_id:
                        continue
                    have, forced = plan.get(lib.id, (set(), False))
                    if units is None or have is None:
                        plan[lib.id] = (None, forced or force)
                    else:
                        plan[lib.id] = (have | set(units), forced or force)
            todo = [(lib, *plan[lib.id]) for lib in libraries if lib.id in plan]
            await self.scan_libraries(todo, progress)
            if progress is not None and progress.cancelled:
                return

    async def scan_libraries(self, todo: list[tuple[LibraryInfo, set[str] | None, bool]],
                             progress: Progress | None = None) -> None:
        total = max(1, len(todo))
        for i, (lib, units, force) in enumerate(todo):
            if progress is not None and progress.cancelled:
                return

            def report(pct: float, i: int = i) -> None:
                if progress is not None:
                    progress((i + pct / 100) * 100 / total)

            await self.scan_library(lib, report, sorted(units) if units is not None else None, force)
        if progress is not None:
            progress(100)

    async def scan_library(self, lib: LibraryInfo, report: Callable[[float], None] | None = None,
                           units: list[str] | None = None, force: bool = False) -> ScanStats:
        loop = asyncio.get_running_loop()
        last = [0.0]

        def progress(pct: float) -> None:
            self.progress[lib.id] = pct
            now = time.monotonic()
            if now - last[0] >= 0.5 or pct >= 100:
                last[0] = now
                self.events.publish("RefreshProgress", {"ItemId": lib.id, "Progress": f"{pct:.1f}"},
                                        admins_only=True)
            if report is not None:
                loop.call_soon_threadsafe(report, pct)

        try:
            task_progress = self._task_progress
            return await asyncio.to_thread(self.scan_library_sync, lib, progress, units, force,
                                           lambda: bool(task_progress and task_progress.cancelled))
        finally:
            self.progress.pop(lib.id, None)

    @staticmethod
    def contains(lib: LibraryInfo, path: str) -> bool:
        return any(_inside(path, root) for root in lib.paths)

    async def scan_paths(self, paths: list[str]) -> None:
        """Rescan the libraries that contain these paths (the watcher, PostUpdatedMedia)."""
        libraries = await self.library.libraries()
        hit = [lib for lib in libraries if any(_inside(p, root) for p in paths for root in lib.paths)]
        for lib in hit:
            await self.scan_library(lib)

    def schedule_paths(self, libraries: list[LibraryInfo], paths: list[str]) -> None:
        """Rescan, in the background, the parts of these libraries that hold ``paths``."""
        for lib in libraries:
            units = sorted({u for p in paths for root in lib.paths if _inside(p, root) for u in units_of(root, p)})
            if units:
                task = asyncio.create_task(self.scan_units(lib, units), name=f"scan-units-{lib.id}")
                self._background.add(task)
                task.add_done_callback(self._background.discard)

    async def scan_units(self, lib: LibraryInfo, units: list[str]) -> ScanStats:
        return await asyncio.to_thread(self.scan_library_sync, lib, None, units)

    async def refresh_item(self, item_id: str) -> None:
        """RefreshItem: re-resolve the part of the library the item lives in (its whole library
        for a CollectionFolder or an item without a path), without probing anything again."""
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item

        def read(s: Any) -> tuple[Item | None, str | None]:
            row = s.get(Item, item_id)
            if row is None:
                return None, None
            path = row.path
            if path is None and (row.series_id or row.parent_id):
                parent = s.get(Item, row.series_id or row.parent_id)
                path = parent.path if parent is not None else None
            return row, path

        row, path = await self.db.read(read)
        if row is None:
            raise NotFoundError(f"Item {item_id} not found.")
        libraries = await self.library.libraries()
        lib = next((lib for lib in libraries if lib.id == (row.library_id or row.id)), None)
        if lib is None:
            return
        roots = [r for r in lib.paths if path and _inside(path, r)]
        units = sorted({u for r in roots for u in units_of(r, path)}) if row.id != lib.id else []
        self.request_scan(lib.id, units or None, force=True)

    # -- one pass ------------------------------------------------------------------------

    def scan_library_sync(self, lib: LibraryInfo, progress: Callable[[float], None] | None = None,
                          units: list[str] | None = None, force: bool = False,
                          cancelled: Callable[[], bool] | None = None) -> ScanStats:
        """One pass over a library; with ``units`` (see ``walk.units_of``) only over those
        parts of it (the watcher's way of showing a change within seconds in a big library)."""
        with self._lock:
            self._cancelled = cancelled or (lambda: False)
            try:
                return self._scan(lib, progress or (lambda _p: None), units, force)
            except _Stopped:
                log.info("The scan of %s was stopped", lib.name)
                return self.last_stats.get(lib.id) or ScanStats(library_id=lib.id)

    def _should_stop(self) -> bool:
        return self._closing.is_set() or self._cancelled()

    def _existing(self, lib: LibraryInfo, scope: set[str] | None, known: set[str]) -> dict[str, tuple]:
        """Stored rows of the library (or of the units in ``scope``):
        id -> (scan_signature, fingerprint, parent_id, path, type)."""
        from server.db.tables import Item

        columns = (Item.id, Item.scan_signature, Item.fingerprint, Item.parent_id, Item.path, Item.type)
        roots = list(lib.paths)

        def row(r: Any) -> tuple:
            return (r[1], r[2], r[3], r[4], r[5])

        def read(s: Any) -> dict[str, tuple]:
            base = select(*columns).where(Item.library_id == lib.id, Item.type != "CollectionFolder")
            if scope is None:
                return {r[0]: row(r) for r in s.execute(base)}
            out: dict[str, tuple] = {}
            if len(scope) > 200:
                for r in s.execute(base.where(Item.path.is_not(None))):
                    if unit_key(roots, r[4], known) in scope:
                        out[r[0]] = row(r)
            else:
                for unit in scope:
                    below = (Item.path >= unit + os.sep) & (Item.path < unit + chr(ord(os.sep) + 1))
                    outside = not any(_inside(unit, root) for root in roots)
                    for r in s.execute(base.where(below | (Item.path == unit))):
                        if outside or unit_key(roots, r[4], known) == unit:
                            out[r[0]] = row(r)
            for batch in store.chunks(list(out), 900):
                for r in s.execute(base.where(Item.parent_id.in_(batch), Item.path.is_(None))):
                    out[r[0]] = row(r)
            return out

        return self.db.read_sync(read)

    def _scan(self, lib: LibraryInfo, progress: Callable[[float], None], units: list[str] | None,
              force: bool = False) -> ScanStats:
        # The resolver (Jellyfin's naming rules, NFO files, stream languages) and the ORM classes
        # load with the first scan that finds a change, not at start: an empty server never needs
        # them, and an unchanged rescan (each start's) ends before them (~20 MiB for the process's life)
        t0 = time.monotonic()
        stats = ScanStats(library_id=lib.id, units=units)
        db = self.db
        metadata_dir = str(self.paths.metadata_dir)
        progress(0)

        full_tree = walk(list(lib.paths)) if units is None else walk_units(list(lib.paths), units)
        reachable = [r for r in lib.paths if full_tree.folder(r) is not None]
        salt = f"{RESOLVER_VERSION}:{probing.PROBE_VERSION}:{lib.collection_type}"
        sigs = unit_signatures(full_tree, salt)
        if units is not None:
            sigs = {u: sig for u, sig in sigs.items() if u in units}
        def stored_signatures(s: Any) -> dict[str, str]:
            u = schema.scan_units.c  # on the table: an unchanged rescan at start configures no ORM mappers
            q = select(u.path, u.signature).where(u.library_id == lib.id)
            if units is None or any(u in lib.paths for u in units):
                # A root's own files are in play: every unit folder must be known to tell a
                # root-level file from a top-level folder (see walk.unit_key).
                return {r[0]: r[1] for r in s.execute(q)}
            return {r[0]: r[1] for batch in store.chunks(list(units), 900)
                    for r in s.execute(q.where(u.path.in_(batch)))}

        stored = db.read_sync(stored_signatures)
        candidates = set(stored) if units is None else set(units)
        vanished = {u for u in candidates - set(sigs)
                    if any(u == r or os.path.dirname(u) == r for r in reachable)
                    or not any(_inside(u, r) for r in lib.paths)}  # a path taken out of the library
        active = {u for u, sig in sigs.items() if force or stored.get(u) != sig}
        complete = len(active) == len(sigs) and units is None and len(reachable) == len(lib.paths)
        stats.units_skipped = len(sigs) - len(active)
        tree = full_tree if len(active) == len(sigs) else prune(full_tree, active)
        media = media_jobs(lib.collection_type, tree)
        images = image_jobs(tree)
        stats.files = len(media)
        stats.phases["walk"] = time.monotonic() - t0
        progress(5)
        if not active and not vanished:
            stats.seconds = time.monotonic() - t0
            self.last_stats[lib.id] = stats
            progress(100)
            return stats
        from server.db.tables import Item
        from server.library.scan.resolve import Resolver

        # -- probe data: cached or fresh ------------------------------------------------------
        t1 = time.monotonic()
        keys = {ids.item_id_for_path(p): (p, st) for p, st, _ in media}
        keys.update({_image_key(p): (p, st) for p, st in images})
        cached = self._load_cache(list(keys))
        probe_data: dict[str, dict[str, Any]] = {}
        image_data: dict[str, dict[str, Any]] = {}
        to_probe: list[tuple[str, FileStat, bool, str]] = []
        to_measure: list[tuple[str, FileStat, str]] = []
        for path, st, is_audio in media:
            key = ids.item_id_for_path(path)
            hit = cached.get(key)
            if hit is not None and hit[0] == st.size and hit[1] == st.mtime and \
                    hit[2].get("Version") == probing.PROBE_VERSION:
                probe_data[path] = hit[2]
            else:
                to_probe.append((path, st, is_audio, key))
        for path, st in images:
            key = _image_key(path)
            hit = cached.get(key)
            if hit is not None and hit[0] == st.size and hit[1] == st.mtime:
                image_data[path] = hit[2]
            else:
                to_measure.append((path, st, key))
        stats.probe_cached = len(probe_data)
        stats.phases["cache"] = time.monotonic() - t1

        t2 = time.monotonic()
        fresh: list[tuple[str, int, float, str]] = []
        total_jobs = max(1, len(to_probe) + len(to_measure))
        done = 0
        executor = self.pool.executor(len(to_probe) + len(to_measure))
        futures = [(executor.submit(probing.probe_media, path, is_audio, key, metadata_dir), path, st, key, "media")
                   for path, st, is_audio, key in to_probe]
        futures += [(executor.submit(probing.measure_image, path), path, st, key, "image")
                    for path, st, key in to_measure]
        for fut, path, st, key, kind in futures:
            try:
                data = fut.result()
            except Exception as exc:  # a worker crash must not stop the scan
                log.warning("Probing %s failed: %s", path, exc)
                data = {"Version": probing.PROBE_VERSION, "Error": str(exc)} if kind == "media" else None
            done += 1
            if kind == "media":
                probe_data[path] = data
                self.probe_calls += 1
                stats.probed += 1
            else:
                stats.images_measured += 1
                if data is None:
                    continue
                image_data[path] = data
            fresh.append((key, st.size, st.mtime, json.dumps(data, ensure_ascii=False)))
            if len(fresh) >= 2000:
                store.write_probes(db, fresh)
                fresh = []
            if done % 50 == 0:
                progress(5 + 75 * done / total_jobs)
                if self._should_stop():
                    for f, *_ in futures:
                        f.cancel()
                    raise _Stopped
        if fresh:
            store.write_probes(db, fresh)
        self.pool.release_processes()
        stats.phases["probe"] = time.monotonic() - t2
        progress(80)

        # -- resolve -----------------------------------------------------------------------------
        t3 = time.monotonic()

        def measure(path: str) -> dict[str, Any] | None:
            info = image_data.get(path)
            if info is None:
                return None
            folder = tree.folder(os.path.dirname(path))
            st = folder.files.get(os.path.basename(path)) if folder else None
            tag = image_tag(path, st.mtime, st.size) if st else ""
            return {**info, "Tag": tag}

        resolver = Resolver(lib.id, lib.collection_type, tree, probe_data.get, measure)
        scanned = resolver.resolve()
        stats.items = len(scanned)
        stats.phases["resolve"] = time.monotonic() - t3

        # -- diff --------------------------------------------------------------------------------
        t4 = time.monotonic()
        known = set(sigs) | set(stored)
        existing = self._existing(lib, None if complete else active | vanished, known)
        if not complete:
            # An artist met only through an album outside its own folder must not overwrite the
            # row the artist's folder (a part skipped this time) gave it.
            loose = [i for i, it in scanned.items() if it.fields.get("type") == "MusicArtist"
                     and not it.fields.get("path") and i not in existing]
            if loose:
                kept = db.read_sync(lambda s: {r[0] for batch in store.chunks(loose, 900) for r in s.execute(
                    select(Item.id).where(Item.id.in_(batch), Item.path.is_not(None)))})
                for i in kept:
                    del scanned[i]
        upserts: list[store.Upsert] = []
        added: list[str] = []
        updated: list[str] = []
        for item_id, item in scanned.items():
            sig = _signature(item)
            old = existing.get(item_id)
            if old is not None and old[0] == sig:
                stats.unchanged += 1
                continue
            item.fields["scan_signature"] = sig
            upserts.append(store.Upsert(item_id, item.fields, item.people))
            (updated if old is not None else added).append(item_id)
        # A library path that cannot be listed (an unmounted disk, a NAS asleep) is not "empty":
        # its items stay until it can be read again.
        unreachable = [r for r in lib.paths if tree.folder(r) is None]
        removed = [i for i, row in existing.items() if i not in scanned
                   and not (row[3] and any(_inside(row[3], r) for r in unreachable))
                   and not (row[3] is None and unreachable)
                   and not (not complete and row[4] == "MusicArtist")]
        renames: list[tuple[str, str]] = []
        if removed and added:
            by_print: dict[str, str] = {}
            for old_id in removed:
                fp = existing[old_id][1]
                if fp:
                    by_print.setdefault(fp, old_id)
            for new_id in added:
                fp = scanned[new_id].fields.get("fingerprint")
                if fp and fp in by_print:
                    renames.append((by_print.pop(fp), new_id))
        stats.phases["diff"] = time.monotonic() - t4

        # -- write -------------------------------------------------------------------------------
        t5 = time.monotonic()
        for old_id, new_id in renames:
            store.move_item_identity(db, metadata_dir, old_id, new_id)
        stats.renamed = len(renames)
        # Parents first, so that a client reading mid-scan never sees an orphan.
        depth = _depths(scanned)
        upserts.sort(key=lambda u: depth.get(u.id, 0))
        for i, batch in enumerate(store.chunks(upserts)):
            if self._should_stop():
                raise _Stopped  # what was written is consistent; the unit hashes are not saved
            store.write_upserts(db, batch)
            progress(80 + 19 * min(1.0, (i + 1) * store.BATCH / max(1, len(upserts))))
        if removed:
            store.remove_items(db, removed)
        if not complete:
            removed += store.remove_orphan_artists(db, lib.id)
        store.save_unit_signatures(db, lib.id, {u: sigs[u] for u in active}, sorted(vanished))
        stats.written = len(upserts)
        stats.removed = len(removed)
        stats.phases["write"] = time.monotonic() - t5
        stats.seconds = time.monotonic() - t0
        self.last_stats[lib.id] = stats
        progress(100)
        log.info("Scanned %s: %d files, %d probed, %d items written, %d unchanged, %d removed, %d renamed "
                 "in %.2f s", lib.name, stats.files, stats.probed, stats.written, stats.unchanged, stats.removed,
                 stats.renamed, stats.seconds)
        if added or updated or removed:
            self._announce(lib.id, scanned, existing, added, updated, removed)
        return stats

    def _load_cache(self, keys: list[str]) -> dict[str, tuple[int, float, dict[str, Any]]]:
        from server.db.tables import MediaProbeCache

        decoder = msgspec.json.Decoder()

        def read(s: Any) -> dict[str, tuple[int, float, dict[str, Any]]]:
            out: dict[str, tuple[int, float, dict[str, Any]]] = {}
            for batch in store.chunks(keys, 900):
                for key, size, mtime, data in s.execute(
                        select(MediaProbeCache.item_id, MediaProbeCache.size, MediaProbeCache.mtime,
                               MediaProbeCache.data_json).where(MediaProbeCache.item_id.in_(batch))):
                    try:
                        out[key] = (size, mtime, decoder.decode(data))
                    except msgspec.DecodeError:
                        continue
            return out

        return self.db.read_sync(read)

    def _announce(self, library_id: str, scanned: dict[str, ScannedItem], existing: dict[str, tuple],
                  added: list[str], updated: list[str], removed: list[str]) -> None:
        folders_added = sorted({scanned[i].parent_id for i in added if scanned[i].parent_id})
        folders_removed = sorted({existing[i][2] for i in removed if i in existing and existing[i][2]})
        info = w.LibraryUpdateInfo(
            FoldersAddedTo=folders_added[:_CHANGE_LIST_LIMIT], FoldersRemovedFrom=folders_removed[:_CHANGE_LIST_LIMIT],
            ItemsAdded=added[:_CHANGE_LIST_LIMIT], ItemsRemoved=removed[:_CHANGE_LIST_LIMIT],
            ItemsUpdated=updated[:_CHANGE_LIST_LIMIT], CollectionFolders=[library_id], IsEmpty=False)
        self.events.publish("LibraryChanged", info)
        for fn in list(self._listeners):
            try:
                fn(library_id, {"added": added, "updated": updated, "removed": removed})
            except Exception:
                log.exception("Scan listener failed")


class _Stopped(Exception):
    """The server is shutting down or the scan task was stopped."""


def _depths(scanned: dict[str, ScannedItem]) -> dict[str, int]:
    depth: dict[str, int] = {}

    def of(item_id: str, guard: int = 0) -> int:
        if item_id in depth:
            return depth[item_id]
        item = scanned.get(item_id)
        parent = item.parent_id if item else None
        d = 0 if parent is None or parent not in scanned or guard > 64 else of(parent, guard + 1) + 1
        depth[item_id] = d
        return d

    for item_id in scanned:
        of(item_id)
    return depth


def _inside(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass
class RefreshLibraryTask:
    """Jellyfin's "Scan Media Library" task (key RefreshLibrary)."""

    scanner: Scanner
    wake_hosts: Callable[[], Awaitable[object]]  # Wake-on-LAN for the library hosts before a run
    key: str = "RefreshLibrary"
    name: str = "Scan Media Library"
    description: str = "Scans your media library for new files and refreshes metadata."
    category: str = "Library"
    is_hidden: bool = False
    # At start-up (cheap: unchanged parts are skipped) to catch what changed while the server was
    # off, then every 12 hours as Jellyfin does.
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [startup(), interval(12)])

    async def run(self, progress: Progress) -> None:
        await self.wake_hosts()
        self.scanner._task_progress = progress
        try:
            await self.scanner.run_pending(progress)
        finally:
            self.scanner._task_progress = None


__all__ = ["RefreshLibraryTask", "ScanStats", "Scanner", "Tree"]
