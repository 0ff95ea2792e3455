"""Images of by-name items (Person, Genre, MusicGenre, Studio, MusicArtist) kept in folders.

Layout: ``<data>/metadata/ByName/<Kind>/<folder>/`` where ``<folder>`` is the name with the
characters that are not allowed in file names replaced by ``_``; a ``.name`` file holds the
exact name when the folder name differs from it. Files in it are named like sidecar artwork
(``folder.jpg`` or ``poster.jpg`` = Primary, ``backdrop.jpg``, ``backdrop1.jpg``, ...,
``logo.png``, ``banner.jpg``, ``thumb.jpg``, ``clearart.png``, ``disc.png``); the naming rules in
``server.library.scan.naming.images`` decide the type. An administrator may drop files there, and
uploads for genres, music genres and studios are written there.

Everything here blocks (stat, listdir): call it from a worker thread.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any

from server.library.catalog.ids import by_name_id
from server.library.scan.naming.images import classify_sidecar_image
from server.media.images import blurhash_of, image_info, image_tag

KINDS = ("Person", "Genre", "MusicGenre", "Studio", "MusicArtist")
NAME_FILE = ".name"

# The file name an upload of each image type gets (Backdrop adds its index).
UPLOAD_NAMES = {"Primary": "folder", "Backdrop": "backdrop", "Logo": "logo", "Banner": "banner",
                "Thumb": "thumb", "Art": "clearart", "Disc": "disc", "Box": "box", "BoxRear": "boxrear",
                "Menu": "menu"}

_INVALID = re.compile(r'[\x00-\x1f<>:"/\\|?*]')


def folder_name(name: str) -> str:
    cleaned = _INVALID.sub("_", name.strip()).rstrip(". ")
    return cleaned if cleaned and cleaned not in (".", "..") else "_"


def folder_for(metadata_dir: Path, kind: str, name: str) -> Path:
    return metadata_dir / "ByName" / kind / folder_name(name)


def list_images(folder: Path, details: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """images_json-style entries for the artwork files in ``folder``. The tag comes from path,
    mtime and size, so replacing a file changes it. With ``details`` (a dict kept by the caller,
    keyed by tag) entries also get Width, Height and BlurHash, each file read once."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found: list[tuple[str, int, str, dict[str, Any]]] = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_file():
            continue
        kind = classify_sidecar_image(entry.name)
        if kind is None or kind.season is not None:
            continue
        stat = entry.stat()
        image_type = kind.image_type.value
        found.append((image_type, kind.index, entry.name, {
            "Type": image_type, "Path": entry.path, "Tag": image_tag(entry.path, stat.st_mtime, stat.st_size)}))
    found.sort(key=lambda f: (f[0], f[1], f[2]))
    images: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for image_type, _index, _name, entry in found:
        position = counts.get(image_type, 0)
        if image_type != "Backdrop" and position > 0:
            continue  # one Primary/Logo/...: the first name in order wins
        counts[image_type] = position + 1
        images.append({**entry, "Index": position, **(_details(entry, details) if details is not None else {})})
    return images


def _details(entry: dict[str, Any], cache: dict[str, dict[str, Any]]) -> dict[str, Any]:
    found = cache.get(entry["Tag"])
    if found is None:
        found = {}
        try:
            found["Width"], found["Height"], _fmt = image_info(entry["Path"])
            found["BlurHash"] = blurhash_of(entry["Path"])
        except Exception:  # an unreadable file still gets served (and 404s there)
            pass
        if len(cache) > 4096:
            cache.clear()
        cache[entry["Tag"]] = found
    return found


def by_name_images(metadata_dir: Path, kind: str, name: str) -> list[dict[str, Any]]:
    """The images in the by-name folder of ``kind``/``name`` (empty when there is none)."""
    return list_images(folder_for(metadata_dir, kind, name))


def remember_name(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if folder.name != name:
        (folder / NAME_FILE).write_text(name, encoding="utf-8")


class ByNameIndex:
    """Finds the (kind, name) of a by-name id among the existing folders. Rebuilt when a kind's
    folder changes (its mtime), so only folders that exist, never all names, are hashed."""

    def __init__(self, metadata_dir: Path) -> None:
        self.root = metadata_dir / "ByName"
        self._lock = threading.Lock()
        self._stamp: tuple[float, ...] | None = None
        self._ids: dict[str, tuple[str, str]] = {}
        self._details: dict[str, dict[str, Any]] = {}  # by tag: Width, Height, BlurHash

    def _current_stamp(self) -> tuple[float, ...]:
        stamps = []
        for kind in KINDS:
            try:
                stamps.append((self.root / kind).stat().st_mtime)
            except OSError:
                stamps.append(0.0)
        return tuple(stamps)

    def lookup(self, item_id: str) -> tuple[str, str] | None:
        stamp = self._current_stamp()
        with self._lock:
            if stamp != self._stamp:
                self._ids = self._build()
                self._stamp = stamp
            return self._ids.get(item_id)

    def images(self, kind: str, name: str) -> list[dict[str, Any]]:
        """The folder's images for ``kind``/``name``; the name matches case-insensitively, as by-name
        ids do (``/Genres/film noir`` finds ``Genre/Film Noir``)."""
        folder = self.root / kind / folder_name(name)
        if not folder.is_dir():
            found = self.lookup(by_name_id(kind, name))
            if found is None or found[0] != kind:
                return []
            folder = self.root / kind / folder_name(found[1])
        return list_images(folder, self._details)

    def _build(self) -> dict[str, tuple[str, str]]:
        ids: dict[str, tuple[str, str]] = {}
        for kind in KINDS:
            try:
                folders = [e for e in os.scandir(self.root / kind) if e.is_dir()]
            except OSError:
                continue
            for entry in folders:
                name = entry.name
                try:
                    name = (Path(entry.path) / NAME_FILE).read_text(encoding="utf-8").strip() or name
                except OSError:
                    pass
                ids[by_name_id(kind, name)] = (kind, name)
        return ids
