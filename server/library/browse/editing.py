"""Editing and deleting items: the metadata editor (UpdateItem, GetMetadataEditorInfo),
folder content types (UpdateItemContentType) and DeleteItem(s).

UpdateItem writes only the fields whose value changed and locks them, so a rescan keeps them
(``server/library/scan/merge.py``): fields a MetadataField covers get that name in LockedFields,
other columns a "~column" entry. ``item_values`` and ``item_people`` are rewritten to match.

Deleting follows Jellyfin: a user may delete when their policy has EnableContentDeletion, or
EnableContentDeletionFromFolders naming the item's library; a playlist's owner may delete it.
Files are removed from disk only when they lie inside one of the item's library paths (never a
library root itself): a folder item's folder, a movie's own folder (when no other item lives
in it), else the file and its same-named sidecars; rows of the item, its descendants and its extras go, ``user_data`` stays.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec
from sqlalchemy import delete, insert, or_, select, update

from server.db.database import load_orm_classes
from server.db.handles import items
from server.errors import BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError
from server.guid import normalize_guid
from server.library.catalog import ids
from server.library.catalog.sorting import sort_name
from server.library.scan import store
from server.library.scan.merge import COLUMN_LOCK_PREFIX, LOCKABLE_FIELDS, locked_fields
from server.system.localization import bundled_localization
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database
    from server.db.tables import Item
    from server.events.hub import EventHub
    from server.library.catalog.items import ItemService
    from server.library.catalog.query import ItemRow
    from server.system.configuration import ConfigurationStore
    from server.users.service import UserRecord

log = logging.getLogger("reelroom.library")

_VALUE_COLUMNS = (("genres_json", "Genre"), ("studios_json", "Studio"), ("tags_json", "Tag"),
                  ("artists_json", "Artist"), ("album_artists_json", "AlbumArtist"))
_COLUMN_TO_FIELD = {col: field for field, cols in LOCKABLE_FIELDS.items() for col in cols}
_NOT_DELETABLE = ("CollectionFolder", "UserRootFolder", "ManualPlaylistsFolder")
_CONTENT_TYPES = (("", "Mixed content"), ("movies", "Movies"), ("tvshows", "Shows"), ("music", "Music"),
                  ("musicvideos", "Music videos"), ("homevideos", "Home videos and photos"), ("books", "Books"))


def _names(pairs: list[Any] | None) -> list[str] | None:
    if pairs is None:
        return None
    return [p.Name.strip() for p in pairs if getattr(p, "Name", None) and p.Name.strip()]


def _strings(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return list(dict.fromkeys(v.strip() for v in values if isinstance(v, str) and v.strip()))


def _utc(value: datetime | None) -> datetime | None:
    """Aware UTC (the database's datetime columns store aware values); naive input is UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Fields an explicit null clears, as Jellyfin's editor does (it assigns them from the body as they
# are) -> the column. Other fields keep their value on null (Jellyfin guards Taglines, Studios,
# ArtistItems, AlbumArtists, People and LockedFields with a null check; it fails on a null Tags
# or ProviderIds; a null Name would leave a nameless item). A field left out of the body is never
# touched: Jellyfin's clients send the whole item, and a partial body stays a partial update.
NULL_CLEARS = {"OriginalTitle": "original_title", "ForcedSortName": "forced_sort_name", "Overview": "overview",
               "OfficialRating": "official_rating", "Album": "album", "CommunityRating": "community_rating",
               "CriticRating": "critic_rating", "ProductionYear": "production_year", "IndexNumber": "index_number",
               "ParentIndexNumber": "parent_index_number", "PremiereDate": "premiere_date", "EndDate": "end_date",
               "Genres": "genres_json"}
_NULL_CLEARS_BY_LOWER = {k.lower(): k for k in (*NULL_CLEARS, "LockData")}


def null_fields(body: bytes) -> frozenset[str]:
    """The body's top-level fields sent as an explicit null (PascalCase, whatever casing the
    client used), among those a null changes (``NULL_CLEARS`` and LockData)."""
    try:
        raw = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return frozenset()
    if not isinstance(raw, dict):
        return frozenset()
    return frozenset(_NULL_CLEARS_BY_LOWER[k.lower()] for k, v in raw.items()
                     if v is None and isinstance(k, str) and k.lower() in _NULL_CLEARS_BY_LOWER)


def edited_columns(data: w.BaseItemDto, nulls: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The item columns a metadata editor body sets (fields it left out are not touched;
    ``nulls``: the fields it sent as null, cleared when Jellyfin clears them, ``NULL_CLEARS``)."""
    out: dict[str, Any] = {}
    for key in nulls:
        column = NULL_CLEARS.get(key)
        if column is not None:
            out[column] = "[]" if column.endswith("_json") else None
    if data.Name is not None:
        if not data.Name.strip():
            raise BadRequestError("Name must not be empty.")
        out["name"] = data.Name.strip()
    for key, column in (("OriginalTitle", "original_title"), ("Overview", "overview"),
                        ("OfficialRating", "official_rating"), ("Album", "album")):
        value = getattr(data, key)
        if value is not None:
            out[column] = value.strip() or None
    if data.ForcedSortName is not None:
        out["forced_sort_name"] = data.ForcedSortName.strip() or None
    if data.Taglines is not None:
        out["tagline"] = next((t.strip() for t in data.Taglines if t and t.strip()), None)
    for key, column in (("CommunityRating", "community_rating"), ("CriticRating", "critic_rating"),
                        ("ProductionYear", "production_year"), ("IndexNumber", "index_number"),
                        ("ParentIndexNumber", "parent_index_number")):
        value = getattr(data, key)
        if value is not None:
            out[column] = value
    if data.ProductionYear is not None and not 0 < data.ProductionYear < 10000:
        raise BadRequestError("ProductionYear is out of range.")
    if data.CommunityRating is not None and not 0 <= data.CommunityRating <= 10:
        raise BadRequestError("CommunityRating must be between 0 and 10.")
    if data.PremiereDate is not None:
        out["premiere_date"] = _utc(data.PremiereDate)
    if data.EndDate is not None:
        out["end_date"] = _utc(data.EndDate)
    for column, values in (("genres_json", _strings(data.Genres)), ("tags_json", _strings(data.Tags)),
                           ("studios_json", _names(data.Studios)), ("artists_json", _names(data.ArtistItems)),
                           ("album_artists_json", _names(data.AlbumArtists))):
        if values is not None:
            out[column] = json.dumps(values)
    if data.ProviderIds is not None:
        out["provider_ids_json"] = json.dumps({k: v for k, v in data.ProviderIds.items() if v}, sort_keys=True)
    return out


def _same(old: Any, new: Any, column: str) -> bool:
    if column.endswith("_json"):
        try:
            return json.loads(old or "null") == json.loads(new)
        except ValueError:
            return False
    if isinstance(old, datetime) and isinstance(new, datetime):
        return _utc(old) == _utc(new)
    return old == new


def write_values(s: Session, row: Item) -> None:
    from server.db.tables import ItemValue

    s.execute(delete(ItemValue).where(ItemValue.item_id == row.id))
    found: dict[tuple[str, str], dict] = {}
    for column, kind in _VALUE_COLUMNS:
        try:
            values = json.loads(getattr(row, column) or "[]")
        except ValueError:
            continue
        for value in values:
            if isinstance(value, str) and value.strip():
                key = (kind, value.strip().lower())
                found.setdefault(key, {"item_id": row.id, "kind": kind, "clean_value": key[1], "value": value.strip()})
    if found:
        s.execute(insert(ItemValue), list(found.values()))


def _json_list(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


# An edited parent -> (its children's types, the columns that tie them to it). As in Jellyfin, a
# series' rating and tags go down to its seasons and episodes, a season's to its episodes, an
# album's to its tracks, where the child has not locked the field: parental rules read a track's
# own rating, and an episode's own rating before its series'.
_PASSED_DOWN = {"Series": (("Season", "Episode"), ("series_id", "parent_id")),
                "Season": (("Episode",), ("season_id", "parent_id")),
                "MusicAlbum": (("Audio", "MusicVideo"), ("album_id", "parent_id"))}


def _pass_down(s: Session, item: Item, rating_changed: bool, tags_before: list[str] | None) -> list[str]:
    """Give an edited series, season or album's new rating (when it changed) and its added and
    removed tags (``tags_before``: its tags before the edit; None when they did not change) to its
    children, skipping a field a child has locked. Returns the ids of the children changed.
    (Jellyfin writes the rating down on every save of the parent; here only a change does, so an
    unrelated edit of a series keeps its episodes' own ratings.)"""
    from sqlmodel import col

    from server.db.tables import Item

    kinds = _PASSED_DOWN.get(item.type or "")
    if kinds is None or (not rating_changed and tags_before is None):
        return []
    types, links = kinds
    tags_after = _json_list(item.tags_json)
    added = [t for t in tags_after if t not in tags_before] if tags_before is not None else []
    removed = {t for t in tags_before if t not in tags_after} if tags_before is not None else set()
    children = s.execute(select(Item).where(or_(*(getattr(Item, c) == item.id for c in links)),
                                            col(Item.type).in_(types))).scalars().all()
    changed_ids = []
    now = datetime.now(UTC)
    for child in children:
        locks = locked_fields(child)
        touched = False
        if rating_changed and "OfficialRating" not in locks and child.official_rating != item.official_rating:
            child.official_rating = item.official_rating
            touched = True
        if tags_before is not None and "Tags" not in locks:
            old = _json_list(child.tags_json)
            new = list(dict.fromkeys([*(t for t in old if t not in removed), *added]))
            if new != old:
                child.tags_json = json.dumps(new)
                touched = True
                s.add(child)
                s.flush()
                write_values(s, child)
        if touched:
            child.date_modified = now
            s.add(child)
            changed_ids.append(child.id)
    s.flush()
    return changed_ids


def write_people(s: Session, item_id: str, persons: list[w.BaseItemPerson]) -> None:
    from server.db.tables import ItemPerson, Person

    s.execute(delete(ItemPerson).where(ItemPerson.item_id == item_id))
    seen: set[tuple[str, str]] = set()
    for order, person in enumerate(persons):
        name = (person.Name or "").strip()
        if not name:
            continue
        kind = person.Type or "Actor"
        existing = s.execute(select(Person).where(Person.name == name)).scalar_one_or_none()
        if existing is None:
            pid = ids.by_name_id("Person", name)
            s.add(Person(id=pid, name=name, sort_name=sort_name(name)))
            s.flush()
        else:
            pid = existing.id
        if (pid, kind) in seen:
            continue
        seen.add((pid, kind))
        s.add(ItemPerson(item_id=item_id, person_id=pid, kind=kind, role=person.Role, sort_order=order))


def _descendants(s: Session, item_id: str) -> list[str]:
    """The item, everything under it (parent_id tree) and everything it owns (extras, versions)."""
    tree = select(items.c.id).where(or_(items.c.parent_id == item_id, items.c.owner_id == item_id)).cte(
        "doomed", recursive=True)
    child = items.alias("child")
    tree = tree.union(select(child.c.id).where(or_(child.c.parent_id == tree.c.id, child.c.owner_id == tree.c.id)))
    return [item_id, *(r[0] for r in s.execute(select(tree.c.id)).all() if r[0] != item_id)]


def _inside(path: str, root: str) -> bool:
    path, root = os.path.normcase(os.path.abspath(path)), os.path.normcase(os.path.abspath(root))
    return path != root and os.path.commonpath([path, root]) == root


def _delete_paths(row: ItemRow, roots: list[str]) -> list[str]:
    """What to remove from disk for a row: its folder, or its file and same-named sidecars."""
    path = row.path
    if not path or not any(_inside(path, r) for r in roots):
        return []
    if os.path.isdir(path):
        return [path]
    folder, base = os.path.split(path)
    stem = os.path.splitext(base)[0]
    out = [path]
    try:
        for name in os.listdir(folder):
            if name != base and (name.startswith(stem + ".") or name.startswith(stem + "-")):
                out.append(os.path.join(folder, name))
    except OSError:
        pass
    return out


def _owns_its_folder(s: Session, row: ItemRow, doomed: list[str], roots: list[str]) -> bool:
    """True when a file item's folder holds no other item (below a library root, never one)."""
    if row.is_folder or not row.path or not any(_inside(row.path, r) for r in roots):
        return False
    folder = os.path.dirname(row.path)
    if not any(_inside(folder, r) for r in roots):
        return False
    sep = "\\" if "\\" in folder and "/" not in folder else "/"
    prefix = folder.rstrip("/\\") + sep
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    others = s.execute(select(items.c.id).where(items.c.path >= prefix, items.c.path < upper,
                                                items.c.id.not_in(doomed)).limit(1)).first()
    return others is None


def _remove_from_disk(paths: list[str]) -> None:
    for p in paths:
        try:
            if os.path.isdir(p):
                shutil.rmtree(p)
            elif os.path.exists(p):
                os.remove(p)
        except OSError as exc:
            log.warning("Could not delete %s: %s", p, exc)


class EditingService:
    def __init__(self, db: Database, events: EventHub, items: ItemService, config: ConfigurationStore,
                 external_ids: Callable[[str], Awaitable[list[w.ExternalIdInfo]]]) -> None:
        self.db = db
        self.events = events
        self.items = items
        self.config = config  # MetadataCountryCode, ContentTypes
        self.external_ids = external_ids  # the metadata providers' ExternalIdInfos of an item

    def _changed(self, item_id: str, added: list[str] = (), updated: list[str] = (), removed: list[str] = ()) -> None:
        self.events.publish("LibraryChanged", {
            "CollectionFolders": [], "FoldersAddedTo": [], "FoldersRemovedFrom": [], "ItemsAdded": list(added),
            "ItemsRemoved": list(removed), "ItemsUpdated": list(updated), "IsEmpty": False})

    # -- metadata editor -----------------------------------------------------------------

    async def update_item(self, item_id: str, data: w.BaseItemDto, nulls: frozenset[str] = frozenset()) -> None:
        """Apply a metadata editor body. ``nulls``: the fields the body sent as an explicit null
        (``null_fields``): those Jellyfin clears are cleared, and a null LockData unlocks."""
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item

        row = await self.items.row(item_id)
        columns = edited_columns(data, nulls)

        def write(s: Session) -> list[str]:
            item = s.get(Item, row.id)
            if item is None:
                raise NotFoundError(f"Item {item_id} not found.")
            locks = locked_fields(item)
            changed = [c for c, v in columns.items() if not _same(getattr(item, c), v, c)]
            tags_before = _json_list(item.tags_json)
            for column in changed:
                setattr(item, column, columns[column])
                field = _COLUMN_TO_FIELD.get(column)
                lock = field or COLUMN_LOCK_PREFIX + column
                if lock not in locks:
                    locks.append(lock)
            if "name" in changed or "forced_sort_name" in changed:
                item.sort_name = item.forced_sort_name or sort_name(item.name)
            if data.LockedFields is not None:  # the editor's lock list, plus the fields just edited
                keep = {_COLUMN_TO_FIELD.get(c) for c in changed} - {None}
                wanted = {f for f in data.LockedFields if f in LOCKABLE_FIELDS} | keep
                locks = [f for f in locks if f.startswith(COLUMN_LOCK_PREFIX)] + sorted(wanted)
            if data.LockData is not None or "LockData" in nulls:  # Jellyfin: a null LockData unlocks
                item.is_locked = bool(data.LockData)
            if data.People is not None:
                write_people(s, item.id, data.People)
                if "Cast" not in locks:
                    locks.append("Cast")
            item.locked_fields_json = json.dumps(locks)
            item.date_modified = datetime.now(UTC)
            s.add(item)
            s.flush()
            if any(c.endswith("_json") and c != "provider_ids_json" for c in changed):
                write_values(s, item)
            return _pass_down(s, item, "official_rating" in changed, tags_before if "tags_json" in changed else None)

        children = await self.db.write(write)
        self._changed(row.id, updated=[row.id, *children])

    async def editor_info(self, item_id: str) -> w.MetadataEditorInfo:
        row = await self.items.row(item_id)
        loc = bundled_localization()
        cfg = self.config.server()
        try:
            external = await self.external_ids(row.id)
        except Exception:  # a provider problem must not break the editor
            external = []
        info = w.MetadataEditorInfo(
            ParentalRatingOptions=[w.ParentalRating(Name=r.get("Name"), Value=r.get("Value"))
                                   for r in loc.parental_ratings(cfg.MetadataCountryCode)],
            Countries=[w.CountryInfo(**c) for c in loc.countries()],
            Cultures=[w.CultureDto(**c) for c in loc.cultures()],
            ExternalIdInfos=external, ContentTypeOptions=[])
        if row.is_folder and row.path and row.type == "Folder":
            current = next((p.Value for p in cfg.ContentTypes or [] if p.Name == row.path), None)
            info.ContentType = current
            info.ContentTypeOptions = [w.NameValuePair(Name=label, Value=value) for value, label in _CONTENT_TYPES]
        return info

    async def set_content_type(self, item_id: str, content_type: str | None) -> None:
        row = await self.items.row(item_id)
        if not row.path:
            raise BadRequestError("This item has no folder to set a content type for.")
        path = row.path if row.is_folder else os.path.dirname(row.path)
        if content_type and content_type not in {v for v, _ in _CONTENT_TYPES}:
            raise BadRequestError(f"Unknown content type {content_type!r}.")
        cfg = self.config.server()
        kept = [p for p in cfg.ContentTypes or [] if p.Name and p.Name != path]
        if content_type:
            kept.append(w.NameValuePair(Name=path, Value=content_type))
        self.config.update_server(ContentTypes=kept)

    # -- deleting -------------------------------------------------------------------------

    async def _check_delete(self, row: ItemRow, user: UserRecord | None, owner_of: dict[str, str | None]) -> bool:
        if row.type in _NOT_DELETABLE:
            return False
        if user is None:
            return True
        if row.type == "Playlist":
            return user.is_admin or owner_of.get(row.id) == user.id
        policy = user.policy
        if policy.EnableContentDeletion:
            return True
        folders = {normalize_guid(f) for f in policy.EnableContentDeletionFromFolders or []}
        return row.library_id is not None and row.library_id in folders

    async def delete(self, item_ids: list[str], user: UserRecord | None) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Playlist

        if not item_ids:
            raise BadRequestError("No item ids were given.")
        rows = []
        for item_id in item_ids:
            rows.append(await self.items.row(item_id))
        owner_of = await self.db.read(lambda s: dict(s.execute(select(Playlist.id, Playlist.owner_user_id).where(
            Playlist.id.in_([r.id for r in rows]))).all()))
        for row in rows:
            if not await self._check_delete(row, user, owner_of):
                if len(rows) > 1 or len(item_ids) > 1:
                    raise UnauthorizedError("Unauthorized access")
                raise ForbiddenError("You may not delete this item.")
        for row in rows:
            await self._delete_one(row)

    async def delete_one_checked(self, item_id: str, user: UserRecord | None) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Playlist

        row = await self.items.row(item_id)
        owner_of = await self.db.read(lambda s: dict(s.execute(select(Playlist.id, Playlist.owner_user_id).where(
            Playlist.id == row.id)).all()))
        if not await self._check_delete(row, user, owner_of):
            raise UnauthorizedError("Unauthorized access")
        await self._delete_one(row)

    async def _delete_one(self, row: ItemRow) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from sqlmodel import col

        from server.db.tables import CollectionEntry, LibraryPath, Playlist

        def read(s: Session) -> tuple[list[str], list[str], bool]:
            roots = [r[0] for r in s.execute(select(LibraryPath.path).where(
                LibraryPath.library_id == row.library_id)).all()] if row.library_id else []
            doomed = _descendants(s, row.id)
            return doomed, roots, _owns_its_folder(s, row, doomed, roots)

        doomed, roots, own_folder = await self.db.read(read)
        paths: list[str]
        if own_folder and row.path:  # a movie in its own folder: the folder goes (its art, NFO, extras)
            paths = [os.path.dirname(row.path)]
        else:
            paths = _delete_paths(row, roots)
        if paths:
            await asyncio.to_thread(_remove_from_disk, paths)

        def write(s: Session) -> None:
            if row.type == "Playlist":
                s.execute(delete(Playlist.__table__).where(col(Playlist.id) == row.id))
            s.execute(delete(CollectionEntry.__table__).where(col(CollectionEntry.collection_id) == row.id))
            s.execute(update(items).where(items.c.id == row.id).values(date_modified=datetime.now(UTC)))

        await self.db.write(write)
        await asyncio.to_thread(store.remove_items, self.db, doomed)
        self._changed(row.id, removed=doomed)

