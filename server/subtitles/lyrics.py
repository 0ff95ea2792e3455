"""Lyrics: an LRC or plain-text sidecar (``items.lyrics_path``, found by the scanner or
uploaded), else the track's own tags (ID3 SYLT/USLT, Vorbis LYRICS, MP4 ©lyr; read by
server/media/tags.py), as LyricDto with synced lines (Start in ticks) when times are known."""

from __future__ import annotations

import asyncio
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.db.database import load_orm_classes
from server.errors import BadRequestError, NotFoundError
from server.wire import models as w

if TYPE_CHECKING:
    from server.library.catalog.query import ItemRow

TICKS_PER_MS = 10_000
_TIME = re.compile(r"\[(\d{1,3}):(\d{1,2})(?:[.:](\d{1,3}))?\]")
_TAG = re.compile(r"^\[([a-zA-Z#]+):(.*)\]$")
_META = {"ar": "Artist", "al": "Album", "ti": "Title", "au": "Author", "by": "By", "re": "Creator",
         "ve": "Version", "length": "Length", "offset": "Offset"}
MAX_LYRICS_BYTES = 1024 * 1024


def _ms(match: re.Match) -> int:
    minutes, seconds, fraction = int(match.group(1)), int(match.group(2)), match.group(3) or "0"
    return (minutes * 60 + seconds) * 1000 + int(fraction.ljust(3, "0")[:3])


def _length_ticks(value: str) -> int | None:
    match = re.fullmatch(r"\s*(\d+):(\d{1,2})(?:[.:](\d{1,3}))?\s*", value)
    if not match:
        return None
    return ((int(match.group(1)) * 60 + int(match.group(2))) * 1000 + int((match.group(3) or "0").ljust(3, "0")[:3])
            ) * TICKS_PER_MS


def parse_lrc(text: str) -> w.LyricDto:
    """LRC (or plain text, one line per lyric line). ``[offset:+/-ms]`` shifts every time: a
    positive offset makes lines come sooner, as LRC defines."""
    meta: dict[str, Any] = {}
    timed: list[tuple[int, str]] = []
    plain: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        tag = _TAG.match(line)
        if tag and not _TIME.match(line):
            key, value = tag.group(1).lower(), tag.group(2).strip()
            if key in _META:
                meta[_META[key]] = value
            continue
        stamps = []
        while (m := _TIME.match(line)) is not None:
            stamps.append(_ms(m))
            line = line[m.end():]
        if stamps:
            timed.extend((stamp, line.strip()) for stamp in stamps)
        else:
            plain.append(line)
    offset = 0
    if "Offset" in meta:
        try:
            offset = int(str(meta["Offset"]).replace("+", ""))
        except ValueError:
            offset = 0
    metadata = w.LyricMetadata(
        Artist=meta.get("Artist"), Album=meta.get("Album"), Title=meta.get("Title"), Author=meta.get("Author"),
        By=meta.get("By"), Creator=meta.get("Creator"), Version=meta.get("Version"),
        Length=_length_ticks(meta["Length"]) if "Length" in meta else None,
        Offset=offset * TICKS_PER_MS if offset else None, IsSynced=bool(timed))
    if timed:
        timed.sort(key=lambda t: t[0])
        lines = [w.LyricLine(Text=text, Start=max(0, ms - offset) * TICKS_PER_MS) for ms, text in timed]
    else:
        lines = [w.LyricLine(Text=text) for text in plain]
    return w.LyricDto(Metadata=metadata, Lyrics=lines)


def lyrics_from_tags(path: str) -> w.LyricDto | None:
    from server.media.tags import read_audio_tags  # mutagen loads when first needed
    tags = read_audio_tags(path)
    if tags.synced_lyrics:
        return w.LyricDto(Metadata=w.LyricMetadata(Artist=tags.artist if hasattr(tags, "artist") else None,
                                                   Title=getattr(tags, "title", None), IsSynced=True),
                          Lyrics=[w.LyricLine(Text=text, Start=ms * TICKS_PER_MS) for ms, text in tags.synced_lyrics])
    if tags.lyrics:
        if _TIME.search(tags.lyrics):  # LRC text stored in an unsynced tag, as many taggers do
            return parse_lrc(tags.lyrics)
        return w.LyricDto(Metadata=w.LyricMetadata(IsSynced=False),
                          Lyrics=[w.LyricLine(Text=line.strip()) for line in tags.lyrics.splitlines() if line.strip()])
    return None


def _read_sidecar(path: str) -> w.LyricDto:
    raw = Path(path).read_bytes()[:MAX_LYRICS_BYTES]
    return parse_lrc(raw.decode("utf-8-sig", errors="replace"))


class LyricsService:
    def __init__(self, db) -> None:
        self.db = db

    async def get(self, row: ItemRow) -> w.LyricDto:
        if row.media_type != "Audio" or not row.path:
            raise NotFoundError(f"Item {row.id} has no lyrics.")
        sidecar = row.lyrics_path
        if sidecar is not None and await asyncio.to_thread(os.path.isfile, sidecar):
            return await asyncio.to_thread(_read_sidecar, sidecar)
        found = await asyncio.to_thread(_tags_or_none, row.path)
        if found is None or not found.Lyrics:
            raise NotFoundError(f"Item {row.id} has no lyrics.")
        return found

    async def upload(self, row: ItemRow, text: str, file_name: str | None, data_dir: Path) -> w.LyricDto:
        if row.media_type != "Audio" or not row.path:
            raise BadRequestError(f"Item {row.id} is not a track.")
        if not text.strip():
            raise BadRequestError("The lyrics are empty.")
        if len(text.encode()) > MAX_LYRICS_BYTES:
            raise BadRequestError("The lyrics are larger than 1 MiB.")
        suffix = ".txt" if (file_name or "").lower().endswith(".txt") else ".lrc"
        beside = Path(row.path).with_suffix(suffix)
        target = beside if os.access(beside.parent, os.W_OK) else (
            data_dir / "metadata" / "items" / row.id[:2] / row.id / f"lyrics{suffix}")
        await asyncio.to_thread(_write_text, target, text)
        await self._set_path(row.id, str(target))
        return parse_lrc(text)

    async def delete(self, row: ItemRow) -> None:
        if not row.lyrics_path:
            raise NotFoundError(f"Item {row.id} has no lyrics file to delete.")
        await asyncio.to_thread(Path(row.lyrics_path).unlink, True)
        await self._set_path(row.id, None)

    async def _set_path(self, item_id: str, path: str | None) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item

        def write(s) -> None:
            item = s.get(Item, item_id)
            item.lyrics_path = path
            item.date_modified = datetime.now(UTC)
            s.add(item)

        await self.db.write(write)


def _tags_or_none(path: str) -> w.LyricDto | None:
    try:
        return lyrics_from_tags(path)
    except (OSError, ValueError):
        return None


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
