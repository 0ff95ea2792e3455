"""Trickplay: seek-preview thumbnails, as tile sheets plus an HLS image playlist.

The "RefreshTrickplayImages" task walks the library's videos. For each one whose file changed
since its tiles were made (size + mtime), ffmpeg (at low priority, one video at a time) writes
one frame every TrickplayOptions.Interval ms per configured width into a scratch folder; Pillow
packs them TileWidth x TileHeight to a sheet into ``<data>/trickplay/<id[:2]>/<id>/<width>/<n>.jpg``,
and a ``trickplay_info`` row records the layout. Tiles of videos that are gone are removed.
BaseItemDto.Trickplay comes from those rows (``info_for``, one query per page).
"""

from __future__ import annotations

import asyncio
import logging
import math
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Row

from server.db.database import load_orm_classes
from server.db.schema import trickplay_info
from server.errors import NotFoundError
from server.media import spawn
from server.tasks.scheduler import Progress, daily
from server.wire import models as w

if TYPE_CHECKING:
    from server.db.database import Database
    from server.db.tables import TrickplayInfo
    from server.paths import ServerPaths

log = logging.getLogger("reelroom.trickplay")
VIDEO_TYPES = ("Movie", "Episode", "Video", "MusicVideo", "Trailer")


def _signature(row: Row[Any]) -> str:
    return f"{row.file_size or row.size or 0}:{row.file_mtime or 0}"


def info_for(s, item_ids: list[str]) -> dict[str, dict[str, dict[str, w.TrickplayInfo]]]:
    """{item id: {media source id: {width: TrickplayInfo}}} for the DTO's Trickplay field."""
    if not item_ids:
        return {}
    out: dict[str, dict[str, dict[str, w.TrickplayInfo]]] = {}
    t = trickplay_info  # (Core rows: the DTO builder and the readers never load the ORM classes)
    for r in s.execute(select(t).where(t.c.item_id.in_(item_ids))):
        out.setdefault(r.item_id, {}).setdefault(r.item_id, {})[str(r.width)] = w.TrickplayInfo(
            Width=r.width, Height=r.height, TileWidth=r.tile_width, TileHeight=r.tile_height,
            ThumbnailCount=r.thumbnail_count, Interval=r.interval, Bandwidth=r.bandwidth)
    return out


