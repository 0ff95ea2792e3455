"""A Primary image for a video without artwork: one frame grabbed with ffmpeg.

Jellyfin's screen grabber takes the frame at 10% of the runtime (10 s when the runtime is not
known). Openings are often black (fade-ins, studio cards on black), so the frame is measured with
Pillow and, when nearly all of it is dark, later positions are tried; if every candidate is dark the
brightest one is kept (a dark frame is still better than no image). Candidates are keyframes (the
first at or after each position: ffmpeg decodes nothing else, which is what makes a grab cheap);
only when every keyframe candidate is dark are the exact positions decoded.

ffmpeg runs at low priority, one call at a time, and is killed if the caller is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from server.media import spawn
from server.media.images import FrameExtractionError

# Fractions of the runtime tried in turn: Jellyfin's 10% first.
POSITIONS = (0.10, 0.25, 0.40, 0.55, 0.70)
DEFAULT_SECONDS = 10.0  # no known runtime: Jellyfin's 10 s
DARK_LEVEL = 32  # luma (0-255) below which a pixel counts as dark
DARK_SHARE = 0.98  # a frame whose pixels are this dark, or more, counts as black
FFMPEG_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class Grab:
    path: Path
    seconds: float
    dark: bool  # every candidate was near-black; this is the brightest of them
    attempts: int


def dark_share(path: str | os.PathLike[str]) -> tuple[float, float]:
    """(share of dark pixels, mean luma) of an image, measured on a small copy."""
    from PIL import Image
    with Image.open(path) as img:
        img.draft("L", (160, 160))
        small = img.convert("L")
        small.thumbnail((160, 160))
    histogram = small.histogram()
    total = sum(histogram) or 1
    dark = sum(histogram[:DARK_LEVEL]) / total
    mean = sum(i * n for i, n in enumerate(histogram)) / total
    return dark, mean


def is_near_black(path: str | os.PathLike[str]) -> bool:
    return dark_share(path)[0] >= DARK_SHARE


def positions_for(runtime_seconds: float | None) -> list[float]:
    if not runtime_seconds or runtime_seconds <= 0:
        return [DEFAULT_SECONDS, 0.0]
    return [round(runtime_seconds * p, 3) for p in POSITIONS]


async def grab_frame(ffmpeg: str, video: str, runtime_seconds: float | None, out: Path) -> Grab:
    """Write the first not-near-black candidate frame of ``video`` to ``out`` (JPEG), atomically.
    Raises FrameExtractionError when ffmpeg produces no frame at all."""
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix=".grab-", dir=out.parent))
    try:
        best: tuple[float, Path, float] | None = None  # (dark share, file, seconds)
        attempts = 0
        last_error = "no frame"
        found = False
        # Keyframes first (a keyframe at or after each position: no decoding of the frames in
        # between, ~5x faster on long GOPs); only if all of those are dark, exact positions.
        for keyframes_only in (True, False):
            for n, seconds in enumerate(positions_for(runtime_seconds)):
                candidate = scratch / f"{n}-{int(keyframes_only)}.jpg"
                attempts += 1
                try:
                    await _grab(ffmpeg, video, seconds, candidate, keyframes_only)
                except FrameExtractionError as exc:
                    last_error = str(exc)
                    if "no video stream" in last_error:
                        raise
                    continue
                if not candidate.is_file() or candidate.stat().st_size == 0:
                    if keyframes_only:
                        break  # no keyframe after this position, so none after the later ones
                    continue  # past the end (a wrong runtime): the next position
                share, _mean = await asyncio.to_thread(dark_share, candidate)
                if best is None or share < best[0]:
                    best = (share, candidate, seconds)
                if share < DARK_SHARE:
                    found = True
                    break
            if found:
                break
        if best is None:
            # every position failed: the runtime may be wrong, so try the very first frame
            candidate = scratch / "first.jpg"
            attempts += 1
            await _grab(ffmpeg, video, 0.0, candidate)
            if not candidate.is_file() or candidate.stat().st_size == 0:
                raise FrameExtractionError(f"ffmpeg produced no frame for {video!r}: {last_error}")
            share, _mean = await asyncio.to_thread(dark_share, candidate)
            best = (share, candidate, 0.0)
        os.replace(best[1], out)
        return Grab(out, best[2], best[0] >= DARK_SHARE, attempts)
    finally:
        await asyncio.to_thread(_remove_tree, scratch)


def _remove_tree(folder: Path) -> None:
    for child in folder.glob("*"):
        child.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        folder.rmdir()


async def _grab(ffmpeg: str, video: str, seconds: float, out: Path, keyframes_only: bool = False) -> None:
    # Square pixels (anamorphic video is stretched to its display size), one frame, good JPEG.
    args = [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-threads", "1"]
    if keyframes_only:
        args += ["-skip_frame", "nokey"]
    args += ["-ss", f"{seconds:.3f}", "-i", video, "-map", "0:V:0", "-an", "-sn", "-dn",
            "-vf", "scale='if(gt(sar,0),trunc(iw*sar/2)*2,iw)':ih,setsar=1",
            "-frames:v", "1", "-q:v", "2", "-f", "image2", "-update", "1", "-y", str(out)]
    proc = await spawn.exec_async(
        *args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, nice=10)
    try:
        _, err = await asyncio.wait_for(proc.communicate(), FFMPEG_TIMEOUT)
    except (asyncio.CancelledError, TimeoutError) as exc:
        spawn.kill(proc)
        await proc.wait()
        if isinstance(exc, TimeoutError):
            raise FrameExtractionError(f"ffmpeg timed out on {video!r}") from None
        raise
    if proc.returncode != 0:
        text = err.decode("utf-8", "replace")
        if "matches no streams" in text:
            raise FrameExtractionError(f"{video!r} has no video stream")
        reason = text.strip().splitlines()[-1:] or ["no output"]
        raise FrameExtractionError(f"ffmpeg exited with {proc.returncode} on {video!r}: {reason[0]}")
