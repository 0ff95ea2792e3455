"""Artwork that needs no internet: what Jellyfin's screen grabber and dynamic image providers do.

``ctx.artwork`` runs as the "RefreshArtwork" task (Library category). It runs at start-up,
after every scan that changed something, after playlist, collection and image changes
(debounced), daily, and on demand; one run at a time. A run, in order:

1. **Artists**: a MusicArtist row without a Primary gets a copy of one of its album covers
   (its newest album with a cover); an artist met only in tags (no row) gets one in
   ``byname_artwork``.
2. **Collages** (``collage.py``): libraries (CollectionFolder: a 16:9 strip with the name), the
   Collections and Playlists views, playlists (square), collections (poster), genres and music
   genres (square), from up to four of their items' Primary images, newest first. The entry keeps
   a key made of the chosen images' tags (and the name): an unchanged key is not redone, so a run
   over an unchanged library makes nothing.
3. **Frames** (``frames.py``): a video (Movie, Episode, Video, MusicVideo, Trailer) without a
   Primary gets one grabbed by ffmpeg (10% of the runtime, black frames skipped) unless its
   library's TypeOptions leave the "Screen Grabber" out. The entry keeps the file's size and
   mtime ("Source"): a changed file drops it at the next scan (``merge.py``) and it is grabbed
   again. Items the user locked (LockData) are left alone.
4. Collages again, so that new frames show up in the library tiles.

A complete run remembers a cheap fingerprint of its inputs (``LAST_RUN_FILE``); the run a start
makes skips everything when it still matches (a restart on an unchanged library costs ~25 ms of
reads at 100k items instead of ~1.5 s of CPU). ``request`` and any write that changes a row of a
table a run reads (``_note_statement``) drop the file, so a change is never lost to a restart;
writes behind the server's back while it is stopped show in the SQLite file itself (the stamp
recorded at close, ``_note_close``, against the one the next process opened).

Generated entries live in ``items.images_json`` like any other image (so item DTOs carry
ImageTags and ImageBlurHashes and the image routes and cache serve them) with
``"Generated": "Frame" | "Collage" | "AlbumCover"``. Files go to the item's metadata folder
(``<data>/metadata/items/<id[:2]>/<id>/``) or, for by-name items, to
``<data>/metadata/generated/<Kind>/<id[:2]>/<id>/``. A generated image never replaces another
one: an upload, sidecar art or a downloaded image of the same type wins (``merge.py``,
``store_item_image``), and the task only fills types nothing covers.

Why a task after the scan and not in it: grabbing a frame costs ffmpeg a seek and a decode
(tens of milliseconds to seconds per file), which would cut a first scan's files/s by an order of
magnitude; after the scan the library is browsable at once and the art follows at low priority.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from sqlalchemy import Table, delete, event, func, insert, select, update

from server import memory
from server.artwork import collage
from server.artwork.frames import grab_frame
from server.db.database import file_stamp
from server.db.dialect import single_pass
from server.db.handles import collection_entries, item_values, items, libraries, playlist_entries, playlists
from server.db.schema import byname_artwork
from server.library.catalog import ids
from server.library.scan.merge import file_source
from server.media.images import ImageError, blurhash_of, image_info, image_tag
from server.metadata.image_files import image_folder, remove_replaced
from server.tasks.scheduler import Progress, daily, startup
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database
    from server.events.hub import EventHub
    from server.paths import ServerPaths
    from server.tasks.scheduler import TaskScheduler

log = logging.getLogger("reelroom.artwork")
_T = TypeVar("_T")

SCREEN_GRABBER = "Screen Grabber"  # Jellyfin's name for the frame grabber (LibraryOptions.TypeOptions)
FRAME_TYPES = ("Movie", "Episode", "Video", "MusicVideo", "Trailer")
_NO_FRAME_VIDEO_TYPES = ("Dvd", "BluRay", "Iso")
# What a library tile shows, by collection type (Jellyfin's choice, albums for music).
_LIBRARY_TYPES = {"movies": ("Movie",), "tvshows": ("Series",), "music": ("MusicAlbum",),
                  "musicvideos": ("MusicVideo",), "books": ("Book", "AudioBook"), "boxsets": ("BoxSet",),
                  "homevideos": ("Video", "Photo"), "photos": ("Photo", "Video")}
_ANY_TYPES = ("Movie", "Series", "MusicAlbum", "MusicVideo", "Video", "Episode", "Photo", "Book", "AudioBook",
              "BoxSet", "Playlist", "Audio")
_GENRE_TYPES = ("Movie", "Series")
_MUSIC_GENRE_TYPES = ("MusicAlbum",)
_PAGE = 200
_CANDIDATES = 24  # rows looked at per source query (only rows mentioning a Primary are read)
#: A write to a table a run reads: the remembered run no longer describes the library.
_INPUT_WRITE = re.compile(r'\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(?:items|item_values|libraries|'
                          r'playlists|playlist_entries|collection_items|byname_artwork)"?[\s(]', re.IGNORECASE)


def _images(text: str | None) -> list[dict[str, Any]]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [dict(v) for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _primary(images: list[dict[str, Any]], generated: bool | None = None) -> dict[str, Any] | None:
    for img in images:
        if img.get("Type") != "Primary" or not img.get("Path"):
            continue
        if generated is None or bool(img.get("Generated")) == generated:
            return img
    return None


def _key(*parts: object) -> str:
    return hashlib.sha1("\x00".join(str(p) for p in parts).encode("utf-8", "surrogateescape"),
                        usedforsecurity=False).hexdigest()


def _read_failures(path: Path) -> dict[str, str]:
    """The remembered frame failures (item id -> file source); nothing when the file is missing
    or unreadable (then the files are simply tried again)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def _write_failures(path: Path, failures: dict[str, str]) -> None:
    """Written to a temporary file and renamed into place (a crash leaves the old list)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(failures, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _inputs(s: Session) -> str:
    """A cheap fingerprint of what a run reads, from indexes and small tables only (a few ms at
    100k items): the items (count, newest), their values, playlist and collection entries,
    public playlists, the by-name rows, and the libraries with their options. Changes inside
    rows (an image upload or delete, a playlist reorder, a rescan) ask for a run themselves
    (``request``), which drops the remembered run; this catches what happened otherwise."""

    t = _ITEMS.c
    with single_pass(s):  # each count reads a whole index once (~8 MiB of pages at 100k items)
        parts: list[Any] = [
            tuple(s.execute(select(func.count(), func.max(t.date_created)).select_from(_ITEMS)).one()),
            s.execute(select(func.count()).select_from(_VALUES)).scalar(),
            # on the tables, not the ORM classes: the start-up run configures no ORM mappers
            s.execute(select(func.count()).select_from(playlist_entries)).scalar(),
            s.execute(select(func.count()).select_from(collection_entries)).scalar(),
            s.execute(select(func.count()).select_from(byname_artwork)).scalar(),
            sorted(tuple(r) for r in s.execute(select(playlists.c.id, playlists.c.is_public))),
            sorted(tuple(r) for r in s.execute(select(libraries.c.id, libraries.c.collection_type,
                                                      libraries.c.options_json))),
        ]
    return _key(*(repr(p) for p in parts))


def _entry(path: Path, generated: str, **extra: Any) -> dict[str, Any]:
    """An images_json entry for a file just written (size, BlurHash and tag measured once)."""
    stat = path.stat()
    width, height, _fmt = image_info(path)
    return {"Type": "Primary", "Path": str(path), "Tag": image_tag(path, stat.st_mtime, stat.st_size),
            "Width": width, "Height": height, "BlurHash": blurhash_of(path), "Generated": generated, **extra}


def store_generated(s: Session, item_id: str, entry: dict[str, Any], source: str | None = None) -> list[str] | None:
    """Put a generated Primary on an item unless something else covers Primary (then None: the
    caller drops its file). With ``source`` the row's file must still be that one. Returns the
    paths of the generated files it replaced. (Core statements: an artwork run loads no ORM.)"""
    t = items.c
    row = s.execute(select(t.images_json, t.file_size, t.size, t.file_mtime).where(t.id == item_id)).first()
    if row is None or (source is not None and file_source(row) != source):
        return None
    images = _images(row.images_json)
    if _primary(images, generated=False) is not None:
        return None
    old = [img for img in images if img.get("Type") == "Primary" and img.get("Generated")]
    kept = [img for img in images if not (img.get("Type") == "Primary" and img.get("Generated"))]
    s.execute(update(items).where(t.id == item_id).values(images_json=json.dumps([*kept, {**entry, "Index": 0}])))
    return [str(img["Path"]) for img in old if img.get("Path") != entry["Path"]]


def drop_generated(s: Session, item_id: str) -> list[str]:
    """Remove an item's generated Primary (nothing to make it from any more); returns its paths."""
    t = items.c
    images_json = s.execute(select(t.images_json).where(t.id == item_id)).scalar()
    if images_json is None:
        return []
    images = _images(images_json)
    old = [img for img in images if img.get("Type") == "Primary" and img.get("Generated")]
    if old:
        s.execute(update(items).where(t.id == item_id)
                  .values(images_json=json.dumps([img for img in images if img not in old])))
    return [str(img["Path"]) for img in old]