class TrickplayService:
    """``ctx.trickplay``; the server context registers its task (``TrickplayTask``)."""

    def __init__(self, db: Database, paths: ServerPaths, ffmpeg_path: Callable[[], str],
                 options: Callable[[], w.TrickplayOptions | None]) -> None:
        self.db = db
        self.root = paths.data_dir / "trickplay"
        self.scratch_dir = paths.cache_dir
        self.ffmpeg_path = ffmpeg_path  # blocking (may look ffmpeg up): called in a thread
        self._options = options  # ServerConfiguration.TrickplayOptions, read at each use

    def options(self) -> w.TrickplayOptions:
        return self._options() or w.TrickplayOptions()

    def folder(self, item_id: str, width: int | None = None) -> Path:
        base = self.root / item_id[:2] / item_id
        return base / str(width) if width is not None else base

    # -- serving ----------------------------------------------------------------------------------

    async def info(self, item_id: str, width: int) -> TrickplayInfo:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import TrickplayInfo

        row = await self.db.read(lambda s: s.get(TrickplayInfo, (item_id, width)))
        if row is None:
            raise NotFoundError(f"Item {item_id} has no trickplay tiles at width {width}.")
        return row

    async def playlist(self, item_id: str, width: int, api_key: str | None) -> str:
        info = await self.info(item_id, width)
        per_sheet = info.tile_width * info.tile_height
        sheets = math.ceil(info.thumbnail_count / per_sheet)
        interval_s = info.interval / 1000
        query = f"?MediaSourceId={item_id}" + (f"&api_key={api_key}" if api_key else "")
        lines = ["#EXTM3U", f"#EXT-X-TARGETDURATION:{math.ceil(per_sheet * interval_s)}", "#EXT-X-VERSION:7",
                 "#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-IMAGES-ONLY"]
        for n in range(sheets):
            count = min(per_sheet, info.thumbnail_count - n * per_sheet)
            lines.append(f"#EXTINF:{count * interval_s:.3f},")
            lines.append(f"#EXT-X-TILES:RESOLUTION={info.width}x{info.height},"
                         f"LAYOUT={info.tile_width}x{info.tile_height},DURATION={interval_s:.3f}")
            lines.append(f"{n}.jpg{query}")
        lines.append("#EXT-X-ENDLIST")
        return "\n".join(lines) + "\n"

    async def tile(self, item_id: str, width: int, index: int) -> Path:
        await self.info(item_id, width)
        path = self.folder(item_id, width) / f"{index}.jpg"
        if index < 0 or not await asyncio.to_thread(path.is_file):
            raise NotFoundError(f"No trickplay tile {index} at width {width}.")
        return path

    # -- making tiles -------------------------------------------------------------------------------

    async def pending(self) -> tuple[list[Any], list[str]]:
        """(videos needing tiles, item ids whose tiles are orphans)."""
        widths = set(self.options().WidthResolutions or [320])

        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item, TrickplayInfo

        def read(s) -> tuple[list[Any], list[str]]:
            videos = s.execute(select(Item.id, Item.path, Item.file_size, Item.size, Item.file_mtime,
                                      Item.run_time_ticks).where(
                Item.type.in_(VIDEO_TYPES), Item.media_type == "Video", Item.path.is_not(None),
                Item.is_virtual.is_(False))).all()
            made: dict[str, dict[int, str]] = {}
            for r in s.execute(select(TrickplayInfo.item_id, TrickplayInfo.width, TrickplayInfo.signature)):
                made.setdefault(r.item_id, {})[r.width] = r.signature
            present = {v.id for v in videos}
            todo = [v for v in videos if v.run_time_ticks
                    and any(made.get(v.id, {}).get(width) != _signature(v) for width in widths)]
            return todo, [i for i in made if i not in present]

        return await self.db.read(read)

    async def remove(self, item_ids: list[str]) -> None:
        if not item_ids:
            return

        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import TrickplayInfo

        def write(s) -> None:
            s.execute(delete(TrickplayInfo).where(TrickplayInfo.item_id.in_(item_ids)))

        await self.db.write(write)
        for item_id in item_ids:
            await asyncio.to_thread(shutil.rmtree, self.folder(item_id), True)

    async def generate(self, video: Any) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import TrickplayInfo

        opts = self.options()
        interval = max(100, opts.Interval or 10000)
        tiles_w, tiles_h = max(1, opts.TileWidth or 10), max(1, opts.TileHeight or 10)
        ffmpeg = await asyncio.to_thread(self.ffmpeg_path)
        for width in sorted(set(opts.WidthResolutions or [320])):
            scratch = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="trickplay-",
                                                   dir=self.scratch_dir))
            try:
                await self._extract(ffmpeg, video.path, scratch, interval, width, opts)
                frames = sorted(scratch.glob("*.jpg"))
                if not frames:
                    raise RuntimeError("ffmpeg wrote no frames")
                sheet = await asyncio.to_thread(_pack, frames, self.folder(video.id, width), tiles_w, tiles_h,
                                                opts.JpegQuality or 90)
            finally:
                await asyncio.to_thread(shutil.rmtree, scratch, True)
            per_sheet = tiles_w * tiles_h
            bandwidth = int(sheet.max_bytes * 8 / max(per_sheet * interval / 1000, 0.001))
            record = TrickplayInfo(item_id=video.id, width=width, height=sheet.tile_height, tile_width=tiles_w,
                                   tile_height=tiles_h, thumbnail_count=len(frames), interval=interval,
                                   bandwidth=bandwidth, signature=_signature(video))

            def write(s, record=record) -> None:
                s.merge(record)

            await self.db.write(write)

    async def _extract(self, ffmpeg: str, path: str, out: Path, interval: int, width: int,
                       opts: w.TrickplayOptions) -> None:
        args = [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-threads", str(opts.ProcessThreads or 1)]
        if opts.EnableKeyFrameOnlyExtraction:
            args += ["-skip_frame", "nokey"]
        args += ["-i", path, "-an", "-sn", "-map", "0:v:0", "-vf", f"fps=1000/{interval},scale={width}:-2",
                 "-q:v", str(opts.Qscale or 4), "-f", "image2", str(out / "%06d.jpg")]
        proc = await spawn.exec_async(
            *args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, nice=10)
        try:
            _, err = await proc.communicate()
        except asyncio.CancelledError:
            spawn.kill(proc)
            await proc.wait()
            raise
        if proc.returncode != 0:
            reason = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"ffmpeg exited with {proc.returncode}: {reason[0]}")


@dataclass
class _Sheets:
    tile_height: int
    max_bytes: int


def _pack(frames: list[Path], folder: Path, cols: int, rows: int, quality: int) -> _Sheets:
    """Pack the frames row by row into sheets of cols x rows; returns the thumbnail height."""
    from PIL import Image  # Pillow loads when tiles are first made
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.jpg"):
        old.unlink()
    with Image.open(frames[0]) as first:
        tile_w, tile_h = first.size
    per_sheet = cols * rows
    biggest = 0
    for n in range(math.ceil(len(frames) / per_sheet)):
        chunk = frames[n * per_sheet:(n + 1) * per_sheet]
        used_rows = math.ceil(len(chunk) / cols)
        sheet = Image.new("RGB", (tile_w * min(cols, len(chunk)), tile_h * used_rows))
        for i, frame in enumerate(chunk):
            with Image.open(frame) as img:
                sheet.paste(img.convert("RGB").resize((tile_w, tile_h)), ((i % cols) * tile_w, (i // cols) * tile_h))
        target = folder / f"{n}.jpg"
        sheet.save(target, "JPEG", quality=quality)
        biggest = max(biggest, target.stat().st_size)
    return _Sheets(tile_height=tile_h, max_bytes=biggest)


@dataclass
class TrickplayTask:
    service: TrickplayService
    key: str = "RefreshTrickplayImages"
    name: str = "Generate Trickplay Images"
    description: str = "Makes the seek-preview thumbnails of videos that have none or whose file changed."
    category: str = "Library"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [daily(3)])

    async def run(self, progress: Progress) -> None:
        todo, orphans = await self.service.pending()
        await self.service.remove(orphans)
        for done, video in enumerate(todo):
            try:
                await self.service.generate(video)
            except (RuntimeError, OSError, ValueError) as exc:  # one bad or vanished file must not stop the run
                log.warning("No trickplay tiles for %s: %s", video.path, exc)
            progress((done + 1) * 100 / len(todo))
        progress(100)
