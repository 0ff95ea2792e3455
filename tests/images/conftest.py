"""One live server for the image tests, item rows inserted directly, images made with Pillow."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from server.db.tables import Item
from server.media.images import image_tag
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server


def make_picture(path: Path, size: tuple[int, int], color=(200, 30, 30), mode: str = "RGB") -> Path:
    """A picture with a distinct top-left quadrant (so crops and reorders are visible)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    img = Image.new(mode, size, color if mode == "RGB" else (*color, 128))
    img.paste((0, 0, 0) if mode == "RGB" else (0, 0, 0, 255), (0, 0, size[0] // 2, size[1] // 2))
    img.save(path)
    return path


def picture_bytes(size: tuple[int, int], color=(20, 200, 20), fmt: str = "JPEG") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, fmt)
    return out.getvalue()


def entry_for(path: Path, image_type: str = "Primary", index: int | None = None) -> dict:
    stat = path.stat()
    with Image.open(path) as img:
        width, height = img.size
    entry = {"Type": image_type, "Path": str(path), "Tag": image_tag(path, stat.st_mtime, stat.st_size),
             "Width": width, "Height": height, "BlurHash": None}
    if index is not None:
        entry["Index"] = index
    return entry


def add_item(live: LiveServer, images: list[dict], kind: str = "Movie", name: str | None = None,
             item_id: str | None = None) -> str:
    item_id = item_id or uuid.uuid4().hex
    row = Item(id=item_id, type=kind, name=name or f"Item {item_id[:6]}", sort_name=name or item_id,
               images_json=json.dumps(images))

    def write(s):
        s.add(row)

    live.ctx.db.write_sync(write)
    return item_id


def decode(content: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(content))
    img.load()
    return img


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("images")
    server = start_server(root / "data")
    complete_wizard(server)
    server.extra["art"] = root / "art"
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def poster(live: LiveServer) -> tuple[str, dict]:
    """A movie with a 1000x1500 JPEG Primary, a PNG (with alpha) Logo and two backdrops."""
    art = live.extra["art"]
    primary = entry_for(make_picture(art / "poster.jpg", (1000, 1500)))
    logo = entry_for(make_picture(art / "logo.png", (400, 200), mode="RGBA"), "Logo")
    backdrops = [entry_for(make_picture(art / f"fanart{i}.jpg", (640, 360), color=c), "Backdrop", i)
                 for i, c in enumerate([(10, 10, 250), (250, 250, 10)])]
    item_id = add_item(live, [primary, logo, *backdrops], name="Poster Movie")
    return item_id, primary
