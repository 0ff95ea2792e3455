"""BaseItemDto from item rows, in batches.

``build_dtos(session, rows, options, server_id)`` turns a page of ``items`` rows into wire
DTOs with a fixed number of queries whatever the page size: one each for user data, folder
counts, people, alternate versions, extras counts, parent images and library types, and only
those the options ask for. Rows may be ORM ``Item`` objects or Core rows (attribute access).
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import msgspec
from sqlalchemy import and_, case, false, func, literal, select, true

from server.db.handles import item_people, item_values, items, libraries, people, user_data
from server.guid import guid_from_text
from server.library.catalog import ids
from server.library.catalog.fragment_store import Row, Stored, StoreUse, Write
from server.library.catalog.fragments import _SIZER, FragmentCache, packed_size
from server.library.catalog.media_sources import media_sources_for, streams_of
from server.library.catalog.query import ItemRow, driver_rows, get_user_data
from server.trickplay.service import info_for as trickplay_info_for
from server.wire import models as w
from server.wire.casing import encode_wire

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_JSON = msgspec.json.Decoder()
_CHAPTERS = msgspec.json.Decoder(list[w.ChapterInfo])

# Default aspect ratios when an image's size is unknown (Jellyfin's choices per type).
_DEFAULT_ASPECT = {"Movie": 2 / 3, "Series": 2 / 3, "Season": 2 / 3, "BoxSet": 2 / 3, "Trailer": 2 / 3,
                   "Episode": 16 / 9, "Video": 16 / 9, "MusicVideo": 16 / 9, "Audio": 1.0, "MusicAlbum": 1.0,
                   "MusicArtist": 1.0, "Person": 2 / 3, "Book": 2 / 3, "CollectionFolder": 16 / 9}
_MULTI_IMAGE_TYPES = ("Backdrop", "Screenshot")
_PLAYED_FOLDERS = ("Series", "Season")
# "not an extra or version", spelled so SQLite does not scan the owner_id index (NULL for
# nearly every row) instead of the selective one (series_id, parent_id, ...)
_NOT_OWNED = func.coalesce(items.c.owner_id, "") == ""
_EXTERNAL_URLS = {"Imdb": ("IMDb", "https://www.imdb.com/title/{}"),
                  "Tmdb": ("TheMovieDb", "https://www.themoviedb.org/movie/{}"),
                  "Tvdb": ("TheTVDB", "https://thetvdb.com/?tab=series&id={}"),
                  "MusicBrainzAlbum": ("MusicBrainz", "https://musicbrainz.org/release/{}"),
                  "MusicBrainzArtist": ("MusicBrainz", "https://musicbrainz.org/artist/{}")}


@dataclass(frozen=True)
class ByNameTarget:
    """What ``ItemService.target`` returns for a by-name item (genre, studio, person, year,
    artist without a row): the attributes user data needs."""

    id: str
    type: str
    name: str
    is_folder: bool = False
    path: str | None = None
    run_time_ticks: int | None = None
    library_id: str | None = None
    by_name: bool = True


@dataclass
class DtoOptions:
    fields: frozenset[str] = frozenset()
    enable_images: bool = True
    image_type_limit: int | None = None
    enable_image_types: frozenset[str] | None = None  # None = all types
    enable_user_data: bool = True
    user_id: str | None = None
    can_delete: bool = False
    can_download: bool = True
    extra: dict = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return name in self.fields


def options_from(fields: Iterable[str] | None = None, *, enable_images: bool | None = None,
                 image_type_limit: int | None = None, enable_image_types: Iterable[str] | None = None,
                 enable_user_data: bool | None = None, user_id: str | None = None,
                 can_delete: bool = False, can_download: bool = True) -> DtoOptions:
    types = frozenset(t for t in (enable_image_types or ()) if t)
    return DtoOptions(fields=frozenset(f for f in (fields or ()) if f),
                      enable_images=enable_images is not False,
                      image_type_limit=image_type_limit,
                      enable_image_types=types or None,
                      enable_user_data=enable_user_data is not False,
                      user_id=user_id, can_delete=can_delete, can_download=can_download)


def decode_json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return _JSON.decode(text)
    except msgspec.DecodeError:
        return default


class _HasImages(Protocol):
    """An ItemRow, or a parent row of a few columns (``parent_rows``)."""

    @property
    def images_json(self) -> str | None: ...


def _images_in(text: str | None) -> list[dict[str, Any]]:
    """The images (with a type and a tag) an images_json text holds."""
    value = decode_json(text, [])
    return [i for i in value if isinstance(i, dict) and i.get("Type") and i.get("Tag")] \
        if isinstance(value, list) else []


def images_of(row: _HasImages) -> list[dict]:
    return _images_in(getattr(row, "images_json", None))


#: ``images_of`` a parent row (an album, series, season) by its images_json, kept for the last
#: 1,024 texts: a page of tracks or episodes decodes the same few parents' images for every row
#: (callers only read the list).
_parent_images = lru_cache(maxsize=1024)(_images_in)


def primary_image(row: ItemRow) -> dict | None:
    return next((i for i in images_of(row) if i.get("Type") == "Primary"), None)


def image_tag(row: ItemRow, image_type: str) -> str | None:
    found = next((i for i in images_of(row) if i.get("Type") == image_type), None)
    return found.get("Tag") if found else None


def etag(row: ItemRow) -> str:
    text = f"{row.id}|{getattr(row, 'date_modified', None)}|{getattr(row, 'file_mtime', None)}|" \
           f"{getattr(row, 'scan_signature', None)}"
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def location_type(row: ItemRow) -> str:
    return "Virtual" if getattr(row, "is_virtual", False) else "FileSystem"


def _name_pairs(names: Sequence[str], kind: str) -> list[w.NameGuidPair]:
    return [w.NameGuidPair(Name=n, Id=ids.by_name_id(kind, n)) for n in names if isinstance(n, str) and n]


@lru_cache(maxsize=4096)
def _music_names(text: str | None) -> tuple[tuple[str, ...], tuple[w.NameGuidPair, ...]]:
    """The artist names of an artists_json text and their MusicArtist pairs, kept for the last
    4,096 texts (a page or mix of tracks decodes and pairs the same few artists' texts row after
    row: ~2.5 us a track; callers copy the tuples into the DTO's lists, the pairs are shared)."""
    names = _list(text)
    return tuple(names), tuple(_name_pairs(names, "MusicArtist"))


# ---------------------------------------------------------------- batch lookups


def user_data_rows(s: Session, user_id: str, item_ids: Sequence[str], pooled: bool = False) -> dict[str, Any]:
    """The user's data rows of these items (query.get_user_data: one driver-level query;
    ``pooled``: on a pooled connection when the session has not begun one)."""
    if not item_ids:
        return {}
    return get_user_data(s, user_id, item_ids, pooled)


@dataclass
class FolderCounts:
    total: int = 0  # playable descendants (RecursiveItemCount)
    played: int = 0
    children: int = 0


def folder_counts(s: Session, rows: Sequence[ItemRow], user_id: str | None, *, want_children: bool,
                  want_recursive: bool, want_played: bool) -> dict[str, FolderCounts]:
    """Child, recursive and played counts of folder rows: one grouped query per relation."""
    out: dict[str, FolderCounts] = defaultdict(FolderCounts)
    folders = [r for r in rows if r.is_folder]
    if not folders:
        return out
    by_type: dict[str, list[str]] = defaultdict(list)
    for r in folders:
        by_type[r.type].append(r.id)
    if want_children:
        ids_all = [r.id for r in folders]
        q = (select(items.c.parent_id, func.count()).where(items.c.parent_id.in_(ids_all), _NOT_OWNED)
             .group_by(items.c.parent_id))
        for parent, n in s.execute(q).all():
            out[parent].children = n
    if not (want_recursive or want_played):
        return out
    relations = (("Series", items.c.series_id, ("Episode",)), ("Season", items.c.season_id, ("Episode",)),
                 ("MusicAlbum", items.c.album_id, ("Audio",)))
    for kind, column, types in relations:
        wanted = by_type.get(kind)
        if not wanted or not (want_recursive or kind in _PLAYED_FOLDERS):
            continue
        if want_played and user_id and kind in _PLAYED_FOLDERS:
            played = func.sum(case((user_data.c.played == true(), 1), else_=0))
            source = items.outerjoin(user_data, and_(user_data.c.item_id == items.c.id,
                                                     user_data.c.user_id == user_id))
            q = select(column, func.count(), played).select_from(source)
        else:
            q = select(column, func.count(), literal(0))
        # (type spelled unindexable: the few wanted series/seasons/albums must drive the query)
        q = q.where(column.in_(wanted), items.c.type.concat("").in_(types), _NOT_OWNED,
                    items.c.is_virtual == false()).group_by(column)
        for key, n, played_n in s.execute(q).all():
            out[key].total = n
            out[key].played = played_n or 0
    if want_recursive:
        libs = by_type.get("CollectionFolder")
        if libs:
            q = (select(items.c.library_id, func.count()).where(
                items.c.library_id.in_(libs), items.c.is_folder == false(), _NOT_OWNED)
                .group_by(items.c.library_id))
            for key, n in s.execute(q).all():
                out[key].total = n
        artists = [r for r in folders if r.type == "MusicArtist"]
        if artists:
            names = {r.name.lower(): r.id for r in artists}
            v = item_values
            q = (select(v.c.clean_value, func.count(func.distinct(v.c.item_id)))
                 .select_from(v.join(items, items.c.id == v.c.item_id))
                 .where(v.c.kind.in_(("Artist", "AlbumArtist")), v.c.clean_value.in_(list(names)),
                        items.c.type == "Audio").group_by(v.c.clean_value))
            for value, n in s.execute(q).all():
                out[names[value]].total = n
        others = [r for r in folders if r.type not in ("Series", "Season", "MusicAlbum", "CollectionFolder",
                                                       "MusicArtist") and r.path]
        for r in others:  # plain folders: by path range (indexed), a handful per page at most
            path = r.path or ""
            prefix = path.rstrip("/\\") + ("\\" if "\\" in path and "/" not in path else "/")
            upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            n = s.execute(select(func.count()).where(items.c.path >= prefix, items.c.path < upper,
                                                     items.c.is_folder == false(),
                                                     _NOT_OWNED)).scalar()
            out[r.id].total = n or 0
    return out


def people_of(s: Session, item_ids: Sequence[str]) -> dict[str, list[w.BaseItemPerson]]:
    out: dict[str, list[w.BaseItemPerson]] = defaultdict(list)
    if not item_ids:
        return out
    q = (select(item_people.c.item_id, item_people.c.kind, item_people.c.role, people.c.id, people.c.name,
                people.c.image_tag)
         .select_from(item_people.join(people, people.c.id == item_people.c.person_id))
         .where(item_people.c.item_id.in_(list(item_ids)))
         .order_by(item_people.c.item_id, item_people.c.sort_order))
    for r in s.execute(q).all():
        out[r.item_id].append(w.BaseItemPerson(Name=r.name, Id=r.id, Role=r.role or "", Type=r.kind,
                                               PrimaryImageTag=r.image_tag))
    return out


def _owners_among(s: Session, item_ids: list[str]) -> list[str]:
    """The ids that own rows (versions or extras). Plain SQL text on the driver's cursor
    (``driver_rows``): SQLAlchemy spends more on building and caching a statement with a 100-value
    IN than SQLite on answering it, and more on running plain text than SQLite too."""
    out: list[str] = []
    for start in range(0, len(item_ids), 500):
        chunk = item_ids[start:start + 500]
        found = driver_rows(s, "SELECT owner_id FROM items WHERE owner_id IN ", chunk, " GROUP BY owner_id")
        if found is None:  # an unusual driver: let SQLAlchemy render it
            conn = s.connection()
            found = conn.execute(select(items.c.owner_id).where(items.c.owner_id.in_(chunk))
                                 .group_by(items.c.owner_id)).all()
        out.extend(o for (o,) in found)
    return out


def versions_of(s: Session, item_ids: Sequence[str]) -> dict[str, list[Any]]:
    """Alternate versions (owned rows without an extra type) per owner."""
    out: dict[str, list[Any]] = defaultdict(list)
    if not item_ids:
        return out
    # Two steps. Nearly every row's owner_id is NULL, so SQLite's statistics say each owner_id
    # value matches ~1,000 rows, and for a page of 100 ids it scans the whole table (measured at
    # 100k items: 100+ ms per page). The first step only reads the owner_id index (covering, so
    # it is always used); the rows are read only for the few owners that have versions.
    owners = _owners_among(s, list(dict.fromkeys(item_ids)))
    if not owners:
        return out
    for start in range(0, len(owners), 20):  # (a long IN list would tip the estimate to a scan again)
        chunk = owners[start:start + 20]
        for r in s.execute(select(items).where(items.c.owner_id.in_(chunk), items.c.extra_type.is_(None))).all():
            out[r.owner_id].append(r)
    return out


def extras_counts(s: Session, item_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """(local trailers, special features) per owner."""
    out: dict[str, tuple[int, int]] = {}
    if not item_ids:
        return out
    trailers = func.sum(case((items.c.extra_type == "Trailer", 1), else_=0))
    specials = func.sum(case((and_(items.c.extra_type.is_not(None), items.c.extra_type != "Trailer",
                                   items.c.extra_type.not_in(("ThemeSong", "ThemeVideo"))), 1), else_=0))
    q = (select(items.c.owner_id, trailers, specials)
         .where(items.c.owner_id.in_(list(item_ids)), items.c.extra_type.is_not(None))
         .group_by(items.c.owner_id))
    for owner, t, sp in s.execute(q).all():
        out[owner] = (t or 0, sp or 0)
    return out


class ParentRow(NamedTuple):
    """A row a page's items borrow images and names from (``parent_rows``)."""

    id: str
    type: str | None
    name: str | None
    images_json: str | None
    studios_json: str | None
    parent_id: str | None


_SELECT_PARENTS = "SELECT id, type, name, images_json, studios_json, parent_id FROM items WHERE id IN "


class _KeptParents:
    """An engine's parent rows read since its last content write (``parent_rows``): the ~200
    albums of a mix's random tracks are random rows of a big table, and their read was an eighth
    of a mix's CPU. Valid for one ``content_generation`` (any write of more than user data, e.g.
    an album's rename or new image, empties it); at most ``size`` rows (~0.5 KiB each), the
    oldest out first; let go when the database is left alone (``Database.on_release``)."""

    __slots__ = ("lock", "rows", "stamp")

    size = 8192

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stamp = -1
        self.rows: OrderedDict[str, ParentRow] = OrderedDict()

    def release(self) -> None:
        """Let the rows go (``Database.release_memory``: the database was left alone a while)."""
        with self.lock:
            self.rows = OrderedDict()


_KEPT_PARENTS: weakref.WeakKeyDictionary[Any, _KeptParents] = weakref.WeakKeyDictionary()


def parent_rows(s: Session, rows: Sequence[ItemRow]) -> dict[str, ParentRow]:
    """Series, seasons, albums and parents the page's rows borrow images and names from, by id
    (on the DB-API cursor, 500 ids a statement: building the select with a few hundred ids
    cost ~2 ms, several times SQLite's reading of them). A session of a ``Database`` keeps the
    rows it read for the content generation (``_KeptParents``: the stamp is taken before the
    read, so a write during it leaves the rows under a stamp already old)."""
    wanted: set[str] = set()
    for r in rows:
        for key in ("series_id", "season_id", "album_id"):
            value = getattr(r, key, None)
            if value:
                wanted.add(value)
        if r.type in ("Episode", "Season", "Audio", "Trailer", "Video", "Photo") and r.parent_id:
            wanted.add(r.parent_id)
    if not wanted:
        return {}
    out: dict[str, ParentRow] = {}
    database = s.info.get("database")
    kept: _KeptParents | None = None
    stamp = -1
    if database is not None:
        stamp = database.content_generation
        bind = s.get_bind()
        kept = _KEPT_PARENTS.get(bind)
        if kept is None:
            made = _KeptParents()
            kept = _KEPT_PARENTS.setdefault(bind, made)
            if kept is made:  # let go at quiet moments
                database.on_release(made.release)
        with kept.lock:
            if stamp > kept.stamp:  # a newer generation: what was kept may be stale
                kept.rows.clear()
                kept.stamp = stamp
            if stamp == kept.stamp:
                found_rows = kept.rows
                for i in wanted:
                    row = found_rows.get(i)
                    if row is not None:
                        out[i] = row
            else:  # a read older than the kept rows: neither use nor keep
                kept = None
    ids = [i for i in wanted if i not in out] if out else list(wanted)
    make = ParentRow._make
    read: list[ParentRow] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        found = driver_rows(s, _SELECT_PARENTS, chunk)
        if found is None:  # a driver with named parameters
            c = items.c
            found = s.execute(select(c.id, c.type, c.name, c.images_json, c.studios_json, c.parent_id)
                              .where(c.id.in_(chunk))).all()
        for values in found:
            row = make(values)
            out[row.id] = row
            read.append(row)
    if kept is not None and read:
        with kept.lock:
            if kept.stamp == stamp:
                kept_rows = kept.rows
                for row in read:
                    kept_rows[row.id] = row
                while len(kept_rows) > kept.size:
                    kept_rows.popitem(last=False)
    return out


# Views that are not libraries: the Collections folder and the Playlists folder (server/library/
# boxsets.py, playlists.py).
_VIEW_TYPES = {guid_from_text("folder", "collections"): "boxsets", guid_from_text("folder", "playlists"): "playlists",
               guid_from_text("folder", "livetv"): "livetv"}  # server/livetv/items.py


def collection_types(s: Session, rows: Sequence[ItemRow]) -> dict[str, str | None]:
    wanted = [r.id for r in rows if r.type in ("CollectionFolder", "ManualPlaylistsFolder", "UserView")]
    if not wanted:
        return {}
    found: dict[str, str | None] = {k: v for k, v in _VIEW_TYPES.items() if k in wanted}
    found.update(s.execute(select(libraries.c.id, libraries.c.collection_type)
                           .where(libraries.c.id.in_(wanted))).all())
    return found


# ---------------------------------------------------------------- building


def _apply_images(dto: w.BaseItemDto, images: list[dict], opts: DtoOptions) -> None:
    tags: dict[str, str] = {}
    backdrops: list[str] = []
    screenshots: list[str] = []
    hashes: dict[str, dict[str, str]] = {}
    limit = opts.image_type_limit
    enabled = opts.enable_image_types
    for image in images:
        kind = image["Type"]
        if enabled is not None and kind not in enabled:
            continue
        tag = image["Tag"]
        if kind == "Backdrop":
            if limit is not None and len(backdrops) >= limit:
                continue
            backdrops.append(tag)
        elif kind == "Screenshot":
            if limit is not None and len(screenshots) >= limit:
                continue
            screenshots.append(tag)
        else:
            if kind in tags or limit == 0:
                continue
            tags[kind] = tag
        if image.get("BlurHash"):
            hashes.setdefault(kind, {})[tag] = image["BlurHash"]
    dto.ImageTags = tags
    dto.BackdropImageTags = backdrops
    if screenshots or opts.has("ScreenshotImageTags"):
        dto.ScreenshotImageTags = screenshots
    dto.ImageBlurHashes = hashes


apply_images = _apply_images  # ImageTags, BackdropImageTags and ImageBlurHashes from images_json entries


def _first_of(images: list[dict], kind: str) -> dict | None:
    for image in images:
        if image["Type"] == kind:
            return image
    return None


class _ParentArt(NamedTuple):
    """A parent's images as ``_apply_parent_images`` reads them: its backdrops in order, the
    first image of each type, and what it lends an item that has it as its only parent
    (``_lent``: by the item's own image types and the options, made once each)."""

    backdrops: list[dict[str, Any]]
    first: dict[str, dict[str, Any]]
    plans: dict[tuple[Any, ...], _Lent]


def _art_in(text: str | None) -> _ParentArt:
    backdrops: list[dict[str, Any]] = []
    first: dict[str, dict[str, Any]] = {}
    for image in _parent_images(text):
        kind = image["Type"]
        if kind == "Backdrop":
            backdrops.append(image)
        if kind not in first:
            first[kind] = image
    return _ParentArt(backdrops, first, {})


#: ``_ParentArt`` of a parent row by its images_json, kept for the last 4,096 texts (a mix of
#: 200 tracks has ~200 albums; callers only read it)
_parent_art = lru_cache(maxsize=4096)(_art_in)

_PARENT_KINDS = (("Logo", "ParentLogoItemId", "ParentLogoImageTag"),
                 ("Thumb", "ParentThumbItemId", "ParentThumbImageTag"),
                 ("Art", "ParentArtItemId", "ParentArtImageTag"))


class _Lent(NamedTuple):
    """What one parent's images lend an item (``_ParentArt.plans``): the DTO's attributes to set
    (``_PARENT_ID``: the parent's id), the backdrop tags (a list made per item), and the images
    whose BlurHash goes into ImageBlurHashes, in ``_apply_parent_chain``'s order."""

    sets: tuple[tuple[str, Any], ...]
    backdrop_tags: tuple[str, ...] | None
    hashes: tuple[tuple[str, str, str], ...]


_PARENT_ID = object()  # (in ``_Lent.sets``: the parent's id, put in when applied)
_NO_TYPES: frozenset[str] = frozenset()


def _lent(art: _ParentArt, own_types: frozenset[str], limit: int | None, is_series: bool, is_album: bool) -> _Lent:
    """``_apply_parent_chain`` for a chain of the one parent ``art`` (``is_series``/``is_album``:
    it is the item's series / album), as a plan: the same attributes, tags and hashes."""
    sets: list[tuple[str, Any]] = []
    noted: list[dict[str, Any]] = []
    backdrop_tags: tuple[str, ...] | None = None
    if "Backdrop" not in own_types and art.backdrops:
        sets.append(("ParentBackdropItemId", _PARENT_ID))
        backdrop_tags = tuple(i["Tag"] for i in art.backdrops[: limit or None])
        noted.extend(art.backdrops)
    for kind, id_attr, tag_attr in _PARENT_KINDS:
        if kind in own_types:
            continue
        image = art.first.get(kind)
        if image is not None:
            sets.extend(((id_attr, _PARENT_ID), (tag_attr, image["Tag"])))
            noted.append(image)
    primary = art.first.get("Primary")
    if "Primary" not in own_types and primary is not None:
        sets.extend((("ParentPrimaryImageItemId", _PARENT_ID), ("ParentPrimaryImageTag", primary["Tag"])))
        noted.append(primary)
    if is_series:
        if primary is not None:
            sets.append(("SeriesPrimaryImageTag", primary["Tag"]))
            noted.append(primary)
        thumb = art.first.get("Thumb")
        if thumb is not None:
            sets.append(("SeriesThumbImageTag", thumb["Tag"]))
    if is_album and primary is not None:
        sets.append(("AlbumPrimaryImageTag", primary["Tag"]))
        noted.append(primary)
    return _Lent(tuple(sets), backdrop_tags,
                 tuple((i["Type"], i["Tag"], i["BlurHash"]) for i in noted if i.get("BlurHash")))


def _apply_parent_images(dto: w.BaseItemDto, row: ItemRow, images: list[dict], parents: dict[str, Any],
                         opts: DtoOptions) -> None:
    """The images an item borrows from its season, series, album and parent (the first of them
    that has each kind). An item with one such parent (a track's album, its ``parent_id`` too)
    applies that parent's kept plan (``_lent``); a longer chain is walked
    (``_apply_parent_chain``): the same DTO either way (``tests/library/query/test_parent_images.py``)."""
    get = parents.get
    series_id, album_id = getattr(row, "series_id", None), getattr(row, "album_id", None)
    arts: list[tuple[str, _ParentArt]] = []
    for x in (getattr(row, "season_id", None), series_id, album_id, row.parent_id):
        if x:
            p = get(x)
            if p is not None and p.type not in ("CollectionFolder", "Folder"):
                if arts and arts[-1][0] == p.id:  # (a track's album is its parent too: lends nothing more)
                    continue
                arts.append((p.id, _parent_art(p.images_json)))
    if not arts:
        return
    if len(arts) > 1:
        _apply_parent_chain(dto, row, images, parents, opts, arts)
        return
    pid, art = arts[0]
    own_types = frozenset([i["Type"] for i in images]) if images else _NO_TYPES
    series = get(series_id) if series_id else None
    album = get(album_id) if album_id else None
    key = (own_types, opts.image_type_limit, series is not None and series.id == pid,
           album is not None and album.id == pid)
    plans = art.plans
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = _lent(art, *key)
    for attr, value in plan.sets:
        setattr(dto, attr, pid if value is _PARENT_ID else value)
    if plan.backdrop_tags is not None:
        dto.ParentBackdropImageTags = list(plan.backdrop_tags)
    hashes = dto.ImageBlurHashes if isinstance(dto.ImageBlurHashes, dict) else {}
    for kind, tag, blur in plan.hashes:
        found = hashes.get(kind)
        if found is None:
            found = hashes[kind] = {}
        found[tag] = blur
    dto.ImageBlurHashes = hashes


def _apply_parent_chain(dto: w.BaseItemDto, row: ItemRow, images: list[dict[str, Any]], parents: dict[str, Any],
                        opts: DtoOptions, arts: list[tuple[str, _ParentArt]]) -> None:
    """``_apply_parent_images`` for any chain of parents ``arts`` ((id, art), nearest first)."""
    get = parents.get
    series_id, album_id = getattr(row, "series_id", None), getattr(row, "album_id", None)
    hashes = dto.ImageBlurHashes if isinstance(dto.ImageBlurHashes, dict) else {}

    def note_hash(image: dict) -> None:
        if image.get("BlurHash"):
            hashes.setdefault(image["Type"], {})[image["Tag"]] = image["BlurHash"]

    own_types = {i["Type"] for i in images}
    if "Backdrop" not in own_types:
        for pid, art in arts:
            found = art.backdrops
            if found:
                dto.ParentBackdropItemId = pid
                dto.ParentBackdropImageTags = [i["Tag"] for i in found[: opts.image_type_limit or None]]
                for i in found:
                    note_hash(i)
                break
    for kind, id_attr, tag_attr in _PARENT_KINDS:
        if kind in own_types:
            continue
        for pid, art in arts:
            image = art.first.get(kind)
            if image is not None:
                setattr(dto, id_attr, pid)
                setattr(dto, tag_attr, image["Tag"])
                note_hash(image)
                break
    if "Primary" not in own_types:
        for pid, art in arts:
            image = art.first.get("Primary")
            if image is not None:
                dto.ParentPrimaryImageItemId = pid
                dto.ParentPrimaryImageTag = image["Tag"]
                note_hash(image)
                break
    in_chain = dict(arts)  # (a parent left out of the chain, a folder, lends nothing here either)
    series = get(series_id or "")
    if series is not None:
        art = in_chain.get(series.id)
        if art is not None:
            image = art.first.get("Primary")
            if image is not None:
                dto.SeriesPrimaryImageTag = image["Tag"]
                note_hash(image)
            thumb = art.first.get("Thumb")
            if thumb is not None:
                dto.SeriesThumbImageTag = thumb["Tag"]
    album = get(album_id or "")
    if album is not None:
        art = in_chain.get(album.id)
        if art is not None:
            image = art.first.get("Primary")
            if image is not None:
                dto.AlbumPrimaryImageTag = image["Tag"]
                note_hash(image)
    dto.ImageBlurHashes = hashes


def _user_data_dto(row: ItemRow | ByNameTarget, ud: Any, counts: FolderCounts | None) -> w.UserItemDataDto:
    dto = w.UserItemDataDto(
        PlaybackPositionTicks=ud.playback_position_ticks if ud else 0,
        PlayCount=ud.play_count if ud else 0,
        IsFavorite=bool(ud.is_favorite) if ud else False,
        Played=bool(ud.played) if ud else False,
        LastPlayedDate=ud.last_played_date if ud else None,
        Likes=ud.likes if ud else None,
        Rating=ud.rating if ud else None,
        Key=row.id,
        ItemId=row.id,
    )
    position = dto.PlaybackPositionTicks or 0
    runtime = getattr(row, "run_time_ticks", None)
    if position > 0 and runtime:
        dto.PlayedPercentage = min(100.0, position * 100.0 / runtime)
    if counts is not None and row.type in _PLAYED_FOLDERS:
        unplayed = max(0, counts.total - counts.played)
        dto.UnplayedItemCount = unplayed
        if counts.total > 0:
            dto.PlayedPercentage = counts.played * 100.0 / counts.total
            dto.Played = unplayed == 0
        else:
            dto.Played = False
    return dto


#: (by_name's kept pages make their rows' UserData as build_dtos does)
user_data_dto = _user_data_dto
PLAYED_FOLDERS = _PLAYED_FOLDERS

_ID_MARK = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
_NO_DATA: dict[bool, list[bytes]] = {}  # casing -> the encoded UserData of an item without data, split at its id


def _no_data_parts(camel: bool) -> list[bytes]:
    """The encoded UserData of an item the user has no data on, split where its id goes."""
    parts = _NO_DATA.get(camel)
    if parts is None:
        mark = ByNameTarget(id=_ID_MARK, type="Movie", name="")
        template: bytes = encode_wire(_user_data_dto(mark, None, None), camel)
        parts = _NO_DATA[camel] = template.split(_ID_MARK.encode())
    return parts


def _user_data_bytes(row: Any, ud: Any, counts: FolderCounts | None, camel: bool) -> bytes:
    """``_user_data_dto`` encoded. An item the user has no data on (most of a page) and that is no
    series or season with counts: the encoding of such an item's UserData with its id put in (it
    depends on nothing else), not a struct built and encoded."""
    item_id: str = row.id
    if ud is None and (counts is None or row.type not in _PLAYED_FOLDERS):
        encoded_id = item_id.encode()
        if len(encoded_id) == 32 and encoded_id.isalnum():
            return encoded_id.join(_no_data_parts(camel))
    encoded: bytes = encode_wire(_user_data_dto(row, ud, counts), camel)
    return encoded


def _aspect_ratio(row: ItemRow, images: list[dict]) -> float | None:
    primary = _first_of(images, "Primary")
    if primary is None:
        return None
    width, height = primary.get("Width"), primary.get("Height")
    if width and height:
        return width / height
    return _DEFAULT_ASPECT.get(row.type)


def _list(text: str | None) -> list[str]:
    value = decode_json(text, [])
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


@dataclass
class _Batch:
    """The batched lookups of a page (one query each, only those the options need)."""

    uds: dict[str, Any]
    counts: dict[str, FolderCounts]
    cast: dict[str, list[w.BaseItemPerson]]
    versions: dict[str, list[Any]]
    extras: dict[str, tuple[int, int]]
    parents: dict[str, Any]
    ctypes: dict[str, str | None]
    tiles: dict[str, Any]
    want_user_data: bool


def _gather(s: Session, rows: Sequence[ItemRow], opts: DtoOptions, uds: dict[str, Any] | None = None) -> _Batch:
    item_ids = [r.id for r in rows]
    has = opts.has
    want_user_data = bool(opts.enable_user_data and opts.user_id)
    if uds is None:
        uds = user_data_rows(s, opts.user_id, item_ids) if want_user_data and opts.user_id else {}
    want_children = has("ChildCount")
    want_recursive = has("RecursiveItemCount")  # played counts (series, seasons) come with user data
    counts = folder_counts(s, rows, opts.user_id, want_children=want_children, want_recursive=want_recursive,
                           want_played=want_user_data) if any(r.is_folder for r in rows) else {}
    cast = people_of(s, item_ids) if has("People") else {}
    media_rows = [r.id for r in rows if r.media_type in ("Video", "Audio") and not r.is_folder]
    want_sources = has("MediaSources") or has("MediaSourceCount")
    versions = versions_of(s, media_rows) if want_sources and media_rows else {}
    extras = extras_counts(s, item_ids) if (has("LocalTrailerCount") or has("SpecialFeatureCount")) else {}
    parents = parent_rows(s, rows) if opts.enable_images or any(r.type in ("Season",) for r in rows) else {}
    ctypes = collection_types(s, rows)
    tiles = trickplay_info_for(s, media_rows) if has("Trickplay") and media_rows else {}
    return _Batch(uds, counts, cast, versions, extras, parents, ctypes, tiles, want_user_data)


#: the item columns a DTO (and its UserData, parents, counts) is built from whatever the Fields;
#: _ROW_FIELD_COLUMNS adds those of a field; the others (library_id, owner_id, size, bitrate,
#: fingerprint...) are read by no build (``row_columns``)
_ROW_BASE_COLUMNS = ("id", "type", "media_type", "is_folder", "parent_id", "path", "name", "original_title",
                     "official_rating", "community_rating", "critic_rating", "production_year", "premiere_date",
                     "end_date", "run_time_ticks", "container", "video_type", "extra_type", "index_number",
                     "index_number_end", "parent_index_number", "series_id", "series_name", "season_id",
                     "season_name", "album_id", "album", "artists_json", "album_artists_json", "media_streams_json",
                     "images_json", "lyrics_path", "is_virtual", "status")
_ROW_FIELD_COLUMNS: dict[str, tuple[str, ...] | None] = {
    "IsHD": ("width",), "Width": ("width",), "Height": ("height",), "DateCreated": ("date_created",),
    "SortName": ("sort_name", "forced_sort_name"), "Overview": ("overview",), "Taglines": ("tagline",),
    "Etag": ("date_modified", "file_mtime", "scan_signature"), "Genres": ("genres_json",),
    "Studios": ("studios_json",), "Tags": ("tags_json",), "ProviderIds": ("provider_ids_json",),
    "ExternalUrls": ("provider_ids_json",), "LockedFields": ("locked_fields_json", "is_locked"),
    "Settings": ("locked_fields_json", "is_locked"), "Chapters": ("chapters_json",),
    "MediaSources": None, "MediaStreams": None,  # (a media source is made of most of the row)
}
#: Fields whose build reads no column beyond the base ones (any other field: every column)
_ROW_FREE_FIELDS = frozenset((
    "PrimaryImageAspectRatio", "OriginalTitle", "Path", "CanDelete", "CanDownload", "People", "ProductionLocations",
    "RemoteTrailers", "LocalTrailerCount", "SpecialFeatureCount", "MediaSourceCount", "ChildCount",
    "RecursiveItemCount", "SeriesStudio", "Trickplay", "ScreenshotImageTags", "ItemCounts", "BasicSyncInfo",
    "ParentId", "PlayAccess", "DisplayPreferencesId", "SeriesPrimaryImage", "SeasonUserData", "CumulativeRunTimeTicks",
    "DateLastMediaAdded", "ChannelInfo", "ChannelImage", "EnableMediaSourceDisplay", "AirTime", "CustomRating",
    "HomePageUrl", "SpecialEpisodeNumbers", "ServiceName", "ThemeSongIds", "ThemeVideoIds", "ExternalEtag",
    "PresentationUniqueKey", "InheritedParentalRatingValue", "ExternalSeriesId", "SeriesPresentationUniqueKey",
    "DateLastRefreshed", "DateLastSaved", "RefreshState", "ExtraIds"))


@lru_cache(maxsize=256)
def _row_columns(fields: frozenset[str]) -> tuple[str, ...] | None:
    wanted = dict.fromkeys(_ROW_BASE_COLUMNS)
    for f in fields:
        if f in _ROW_FREE_FIELDS:
            continue
        if f not in _ROW_FIELD_COLUMNS:
            return None
        more = _ROW_FIELD_COLUMNS[f]
        if more is None:
            return None
        wanted.update(dict.fromkeys(more))
    return tuple(wanted)


def row_columns(opts: DtoOptions) -> tuple[str, ...] | None:
    """The item columns ``build_fragments`` (without a store: no digest of the whole row) and
    ``build_dtos`` read of a row for ``opts``' Fields; None when that is (nearly) every column
    (MediaSources, MediaStreams, a field not known here). A reader of many rows for one reply
    (InstantMix's playable test) reads only these (``query.narrow_select``): the other fields of
    its ``ItemRow``s are None (``tests/library/query/test_row_columns.py``: every field, every
    kind of item, the same DTO as from the whole row)."""
    return _row_columns(opts.fields)


def build_dtos(s: Session, rows: Sequence[ItemRow], opts: DtoOptions, server_id: str) -> list[w.BaseItemDto]:
    if not rows:
        return []
    b = _gather(s, rows, opts)
    dtos = [_build_one(r, opts, server_id, b.uds.get(r.id), b.counts.get(r.id), b.cast, b.versions, b.extras,
                       b.parents, b.ctypes, b.want_user_data) for r in rows]
    if b.tiles:
        for dto in dtos:
            if dto.Id in b.tiles:
                dto.Trickplay = b.tiles[dto.Id]
    return dtos


def fragment_shape(opts: DtoOptions, server_id: str, camel: bool) -> tuple[Any, ...]:
    """What a fragment's bytes depend on besides its item: the DTO options, the server, the casing."""
    return (opts.fields, opts.enable_images, opts.image_type_limit, opts.enable_image_types,
            opts.can_delete, opts.can_download, server_id, camel)


def _digest(deps: Any) -> tuple[bytes | None, int]:
    """(a hash of what a fragment is made from, a rough size of it: fragments.packed_size)."""
    try:
        packed = _SIZER.encode(deps)
    except (TypeError, ValueError, OverflowError):
        return None, packed_size(None, deps)
    return hashlib.blake2b(packed, digest_size=16).digest(), packed_size(len(packed), deps)


def build_fragments(s: Session, rows: Sequence[ItemRow | Stored], opts: DtoOptions, server_id: str,
                    cache: FragmentCache | None, camel: bool,
                    child_counts: Sequence[int | None] | None = None, store: StoreUse | None = None) -> list[bytes]:
    """The page's BaseItemDtos as encoded JSON objects (PascalCase, or camelCase), equal after
    parsing to encoding ``build_dtos``' DTOs. Each item's DTO without UserData is taken from
    ``cache`` when everything it is made from is unchanged (see fragments.py), else built,
    encoded and kept; UserData is made for this reply and spliced in. ``child_counts`` (Latest:
    how many new items a group holds) sets ChildCount where it is not 0 or None.

    With ``store`` (fragment_store.py), ``rows`` may hold ``Stored`` fragments of the current
    epoch (``StoreUse.fetch``): they are used as they are, with only their UserData read. For the
    rows, a stored fragment whose digest equals that of what they are made from is used and
    re-stamped, else the fragment is built; either way the store gets it for the current epoch."""
    if not rows:
        return []
    if child_counts is not None:
        store = None  # (Latest's ChildCount is no property of the item: such fragments are not stored)
    want_user_data = bool(opts.enable_user_data and opts.user_id)
    real: list[ItemRow] = [r for r in rows if r.__class__ is not Stored]  # type: ignore[misc]
    # (a page of stored fragments whose ids were cached reads nothing else of the main database:
    # no session transaction for this one statement)
    uds = user_data_rows(s, opts.user_id, [r.id for r in rows], pooled=not real) \
        if want_user_data and opts.user_id else {}
    made_real = _real_fragments(s, real, opts, server_id, cache, camel, child_counts, store, uds) if real else []
    if len(real) == len(rows):
        return made_real
    # a page with stored fragments: UserData (with played counts of series and seasons) spliced in
    hit_counts: dict[str, FolderCounts] = {}
    if want_user_data:
        played_folders = [r for r in rows if r.__class__ is Stored and r.is_folder and r.type in _PLAYED_FOLDERS]
        if played_folders:
            hit_counts = folder_counts(s, played_folders, opts.user_id, want_children=False,  # type: ignore[arg-type]
                                       want_recursive=False, want_played=True)
    user_key = b',"userData":' if camel else b',"UserData":'
    built = iter(made_real)
    out: list[bytes] = []
    append = out.append
    # (an item without data of the user and no played counts, most of a page: the no-data template
    # with its id, as _user_data_bytes makes it, put together in one join)
    parts = _no_data_parts(camel)
    if len(parts) == 3:  # (the id twice: Key and ItemId)
        head, middle, tail = user_key + parts[0], parts[1], parts[2] + b"}"
    for r in rows:
        if r.__class__ is not Stored:
            append(next(built))
            continue
        if want_user_data:
            item_id = r.id
            ud_row = uds.get(item_id)
            counts = hit_counts.get(item_id) if hit_counts else None
            if ud_row is None and counts is None and len(parts) == 3 and len(item_id) == 32 and item_id.isalnum():
                encoded = item_id.encode()
                append(b"".join((r.body, head, encoded, middle, encoded, tail)))
            else:
                append(b"".join((r.body, user_key, _user_data_bytes(r, ud_row, counts, camel), b"}")))
        else:
            append(r.body + b"}")
    return out


def stored_reply(s: Session, rows: Sequence[Stored | Row], opts: DtoOptions, camel: bool, shell: bytes) -> bytes:
    """``fragments.splice(shell, build_fragments(s, rows, ...))`` for a page whose every entry is a
    stored fragment of the current epoch (a warm GetItems page: ``Stored``, or the store's rows as
    SQLite gives them, ``StoreUse.page``; both read by index), the same bytes in one join:
    each fragment's body, its UserData (the no-data template with the id put in, for an item the
    viewer has no data on and that has no played counts; else encoded as ``build_fragments``
    does) and its closing brace go into one list of parts with the shell's, so the page's ~250 KB
    are copied once, not three times (each fragment, the list, the shell)."""
    at = shell.index(b"[]") + 1
    parts: list[bytes] = [shell[:at]]
    if not rows:
        parts.append(shell[at:])
        return b"".join(parts)
    extend = parts.extend
    if not (opts.enable_user_data and opts.user_id):
        for r in rows:
            extend((r[1], b"},"))
    else:
        uds = user_data_rows(s, opts.user_id, [r[0] for r in rows], pooled=True)
        hit_counts: dict[str, FolderCounts] = {}
        played_folders = [f for f in map(_as_stored, Stored.folders(rows)) if f.type in _PLAYED_FOLDERS]
        if played_folders:
            hit_counts = folder_counts(s, played_folders, opts.user_id, want_children=False,  # type: ignore[arg-type]
                                       want_recursive=False, want_played=True)
        user_key = b',"userData":' if camel else b',"UserData":'
        no_data = _no_data_parts(camel)
        simple = len(no_data) == 3  # (the id twice: Key and ItemId)
        head, middle, tail = (user_key + no_data[0], no_data[1], no_data[2] + b"},") if simple else (b"", b"", b"")
        get = uds.get
        for r in rows:
            item_id = r[0]
            if simple and (not hit_counts or item_id not in hit_counts) and get(item_id) is None:
                # (the id's bytes checked, not the str: bytes.isalnum is a table lookup a byte,
                # str.isalnum a Unicode database lookup a character, ~5% of a reader's page)
                encoded = item_id.encode()
                if len(encoded) == 32 and encoded.isalnum():
                    extend((r[1], head, encoded, middle, encoded, tail))
                    continue
            extend((r[1], user_key, _user_data_bytes(_as_stored(r), get(item_id), hit_counts.get(item_id), camel),
                    b"},"))
    parts[-1] = parts[-1][:-1]  # (the last fragment's comma)
    parts.append(shell[at:])
    return b"".join(parts)


def _as_stored(row: Stored | Row) -> Stored:
    """A store's row as a ``Stored`` (for its named parts: type, run time, folder flag)."""
    return row if row.__class__ is Stored else tuple.__new__(Stored, row)


def _real_fragments(s: Session, rows: Sequence[ItemRow], opts: DtoOptions, server_id: str,
                    cache: FragmentCache | None, camel: bool, child_counts: Sequence[int | None] | None,
                    store: StoreUse | None, uds: dict[str, Any]) -> list[bytes]:
    b = _gather(s, rows, opts, uds)
    shape = cache.shape(fragment_shape(opts, server_id, camel)) if cache is not None else 0
    user_key = b',"userData":' if camel else b',"UserData":'
    with_people = "People" in opts.fields
    counts_of = [b.counts.get(r.id) for r in rows]
    deps_of: list[tuple[Any, ...]] = []
    heads: list[bytes | None] = [None] * len(rows)
    digests: list[tuple[bytes | None, int]] = []
    if cache is not None or store is not None:
        parents, versions, extras, ctypes, cast, tiles = b.parents, b.versions, b.extras, b.ctypes, b.cast, b.tiles
        parent = parents.get
        for i, r in enumerate(rows):
            counts = counts_of[i]
            chain = tuple([parent(x) for x in (r.season_id, r.series_id, r.album_id, r.parent_id) if x]) \
                if parents else ()
            deps_of.append((r, chain, versions.get(r.id), extras.get(r.id), ctypes.get(r.id),
                            (counts.children, counts.total) if counts is not None else None,
                            cast.get(r.id) if with_people else None, tiles.get(r.id),
                            child_counts[i] if child_counts is not None else None))
        if cache is not None:
            heads = cache.get_many(shape, [(r.id, deps) for r, deps in zip(rows, deps_of, strict=True)])
    writes: list[Write] = []
    valid: list[bytes] = []  # stored fragments that still hold, of an older epoch
    if store is not None:
        epoch = store.epoch
        # (a fragment kept in memory needs the store only when this reply can make it current)
        wanted = [r.id for r, head in zip(rows, heads, strict=True) if head is None or epoch]
        if not store.fetched and wanted:
            store.stale = store.store.fetch(store.shape, wanted)
            store.fetched = True
        stale, store_shape = store.stale, store.shape
        for i, r in enumerate(rows):
            if heads[i] is not None and not epoch:
                digests.append((None, 0))
                continue
            digest, size = _digest(deps_of[i])
            digests.append((digest, size))
            kept = stale.get(r.id)
            same = kept is not None and digest is not None and kept.digest == digest
            if heads[i] is None and same:
                heads[i] = kept.body  # type: ignore[union-attr]
            if same:
                if epoch and kept.epoch != epoch:  # type: ignore[union-attr]
                    valid.append(digest)  # type: ignore[arg-type]
            elif (known := heads[i]) is not None:
                writes.append((store_shape, r.id, epoch, digest, r.type, int(bool(r.is_folder)), r.run_time_ticks,
                               known))
    made: list[tuple[str, Any, bytes, int | None]] = []
    out: list[bytes] = []
    append = out.append
    cast, versions, extras, parents, ctypes, tiles = b.cast, b.versions, b.extras, b.parents, b.ctypes, b.tiles
    want_user_data, get_ud = b.want_user_data, b.uds.get
    # (an item without data of the user and no played counts, most of a page: the no-data
    # template with its id, as _user_data_bytes makes it, in the item's one join)
    parts = _no_data_parts(camel)
    simple = len(parts) == 3  # (the id twice: Key and ItemId)
    ud_head, ud_middle, ud_tail = (user_key + parts[0], parts[1], parts[2] + b"}") if simple else (b"", b"", b"")
    for i, r in enumerate(rows):
        counts = counts_of[i]
        head = heads[i]
        if head is None:
            dto = _build_one(r, opts, server_id, None, counts, cast, versions, extras, parents, ctypes, False)
            if tiles and r.id in tiles:
                dto.Trickplay = tiles[r.id]
            child_count = child_counts[i] if child_counts is not None else None
            if child_count:
                dto.ChildCount = child_count
            head = encode_wire(dto, camel)[:-1]
            if cache is not None:
                made.append((r.id, deps_of[i], head, digests[i][1] if digests else None))
            if store is not None:
                writes.append((store.shape, r.id, store.epoch, digests[i][0], r.type, int(bool(r.is_folder)),
                               r.run_time_ticks, head))
        if want_user_data:
            item_id = r.id
            ud_row = get_ud(item_id)
            if simple and ud_row is None and (counts is None or r.type not in _PLAYED_FOLDERS):
                encoded = item_id.encode()
                if len(encoded) == 32 and encoded.isalnum():
                    append(b"".join((head, ud_head, encoded, ud_middle, encoded, ud_tail)))
                    continue
            append(b"".join((head, user_key, _user_data_bytes(r, ud_row, counts, camel), b"}")))
        else:
            append(head + b"}")
    if made and cache is not None:
        cache.put_many(shape, made)
    if store is not None:
        if writes:
            store.store.put(writes)
        if valid:
            store.store.mark_valid(store.epoch, store.shape, valid)
    return out


#: the Fields ``_build_one`` tests one by one after the common ones (those sets only when one is asked)
_PROJECTED_FIELDS = frozenset((
    "Width", "Height", "DateCreated", "SortName", "OriginalTitle", "Overview", "Taglines", "Path", "Etag", "Genres",
    "Studios", "Tags", "ProviderIds", "ExternalUrls", "People", "ProductionLocations", "RemoteTrailers", "CanDelete",
    "CanDownload", "LockedFields", "Settings", "Chapters", "LocalTrailerCount", "SpecialFeatureCount"))


def _build_one(r: ItemRow, opts: DtoOptions, server_id: str, ud: Any, counts: FolderCounts | None,
               cast: dict, versions: dict, extras: dict, parents: dict, ctypes: dict,
               want_user_data: bool) -> w.BaseItemDto:
    f = opts.fields
    is_folder = bool(r.is_folder)
    # (fields set one by one: msgspec matches keyword arguments against BaseItemDto's 150+
    # fields one by one, so 20 keywords cost ~4x an empty struct and these assignments)
    dto = w.BaseItemDto()
    dto.Name = r.name
    dto.ServerId = server_id
    dto.Id = r.id
    dto.Type = r.type
    dto.IsFolder = is_folder
    dto.MediaType = r.media_type or "Unknown"
    dto.LocationType = location_type(r)
    dto.RunTimeTicks = r.run_time_ticks
    dto.ProductionYear = r.production_year
    dto.PremiereDate = r.premiere_date
    dto.EndDate = r.end_date
    dto.CommunityRating = r.community_rating
    dto.CriticRating = r.critic_rating
    dto.OfficialRating = r.official_rating
    dto.IndexNumber = r.index_number
    dto.IndexNumberEnd = r.index_number_end
    dto.ParentIndexNumber = r.parent_index_number
    dto.ParentId = r.parent_id
    dto.ExtraType = r.extra_type
    dto.PlayAccess = "Full"
    if r.container and not is_folder:
        dto.Container = r.container
    if r.type in ("CollectionFolder", "ManualPlaylistsFolder", "UserView"):
        dto.CollectionType = ctypes.get(r.id)
        dto.ParentId = None
    if r.type == "TvChannel":  # server/livetv/items.py: the number is kept in original_title
        dto.ChannelNumber = dto.Number = r.original_title
        dto.ChannelType = "TV"
        dto.ChannelName = r.name
        dto.LocationType = "Remote"
    if is_folder:
        dto.DisplayPreferencesId = r.id
    # shows
    if r.series_id:
        dto.SeriesId = r.series_id
        dto.SeriesName = r.series_name
    if r.season_id:
        dto.SeasonId = r.season_id
        dto.SeasonName = r.season_name
    if r.type == "Series" and getattr(r, "status", None):
        dto.Status = r.status
    if "SeriesStudio" in f and r.series_id and r.series_id in parents:
        studios = _list(parents[r.series_id].studios_json)
        dto.SeriesStudio = studios[0] if studios else None
    # music
    if r.media_type == "Audio" or r.type in ("MusicAlbum", "MusicVideo", "AudioBook"):
        artists, artist_items = _music_names(r.artists_json)
        album_artists, album_artist_items = _music_names(r.album_artists_json)
        dto.Artists = list(artists)
        dto.ArtistItems = list(artist_items)
        dto.AlbumArtists = list(album_artist_items)
        if album_artists:
            dto.AlbumArtist = album_artists[0]
        if r.album:
            dto.Album = r.album
        if r.album_id:
            dto.AlbumId = r.album_id
        if r.lyrics_path:
            dto.HasLyrics = True
    # video
    if r.media_type == "Video" and not is_folder:
        dto.VideoType = r.video_type or "VideoFile"
        dto.HasSubtitles = '"Subtitle"' in (r.media_streams_json or "")
        if "IsHD" in f:
            dto.IsHD = bool(r.width and r.width >= 1200)
    if not f.isdisjoint(_PROJECTED_FIELDS):  # (most lists ask none of these: one test, not ~25)
        if "Width" in f and r.width:
            dto.Width = r.width
        if "Height" in f and r.height:
            dto.Height = r.height
        # projected fields
        if "DateCreated" in f:
            dto.DateCreated = r.date_created
        if "SortName" in f:
            dto.SortName = r.sort_name
        if "SortName" in f and r.forced_sort_name:
            dto.ForcedSortName = r.forced_sort_name
        if "OriginalTitle" in f and r.original_title and r.type != "TvChannel":
            dto.OriginalTitle = r.original_title
        if "Overview" in f:
            dto.Overview = r.overview
        if "Taglines" in f:
            dto.Taglines = [r.tagline] if r.tagline else []
        if "Path" in f:
            dto.Path = r.path
        if "Etag" in f:
            dto.Etag = etag(r)
        if "Genres" in f:
            genres = _list(r.genres_json)
            dto.Genres = genres
            dto.GenreItems = _name_pairs(genres, "MusicGenre" if r.media_type == "Audio" or r.type == "MusicAlbum"
                                         else "Genre")
        if "Studios" in f:
            dto.Studios = _name_pairs(_list(r.studios_json), "Studio")
        if "Tags" in f:
            dto.Tags = _list(r.tags_json)
        provider_ids = None
        if "ProviderIds" in f or "ExternalUrls" in f:
            provider_ids = decode_json(r.provider_ids_json, {})
            provider_ids = {k: str(v) for k, v in provider_ids.items()} if isinstance(provider_ids, dict) else {}
            if "ProviderIds" in f:
                dto.ProviderIds = provider_ids
            if "ExternalUrls" in f:
                dto.ExternalUrls = [w.ExternalUrl(Name=_EXTERNAL_URLS[k][0], Url=_EXTERNAL_URLS[k][1].format(v))
                                    for k, v in provider_ids.items() if k in _EXTERNAL_URLS]
        if "People" in f:
            dto.People = cast.get(r.id, [])
        if "ProductionLocations" in f:
            dto.ProductionLocations = []
        if "RemoteTrailers" in f:
            dto.RemoteTrailers = []
        if "CanDelete" in f:
            dto.CanDelete = bool(opts.can_delete and r.type not in ("CollectionFolder", "UserRootFolder")
                                 and r.path is not None)
        if "CanDownload" in f:
            dto.CanDownload = bool(opts.can_download and not is_folder and r.path is not None)
        if "LockedFields" in f or "Settings" in f:
            dto.LockedFields = [x for x in _list(r.locked_fields_json) if not x.startswith("~")]  # merge.py
            dto.LockData = bool(r.is_locked)
        if "Chapters" in f:
            try:
                dto.Chapters = _CHAPTERS.decode(r.chapters_json or "[]")
            except (msgspec.DecodeError, msgspec.ValidationError):
                dto.Chapters = []
        if "LocalTrailerCount" in f or "SpecialFeatureCount" in f:
            trailers, specials = extras.get(r.id, (0, 0))
            if "LocalTrailerCount" in f:
                dto.LocalTrailerCount = trailers
            if "SpecialFeatureCount" in f:
                dto.SpecialFeatureCount = specials
    # media
    if not is_folder and r.media_type in ("Video", "Audio"):
        want_streams = "MediaStreams" in f or "MediaSources" in f
        streams = streams_of(r) if want_streams else None
        if "MediaStreams" in f:
            dto.MediaStreams = streams
        own_versions = versions.get(r.id, [])
        if "MediaSources" in f:
            dto.MediaSources = media_sources_for(r, own_versions, streams)
        if "MediaSourceCount" in f:
            dto.MediaSourceCount = 1 + len(own_versions)
    # counts
    if counts is not None:
        if "ChildCount" in f:
            dto.ChildCount = counts.children
        if "RecursiveItemCount" in f:
            dto.RecursiveItemCount = counts.total
    elif is_folder:
        if "ChildCount" in f:
            dto.ChildCount = 0
        if "RecursiveItemCount" in f:
            dto.RecursiveItemCount = 0
    # images
    if opts.enable_images or "PrimaryImageAspectRatio" in f:
        text = getattr(r, "images_json", None)
        images = _images_in(text) if text and text != "[]" else []  # (most tracks have none of their own)
    else:
        images = []
    if opts.enable_images:
        _apply_images(dto, images, opts)
        _apply_parent_images(dto, r, images, parents, opts)
    if "PrimaryImageAspectRatio" in f:
        dto.PrimaryImageAspectRatio = _aspect_ratio(r, images)
    if want_user_data:
        dto.UserData = _user_data_dto(r, ud, counts)
    return dto


__all__ = ["PLAYED_FOLDERS", "DtoOptions", "FolderCounts", "apply_images", "build_dtos", "build_fragments", "fragment_shape", "etag", "folder_counts", "image_tag", "images_of",
           "options_from", "primary_image", "user_data_dto", "user_data_dtos", "user_data_rows"]


def user_data_dtos(s: Session, rows: Sequence[ItemRow | ByNameTarget], user_id: str) -> dict[str, w.UserItemDataDto]:
    """UserItemDataDto per row (folders with their unplayed counts), in two or three queries."""
    uds = user_data_rows(s, user_id, [r.id for r in rows])
    counts = folder_counts(s, [r for r in rows if isinstance(r, ItemRow)], user_id, want_children=False, want_recursive=False, want_played=True) \
        if any(r.is_folder for r in rows) else {}
    return {r.id: _user_data_dto(r, uds.get(r.id), counts.get(r.id)) for r in rows}
