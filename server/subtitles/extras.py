"""Video attachments (fonts inside MKV files, for ASS subtitles) and media segments (intro and
outro from chapter names)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from server.errors import NotFoundError
from server.guid import guid_from_text
from server.media import spawn
from server.wire import models as w

if TYPE_CHECKING:
    from server.library.catalog.query import ItemRow

_SEGMENT_NAMES = [
    (re.compile(r"\b(intro|opening|op)\b", re.I), "Intro"),
    (re.compile(r"\b(outro|ending|ed|credits|end credits)\b", re.I), "Outro"),
    (re.compile(r"\b(recap|previously)\b", re.I), "Recap"),
    (re.compile(r"\b(preview|next time)\b", re.I), "Preview"),
    (re.compile(r"\b(commercial|advert|ad break)\b", re.I), "Commercial"),
]


def _attachment_info(path: str, index: int) -> tuple[str, str | None]:
    """(file name, mime type) of attachment stream ``index``; 404 when there is none."""
    import av  # loaded when first needed, not at start-up
    try:
        with av.open(path) as container:
            if not 0 <= index < len(container.streams):
                raise NotFoundError(f"The video has no attachment {index}.")
            stream = container.streams[index]
            if stream.type != "attachment":
                raise NotFoundError(f"Stream {index} is not an attachment.")
            meta = dict(stream.metadata or {})
            return meta.get("filename") or f"attachment-{index}", meta.get("mimetype")
    except av.error.FFmpegError:
        raise NotFoundError("The video cannot be read.") from None


async def attachment(row: ItemRow, index: int, cache_dir: Path, ffmpeg_path) -> tuple[Path, str]:
    if not row.path or not await asyncio.to_thread(os.path.isfile, row.path):
        raise NotFoundError(f"Item {row.id} has no file.")
    name, mime = await asyncio.to_thread(_attachment_info, row.path, index)
    stat = await asyncio.to_thread(os.stat, row.path)
    key = hashlib.sha1(f"{row.path}|{stat.st_size}|{stat.st_mtime_ns}|{index}".encode()).hexdigest()[:20]
    target = cache_dir / key[:2] / f"{key}-{index}"
    if not await asyncio.to_thread(target.is_file):
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        ffmpeg = await asyncio.to_thread(ffmpeg_path)
        proc = await spawn.exec_async(
            ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", f"-dump_attachment:{index}", str(partial),
            "-i", row.path, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL)
        await proc.wait()  # ffmpeg exits non-zero here (no output file), after dumping the attachment
        if not partial.is_file() or partial.stat().st_size == 0:
            raise NotFoundError(f"Attachment {index} could not be read.")
        os.replace(partial, target)
    return target, mime or "application/octet-stream"


def media_segments(row: ItemRow, include: set[str] | None) -> list[w.MediaSegmentDto]:
    try:
        chapters = json.loads(row.chapters_json or "[]")
    except ValueError:
        chapters = []
    chapters = sorted((c for c in chapters if isinstance(c, dict)), key=lambda c: c.get("StartPositionTicks") or 0)
    out = []
    for i, chapter in enumerate(chapters):
        name = chapter.get("Name") or ""
        kind = next((k for pattern, k in _SEGMENT_NAMES if pattern.search(name)), None)
        if kind is None or (include and kind not in include):
            continue
        start = chapter.get("StartPositionTicks") or 0
        end = chapters[i + 1].get("StartPositionTicks") if i + 1 < len(chapters) else row.run_time_ticks
        if end is None or end <= start:
            continue
        out.append(w.MediaSegmentDto(Id=guid_from_text("segment", row.id, str(start)), ItemId=row.id, Type=kind,
                                     StartTicks=start, EndTicks=end))
    return out
