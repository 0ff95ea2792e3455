"""Subtitles: delivering a stream in the format a client asks for, upload and delete, fallback
fonts.

- A subtitle stream is one of the item's MediaStreams (``items.media_streams_json``): embedded
  ones are extracted with ffmpeg once per file version into ``<data>/cache/subtitles`` (one
  extraction at a time per stream, off the event loop); external ones (sidecars the scanner
  found, uploads) are read from their Path.
- Conversion between SRT, WebVTT, ASS and SSA is pysubs2's; the window (startPositionTicks,
  endPositionTicks) and copyTimestamps follow Jellyfin: without copyTimestamps the cues are
  shifted so the window starts at 0, as a transcode that starts there does.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import html
import json
import logging
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from server.db.database import load_orm_classes
from server.errors import BadRequestError, NotFoundError
from server.media import spawn
from server.wire import models as w

if TYPE_CHECKING:
    import pysubs2

    from server.db.tables import Item
    from server.library.catalog.query import ItemRow

log = logging.getLogger("reelroom.subtitles")

TICKS_PER_MS = 10_000
# Output formats: pysubs2 format id, Content-Type.
FORMATS = {
    "srt": ("srt", "application/x-subrip; charset=utf-8"),
    "subrip": ("srt", "application/x-subrip; charset=utf-8"),
    "vtt": ("vtt", "text/vtt; charset=utf-8"),
    "webvtt": ("vtt", "text/vtt; charset=utf-8"),
    "ass": ("ass", "text/x-ssa; charset=utf-8"),
    "ssa": ("ssa", "text/x-ssa; charset=utf-8"),
    # Jellyfin's JSON track events; jellyfin-web renders subtitles itself from these.
    "js": ("json", "application/json; charset=utf-8"),
    "json": ("json", "application/json; charset=utf-8"),
}
TEXT_CODECS = {"srt": "srt", "subrip": "srt", "ass": "ass", "ssa": "ass", "webvtt": "vtt", "vtt": "vtt",
               "mov_text": "srt", "text": "srt"}
FONT_EXTENSIONS = {".ttf", ".otf", ".ttc", ".woff", ".woff2"}


def _streams(row: ItemRow | Item) -> list[dict]:
    try:
        value = json.loads(row.media_streams_json or "[]")
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def subtitle_stream(row: ItemRow, index: int) -> dict:
    for stream in _streams(row):
        if stream.get("Index") == index and stream.get("Type") == "Subtitle":
            return stream
    raise NotFoundError(f"Item {row.id} has no subtitle stream {index}.")


class SubtitleService:
    def __init__(self, db, cache_dir: Path, ffmpeg_path, encoding_options) -> None:
        self.db = db
        self.cache_dir = cache_dir
        self.ffmpeg_path = ffmpeg_path  # () -> str
        self.encoding_options = encoding_options  # () -> EncodingOptions
        self._locks: dict[str, asyncio.Lock] = {}

    # -- delivery ---------------------------------------------------------------------------------

    async def source_file(self, row: ItemRow, index: int) -> Path:
        """A file holding the stream as text (the sidecar, or the cached extraction)."""
        stream = subtitle_stream(row, index)
        if stream.get("IsExternal"):
            path = Path(stream.get("Path") or "")
            if not await asyncio.to_thread(path.is_file):
                raise NotFoundError(f"The subtitle file of stream {index} is missing.")
            return path
        codec = (stream.get("Codec") or "").lower()
        ext = TEXT_CODECS.get(codec)
        if ext is None:
            raise BadRequestError(f"Subtitle stream {index} is a picture format ({codec or 'unknown'}); "
                                  "it can only be burnt into the video.")
        if not row.path or not await asyncio.to_thread(os.path.isfile, row.path):
            raise NotFoundError(f"The file of item {row.id} is missing.")
        stat = await asyncio.to_thread(os.stat, row.path)
        key = hashlib.sha1(f"{row.path}|{stat.st_size}|{stat.st_mtime_ns}|{index}".encode()).hexdigest()[:20]
        target = self.cache_dir / key[:2] / f"{row.id}-{index}-{key}.{ext}"
        if await asyncio.to_thread(target.is_file):
            return target
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            if not await asyncio.to_thread(target.is_file):
                await self._extract(row.path, index, target)
        self._locks.pop(key, None)
        return target

    async def _extract(self, media: str, index: int, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(target.suffix + ".part")
        ffmpeg = await asyncio.to_thread(self.ffmpeg_path)
        fmt = {"srt": "srt", "ass": "ass", "vtt": "webvtt"}[target.suffix.lstrip(".")]
        proc = await spawn.exec_async(
            ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", media, "-map", f"0:{index}",
            "-c:s", {"srt": "srt", "ass": "ass", "webvtt": "webvtt"}[fmt], "-f", fmt, str(partial),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await proc.communicate()
        if proc.returncode != 0 or not partial.exists():
            with contextlib.suppress(OSError):
                partial.unlink()
            reason = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            log.warning("Extracting subtitle stream %s of %s failed: %s", index, media, reason[0])
            raise NotFoundError(f"Subtitle stream {index} could not be extracted.")
        os.replace(partial, target)

    async def render(self, row: ItemRow, index: int, fmt: str, start_ticks: int | None, end_ticks: int | None,
                     copy_timestamps: bool, add_vtt_time_map: bool) -> tuple[str, str]:
        """(text, content type) of the stream converted to ``fmt``."""
        target = FORMATS.get((fmt or "").lower())
        if target is None:
            raise BadRequestError(f"Subtitles cannot be delivered as {fmt!r} (srt, vtt, ass, ssa, js).")
        if (start_ticks or 0) < 0 or (end_ticks is not None and end_ticks < 0):
            raise BadRequestError("Subtitle positions must not be negative.")
        source = await self.source_file(row, index)
        text = await asyncio.to_thread(convert_file, source, target[0], start_ticks or 0, end_ticks, copy_timestamps,
                                       add_vtt_time_map)
        return text, target[1]

    def playlist(self, item_id: str, media_source_id: str, index: int, runtime_ticks: int | None,
                 segment_seconds: int, api_key: str | None) -> str:
        """An HLS subtitle rendition: WebVTT segments covering the runtime."""
        if segment_seconds <= 0:
            raise BadRequestError("segmentLength must be positive.")
        total = max(1, int((runtime_ticks or 0) / 10_000_000))
        lines = ["#EXTM3U", f"#EXT-X-TARGETDURATION:{segment_seconds}", "#EXT-X-VERSION:3",
                 "#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:VOD"]
        start = 0
        key = f"&api_key={api_key}" if api_key else ""
        while start < total:
            length = min(segment_seconds, total - start)
            start_ticks, end_ticks = start * 10_000_000, (start + length) * 10_000_000
            lines.append(f"#EXTINF:{length:.6f},")
            lines.append(f"/Videos/{item_id}/{media_source_id}/Subtitles/{index}/{start_ticks}/Stream.vtt"
                         f"?copyTimestamps=true&addVttTimeMap=true&endPositionTicks={end_ticks}{key}")
            start += length
        lines.append("#EXT-X-ENDLIST")
        return "\n".join(lines) + "\n"

    # -- upload and delete -------------------------------------------------------------------------

    async def upload(self, row: ItemRow, dto: w.UploadSubtitleDto, data_dir: Path) -> dict:
        import pysubs2

        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item

        fmt = (dto.Format or "").lower().lstrip(".")
        if fmt not in ("srt", "vtt", "ass", "ssa"):
            raise BadRequestError("Format must be srt, vtt, ass or ssa.")
        language = (dto.Language or "").strip().lower()
        if not re.fullmatch(r"[a-z]{2,3}(-[a-z0-9]{2,8})?", language):
            raise BadRequestError("Language must be a language code such as 'en' or 'eng'.")
        try:
            raw = base64.b64decode(dto.Data or "", validate=True)
        except (binascii.Error, ValueError):
            raise BadRequestError("Data must be the subtitle file, base64-encoded.") from None
        try:
            pysubs2.SSAFile.from_string(raw.decode("utf-8-sig"), format_=FORMATS[fmt][0])
        except (UnicodeDecodeError, pysubs2.exceptions.Pysubs2Error, ValueError):
            raise BadRequestError(f"Data is not a readable {fmt} subtitle file.") from None
        if not row.path or row.is_folder:
            raise BadRequestError(f"Item {row.id} is not a video file.")
        parts = [Path(row.path).stem, language]
        if dto.IsForced:
            parts.append("forced")
        if dto.IsHearingImpaired:
            parts.append("sdh")
        name = ".".join(parts) + f".{fmt}"
        beside = Path(row.path).with_name(name)
        target = beside if os.access(beside.parent, os.W_OK) else (
            data_dir / "metadata" / "items" / row.id[:2] / row.id / "subtitles" / name)
        await asyncio.to_thread(_write_bytes, target, raw)

        def write(s) -> dict:
            item = s.get(Item, row.id)
            streams = [x for x in _streams(item) if x.get("Path") != str(target)]
            index = max((x.get("Index", -1) for x in streams), default=-1) + 1
            stream = {"Index": index, "Type": "Subtitle", "Codec": {"vtt": "webvtt"}.get(fmt, fmt),
                      "Language": language, "IsExternal": True, "Path": str(target), "IsForced": bool(dto.IsForced),
                      "IsHearingImpaired": bool(dto.IsHearingImpaired), "IsDefault": False,
                      "IsTextSubtitleStream": True, "SupportsExternalStream": True,
                      "DisplayTitle": f"{language.upper()}{' (Forced)' if dto.IsForced else ''} - {fmt.upper()}"}
            streams.append(stream)
            item.media_streams_json = json.dumps(streams)
            item.date_modified = datetime.now(UTC)
            s.add(item)
            return stream

        return await self.db.write(write)

    async def delete(self, row: ItemRow, index: int, allowed_roots: list[Path]) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item

        stream = subtitle_stream(row, index)
        if not stream.get("IsExternal"):
            raise BadRequestError("Only external subtitle files can be deleted; this stream is inside the video.")
        path = Path(stream.get("Path") or "")
        resolved = await asyncio.to_thread(path.resolve)
        if not any(resolved.is_relative_to(root) for root in allowed_roots):
            raise BadRequestError("The subtitle file lies outside the library and data folders.")
        await asyncio.to_thread(path.unlink, True)

        def write(s) -> None:
            item = s.get(Item, row.id)
            item.media_streams_json = json.dumps([x for x in _streams(item) if x.get("Index") != index])
            item.date_modified = datetime.now(UTC)
            s.add(item)

        await self.db.write(write)

    # -- fallback fonts ------------------------------------------------------------------------------

    def font_folder(self) -> Path | None:
        options = self.encoding_options()
        folder = (options.FallbackFontPath or "").strip()
        if not folder or options.EnableFallbackFont is False:
            return None
        return Path(folder)

    async def fonts(self) -> list[w.FontFile]:
        folder = self.font_folder()
        if folder is None:
            return []

        def scan() -> list[w.FontFile]:
            out = []
            try:
                entries = sorted(folder.iterdir())
            except OSError:
                return []
            for entry in entries:
                if entry.suffix.lower() in FONT_EXTENSIONS and entry.is_file():
                    st = entry.stat()
                    out.append(w.FontFile(Name=entry.name, Size=st.st_size,
                                          DateCreated=datetime.fromtimestamp(st.st_ctime, UTC),
                                          DateModified=datetime.fromtimestamp(st.st_mtime, UTC)))
            return out

        return await asyncio.to_thread(scan)

    def font(self, name: str) -> Path:
        folder = self.font_folder()
        if folder is None or not name or name != Path(name).name or Path(name).suffix.lower() not in FONT_EXTENSIONS:
            raise NotFoundError(f"No fallback font {name!r}.")
        path = folder / name
        if not path.is_file():
            raise NotFoundError(f"No fallback font {name!r}.")
        return path


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    os.replace(partial, path)


def convert_file(source: Path, fmt: str, start_ticks: int, end_ticks: int | None, copy_timestamps: bool,
                 add_vtt_time_map: bool) -> str:
    text = source.read_bytes().decode("utf-8-sig", errors="replace")
    return convert_text(text, fmt, start_ticks, end_ticks, copy_timestamps, add_vtt_time_map)


def convert_text(text: str, fmt: str, start_ticks: int = 0, end_ticks: int | None = None,
                 copy_timestamps: bool = False, add_vtt_time_map: bool = False) -> str:
    """Subtitle text converted to ``fmt`` (srt, vtt, ass, ssa, or json: Jellyfin's track events),
    limited to the window and, unless ``copy_timestamps``, shifted so the window starts at 0."""
    import pysubs2  # loaded when a subtitle is first converted, not at start-up
    try:
        subs = pysubs2.SSAFile.from_string(text)
    except (pysubs2.exceptions.Pysubs2Error, ValueError) as exc:
        raise BadRequestError(f"The subtitle file cannot be read: {exc}") from None
    start_ms = start_ticks // TICKS_PER_MS
    end_ms = end_ticks // TICKS_PER_MS if end_ticks is not None else None
    kept = [e for e in subs.events if e.end > start_ms and (end_ms is None or e.start < end_ms)]
    subs.events = kept
    if start_ms and not copy_timestamps:
        subs.shift(ms=-start_ms)
        for event in subs.events:
            event.start = max(0, event.start)
    if fmt == "json":
        return track_events_json(subs)
    out = subs.to_string(fmt)
    if fmt == "vtt" and add_vtt_time_map:
        head, _, rest = out.partition("\n")
        out = f"{head}\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n{rest}"
    return out



def track_events_json(subs: pysubs2.SSAFile) -> str:
    """Jellyfin's ``Stream.js`` body: ``{"TrackEvents": [{Id, Text, StartPositionTicks,
    EndPositionTicks}]}``. The text is plain (style tags dropped), HTML-escaped because
    jellyfin-web puts it into the page as HTML, with line breaks as ``\\n``."""
    events = []
    for n, event in enumerate(e for e in subs.events if not e.is_comment):
        text = html.escape(event.plaintext, quote=False)
        events.append({"Id": str(n + 1), "Text": text, "StartPositionTicks": event.start * TICKS_PER_MS,
                       "EndPositionTicks": event.end * TICKS_PER_MS})
    return json.dumps({"TrackEvents": events}, ensure_ascii=False)