@dataclass
class RunStats:
    """What the last run did (tests and the bench read it)."""

    frames: int = 0
    frame_seconds: float = 0.0
    frame_attempts: int = 0
    frames_failed: int = 0
    frames_known_failed: int = 0  # skipped: ffmpeg failed on the same file before (remembered)
    collages: int = 0
    collage_seconds: float = 0.0
    collages_unchanged: int = 0
    covers: int = 0
    removed: int = 0
    seconds: float = 0.0
    #: a start's run found the library as the last complete run left it and did nothing
    skipped: bool = False
    #: videos this run could not reach (a share offline): the next start must try them again,
    #: so the run is not remembered as complete (images that could not be made from the same
    #: inputs are not: the daily run and any change try them again)
    retry: int = 0


@dataclass(frozen=True, slots=True)
class _Video:
    """A video to grab a frame from (no streams or images kept: a first run may list 100k)."""

    id: str
    path: str
    file_size: int | None
    size: int | None
    file_mtime: float | None
    run_time_ticks: int | None


@dataclass
class _Source:
    path: str
    tag: str


class ArtworkService:
    DEBOUNCE = 2.0

    """``ctx.artwork``. The server context registers its task (``ArtworkTask``) and calls ``after_scan``
    after every scan pass, ``request`` after playlist, collection and image changes."""

    def __init__(self, db: Database, events: EventHub, tasks: TaskScheduler, paths: ServerPaths,
                 ffmpeg_path: Callable[[], str], folder_images: Callable[[str, str], list[dict[str, Any]]]) -> None:
        self.db = db
        self.events = events
        self.tasks = tasks  # request() starts the RefreshArtwork task
        self.ffmpeg_path = ffmpeg_path  # blocking (may look ffmpeg up): called in a thread
        self.folder_images = folder_images  # ImageService.folder_images: a by-name folder's pictures win
        self.metadata_dir = paths.metadata_dir
        self.generated_dir = paths.metadata_dir / "generated"
        #: item id -> the file source (size:mtime) ffmpeg could not grab a frame from; kept in
        #: FAILURES_FILE so a restart does not try the same files again (a changed file is retried)
        self.failures: dict[str, str] = {}
        self._failures_loaded = False
        self.last = RunStats()
        self.runs = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._again = False
        self._running = False
        self._handed = 0  # after_scan calls handed to the loop and not yet run there (any thread)
        self._handed_lock = threading.Lock()
        self._remembered = True  # a LAST_RUN_FILE may exist (unknown until a change drops it)
        # any write of what a run reads (a metadata edit, a download, a library's options), also
        # those that do not ask for a run, drops the remembered run (one regex per statement
        # while one is remembered; nothing once it is dropped)
        event.listen(db.engine, "after_cursor_execute", self._note_statement)
        db.on_close(self._note_close)

    # -- triggering ---------------------------------------------------------------------------------

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def after_scan(self, _library_id: str, _changes: dict[str, list[str]]) -> None:
        if self._loop is not None:  # called from the scan's worker thread
            with self._handed_lock:
                self._handed += 1  # pending from now on, not only once the loop gets to it
            try:
                self._loop.call_soon_threadsafe(self._scan_request)
            except RuntimeError:  # the loop is closed: shutting down
                with self._handed_lock:
                    self._handed -= 1

    def _scan_request(self) -> None:
        self.request()
        with self._handed_lock:
            self._handed -= 1

    @property
    def pending(self) -> bool:
        """A run is going, or one is due (debounced), or a scan's ask is on its way to the loop."""
        return self._running or self._timer is not None or self._handed > 0

    @property
    def running(self) -> bool:
        return self._running

    @property
    def due(self) -> bool:
        """A run was asked for and starts when its debounce delay is over."""
        return self._timer is not None

    def request(self, delay: float | None = None) -> None:
        """Run soon (debounced): after scans, playlist, collection and image changes. On the loop."""
        self._forget()
        if self._running:
            self._again = True
            return
        if self._timer is not None:
            return
        loop = self._loop or asyncio.get_running_loop()
        self._timer = loop.call_later(self.DEBOUNCE if delay is None else delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._running:
            self._again = True
            return
        self.tasks.start(self.tasks.find(ArtworkTask.key).id)

    # -- a run ---------------------------------------------------------------------------------------

    async def run(self, progress: Progress) -> RunStats:
        self._running = True
        self._again = False
        stats = RunStats()
        t0 = time.monotonic()
        try:
            # a start on a library as the last complete run left it: nothing to read or make
            stats.skipped = progress.trigger == "StartupTrigger" and await self._unchanged()
            if not stats.skipped:
                await self._run(stats, progress)
            progress(100)
        finally:
            stats.seconds = time.monotonic() - t0
            self.last = stats
            self.runs += 1
            self._running = False
            if self._again and not progress.cancelled:
                self._again = False
                self.request()
        if stats.skipped:
            log.info("Artwork: nothing changed since the last complete run, nothing to do (%.2f s)", stats.seconds)
        else:
            log.info("Artwork: %d frames, %d collages (%d unchanged), %d covers in %.1f s", stats.frames,
                     stats.collages, stats.collages_unchanged, stats.covers, stats.seconds)
        return stats

    # -- an unchanged library at start ---------------------------------------------------------------

    LAST_RUN_FILE = "last-run.json"
    _LAST_RUN_VERSION = 1  # bump when a run starts making something new from the same inputs

    async def _unchanged(self) -> bool:
        """The inputs a run reads are what the last complete run saw (its LAST_RUN_FILE), and no
        change asked for a run since (``request`` drops the file)."""
        path = self.generated_dir / self.LAST_RUN_FILE
        try:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
            last = json.loads(text)
        except (OSError, ValueError):
            return False
        if not isinstance(last, dict) or last.get("version") != self._LAST_RUN_VERSION:
            return False
        # the database file as the last process left it (recorded at its close): anything that
        # wrote it since (the sqlite3 shell, a restored backup, a migration) shows here, also
        # when no counted total moved; a crash left no record, so its start works too
        if self.db.file is not None and (last.get("closed") is None or last.get("closed") != self.db.opened_stamp):
            return False
        return bool(last.get("inputs")) and last.get("inputs") == await self.db.read(_inputs)

    def _note_close(self) -> None:
        """The database is closed: if the remembered run still holds (no input written since),
        add how this process leaves the file, for the next start to compare (blocking; on the
        closing thread)."""
        if not self._remembered or self.db.file is None:
            return
        path = self.generated_dir / self.LAST_RUN_FILE
        try:
            last = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(last, dict) and last.get("inputs"):
                _write_json(path, {**last, "closed": file_stamp(self.db.file)})
        except (OSError, ValueError) as exc:
            log.debug("Artwork: the remembered run was not updated at close: %s", exc)

    async def _remember(self) -> None:
        """After a complete run: what it saw, so that the next start can skip an unchanged library."""
        self._remembered = True  # from here on a write of an input clears it (_note_statement)
        inputs = await self.db.read(_inputs)
        path = self.generated_dir / self.LAST_RUN_FILE
        await asyncio.to_thread(_write_json, path, {"version": self._LAST_RUN_VERSION, "inputs": inputs})
        if self._again or not self._remembered:  # a change came in meanwhile: drop it again
            self._remembered = True
            self._forget()

    def _note_statement(self, _conn: Any, cursor: Any, statement: str, *_rest: Any) -> None:
        # after the statement: one that changed no row (Live TV's channel sync at every start
        # deleting its none-left items) changes nothing a run reads
        if self._remembered and cursor.rowcount != 0 and _INPUT_WRITE.match(statement):
            self._remembered = False
            # on a database thread (the writer): the unlink is a syscall, done here
            (self.generated_dir / self.LAST_RUN_FILE).unlink(missing_ok=True)

    def _forget(self) -> None:
        """A change wants a run: the next start must not skip it (on the loop; the unlink runs in
        a thread, once per remembered run)."""
        if not self._remembered:
            return
        self._remembered = False
        path = self.generated_dir / self.LAST_RUN_FILE
        loop = self._loop or asyncio.get_running_loop()
        loop.run_in_executor(None, lambda: path.unlink(missing_ok=True))

    async def _run(self, stats: RunStats, progress: Progress) -> None:
        changed: list[str] = []
        changed += await self.artist_covers(stats)
        progress(3)
        changed += await self.collages(stats, progress)
        progress(8)
        self._announce(changed)
        changed = await self.frames(stats, progress, 8, 95)
        if changed and not progress.cancelled:
            changed += await self.collages(stats, progress)
        self._announce(changed)
        if not progress.cancelled and not self._again and not stats.retry:
            await self._remember()
        # the reads' freed memory (SQLite's sorter and page cache, the rows) back to the system
        # now, not at the trimmer's next look (which only trims a grown RSS)
        await asyncio.to_thread(memory.trim)

    def _announce(self, item_ids: list[str]) -> None:
        wanted = list(dict.fromkeys(i for i in item_ids if i))
        if wanted:
            self.events.publish("LibraryChanged", w.LibraryUpdateInfo(
                FoldersAddedTo=[], FoldersRemovedFrom=[], ItemsAdded=[], ItemsRemoved=[],
                ItemsUpdated=wanted[:2000], CollectionFolders=[], IsEmpty=False))

    async def _save(self, item_id: str, entry: dict[str, Any], source: str | None = None) -> bool:
        replaced = await self.db.write(store_generated, item_id, entry, source)
        if replaced is None:
            await asyncio.to_thread(remove_replaced, [entry["Path"]], self.metadata_dir)
            return False
        await asyncio.to_thread(remove_replaced, replaced, self.metadata_dir)
        return True

    # -- frames --------------------------------------------------------------------------------------

    def _frame_libraries(self, s: Session) -> dict[str, frozenset[str]]:
        """Library id -> the video types whose TypeOptions leave the Screen Grabber out."""
        out: dict[str, frozenset[str]] = {}
        for lib_id, text in s.execute(select(libraries.c.id, libraries.c.options_json)):  # (no ORM at start)
            try:
                options = msgspec.json.decode(text or "{}", type=w.LibraryOptions, strict=False)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
            off = {t.Type for t in options.TypeOptions or [] if t.Type and t.ImageFetchers is not None
                   and SCREEN_GRABBER not in t.ImageFetchers}
            if off:
                out[lib_id] = frozenset(off)
        return out

    FAILURES_FILE = "frame-failures.json"

    async def frames(self, stats: RunStats, progress: Progress, start: float, end: float) -> list[str]:
        ffmpeg = await asyncio.to_thread(self.ffmpeg_path)
        disabled = await self.db.read(self._frame_libraries)
        todo = await self.db.read(_in_one_pass(self._frame_candidates), disabled)
        if not self._failures_loaded:
            self.failures.update(await asyncio.to_thread(_read_failures, self.generated_dir / self.FAILURES_FILE))
            self._failures_loaded = True
        known = dict(self.failures)
        changed: list[str] = []
        try:
            await self._grab_frames(todo, ffmpeg, stats, progress, start, end, changed)
        finally:
            # only candidates can fail again: the rest (a frame made, an item gone) is dropped
            candidates = {row.id for row in todo}
            self.failures = {k: v for k, v in self.failures.items() if k in candidates}
            if self.failures != known:
                await asyncio.to_thread(_write_failures, self.generated_dir / self.FAILURES_FILE, self.failures)
        return changed

    async def _grab_frames(self, todo: list[_Video], ffmpeg: str, stats: RunStats, progress: Progress,
                           start: float, end: float, changed: list[str]) -> None:
        for n, row in enumerate(todo):
            if progress.cancelled:
                break
            source = file_source(row)
            if self.failures.get(row.id) == source:
                stats.frames_known_failed += 1
                continue
            if not await asyncio.to_thread(os.path.isfile, row.path):
                stats.retry += 1
                continue  # not reachable now (a share offline): tried again next run, not remembered
            out = image_folder(self.metadata_dir, row.id) / f"frame-{_key(row.path, source)[:16]}.jpg"
            t0 = time.monotonic()
            try:
                grab = await grab_frame(ffmpeg, row.path, (row.run_time_ticks or 0) / 10_000_000 or None, out)
                entry = await asyncio.to_thread(_entry, grab.path, "Frame", Source=source)
            except (ImageError, OSError) as exc:
                log.warning("No frame for %s: %s", row.path, exc)
                self.failures[row.id] = source
                stats.frames_failed += 1
                await asyncio.to_thread(remove_replaced, [str(out)], self.metadata_dir)
                continue
            self.failures.pop(row.id, None)  # an earlier version of the file failed
            stats.frame_seconds += time.monotonic() - t0
            stats.frame_attempts += grab.attempts
            if await self._save(row.id, entry, source):
                stats.frames += 1
                changed.append(row.id)
                # a frame of an earlier version of the file (its entry went at the rescan)
                await asyncio.to_thread(_remove_others, out.parent, "frame-", out.name)
            progress(start + (end - start) * (n + 1) / max(1, len(todo)))

    @staticmethod
    def _frame_candidates(s: Session, disabled: dict[str, frozenset[str]]) -> list[_Video]:
        """Videos with no Primary, or a generated one of another file version. Pages by id and
        reads streams only for rows without a Primary of their own."""

        t = items.c
        found: list[_Video] = []
        last = ""
        while True:
            rows = s.execute(
                select(t.id, t.path, t.file_size, t.size, t.file_mtime, t.run_time_ticks, t.images_json,
                       t.media_streams_json, t.library_id, t.type)
                .where(t.id > last, t.type.in_(FRAME_TYPES), t.media_type == "Video", t.path.is_not(None),
                       t.is_virtual.is_(False), t.is_locked.is_(False),
                       func.coalesce(t.video_type, "VideoFile").not_in(_NO_FRAME_VIDEO_TYPES),
                       (~t.images_json.like('%"Primary"%')) | t.images_json.like('%"Generated"%'))
                .order_by(t.id).limit(_PAGE)).all()
            if not rows:
                return found
            last = rows[-1].id
            for r in rows:
                if r.type in disabled.get(r.library_id or "", ()):
                    continue
                images = _images(r.images_json)
                if _primary(images, generated=False) is not None:
                    continue
                generated = _primary(images, generated=True)
                if generated is not None and generated.get("Source") == file_source(r) \
                        and os.path.isfile(generated["Path"]):
                    continue
                if '"Video"' not in (r.media_streams_json or ""):
                    continue  # no video stream to grab from (Jellyfin skips these too)
                found.append(_Video(r.id, r.path, r.file_size, r.size, r.file_mtime, r.run_time_ticks))

    # -- artists -------------------------------------------------------------------------------------

    async def artist_covers(self, stats: RunStats) -> list[str]:
        todo = await self.db.read(self._artists_without_art)
        changed: list[str] = []
        for artist_id, name, cover in todo:
            folder = await asyncio.to_thread(self.folder_images, "MusicArtist", name)
            if any(img["Type"] == "Primary" for img in folder):
                continue  # the by-name folder's picture is served for this artist
            out = image_folder(self.metadata_dir, artist_id) / f"cover-{cover.tag[:16]}{Path(cover.path).suffix.lower()}"
            try:
                entry = await asyncio.to_thread(self._copy_cover, cover.path, out, cover.tag)
            except (ImageError, OSError) as exc:
                log.warning("No cover for artist %s from %s: %s", artist_id, cover.path, exc)
                continue
            if await self._save(artist_id, entry):
                stats.covers += 1
                changed.append(artist_id)
        return changed

    @staticmethod
    def _copy_cover(source: str, out: Path, key: str) -> dict[str, Any]:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.part")
        shutil.copyfile(source, tmp)
        os.replace(tmp, out)
        return _entry(out, "AlbumCover", Key=key)

    @staticmethod
    def _artists_without_art(s: Session) -> list[tuple[str, str, _Source]]:
        """MusicArtist rows without a Primary of their own whose cover (``_album_covers``, a few
        statements for all of them) is not already the one they carry."""

        t = items.c
        artists = [a for a in s.execute(select(t.id, t.name, t.images_json).where(
            t.type == "MusicArtist", ~t.images_json.like('%"Primary"%') | t.images_json.like('%"Generated"%')))
            if _primary(_images(a.images_json), generated=False) is None]
        covers = _album_covers(s, [(a.id, a.name) for a in artists])
        out: list[tuple[str, str, _Source]] = []
        for a, cover in zip(artists, covers, strict=True):
            current = _primary(_images(a.images_json), generated=True)
            if cover is None or (current is not None and current.get("Key") == cover.tag
                                 and os.path.isfile(current["Path"])):
                continue
            out.append((a.id, a.name, cover))
        return out

    # -- collages ------------------------------------------------------------------------------------

    async def collages(self, stats: RunStats, progress: Progress) -> list[str]:
        changed: list[str] = []
        # playlists and collections first: the views' collages are made of theirs
        for types in (("Playlist", "BoxSet"), ("CollectionFolder", "ManualPlaylistsFolder")):
            for plan in await self.db.read(_in_one_pass(self._collage_plans), types):
                if progress.cancelled:
                    return changed
                if await self._make_item_collage(plan, stats):
                    changed.append(plan.item_id)
        await self.by_name(stats, progress)
        return changed

    async def _make_item_collage(self, plan: _Plan, stats: RunStats) -> bool:
        if not plan.sources:
            if plan.current is not None:
                removed = await self.db.write(drop_generated, plan.item_id)
                await asyncio.to_thread(remove_replaced, removed, self.metadata_dir)
                stats.removed += 1
                return True
            return False
        key = plan.key()
        if plan.current is not None and plan.current.get("Key") == key and os.path.isfile(plan.current["Path"]):
            stats.collages_unchanged += 1
            return False
        out = image_folder(self.metadata_dir, plan.item_id) / f"collage-{key[:16]}.jpg"
        t0 = time.monotonic()
        try:
            entry = await asyncio.to_thread(_write_collage, plan, out, key)
        except (ImageError, OSError) as exc:
            log.warning("No collage for %s: %s", plan.item_id, exc)
            return False
        stats.collage_seconds += time.monotonic() - t0
        if await self._save(plan.item_id, entry):
            stats.collages += 1
            return True
        return False

    def _collage_plans(self, s: Session, types: tuple[str, ...]) -> list[_Plan]:

        t = items.c
        rows = s.execute(select(t.id, t.type, t.name, t.images_json, t.library_id).where(t.type.in_(types))).all()
        lib = libraries.c  # on the table: the start-up run configures no ORM mappers
        ctypes = dict(s.execute(select(lib.id, lib.collection_type)).all())
        plans: list[_Plan] = []
        for r in rows:
            images = _images(r.images_json)
            if _primary(images, generated=False) is not None:
                continue
            current = _primary(images, generated=True)
            if r.type == "CollectionFolder":
                if r.id in ctypes:
                    sources = _library_sources(s, r.id, ctypes[r.id])
                else:  # the Collections view: its collections
                    sources = _typed_sources(s, t.library_id == r.id, ("BoxSet",))
                plans.append(_Plan(r.id, collage.THUMB, sources, current, r.name))
            elif r.type == "ManualPlaylistsFolder":
                public = select(playlists.c.id).where(playlists.c.is_public.is_(True))
                sources = _typed_sources(s, t.id.in_(public), ("Playlist",))
                plans.append(_Plan(r.id, collage.THUMB, sources, current, r.name))
            elif r.type == "Playlist":
                pe = playlist_entries.c
                entries = select(pe.item_id).where(pe.playlist_id == r.id).order_by(pe.sort_order)
                members = [i for (i,) in s.execute(entries.limit(200))]
                plans.append(_Plan(r.id, collage.SQUARE, _member_sources(s, members), current))
            else:
                ce = collection_entries.c
                entries = select(ce.item_id).where(ce.collection_id == r.id).order_by(ce.sort_order)
                members = [i for (i,) in s.execute(entries.limit(200))]
                plans.append(_Plan(r.id, collage.POSTER, _member_sources(s, members), current))
        return plans

    # -- by-name items (genres, music genres, artists without a row) ---------------------------------

    async def by_name(self, stats: RunStats, progress: Progress) -> None:
        plans, stale = await self.db.read(_in_one_pass(self._by_name_plans))
        for plan in plans:
            if progress.cancelled:
                return
            await self._make_by_name(plan, stats)
        if stale:
            paths = await self.db.write(_delete_by_name, stale)
            await asyncio.to_thread(remove_replaced, paths, self.metadata_dir)
            stats.removed += len(stale)

    def _by_name_plans(self, s: Session) -> tuple[list[_Plan], list[str]]:

        b = byname_artwork.c  # on the table: the start-up run configures no ORM mappers
        existing = {r.id: r for r in s.execute(select(b.id, b.images_json, b.key))}
        plans: list[_Plan] = []
        v = item_values.c
        t = items.c
        genres: dict[tuple[str, str], str] = {}
        for clean, name, item_type in s.execute(
                select(v.clean_value, func.min(v.value), t.type).select_from(item_values.join(items, t.id == v.item_id))
                .where(v.kind == "Genre", t.type.in_(_GENRE_TYPES + _MUSIC_GENRE_TYPES + ("Audio",)))
                .group_by(v.clean_value, t.type)):
            kind = "Genre" if item_type in _GENRE_TYPES else "MusicGenre"
            genres.setdefault((kind, clean), name)
        # every genre's sources at once (set-based, ranked per genre): its movies and series, or
        # its albums, else (genres only on the tracks) the albums of its tracks
        by_date = (t.date_created.desc(), t.id)
        members = _VALUES.join(_ITEMS, t.id == v.item_id)  # (item, kind, value) is the key: no repeats
        kinds = {kind for kind, _clean in genres}
        genre = _by_item(v.kind) == "Genre"
        videos = _ranked_sources(s, v.clean_value, members, by_date, genre, t.type.in_(_GENRE_TYPES)) \
            if "Genre" in kinds else {}
        albums = _ranked_sources(s, v.clean_value, members, by_date, genre,
                                 t.type.in_(_MUSIC_GENRE_TYPES)) if "MusicGenre" in kinds else {}
        if any(kind == "MusicGenre" and clean not in albums for kind, clean in genres):
            track = _ITEMS.alias("track")
            tc = track.c
            scope = _ITEMS.join(track, tc.album_id == t.id).join(_VALUES, v.item_id == tc.id)
            of_tracks = _ranked_sources(s, v.clean_value, scope, by_date, v.kind == "Genre", tc.type == "Audio",
                                        t.type.in_(_MUSIC_GENRE_TYPES), grouped=True)
            albums = {**of_tracks, **albums}
        for (kind, clean), name in genres.items():
            sources = (videos if kind == "Genre" else albums).get(clean, [])
            plans.append(_Plan(ids.by_name_id(kind, name), collage.SQUARE, sources, None, None, kind, name))
        rows = {r[0] for r in s.execute(select(t.id).where(t.type == "MusicArtist"))}
        artist_names = {clean: name for clean, name in s.execute(
            select(v.clean_value, func.min(v.value)).where(v.kind.in_(("Artist", "AlbumArtist")))
            .group_by(v.clean_value))}
        rowless = [(ids.by_name_id("MusicArtist", name), name) for name in artist_names.values()]
        rowless = [(artist_id, name) for artist_id, name in rowless if artist_id not in rows]
        for (artist_id, name), cover in zip(rowless, _album_covers(s, [(None, n) for _i, n in rowless]), strict=True):
            plans.append(_Plan(artist_id, collage.SQUARE, [cover] if cover else [], None, None, "MusicArtist", name))
        for plan in plans:
            row = existing.get(plan.item_id)
            plan.current = _primary(_images(row.images_json)) if row is not None else None
            plan.stored_key = row.key if row is not None else None
        wanted = {p.item_id for p in plans}
        return plans, [i for i in existing if i not in wanted]

    async def _make_by_name(self, plan: _Plan, stats: RunStats) -> None:
        folder = await asyncio.to_thread(self.folder_images, plan.kind, plan.name)
        own = next((img for img in folder if img["Type"] == "Primary"), None)
        if own is not None:  # an administrator's picture in the by-name folder wins
            key = "folder:" + own["Tag"]
            if plan.stored_key != key:
                entry = await asyncio.to_thread(_measured, own)
                old = await self.db.write(_store_by_name, plan, [entry], key)
                await asyncio.to_thread(remove_replaced, old, self.metadata_dir)
            return
        if not plan.sources:
            if plan.current is not None:
                old = await self.db.write(_store_by_name, plan, [], "")
                await asyncio.to_thread(remove_replaced, old, self.metadata_dir)
            return
        key = plan.key()
        if plan.stored_key == key and plan.current is not None and os.path.isfile(plan.current["Path"]):
            stats.collages_unchanged += 1
            return
        base = self.generated_dir / plan.kind / plan.item_id[:2] / plan.item_id
        t0 = time.monotonic()
        try:
            if plan.kind == "MusicArtist":
                src = plan.sources[0]
                entry = await asyncio.to_thread(self._copy_cover, src.path,
                                                base / f"cover-{src.tag[:16]}{Path(src.path).suffix.lower()}", src.tag)
            else:
                entry = await asyncio.to_thread(_write_collage, plan, base / f"collage-{key[:16]}.jpg", key)
        except (ImageError, OSError) as exc:
            log.warning("No image for %s %s: %s", plan.kind, plan.name, exc)
            return
        old = await self.db.write(_store_by_name, plan, [entry], key)
        await asyncio.to_thread(remove_replaced, [p for p in old if p != entry["Path"]], self.metadata_dir)
        if plan.kind == "MusicArtist":
            stats.covers += 1
        else:
            stats.collages += 1
            stats.collage_seconds += time.monotonic() - t0


@dataclass
class _Plan:
    item_id: str
    layout: collage.Layout
    sources: list[_Source]
    current: dict[str, Any] | None
    title: str | None = None
    kind: str | None = None  # by-name kind
    name: str | None = None
    stored_key: str | None = None

    def key(self) -> str:
        return _key(self.layout.name, self.title or "", *(src.tag for src in self.sources))


def _write_collage(plan: _Plan, out: Path, key: str) -> dict[str, Any]:
    collage.make_collage([src.path for src in plan.sources], plan.layout, out, plan.title)
    return _entry(out, "Collage", Key=key)


def _remove_others(folder: Path, prefix: str, keep: str) -> None:
    for path in folder.glob(f"{prefix}*"):
        if path.name != keep:
            path.unlink(missing_ok=True)


def _measured(entry: dict[str, Any]) -> dict[str, Any]:
    out = {k: entry[k] for k in ("Type", "Path", "Tag") if k in entry}
    try:
        out["Width"], out["Height"], _fmt = image_info(entry["Path"])
        out["BlurHash"] = blurhash_of(entry["Path"])
    except ImageError:
        pass
    return {**out, "Folder": True}


def _store_by_name(s: Session, plan: _Plan, images: list[dict[str, Any]], key: str) -> list[str]:
    b = byname_artwork.c
    images_json = s.execute(select(b.images_json).where(b.id == plan.item_id)).scalar()
    old = [str(i["Path"]) for i in _images(images_json) if i.get("Generated")] if images_json is not None else []
    if not images:
        if images_json is not None:
            s.execute(delete(byname_artwork).where(b.id == plan.item_id))
        return old
    values = {"kind": plan.kind or "", "name": plan.name or "", "key": key,
              "images_json": json.dumps([{**img, "Index": 0} for img in images])}
    if images_json is None:
        s.execute(insert(byname_artwork).values(id=plan.item_id, **values))
    else:
        s.execute(update(byname_artwork).where(b.id == plan.item_id).values(**values))
    return old


def _delete_by_name(s: Session, stale: list[str]) -> list[str]:
    b = byname_artwork.c
    paths: list[str] = []
    for images_json in s.execute(select(b.images_json).where(b.id.in_(stale))).scalars():
        paths += [str(i["Path"]) for i in _images(images_json) if i.get("Generated")]
    s.execute(delete(byname_artwork).where(b.id.in_(stale)))
    return paths


# -- choosing source images (SQL first: only rows that mention a Primary are read) ------------------


def _sources_of(rows: Iterable[Any], limit: int = collage.MAX_SOURCES) -> list[_Source]:
    found: list[_Source] = []
    seen: set[str] = set()
    for r in rows:
        img = _primary(_images(r.images_json))
        if img is None or not img.get("Tag") or img["Tag"] in seen:
            continue
        seen.add(img["Tag"])
        found.append(_Source(str(img["Path"]), str(img["Tag"])))
        if len(found) >= limit:
            break
    return found


def _typed_sources(s: Session, scope: Any, types: tuple[str, ...]) -> list[_Source]:

    t = items.c
    rows = s.execute(select(t.images_json).where(scope, t.type.in_(types), t.images_json.like('%"Primary"%'))
                     .order_by(t.date_created.desc(), t.id).limit(_CANDIDATES)).all()
    return _sources_of(rows)


def _library_sources(s: Session, library_id: str, collection_type: str | None) -> list[_Source]:

    t = items.c
    scope = t.library_id == library_id
    found = _typed_sources(s, scope, _LIBRARY_TYPES.get(collection_type or "", _ANY_TYPES))
    if not found:  # e.g. shows without series art: their episodes' frames
        found = _typed_sources(s, scope, _ANY_TYPES)
    return found


def _member_sources(s: Session, members: list[str]) -> list[_Source]:
    """Playlist or collection members in order: each one's Primary, else its album's or series'."""

    if not members:
        return []
    t = items.c
    rows = {r.id: r for r in s.execute(select(t.id, t.images_json, t.album_id, t.series_id)
                                       .where(t.id.in_(members)))}
    parents_wanted = {p for r in rows.values() for p in (r.album_id, r.series_id) if p}
    parents = {r.id: r for r in s.execute(select(t.id, t.images_json).where(t.id.in_(list(parents_wanted))))} \
        if parents_wanted else {}
    ordered: list[Any] = []
    for item_id in members:
        r = rows.get(item_id)
        if r is None:
            continue
        if _primary(_images(r.images_json)) is not None:
            ordered.append(r)
            continue
        parent = parents.get(r.album_id or "") or parents.get(r.series_id or "")
        if parent is not None:
            ordered.append(parent)
    return _sources_of(ordered)


def _in_one_pass(fn: Callable[..., _T]) -> Callable[..., _T]:
    """``fn(s, ...)`` with a small SQLite page cache (``dialect.single_pass``): a run's wide reads
    go through the library once, and leave nothing in the connection's cache (up to
    ``SQLITE_CACHE_KIB`` each, resident until the memory trimmer's next quiet look)."""

    def run(s: Session, *args: Any) -> _T:
        with single_pass(s):
            return fn(s, *args)

    return run


_ITEMS: Table = items
_VALUES: Table = item_values


def _by_item(kind: Any) -> Any:
    """``item_values.kind`` as an expression no index covers, so that the planner starts from the
    items of the wanted types (an index on type) and looks their values up by item id, instead of
    reading every Artist or Genre value of the library first (20x the rows at 100k items)."""
    return kind.concat("")


def _ranked_sources(s: Session, key: Any, scope: Any, order: tuple[Any, ...], *where: Any,
                    limit: int = collage.MAX_SOURCES, grouped: bool = False) -> dict[str, list[_Source]]:
    """``_typed_sources`` for every ``key`` value at once, in one statement: per key, the
    ``_CANDIDATES`` first rows in ``order`` that mention a Primary (ROW_NUMBER over the key), and
    of those the first ``limit`` usable images. ``grouped``: the join may meet an item more than
    once per key (an album tagged Artist and AlbumArtist, an album of many tracks): once only."""
    t = _ITEMS.c
    rank = func.row_number().over(partition_by=key, order_by=order).label("rank")
    # the ranking sorts narrow rows (key, id, rank): the wide images_json of every member (tens
    # of MB in SQLite's sorter at 100k items) is read again only for the ranked few kept
    query = select(key.label("key"), t.id.label("item"), rank).select_from(scope) \
        .where(t.images_json.like('%"Primary"%'), *where)
    ranked = (query.group_by(key, t.id) if grouped else query).subquery()
    kept = _ITEMS.alias("kept")
    rows = s.execute(select(ranked.c.key, kept.c.images_json)
                     .select_from(ranked.join(kept, kept.c.id == ranked.c.item))
                     .where(ranked.c.rank <= _CANDIDATES)
                     .order_by(ranked.c.key, ranked.c.rank))
    found: dict[str, list[_Source]] = {}
    for value, group in itertools.groupby(rows, key=lambda row: row.key):
        sources = _sources_of(group, limit)
        if sources:
            found[value] = sources
    return found


def _first_covers(s: Session, key: Any, scope: Any, *where: Any, grouped: bool = False) -> dict[str, _Source]:
    """For each ``key`` value, the first album (newest first) with a usable Primary among its
    ``_CANDIDATES`` newest that mention one: one statement."""
    t = _ITEMS.c
    newest = (t.production_year.desc().nulls_last(), t.date_created.desc(), t.id)
    return {value: sources[0] for value, sources in _ranked_sources(s, key, scope, newest, *where, limit=1,
                                                                    grouped=grouped).items()}


def _album_covers(s: Session, artists: list[tuple[str | None, str]]) -> list[_Source | None]:
    """Each artist's (row id or None, name) newest album with a cover: the albums under its row,
    else albums whose (album) artist is that name, else the albums of its tracks. Set-based: at
    most three statements for all the artists, whatever their number (a later one only when an
    earlier one left some without a cover). Names are matched in Python (``str.lower``, as the
    scanner cleans them), not with SQL's ASCII-only ``lower``."""
    t = _ITEMS.c
    v = _VALUES.c
    items = _ITEMS
    out: list[_Source | None] = [None] * len(artists)
    if any(artist_id is not None for artist_id, _name in artists):
        under = _first_covers(s, t.parent_id, items, t.type == "MusicAlbum", t.parent_id.is_not(None))
        out = [under.get(artist_id) if artist_id is not None else None for artist_id, _name in artists]
    named = ("AlbumArtist", "Artist")
    if any(cover is None for cover in out):
        by_name = _first_covers(s, v.clean_value, _VALUES.join(items, t.id == v.item_id), _by_item(v.kind).in_(named),
                                t.type == "MusicAlbum", grouped=True)
        out = [cover or by_name.get(name.strip().lower()) for cover, (_i, name) in zip(out, artists, strict=True)]
    if any(cover is None for cover in out):
        track = _ITEMS.alias("track")
        tc = track.c
        of_tracks = items.join(track, tc.album_id == t.id).join(_VALUES, v.item_id == tc.id)
        by_tracks = _first_covers(s, v.clean_value, of_tracks, v.kind.in_(named), tc.type == "Audio", grouped=True)
        out = [cover or by_tracks.get(name.strip().lower()) for cover, (_i, name) in zip(out, artists, strict=True)]
    return out


@dataclass
class ArtworkTask:
    service: ArtworkService
    key: str = "RefreshArtwork"
    name: str = "Generate Missing Artwork"
    description: str = ("Grabs a frame from videos without a picture, makes collages for libraries, playlists, "
                        "collections and genres, and gives artists one of their album covers.")
    category: str = "Library"
    is_hidden: bool = False
    # At start-up (a library scanned before this existed, or a run cut short by a restart), and
    # daily; scans that changed something and playlist/collection/image changes also start it.
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [startup(), daily(2)])

    async def run(self, progress: Progress) -> None:
        await self.service.run(progress)


__all__ = ["FRAME_TYPES", "SCREEN_GRABBER", "ArtworkService", "ArtworkTask", "RunStats", "store_generated"]
