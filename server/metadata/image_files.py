"""Saving downloaded images under <data>/metadata (blocking: call from a worker thread)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from server.media.images import ImageError, blurhash_of, image_info, image_tag

EXTENSIONS = {"jpg": "jpg", "png": "png", "webp": "webp", "gif": "gif", "bmp": "bmp"}


class NotAnImageError(ValueError):
    """The downloaded content is not an image Reelroom can read."""


def image_folder(metadata_dir: Path, item_id: str, is_person: bool = False) -> Path:
    return metadata_dir / ("people" if is_person else "items") / item_id[:2] / item_id


def save_image(folder: Path, image_type: str, content: bytes, provider: str) -> dict[str, Any]:
    """Check ``content`` is an image, write it to ``folder`` (the name carries a content hash, so
    a new image never reuses an old path) and return its images_json entry."""
    try:
        width, height, fmt = image_info(content)
    except ImageError as exc:
        raise NotAnImageError(f"The downloaded file is not a readable image: {exc}") from None
    try:
        blurhash: str | None = blurhash_of(content)
    except Exception:  # the hash is optional; a decoder quirk must not lose the image
        blurhash = None
    ext = EXTENSIONS.get(fmt)
    if ext is None:
        raise NotAnImageError(f"Images of format {fmt or 'unknown'!r} are not supported.")
    digest = hashlib.sha1(content, usedforsecurity=False).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{image_type.lower()}-{digest}.{ext}"
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_bytes(content)
    os.replace(tmp, path)
    stat = path.stat()
    return {"Type": image_type, "Path": str(path), "Tag": image_tag(path, stat.st_mtime, stat.st_size),
            "Width": width, "Height": height, "BlurHash": blurhash, "Provider": provider}


def remove_replaced(paths: list[str], metadata_dir: Path) -> None:
    """Delete replaced image files, but only Reelroom's own ones (never artwork beside media)."""
    root = metadata_dir.resolve()
    for text in paths:
        path = Path(text).resolve()
        if path.is_relative_to(root) and path.is_file():
            try:
                path.unlink()
            except OSError:
                pass
