"""Collages for folders without art (libraries, views, playlists, collections, genres), with Pillow.

Jellyfin's dynamic image providers make three shapes: a 16:9 strip for library tiles (the chosen
items side by side, the library's name across the middle), a square 2x2 grid (playlists, genres,
views) and a 2:3 poster grid. Sources are cover-cropped to their cell; fewer than four sources
repeat in turn (two sit on the diagonals), and a single source fills the whole image.

Everything here blocks: call it from a worker thread.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from server.media.images import ImageDecodeError

if TYPE_CHECKING:
    from PIL import Image

# Pillow is imported by the functions that draw: start-up stays light.


@dataclass(frozen=True, slots=True)
class Layout:
    name: str
    width: int
    height: int


THUMB = Layout("thumb", 960, 540)  # library tiles (CollectionFolder, the Playlists view)
SQUARE = Layout("square", 600, 600)  # playlists, genres, music genres
POSTER = Layout("poster", 600, 900)  # collections (BoxSet)
LAYOUTS = {layout.name: layout for layout in (THUMB, SQUARE, POSTER)}
MAX_SOURCES = 4
QUALITY = 88


def _load(path: str, size: tuple[int, int]) -> Image.Image:
    """The source decoded (a JPEG at a reduced scale still >= ``size``), upright, RGB."""
    from PIL import Image, ImageOps
    try:
        with Image.open(path) as img:
            img.draft("RGB", size)
            return ImageOps.exif_transpose(img).convert("RGB")
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise ImageDecodeError(f"cannot read {path}: {exc}") from exc


def _cells(layout: Layout, count: int) -> list[tuple[int, int, int, int]]:
    """(left, top, right, bottom) of each cell."""
    w, h = layout.width, layout.height
    if count <= 1:
        return [(0, 0, w, h)]
    if layout is THUMB:
        cols = min(count, MAX_SOURCES)
        edges = [round(i * w / cols) for i in range(cols + 1)]
        return [(edges[i], 0, edges[i + 1], h) for i in range(cols)]
    half_w, half_h = w // 2, h // 2
    return [(0, 0, half_w, half_h), (half_w, 0, w, half_h), (0, half_h, half_w, h), (half_w, half_h, w, h)]


def _title(canvas: Image.Image, text: str) -> None:
    """The name on a dark band across the middle, as Jellyfin's library tiles show it."""
    from PIL import Image, ImageDraw, ImageFont
    w, h = canvas.size
    band_h = round(h * 0.26)
    top = (h - band_h) // 2
    overlay = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    draw.rectangle((0, top, w, top + band_h), fill=(0, 0, 0, 150))
    size = round(band_h * 0.55)
    font = ImageFont.load_default(size=size)
    while size > 12 and draw.textlength(text, font=font) > w * 0.9:
        size -= 4
        font = ImageFont.load_default(size=size)
    draw.text((w / 2, top + band_h / 2), text, font=font, fill=(255, 255, 255, 255), anchor="mm")
    canvas.alpha_composite(overlay)


def make_collage(sources: Sequence[str], layout: Layout, out: Path, title: str | None = None) -> tuple[int, int]:
    """Write a JPEG collage of ``sources`` (image paths, the first four readable ones used) to
    ``out`` atomically; returns its size. None readable raises ImageDecodeError."""
    if not any(os.path.isfile(path) for path in sources):  # (all gone: not worth importing Pillow)
        raise ImageDecodeError("no readable source image")
    from PIL import Image, ImageOps
    tiles: list[Image.Image] = []
    for path in dict.fromkeys(sources):
        if len(tiles) >= MAX_SOURCES:
            break
        try:
            tiles.append(_load(path, (layout.width, layout.height)))
        except ImageDecodeError:
            continue  # unreadable or gone: the next source takes its place
    if not tiles:
        raise ImageDecodeError("no readable source image")
    cells = _cells(layout, len(tiles))
    canvas = Image.new("RGBA", (layout.width, layout.height), (0, 0, 0, 255))
    for n, (left, top, right, bottom) in enumerate(cells):
        # two sources in a grid sit on the diagonals (A B / B A) rather than in stripes
        pick = (0, 1, 1, 0)[n] if len(tiles) == 2 and len(cells) == 4 else n % len(tiles)
        canvas.paste(ImageOps.fit(tiles[pick], (right - left, bottom - top), Image.Resampling.LANCZOS), (left, top))
    if title:
        _title(canvas, title)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
    canvas.convert("RGB").save(tmp, "JPEG", quality=QUALITY)
    os.replace(tmp, out)
    return canvas.size
