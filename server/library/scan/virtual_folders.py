"""Virtual folders (libraries): a name, a collection type, paths on disk and LibraryOptions.

Persisted in ``libraries`` / ``library_paths``. Each library also has a CollectionFolder row in
``items`` whose id is the library id (``ids.library_id_for_name`` at creation; a rename keeps
the id so that clients' cached ids, user data and every item's ``library_id`` stay valid).
Paths coming from requests are resolved and must exist and lie inside the allowed roots of
the filesystem configuration (the same roots the folder picker browses).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from sqlalchemy import delete, select

from server.db.database import Database, load_orm_classes
from server.db.handles import items, libraries, library_paths
from server.errors import BadRequestError, ConflictError, ForbiddenError, NotFoundError
from server.guid import guid_from_text
from server.library.catalog import ids
from server.library.catalog.sorting import sort_name
from server.system.filesystem import FileSystemBrowser
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

COLLECTION_TYPES = ("movies", "tvshows", "music", "musicvideos", "homevideos", "boxsets", "books", "photos",
                    "mixed")


@dataclass(frozen=True, slots=True)
class LibraryInfo:
    """A library as the scanner sees it."""

    id: str
    name: str
    collection_type: str | None
    paths: tuple[str, ...]
    options: w.LibraryOptions

    @property
    def realtime_monitor(self) -> bool:
        return self.options.EnableRealtimeMonitor is not False


def normalize_id(value: str | None) -> str:
    return (value or "").replace("-", "").strip().lower()


def _decode_options(text: str | None) -> w.LibraryOptions:
    try:
        return msgspec.json.decode(text or "{}", type=w.LibraryOptions, strict=False)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return w.LibraryOptions()


def _require_name(name: str | None, what: str = "name") -> str:
    if name is None or not name.strip():
        raise BadRequestError(f"The library {what} must not be empty.")
    return name.strip()


class LibraryService:
    """``ctx.library``: the virtual folders."""

    def __init__(self, db: Database, filesystem: FileSystemBrowser) -> None:
        self.db = db
        self.filesystem = filesystem

    # -- paths -----------------------------------------------------------------------------

    def check_path(self, raw: str | None) -> str:
        """A library path from a request: absolute, existing folder inside an allowed root."""
        if raw is None or not raw.strip():
            raise BadRequestError("A path is required.")
        if "\x00" in raw:
            raise BadRequestError("The path contains a NUL character.")
        path = Path(raw).expanduser()
        if not path.is_absolute():
            raise BadRequestError(f"The path must be absolute: {raw!r}")
        resolved = path.resolve()
        if not resolved.exists():
            raise NotFoundError(f"The path {raw!r} does not exist.")
        if not resolved.is_dir():
            raise BadRequestError(f"{raw!r} is not a folder.")
        if not self.filesystem.allows(resolved):
            raise ForbiddenError(f"The path {raw!r} is outside the allowed folders of this server "
                                 "(Settings, \"Only use folders inside\").")
        return str(resolved)

    # -- reads -----------------------------------------------------------------------------

    @staticmethod
    def _infos(s: Session) -> list[LibraryInfo]:
        lt, pt = libraries.c, library_paths.c  # on the tables (server/db/handles.py): the start reads them
        libs = s.execute(select(lt.id, lt.name, lt.collection_type, lt.options_json).order_by(lt.name)).all()
        paths: dict[str, list[str]] = {}
        for row in s.execute(select(pt.library_id, pt.path)).all():
            paths.setdefault(row.library_id, []).append(row.path)
        return [LibraryInfo(id=lib.id, name=lib.name, collection_type=lib.collection_type,
                            paths=tuple(sorted(paths.get(lib.id, []))), options=_decode_options(lib.options_json))
                for lib in libs]

    def libraries_sync(self) -> list[LibraryInfo]:
        return self.db.read_sync(self._infos)

    async def libraries(self) -> list[LibraryInfo]:
        return await self.db.read(self._infos)

    async def options_of(self, library_id: str | None) -> w.LibraryOptions | None:
        """A library's LibraryOptions (None for no or an unknown library): the provider order."""
        if not library_id:
            return None
        for info in await self.libraries():
            if info.id == library_id:
                return info.options
        return None

    async def get(self, library_id: str) -> LibraryInfo:
        library_id = normalize_id(library_id)
        for info in await self.libraries():
            if info.id == library_id:
                return info
        raise NotFoundError(f"Library {library_id} not found.")

    async def by_name(self, name: str) -> LibraryInfo:
        wanted = name.strip().casefold()
        for info in await self.libraries():
            if info.name.casefold() == wanted:
                return info
        raise NotFoundError(f"There is no library named {name!r}.")

    async def with_primary_image(self) -> set[str]:
        """Ids of the libraries whose CollectionFolder has a Primary image (its own, uploaded or a
        generated collage): only those get a PrimaryImageItemId, so clients never show a broken
        image. (On the Core tables: the desktop app's library page and the dashboard ask it.)"""

        def read(s: Session) -> set[str]:
            rows = s.execute(select(items.c.id, items.c.images_json).where(
                items.c.type == "CollectionFolder", items.c.id.in_(select(libraries.c.id)))).all()
            out: set[str] = set()
            for item_id, text in rows:
                try:
                    images = json.loads(text or "[]")
                except ValueError:
                    continue
                if any(isinstance(i, dict) and i.get("Type") == "Primary" and i.get("Tag") for i in images):
                    out.add(item_id)
            return out

        return await self.db.read(read)

    @staticmethod
    def wire(info: LibraryInfo, progress: float | None = None, has_image: bool = True) -> w.VirtualFolderInfo:
        options = msgspec.structs.replace(info.options, PathInfos=[w.MediaPathInfo(Path=p) for p in info.paths])
        return w.VirtualFolderInfo(
            Name=info.name, Locations=list(info.paths), CollectionType=info.collection_type or "mixed",
            LibraryOptions=options, ItemId=info.id, PrimaryImageItemId=info.id if has_image else None,
            RefreshProgress=progress, RefreshStatus="Active" if progress is not None else "Idle")

    async def physical_paths(self) -> list[str]:
        return [p for info in await self.libraries() for p in info.paths]

    # -- writes ----------------------------------------------------------------------------

    async def add(self, name: str | None, collection_type: str | None, paths: list[str] | None,
                  options: w.LibraryOptions | None) -> LibraryInfo:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item, Library, LibraryPath

        name = _require_name(name)
        if collection_type is not None and collection_type.lower() not in COLLECTION_TYPES:
            raise BadRequestError(f"Unknown collection type {collection_type!r}.")
        kind = None if collection_type in (None, "mixed") else collection_type.lower()
        options = options or w.LibraryOptions()
        wanted = [*(paths or []), *[p.Path for p in (options.PathInfos or []) if p.Path]]
        checked = list(dict.fromkeys(self.check_path(p) for p in wanted))
        stored = msgspec.json.encode(msgspec.structs.replace(options, PathInfos=None)).decode()

        def write(s: Session) -> str:
            existing = s.execute(select(Library.name)).scalars().all()
            if any(n.casefold() == name.casefold() for n in existing):
                raise BadRequestError(f"A library named {name!r} already exists.")
            lib_id = ids.library_id_for_name(name)
            suffix = 0
            while s.get(Library, lib_id) is not None or s.get(Item, lib_id) is not None:
                suffix += 1  # a renamed library kept the id this name derives
                lib_id = guid_from_text("library", f"{name.strip().casefold()}\x00{suffix}")
            s.add(Library(id=lib_id, name=name, collection_type=kind, options_json=stored))
            s.flush()
            for p in checked:
                s.add(LibraryPath(library_id=lib_id, path=p))
            s.add(Item(id=lib_id, type="CollectionFolder", is_folder=True, library_id=lib_id, parent_id=None,
                       name=name, sort_name=sort_name(name), media_type="Unknown"))
            return lib_id

        lib_id = await self.db.write(write)
        return await self.get(lib_id)

    async def remove(self, name: str | None) -> LibraryInfo:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item, ItemPerson, ItemValue, Library, LibraryPath, MediaProbeCache

        name = _require_name(name)
        info = await self.by_name(name)

        def write(s: Session) -> None:
            item_ids = select(Item.id).where(Item.library_id == info.id)
            s.execute(delete(ItemValue).where(ItemValue.item_id.in_(item_ids)))
            s.execute(delete(ItemPerson).where(ItemPerson.item_id.in_(item_ids)))
            s.execute(delete(MediaProbeCache).where(MediaProbeCache.item_id.in_(item_ids)))
            s.execute(delete(Item).where(Item.library_id == info.id))
            s.execute(delete(LibraryPath).where(LibraryPath.library_id == info.id))
            s.execute(delete(Library).where(Library.id == info.id))

        await self.db.write(write)
        return info

    async def rename(self, name: str | None, new_name: str | None) -> LibraryInfo:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item, Library

        name = _require_name(name)
        new_name = _require_name(new_name, "new name")
        info = await self.by_name(name)
        if new_name.casefold() != info.name.casefold():
            if any(i.name.casefold() == new_name.casefold() for i in await self.libraries()):
                raise ConflictError(f"A library named {new_name!r} already exists.")

        def write(s: Session) -> None:
            lib = s.get(Library, info.id)
            lib.name = new_name
            s.add(lib)
            folder = s.get(Item, info.id)
            if folder is not None:
                folder.name = new_name
                folder.sort_name = sort_name(new_name)
                s.add(folder)

        await self.db.write(write)
        return await self.get(info.id)

    async def add_path(self, name: str | None, path: str | None) -> tuple[LibraryInfo, str]:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LibraryPath

        name = _require_name(name)
        info = await self.by_name(name)
        checked = self.check_path(path)

        def write(s: Session) -> None:
            if s.get(LibraryPath, (info.id, checked)) is None:
                s.add(LibraryPath(library_id=info.id, path=checked))

        await self.db.write(write)
        return await self.get(info.id), checked

    def _find_path(self, info: LibraryInfo, path: str | None) -> str:
        if path is None or not path.strip():
            raise BadRequestError("A path is required.")
        candidates = {path, os.path.normpath(path)}
        try:
            candidates.add(str(Path(path).expanduser().resolve()))
        except (OSError, RuntimeError, ValueError):
            pass
        for p in info.paths:
            if p in candidates:
                return p
        raise NotFoundError(f"The library {info.name!r} has no path {path!r}.")

    async def remove_path(self, name: str | None, path: str | None) -> tuple[LibraryInfo, str]:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LibraryPath

        name = _require_name(name)
        info = await self.by_name(name)
        found = self._find_path(info, path)

        def write(s: Session) -> None:
            s.execute(delete(LibraryPath).where(LibraryPath.library_id == info.id, LibraryPath.path == found))

        await self.db.write(write)
        return await self.get(info.id), found

    async def update_path(self, name: str | None, path_info: w.MediaPathInfo | None) -> LibraryInfo:
        name = _require_name(name)
        info = await self.by_name(name)
        if path_info is None or not path_info.Path:
            raise BadRequestError("PathInfo.Path is required.")
        self._find_path(info, path_info.Path)  # Jellyfin only updates network paths of known paths
        return info

    async def update_options(self, library_id: str | None, options: w.LibraryOptions | None) -> LibraryInfo:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Library

        info = await self.get(normalize_id(library_id))
        stored = msgspec.json.encode(msgspec.structs.replace(options or w.LibraryOptions(), PathInfos=None)).decode()

        def write(s: Session) -> None:
            lib = s.get(Library, info.id)
            lib.options_json = stored
            s.add(lib)

        await self.db.write(write)
        return await self.get(info.id)
