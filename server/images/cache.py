"""Resized images on disk: ``<data>/cache/images/<key[:2]>/<key>.<ext>``.

The key hashes the source path, its mtime and size (so a replaced file never serves a stale
rendering, with or without a tag) and every processing option. The ETag is derived from the
key, so a conditional request is answered before anything is decoded. Rendering runs in a
bounded thread pool (Pillow releases the GIL while decoding and resampling); concurrent
requests for the same missing key share one rendering.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from email.utils import formatdate
from pathlib import Path

from server.db.threads import LoopThreads
from server.errors import NotFoundError
from server.http.memory_cache import MemoryCache
from server.media.images import MIME_TYPES, render_image
from server.playback.ranges import etag_matches, parse_http_date

log = logging.getLogger("reelroom.images")

SOURCE_FORMATS = {".jpg": "jpg", ".jpeg": "jpg", ".png": "png", ".webp": "webp", ".gif": "gif",
                  ".bmp": "bmp", ".tbn": "jpg"}
TOUCH_AFTER = 86400.0  # a hit refreshes the file's mtime (the cleanup's "last used") once a day
HOT_BUDGET = 4 * 1024 * 1024  # renderings kept in memory (bytes), most recently used first
HOT_MAX_BODY = 256 * 1024  # a rendering larger than this is read from its file each time
KEYS_KEPT = 4096  # (source, options) -> key, ETag, dates: the hashing of a request done once


@dataclass(frozen=True, slots=True)
class RenderOptions:
    fmt: str = "jpg"
    max_width: int | None = None
    max_height: int | None = None
    width: int | None = None
    height: int | None = None
    fill_width: int | None = None
    fill_height: int | None = None
    quality: int = 90
    blur: int | None = None
    background_color: str | None = None
    foreground_layer: str | None = None
    percent_played: float | None = None
    unplayed_count: int | None = None

    def key_text(self) -> str:
        """The options as the cache key hashes them (sorted name/value pairs)."""
        return str([(name, getattr(self, name)) for name in _OPTION_NAMES])

    def is_identity(self) -> bool:
        """Nothing but (maybe) a format change is asked for."""
        return not any((self.max_width, self.max_height, self.width, self.height, self.fill_width,
                        self.fill_height, self.blur, self.background_color, self.foreground_layer,
                        self.percent_played, self.unplayed_count))


_OPTION_NAMES = sorted(f.name for f in fields(RenderOptions))


@dataclass(frozen=True, slots=True)
class _Known:
    """What a (source, options) pair resolved to, for the source's mtime and size."""

    mtime_ns: int
    size: int
    key: str
    etag: str
    media_type: str
    cache_path: Path
    last_modified: str


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a request resolves to before any decoding: the ETag, the media type, and either the
    bytes (cache hit, or the untouched source) or None (must be rendered)."""

    key: str
    etag: str
    media_type: str
    cache_path: Path
    body: bytes | None
    last_modified: str = ""  # the source file's mtime, as an HTTP date
    not_modified: bool = False


def source_format(path: str) -> str | None:
    return SOURCE_FORMATS.get(os.path.splitext(path)[1].lower())


class ImageCache:
    def __init__(self, root: Path, workers: int | None = None, local_root: Path | None = None) -> None:
        self.root = root
        # sources under this folder (the server's data folder: its database, log and metadata
        # images live there, and the event loop already writes its log there) are stat'ed on the
        # event loop when their rendering is in memory: no thread hop for a hit or a 304 of them.
        # Any other source (a library folder, maybe a network share) is stat'ed on a thread only.
        self._local_prefix = os.path.join(os.path.abspath(local_root), "") if local_root else None
        self.workers = workers or max(1, min(4, os.cpu_count() or 1))
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="image-render")
        # the look-ups (a stat, maybe a cache file read): the most recently idle thread first, the
        # result handed straight to the event loop (server/db/threads.py); a hit is one such hop
        self._lookups = LoopThreads(4, "image-lookup")
        self._inflight: dict[str, asyncio.Future[bytes]] = {}
        self.renders = 0  # resizes actually performed (tests and the bench read it)
        self._count_lock = threading.Lock()
        # (source, options) -> _Known: valid while the source's mtime and size are the same (it is
        # stat'ed on every request); key -> rendering bytes: a key names one rendering of one
        # version of the source, so its bytes never change (the file only goes away)
        self._known: dict[tuple[str, RenderOptions], _Known] = {}
        self._hot = MemoryCache(HOT_BUDGET, HOT_MAX_BODY)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._lookups.shutdown(wait=False)

    # -- lookup --------------------------------------------------------------------------

    async def lookup(self, source: str, options: RenderOptions, if_none_match: str | None = None,
                     if_modified_since: str | None = None) -> Prepared:
        """``prepare`` on one of the look-up threads; a 304 or an in-memory rendering of a source
        in the data folder is answered here, on the loop, with the same stat and the same answer."""
        prefix = self._local_prefix
        if prefix is not None and os.path.normpath(source).startswith(prefix):
            known = self._known.get((source, options))
            if known is not None:
                try:
                    stat = os.stat(source)
                except OSError:
                    stat = None  # (the thread's look-up reports it)
                if stat is not None and known.mtime_ns == stat.st_mtime_ns and known.size == stat.st_size:
                    answered = self._answer(source, options, known, stat, if_none_match, if_modified_since)
                    if answered is not None:
                        return answered
        prepared: Prepared = await self._lookups.submit(self.prepare, source, options, if_none_match,
                                                        if_modified_since)
        return prepared

    def _answer(self, source: str, options: RenderOptions, known: _Known, stat: os.stat_result,
                if_none_match: str | None, if_modified_since: str | None) -> Prepared | None:
        """A 304, or the rendering's bytes when they are in memory; None when a file must be read
        (the untouched source, or the rendering from the disk cache)."""
        etag, modified = known.etag, known.last_modified
        if if_none_match is not None:
            unchanged = etag_matches(if_none_match, etag, weak=True)
        else:
            since = parse_http_date(if_modified_since)
            unchanged = since is not None and int(stat.st_mtime) <= since
        if unchanged:
            return Prepared(known.key, etag, known.media_type, known.cache_path, None, modified, not_modified=True)
        if options.is_identity() and source_format(source) == options.fmt:
            return None
        body = self._hot.get(known.key)
        if body is None:
            return None
        return Prepared(known.key, etag, known.media_type, known.cache_path, body, modified)

    def prepare(self, source: str, options: RenderOptions, if_none_match: str | None = None,
                if_modified_since: str | None = None) -> Prepared:
        """Stat the source and look the rendering up. ``If-None-Match`` (or, without it,
        ``If-Modified-Since``) that still holds gives ``not_modified`` and no body."""
        try:
            stat = os.stat(source)
        except OSError:
            raise NotFoundError("The image file is missing.") from None
        known = self._known.get((source, options))
        if known is None or known.mtime_ns != stat.st_mtime_ns or known.size != stat.st_size:
            known = self._resolve(source, options, stat)
        answered = self._answer(source, options, known, stat, if_none_match, if_modified_since)
        if answered is not None:
            return answered
        etag, modified = known.etag, known.last_modified
        if options.is_identity() and source_format(source) == options.fmt:
            return Prepared(known.key, etag, known.media_type, known.cache_path, _read(source), modified)
        try:
            body = known.cache_path.read_bytes()
        except OSError:
            return Prepared(known.key, etag, known.media_type, known.cache_path, None, modified)
        try:
            if time.time() - known.cache_path.stat().st_mtime > TOUCH_AFTER:
                os.utime(known.cache_path)
        except OSError:
            pass
        self._hot.put(known.key, body)
        return Prepared(known.key, etag, known.media_type, known.cache_path, body, modified)

    def _resolve(self, source: str, options: RenderOptions, stat: os.stat_result) -> _Known:
        text = f"{source}\x00{stat.st_mtime_ns}\x00{stat.st_size}\x00{options.key_text()}"
        key = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:40]
        known = _Known(stat.st_mtime_ns, stat.st_size, key, f'"{key[:32]}"', MIME_TYPES[options.fmt],
                       self.root / key[:2] / f"{key}.{options.fmt}", formatdate(int(stat.st_mtime), usegmt=True))
        kept = self._known
        if len(kept) >= KEYS_KEPT:
            kept.clear()  # (many sources and sizes: start over)
        kept[(source, options)] = known
        return known

    # -- rendering ------------------------------------------------------------------------

    async def render(self, source: str, options: RenderOptions, prepared: Prepared) -> bytes:
        """The rendering for ``prepared.key``: computed once however many requests wait for it.
        A waiter that goes away (client disconnect) neither cancels it nor fails the others."""
        pending = self._inflight.get(prepared.key)
        if pending is None:
            loop = asyncio.get_running_loop()
            pending = loop.run_in_executor(self._pool, self._render_and_store, source, options, prepared.cache_path)
            self._inflight[prepared.key] = pending
            pending.add_done_callback(lambda done, key=prepared.key: self._finished(key, done))
        return await asyncio.shield(pending)

    def _finished(self, key: str, done: asyncio.Future[bytes]) -> None:
        self._inflight.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved: nobody logs "exception was never retrieved"

    def _render_and_store(self, source: str, options: RenderOptions, cache_path: Path) -> bytes:
        try:  # stored by a rendering that ended after this request's look-up (``prepare``)
            return cache_path.read_bytes()
        except OSError:
            pass
        with self._count_lock:
            self.renders += 1
        body = render_image(
            source, max_width=options.max_width, max_height=options.max_height, width=options.width,
            height=options.height, fill_width=options.fill_width, fill_height=options.fill_height,
            quality=options.quality, fmt=options.fmt, blur=options.blur,
            background_color=options.background_color, foreground_layer=options.foreground_layer,
            crop_to_fill=True, percent_played=options.percent_played, unplayed_count=options.unplayed_count)
        try:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_path.with_name(f".{cache_path.name}.{os.getpid()}.{id(body)}.part")
            tmp.write_bytes(body)
            os.replace(tmp, cache_path)
        except OSError as exc:  # a full disk must not fail the request
            log.warning("Could not write the image cache file %s: %s", cache_path, exc)
        self._hot.put(cache_path.stem, body)  # (the file is named by the key)
        return body

    # -- cleanup (blocking) -----------------------------------------------------------------

    def clean(self, max_age_days: float, max_bytes: int) -> tuple[int, int]:
        """Delete renderings unused for ``max_age_days``, then the least recently used ones until
        the cache is under ``max_bytes``. Returns (files deleted, bytes kept)."""
        cutoff = time.time() - max_age_days * 86400
        files: list[tuple[float, int, Path]] = []
        deleted = 0
        for folder in self.root.glob("*"):
            if not folder.is_dir():
                continue
            for entry in os.scandir(folder):
                try:
                    stat = entry.stat()
                except OSError:
                    continue
                path = Path(entry.path)
                if stat.st_mtime < cutoff or (entry.name.endswith(".part") and stat.st_mtime < time.time() - 3600):
                    path.unlink(missing_ok=True)
                    deleted += 1
                elif not entry.name.endswith(".part"):
                    files.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _m, size, _p in files)
        for _mtime, size, path in sorted(files):
            if total <= max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            deleted += 1
        for folder in self.root.glob("*"):
            try:
                folder.rmdir()  # only succeeds when empty
            except OSError:
                pass
        return deleted, total


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        raise NotFoundError("The image file is missing.") from None


