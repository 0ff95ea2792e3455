"""The scanner's blocking work, as plain top-level functions so that they run in worker
processes as well as threads: probe one media file (PyAV streams + mutagen tags + embedded
cover art + a content fingerprint) and measure one image (size + BlurHash).

Results are JSON-able dicts; they are cached in ``media_probes`` so an unchanged file is
never probed twice. Nothing here touches the database.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import sys
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

log = logging.getLogger("reelroom.scanner")

#: Bumped when what a probe records changes: cached probes of another version are redone.
PROBE_VERSION = 1
_FINGERPRINT_CHUNK = 64 * 1024
_MIME_EXT = {"image/jpeg": "jpg", "image/jpg": "jpg", "image/png": "png", "image/webp": "webp",
             "image/gif": "gif", "image/bmp": "bmp"}


def fingerprint(path: str, size: int | None = None) -> str:
    """A cheap content fingerprint: size plus a hash of the first and last 64 KiB."""
    if size is None:
        size = os.stat(path).st_size
    h = hashlib.blake2b(digest_size=12)
    with open(path, "rb") as f:
        h.update(f.read(_FINGERPRINT_CHUNK))
        if size > 2 * _FINGERPRINT_CHUNK:
            f.seek(-_FINGERPRINT_CHUNK, os.SEEK_END)
            h.update(f.read(_FINGERPRINT_CHUNK))
    return f"{size}:{h.hexdigest()}"


def embedded_image_dir(metadata_dir: str, item_id: str) -> str:
    return os.path.join(metadata_dir, "items", item_id[:2], item_id)


def measure_image(path: str) -> dict[str, Any] | None:
    """{Width, Height, BlurHash} of an image file, or None when it cannot be decoded."""
    from server.media import images

    try:
        width, height, _ = images.image_info(path)
        blur = images.blurhash_of(path)
    except (images.ImageError, OSError, ValueError) as exc:
        log.debug("Cannot read image %s: %s", path, exc)
        return None
    return {"Width": width, "Height": height, "BlurHash": blur}


def save_embedded_image(data: bytes, mime: str | None, metadata_dir: str, item_id: str) -> dict[str, Any] | None:
    """Write embedded cover art once under the item's metadata folder (named by content hash)
    and describe it as an images_json entry (without Type)."""
    from server.media import images

    digest = hashlib.blake2b(data, digest_size=8).hexdigest()
    ext = _MIME_EXT.get((mime or "").lower(), "jpg")
    folder = embedded_image_dir(metadata_dir, item_id)
    path = os.path.join(folder, f"embedded-{digest}.{ext}")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    measured = measure_image(path)
    if measured is None:
        return None
    st = os.stat(path)
    return {"Path": path, "Tag": images.image_tag(path, st.st_mtime, st.st_size), **measured}


def _video_cover(path: str, index: int) -> bytes | None:
    import av

    try:
        with av.open(path, metadata_errors="replace") as container:
            stream = container.streams[index]
            for packet in container.demux(stream):
                if packet.size:
                    return bytes(packet)
    except (av.error.FFmpegError, OSError, IndexError):
        return None
    return None


def probe_media(path: str, is_audio: bool, item_id: str, metadata_dir: str) -> dict[str, Any]:
    """Everything the scanner needs from one media file. Never raises for a bad file: the
    result then has "Error" set (the item is still listed, without streams)."""
    from server.media.probe import ProbeError, probe_file
    from server.media.tags import TagReadError, embedded_picture, read_audio_tags

    out: dict[str, Any] = {"Version": PROBE_VERSION}
    try:
        st = os.stat(path)
        out["Fingerprint"] = fingerprint(path, st.st_size)
    except OSError as exc:
        out["Error"] = str(exc)
        return out
    try:
        probe = probe_file(path, is_audio=is_audio)
    except ProbeError as exc:
        out["Error"] = exc.reason if hasattr(exc, "reason") else str(exc)
        probe = None
    if probe is not None:
        out["Container"] = probe.container
        out["Bitrate"] = probe.bitrate
        out["RunTimeTicks"] = probe.run_time_ticks
        out["Streams"] = [s.to_wire() for s in probe.streams]
        out["Chapters"] = [c.to_wire() for c in probe.chapters]
        out["Tags"] = {k: v for k, v in probe.tags.items() if k in _VIDEO_TAGS}
        covers = [a for a in probe.attachments if (a.mime_type or "").startswith("image/") or
                  (a.codec or "") in ("mjpeg", "png", "bmp", "webp")]
        if covers and not is_audio:
            data = _video_cover(path, covers[0].index)
            if data:
                out["EmbeddedImage"] = save_embedded_image(data, covers[0].mime_type or "image/jpeg",
                                                           metadata_dir, item_id)
    if is_audio:
        try:
            tags = read_audio_tags(path)
        except TagReadError as exc:
            out.setdefault("Error", str(exc))
            tags = None
        if tags is not None:
            out["Audio"] = {k: v for k, v in dataclasses.asdict(tags).items()
                            if v not in (None, (), "") and k != "synced_lyrics"}
            if out.get("RunTimeTicks") is None:
                out["RunTimeTicks"] = tags.run_time_ticks
            if tags.has_picture:
                try:
                    picture = embedded_picture(path)
                except TagReadError:
                    picture = None
                if picture:
                    out["EmbeddedImage"] = save_embedded_image(picture[0], picture[1], metadata_dir, item_id)
    return out


_VIDEO_TAGS = frozenset({"title", "date", "creation_time", "comment", "description", "genre", "artist", "album"})


class WorkerPool:
    """A bounded pool for probing. Threads by default: PyAV releases the GIL while it opens and
    reads a file (most of a probe's cost), and on the 2-core reference machine threads probed
    as fast as worker processes or faster (a first scan of 10k synthetic audio files in the
    server: 668 vs 543 files/s) without their start-up cost and memory. Worker processes
    can be chosen with REELROOM_SCAN_PROCESSES=1 for big batches (48+ files)."""

    def __init__(self, workers: int | None = None, process_threshold: int = 48,
                 use_processes: bool | None = None) -> None:
        cpus = os.cpu_count() or 2
        self.use_processes = os.environ.get("REELROOM_SCAN_PROCESSES") == "1" if use_processes is None \
            else use_processes
        self.workers = max(1, workers or (min(8, cpus) if self.use_processes else min(8, 2 * cpus)))
        self.process_threshold = process_threshold
        self._threads: ThreadPoolExecutor | None = None
        self._processes: ProcessPoolExecutor | None = None

    def executor(self, jobs: int) -> Executor:
        # A frozen (PyInstaller) app can only spawn workers if its entry point calls
        # multiprocessing.freeze_support(); without that marker, threads are the safe choice.
        frozen_ok = not getattr(sys, "frozen", False) or getattr(sys, "_reelroom_freeze_support", False)
        if self.use_processes and jobs >= self.process_threshold and self.workers > 1 and frozen_ok:
            if self._processes is None:
                # here: multiprocessing (and its pickling) loads only for a scan that uses processes
                from concurrent.futures import ProcessPoolExecutor
                from multiprocessing import get_context

                self._processes = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"))
            return self._processes
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self.workers, thread_name_prefix="scan-probe")
        return self._threads

    def release_processes(self) -> None:
        """Let the worker processes go (about 70 MB each) until the next big batch."""
        if self._processes is not None:
            self._processes.shutdown(wait=False, cancel_futures=True)
            self._processes = None

    def close(self) -> None:
        for pool in (self._threads, self._processes):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._threads = self._processes = None
