"""The item query engine: GET /Items parameters translated into one indexed SQL query.

``ItemQuery`` holds the parameters (snake_case); ``compile_query`` turns it into a SQLAlchemy
Core select over ``items`` (user data joined only when a filter or sort needs it), and
``run_query`` returns the page of rows plus the total from a COUNT with the same filters.

Scope rules (kept in one place so every endpoint agrees):
- owned rows (alternate versions and extras: ``owner_id`` set) never appear unless asked by id;
- a recursive query under a folder uses the cheapest indexed relation: ``library_id`` for a
  CollectionFolder, ``series_id`` / ``season_id`` / ``album_id`` for shows and albums, the
  item_values of an artist, and a recursive CTE over ``parent_id`` for other folders;
- a by-name id as parentId (genre, studio, person, year, artist) filters by that value;
- a user restricted to some libraries only ever sees rows of those libraries;
- a user's parental rules (``ParentalRules``: MaxParentalRating, BlockUnratedItems,
  BlockedTags, AllowedTags) are conditions of the same query, so lists, counts and direct item
  access (``item_visible``) agree.
"""

from __future__ import annotations

import random
import re
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from sqlalchemy import (
    Select,
    and_,
    case,
    exists,
    false,
    func,
    literal,
    not_,
    or_,
    select,
    true,
)
from sqlalchemy import column as sql_column
from sqlalchemy.engine import Engine

from server.db.database import LeanSession
from server.db.dialect import binary, like_ci, single_pass, starts_with
from server.db.handles import (
    collection_entries,
    item_people,
    item_values,
    items,
    people,
    playlist_entries,
    playlist_shares,
    playlists,
    user_data,
)
from server.errors import BadRequestError, NotFoundError
from server.guid import guid_from_text
from server.library.catalog import ids, search_index

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

#: The id of every user's root folder (Jellyfin's UserRootFolder): its children are the views.
ROOT_FOLDER_ID = guid_from_text("folder", "root")

VALUE_KINDS = ("Genre", "Studio", "Tag", "Artist", "AlbumArtist")

# Item types whose rows are structure rather than content: left out of recursive listings
# unless asked for by type (Jellyfin keeps them outside the library tree).
STRUCTURAL_TYPES = _STRUCTURAL = ("CollectionFolder", "MusicArtist", "UserRootFolder", "ManualPlaylistsFolder", "UserView",
               "TvChannel")  # Live TV (server/livetv/items.py) only when asked for by type


#: Item types and the UnratedItem kind that blocks them when they have no known rating
#: (Jellyfin's GetBlockUnratedType); types not listed (folders, libraries, playlists, people,
#: artists) are never blocked for being unrated.
UNRATED_KIND = {
    "Movie": "Movie", "BoxSet": "Movie", "Trailer": "Trailer", "Series": "Series", "Season": "Series",
    "Episode": "Series", "Audio": "Music", "MusicAlbum": "Music", "MusicVideo": "Music", "Book": "Book",
    "AudioBook": "Book", "LiveTvChannel": "LiveTvChannel", "TvChannel": "LiveTvChannel",
    "LiveTvProgram": "LiveTvProgram", "Program": "LiveTvProgram", "ChannelContent": "ChannelContent",
    "Video": "Other", "Photo": "Other",
}
# Rows that carry no content rating of their own and are never hidden by one.
_RATING_EXEMPT = ("CollectionFolder", "UserRootFolder", "ManualPlaylistsFolder", "Folder", "Playlist",
                  "MusicArtist", "Person", "Genre", "MusicGenre", "Studio", "Year", "PhotoAlbum")


@dataclass(frozen=True)
class ParentalRules:
    """A user's parental controls (UserPolicy), as Jellyfin applies them:

    - ``max_rating``: items whose rating (an episode or season without one: its series' rating)
      has a known level above it are hidden; unrated items and ratings of unknown level stay,
      unless
    - ``block_unrated``: UnratedItem kinds (Movie, Series, Music, ...) whose unrated items are hidden;
    - ``blocked_tags``: items carrying one of these tags (or whose series does) are hidden;
    - ``allowed_tags``: when set, only items carrying one of them (or whose series does) are
      shown, libraries and other folders excepted.
    """

    max_rating: int | None = None
    block_unrated: tuple[str, ...] = ()
    blocked_tags: tuple[str, ...] = ()
    allowed_tags: tuple[str, ...] = ()
    country: str | None = None  # the server's MetadataCountryCode: how rating strings are read

    @property
    def active(self) -> bool:
        return bool(self.max_rating is not None or self.block_unrated or self.blocked_tags or self.allowed_tags)


_rating_levels: dict[tuple[str | None, str], int | None] = {}


def _rating_level(rating: str, country: str | None) -> int | None:
    key = (country, rating)
    if key not in _rating_levels:
        from server.system.localization import bundled_localization

        if len(_rating_levels) > 10_000:
            _rating_levels.clear()
        _rating_levels[key] = bundled_localization().rating_level(rating, country)
    return _rating_levels[key]


_ratings_cache: dict[int, tuple[float, int | None, list[str]]] = {}
_RATINGS_TTL = 5.0


def _distinct_ratings(s: Session) -> list[str]:
    """The rating strings in the library (a few dozen), kept while the database's
    ``content_generation`` is unchanged (an edit or a scan that brings a new rating is seen by the
    next query). A session not made by ``Database`` (no generation to compare) re-reads them
    every few seconds; a string newer than that is hidden from a user with MaxParentalRating
    until it is read (the condition lists what may be shown), never shown by mistake."""
    database = s.info.get("database")
    # the stamp is taken before the read: a write that lands during it leaves an old stamp
    stamp = database.content_generation if database is not None else None
    key, now = id(s.get_bind()), time.monotonic()
    cached = _ratings_cache.get(key)
    if cached is not None and (cached[1] == stamp if stamp is not None else now - cached[0] < _RATINGS_TTL):
        return cached[2]
    found = [r for (r,) in s.execute(select(items.c.official_rating).where(items.c.official_rating.is_not(None))
                                     .distinct()).all() if r]
    _ratings_cache[key] = (now, stamp, found)
    return found


def parental_key(s: Session, rules: ParentalRules) -> tuple[ParentalRules, tuple[str, ...]]:
    """What ``parental_conditions`` depends on: the rules and, when they judge ratings, the
    library's rating strings (``_distinct_ratings``, read for the content generation). A
    statement built with the conditions may be kept under this key: a rating new to the library
    makes another key, and tags are looked up by the statement itself when it runs."""
    judged = rules.max_rating is not None or bool(rules.block_unrated)
    return rules, tuple(_distinct_ratings(s)) if judged else ()


def parental_conditions(s: Session, rules: ParentalRules) -> list:
    """The conditions an item passes when ``rules`` let the viewer see it (the one place they
    are written). The expressions are made once per ``parental_key`` (immutable, shared by the
    statements built with them): building them, with their subquery and aliases, cost more than
    a list's probes."""
    return list(conditions_for(parental_key(s, rules)))


@lru_cache(maxsize=128)
def conditions_for(key: tuple[ParentalRules, tuple[str, ...]]) -> tuple[Any, ...]:
    """``parental_conditions`` for a ``parental_key``."""
    rules, ratings = key
    series = items.alias("parental_series")
    series_rating = (select(series.c.official_rating).where(series.c.id == items.c.series_id)
                     .limit(1).scalar_subquery())
    own = func.nullif(items.c.official_rating, "")
    rating = case((own.is_not(None), own), else_=series_rating)
    exempt = items.c.type.in_(_RATING_EXEMPT)
    conds: list = []
    if rules.max_rating is not None or rules.block_unrated:
        levels = {r: _rating_level(r, rules.country) for r in ratings}
        if rules.max_rating is not None:
            shown = sorted(r for r, level in levels.items() if level is None or level <= rules.max_rating)
            conds.append(or_(exempt, rating.is_(None), rating.in_(shown)) if shown else or_(exempt, rating.is_(None)))
        blocked_types = sorted(t for t, kind in UNRATED_KIND.items() if kind in rules.block_unrated)
        if blocked_types:
            unrated_strings = sorted(r for r, level in levels.items() if level is None)
            unrated = or_(rating.is_(None), rating.in_(unrated_strings)) if unrated_strings else rating.is_(None)
            conds.append(not_(and_(items.c.type.in_(blocked_types), unrated)))

    def tagged(values: tuple[str, ...]):
        v = item_values.alias("parental_tags")
        return exists(select(literal(1)).select_from(v).where(
            or_(v.c.item_id == items.c.id, v.c.item_id == items.c.series_id), v.c.kind == "Tag",
            v.c.clean_value.in_(list(values))))

    if rules.blocked_tags:
        conds.append(not_(tagged(rules.blocked_tags)))
    if rules.allowed_tags:
        conds.append(or_(exempt, tagged(rules.allowed_tags)))
    return tuple(conds)


def item_visible(s: Session, item_id: str, allowed_library_ids: frozenset[str] | None,
                 rules: ParentalRules | None) -> bool:
    """Whether a user with this scope may see the item (the same conditions as their queries)."""
    conds = [items.c.id == item_id]
    if allowed_library_ids is not None:
        conds.append(or_(items.c.library_id.in_(sorted(allowed_library_ids)), items.c.type == "UserRootFolder"))
    if rules is not None and rules.active:
        conds += parental_conditions(s, rules)
    return s.execute(select(items.c.id).where(*conds)).first() is not None


@dataclass
class ItemQuery:
    user_id: str | None = None
    allowed_library_ids: frozenset[str] | None = None  # None = every library
    parental: ParentalRules | None = None  # the user's parental controls (None = none)
    exclude_library_ids: set[str] = field(default_factory=set)
    parent_id: str | None = None
    recursive: bool = False
    include_types: list[str] = field(default_factory=list)
    exclude_types: list[str] = field(default_factory=list)
    media_types: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    exclude_ids: list[str] = field(default_factory=list)
    genres: list[str] = field(default_factory=list)
    genre_ids: list[str] = field(default_factory=list)
    studios: list[str] = field(default_factory=list)
    studio_ids: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    artists: list[str] = field(default_factory=list)
    artist_ids: list[str] = field(default_factory=list)
    album_artist_ids: list[str] = field(default_factory=list)
    contributing_artist_ids: list[str] = field(default_factory=list)
    exclude_artist_ids: list[str] = field(default_factory=list)
    albums: list[str] = field(default_factory=list)
    album_ids: list[str] = field(default_factory=list)
    person: str | None = None
    person_ids: list[str] = field(default_factory=list)
    person_types: list[str] = field(default_factory=list)
    years: list[int] = field(default_factory=list)
    official_ratings: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    is_played: bool | None = None
    is_favorite: bool | None = None
    is_resumable: bool | None = None
    is_folder: bool | None = None
    search_term: str | None = None
    name_starts_with: str | None = None
    name_starts_with_or_greater: str | None = None
    name_less_than: str | None = None
    min_community_rating: float | None = None
    min_critic_rating: float | None = None
    has_subtitles: bool | None = None
    has_overview: bool | None = None
    has_official_rating: bool | None = None
    has_imdb_id: bool | None = None
    has_tmdb_id: bool | None = None
    has_tvdb_id: bool | None = None
    is_hd: bool | None = None
    is_4k: bool | None = None
    is_3d: bool | None = None
    is_locked: bool | None = None
    is_missing: bool | None = None
    is_place_holder: bool | None = None
    location_types: list[str] = field(default_factory=list)
    exclude_location_types: list[str] = field(default_factory=list)
    series_status: list[str] = field(default_factory=list)
    video_types: list[str] = field(default_factory=list)
    min_premiere_date: datetime | None = None
    max_premiere_date: datetime | None = None
    min_date_created: datetime | None = None
    index_number: int | None = None
    parent_index_number: int | None = None
    min_width: int | None = None
    min_height: int | None = None
    max_width: int | None = None
    max_height: int | None = None
    image_types: list[str] = field(default_factory=list)
    stable_order: bool = True  # break ties by id (stable paging); Latest does without
    include_structural: bool = False  # recursive listings keep MusicArtist rows
    resume_audiobooks: bool = False  # with media_types: AudioBook rows count too
    has_trailer: bool | None = None
    has_special_feature: bool | None = None
    adjacent_to: str | None = None
    extra_types: list[str] = field(default_factory=list)  # set: owned extras of these types
    owner_id: str | None = None  # set: rows owned by this item (extras, versions)
    sort_by: list[str] = field(default_factory=list)
    sort_order: list[str] = field(default_factory=list)
    start_index: int = 0
    limit: int | None = None
    enable_total_record_count: bool = True
    #: resolves by-name ids (genre, studio, artist, year) in filters and parentId; owned by the
    #: ItemService (see ``names_of``); not part of the query's identity
    names: ByNameIndex | None = field(default=None, repr=False, compare=False)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (a page handed to a reader process, server/readers/protocol.py) as its values
        alone, in field order, and built again without ``__init__``: a pickled ``__dict__`` writes
        and reads ~85 names a query, and ``__init__`` runs every default factory (callgrind: the
        request's pickling 134k -> 95k instructions, its unpickling 205k -> 115k). An instance
        with attributes other than its fields (none is made so) travels by name."""
        values = self.__dict__
        if tuple(values) != _QUERY_FIELDS:
            return _query_from, (dict(values),)
        return _query_from, (tuple(values.values()),)


def _query_from(values: tuple[Any, ...] | dict[str, Any]) -> ItemQuery:
    """``ItemQuery.__reduce__``'s rebuild: the fields' values (fresh objects, from the pickle),
    in field order or by name."""
    q = object.__new__(ItemQuery)
    q.__dict__.update(values if isinstance(values, dict) else zip(_QUERY_FIELDS, values, strict=True))
    return q


#: ItemQuery's field names, in order (an instance's ``__dict__`` holds them so: ``__init__`` sets them)
_QUERY_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ItemQuery))
#: The fields' defaults in field order (a default factory's as None: ``blank_query`` calls it)
_QUERY_DEFAULTS: dict[str, Any] = {f.name: None if f.default is MISSING else f.default for f in fields(ItemQuery)}
_QUERY_FACTORIES: tuple[tuple[str, Callable[[], Any]], ...] = tuple(
    (f.name, f.default_factory) for f in fields(ItemQuery) if f.default_factory is not MISSING)


def blank_query() -> ItemQuery:
    """``ItemQuery()`` (every field its default, a fresh list or set where a factory makes one),
    without ``__init__``'s ~85 keyword parameters: GET /Items (server/api/items.py) then sets only
    the fields its request names. The same object ``ItemQuery()`` makes (``__dict__`` in field
    order, as ``__reduce__`` expects)."""
    q = object.__new__(ItemQuery)
    values = q.__dict__
    values.update(_QUERY_DEFAULTS)
    for name, factory in _QUERY_FACTORIES:
        values[name] = factory()
    return q


# ---------------------------------------------------------------- by-name ids


class ByNameIndex:
    """Maps by-name ids (genres, studios, artists, years) back to their names, for one database.

    The ids are hashes of the names, so the index is built from the distinct values stored in
    ``item_values`` (the covering (kind, clean_value) index) and ``items.production_year``. An
    unknown id rebuilds it when the database was written since the last build (or, without a
    generation source, at most every few seconds): that is how newly scanned values appear."""

    REBUILD_INTERVAL = 2.0

    def __init__(self, generation: Callable[[], int] | None = None) -> None:
        self._map: dict[str, tuple[str, str]] = {}
        self._generation = generation
        self._built_generation: int | None = None
        self._built_at = 0.0
        self._lock = threading.Lock()

    def _stale(self) -> bool:
        if self._built_generation is None:
            return True
        if self._generation is not None:
            return self._generation() != self._built_generation
        return time.monotonic() - self._built_at > self.REBUILD_INTERVAL

    def _rebuild(self, s: Session) -> None:
        generation = self._generation() if self._generation is not None else 0
        mapping: dict[str, tuple[str, str]] = {}
        rows = s.execute(select(item_values.c.kind, item_values.c.clean_value, func.min(item_values.c.value))
                         .where(item_values.c.kind.in_(("Genre", "Studio", "Artist", "AlbumArtist")))
                         .group_by(item_values.c.kind, item_values.c.clean_value)).all()
        for kind, _clean, value in rows:
            if not value:
                continue
            if kind == "Genre":
                mapping[ids.by_name_id("Genre", value)] = ("Genre", value)
                mapping[ids.by_name_id("MusicGenre", value)] = ("MusicGenre", value)
            elif kind == "Studio":
                mapping[ids.by_name_id("Studio", value)] = ("Studio", value)
            else:
                mapping[ids.by_name_id("MusicArtist", value)] = ("MusicArtist", value)
        for (year,) in s.execute(select(items.c.production_year).where(items.c.production_year.is_not(None))
                                 .distinct()).all():
            mapping[ids.by_name_id("Year", str(year))] = ("Year", str(year))
        self._map = mapping
        self._built_generation = generation
        self._built_at = time.monotonic()

    def lookup(self, s: Session, item_id: str) -> tuple[str, str] | None:
        """(kind, name) of a by-name id, or None. Persons come from the people table."""
        found = self._map.get(item_id)
        if found is not None:
            return found
        name = s.execute(select(people.c.name).where(people.c.id == item_id)).scalar()
        if name is not None:
            return ("Person", name)
        with self._lock:
            if self._stale():
                self._rebuild(s)
        return self._map.get(item_id)

    def names(self, s: Session, id_list: list[str], kinds: tuple[str, ...]) -> list[str]:
        out = []
        for i in id_list:
            found = self.lookup(s, i)
            if found and found[0] in kinds:
                out.append(found[1])
        return out


def names_of(s: Session, q: ItemQuery) -> ByNameIndex:
    """The by-name index a query resolves ids with: the one its service gave it
    (``ItemQuery.names``, set by ``ItemService.scoped``/``query``), else a throw-away index
    built on first use (correct, just not cached: code that runs queries without the service)."""
    if q.names is None:
        q.names = ByNameIndex()
    return q.names


# ---------------------------------------------------------------- compiling


def _lower(values: list[str]) -> list[str]:
    return [v.strip().lower() for v in values if v and v.strip()]


def _has_value(kinds: tuple[str, ...], clean_values: list[str]):
    v = item_values.alias("v")
    return exists(select(literal(1)).select_from(v).where(
        v.c.item_id == items.c.id, v.c.kind.in_(kinds) if len(kinds) > 1 else v.c.kind == kinds[0],
        v.c.clean_value.in_(clean_values)))


class _Ctx:
    """What compiling one query found out: whether user data must be joined."""

    def __init__(self, q: ItemQuery, postgres: bool = False) -> None:
        self.q = q
        self.postgres = postgres  # order NULLs as SQLite (and so Jellyfin) does: see _order_by
        self.needs_user_data = False
        self.library_scope = False  # a recursive query under a CollectionFolder
        self.ud = user_data.alias("ud")

    def ud_col(self, name: str):
        self.needs_user_data = True
        return getattr(self.ud.c, name)


def _played_condition(c: _Ctx, played: bool):
    """Played for a video/audio row; for a series or season: every episode played."""
    if c.q.user_id is None:
        return true() if not played else false()
    ud2 = user_data.alias("ud2")
    ep = items.alias("ep")
    unplayed_episode = exists(select(literal(1)).select_from(
        ep.outerjoin(ud2, and_(ud2.c.item_id == ep.c.id, ud2.c.user_id == c.q.user_id))).where(
        or_(ep.c.series_id == items.c.id, ep.c.season_id == items.c.id),
        ep.c.type == "Episode", func.coalesce(ep.c.owner_id, "") == "", ep.c.is_virtual == false(),
        func.coalesce(ud2.c.played, false()) == false()))
    row_played = func.coalesce(c.ud_col("played"), false()) == true()
    folder_case = items.c.type.in_(("Series", "Season"))
    if played:
        return or_(and_(folder_case, not_(unplayed_episode)), and_(not_(folder_case), row_played))
    return or_(and_(folder_case, unplayed_episode), and_(not_(folder_case), not_(row_played)))


#: The folder playlists hang under (server/library/browse/playlists.py).
PLAYLISTS_FOLDER_ID = guid_from_text("folder", "playlists")


def playlist_visible(user_id: str):
    """Rows other than playlists, and the playlists the user owns, shares or that are public."""
    pl, shares = playlists, playlist_shares
    mine = select(pl.c.id).where(or_(pl.c.owner_user_id == user_id, pl.c.is_public == true()))
    shared = select(shares.c.playlist_id).where(shares.c.user_id == user_id)
    return or_(items.c.type != "Playlist", items.c.id.in_(mine), items.c.id.in_(shared))


def _members_of(kind: str, parent_id: str):
    """The members of a collection (BoxSet) or a playlist, as a condition on items."""
    if kind == "BoxSet":
        members = collection_entries
        return items.c.id.in_(select(members.c.item_id).where(members.c.collection_id == parent_id))
    entries = playlist_entries
    return items.c.id.in_(select(entries.c.item_id).where(entries.c.playlist_id == parent_id))


def _parent_scope(s: Session, c: _Ctx, conds: list) -> None:
    q = c.q
    parent_id = q.parent_id
    if parent_id is None or parent_id == ROOT_FOLDER_ID:
        if parent_id == ROOT_FOLDER_ID or not (q.recursive or q.ids or q.search_term or q.owner_id):
            if not q.recursive:
                conds.append(items.c.type == "CollectionFolder")
        return
    row = s.execute(select(items.c.id, items.c.type, items.c.name, items.c.library_id)
                    .where(items.c.id == parent_id)).first()
    if row is None:
        by_name = names_of(s, q).lookup(s, parent_id)
        if by_name is None:
            raise NotFoundError(f"Item {parent_id} not found.")
        kind, name = by_name
        if kind in ("Genre", "MusicGenre"):
            conds.append(_has_value(("Genre",), [name.lower()]))
        elif kind == "Studio":
            conds.append(_has_value(("Studio",), [name.lower()]))
        elif kind == "MusicArtist":
            conds.append(_has_value(("Artist", "AlbumArtist"), [name.lower()]))
        elif kind == "Year":
            conds.append(items.c.production_year == int(name))
        elif kind == "Person":
            conds.append(exists(select(literal(1)).select_from(item_people).where(
                item_people.c.item_id == items.c.id, item_people.c.person_id == parent_id)))
        return
    if row.type in ("BoxSet", "Playlist"):  # members live in their own tables (server/library/browse/boxsets.py)
        conds.append(_members_of(row.type, parent_id))
        return
    if not q.recursive:
        conds.append(items.c.parent_id == parent_id)
        return
    kind = row.type
    if kind == "CollectionFolder":  # (type, not id: the covering index has the type)
        c.library_scope = True
        conds.append(items.c.library_id == parent_id)
        conds.append(items.c.type != "CollectionFolder")
        return
    if kind == "Series":
        conds.append(items.c.series_id == parent_id)
    elif kind == "Season":
        conds.append(items.c.season_id == parent_id)
    elif kind == "MusicAlbum":
        conds.append(items.c.album_id == parent_id)
    elif kind == "MusicArtist":
        conds.append(or_(_has_value(("Artist", "AlbumArtist"), [row.name.lower()]),
                         items.c.parent_id == parent_id))
    else:
        tree = select(items.c.id).where(items.c.parent_id == parent_id).cte("tree", recursive=True)
        child = items.alias("child")
        tree = tree.union_all(select(child.c.id).where(child.c.parent_id == tree.c.id))
        conds.append(items.c.id.in_(select(tree.c.id)))
    if kind not in ("Series", "Season", "MusicAlbum"):  # those rows never point at themselves
        conds.append(items.c.id != parent_id)


def _conditions(s: Session, c: _Ctx) -> list:
    q = c.q
    conds: list = []
    if q.owner_id is not None:
        conds.append(items.c.owner_id == q.owner_id)
        if q.extra_types:
            conds.append(items.c.extra_type.in_(q.extra_types))
    if q.allowed_library_ids is not None:
        conds.append(items.c.library_id.in_(sorted(q.allowed_library_ids)) if q.allowed_library_ids else false())
    if q.exclude_library_ids:
        conds.append(items.c.library_id.not_in(sorted(q.exclude_library_ids)))
    if q.parental is not None and q.parental.active:
        conds += parental_conditions(s, q.parental)
    if q.user_id is not None:  # other users' private playlists stay private (server/library/browse/playlists.py)
        conds.append(playlist_visible(q.user_id))
    _parent_scope(s, c, conds)
    if q.owner_id is None and not q.ids:
        # "owner_id IS NULL" holds for nearly every row: as an index lookup it only pays inside
        # the covering (library_id, type, owner_id, sort_name, id) index of a library scope.
        # Elsewhere the unindexable spelling keeps SQLite on the index that serves the ORDER BY
        # (date_created for Latest) or on the few ids a full-text match found.
        conds.append(items.c.owner_id.is_(None) if c.library_scope else func.coalesce(items.c.owner_id, "") == "")
    include = [t for t in q.include_types if t]
    if include:
        conds.append(items.c.type.in_(include) if len(include) > 1 else items.c.type == include[0])
    elif q.recursive and not q.ids and not q.include_structural:
        conds.append(items.c.type.not_in(_STRUCTURAL))
    if q.exclude_types:
        conds.append(items.c.type.not_in(q.exclude_types))
    if q.media_types:
        media = items.c.media_type.in_(q.media_types)
        conds.append(or_(media, items.c.type == "AudioBook") if q.resume_audiobooks else media)
    if q.ids:
        conds.append(items.c.id.in_(q.ids))
    if q.exclude_ids:
        conds.append(items.c.id.not_in(q.exclude_ids))
    genres = _lower(q.genres) + _lower(names_of(s, q).names(s, q.genre_ids, ("Genre", "MusicGenre"))) \
        if q.genre_ids else _lower(q.genres)
    if q.genres or q.genre_ids:
        conds.append(_has_value(("Genre",), genres) if genres else false())
    studios = _lower(q.studios) + _lower(names_of(s, q).names(s, q.studio_ids, ("Studio",))) \
        if q.studio_ids else _lower(q.studios)
    if q.studios or q.studio_ids:
        conds.append(_has_value(("Studio",), studios) if studios else false())
    if q.tags:
        conds.append(_has_value(("Tag",), _lower(q.tags)))
    artist_names = _lower(q.artists) + _lower(_artist_names(s, q, q.artist_ids))
    if q.artists or q.artist_ids:
        conds.append(_has_value(("Artist", "AlbumArtist"), artist_names) if artist_names else false())
    if q.album_artist_ids:
        names = _lower(_artist_names(s, q, q.album_artist_ids))
        conds.append(_has_value(("AlbumArtist",), names) if names else false())
    if q.contributing_artist_ids:
        names = _lower(_artist_names(s, q, q.contributing_artist_ids))
        conds.append(and_(_has_value(("Artist",), names), not_(_has_value(("AlbumArtist",), names)))
                     if names else false())
    if q.exclude_artist_ids:
        names = _lower(_artist_names(s, q, q.exclude_artist_ids))
        if names:
            conds.append(not_(_has_value(("Artist", "AlbumArtist"), names)))
    if q.albums:
        conds.append(func.lower(items.c.album).in_(_lower(q.albums)))
    if q.album_ids:
        conds.append(items.c.album_id.in_(q.album_ids))
    if q.person or q.person_ids:
        ip = item_people.alias("ip")
        pconds = [ip.c.item_id == items.c.id]
        person_ids = list(q.person_ids)
        if q.person:
            pid = s.execute(select(people.c.id).where(func.lower(people.c.name) == q.person.strip().lower())).scalar()
            person_ids.append(pid or "-")
        pconds.append(ip.c.person_id.in_(person_ids))
        if q.person_types:
            pconds.append(ip.c.kind.in_(q.person_types))
        conds.append(exists(select(literal(1)).select_from(ip).where(*pconds)))
    if q.years:
        conds.append(items.c.production_year.in_(q.years))
    if q.official_ratings:
        conds.append(items.c.official_rating.in_(q.official_ratings))
    filters = set(q.filters)
    is_played = q.is_played
    if "IsPlayed" in filters:
        is_played = True
    if "IsUnplayed" in filters:
        is_played = False
    if is_played is not None:
        conds.append(_played_condition(c, is_played))
    is_favorite = True if "IsFavorite" in filters else q.is_favorite
    if is_favorite is not None:  # the positive forms reject NULL, so SQLite can start from user_data
        conds.append((c.ud_col("is_favorite") == true()) if is_favorite
                     else (func.coalesce(c.ud_col("is_favorite"), false()) == false()))
    if "IsFavoriteOrLikes" in filters:
        conds.append(or_(c.ud_col("is_favorite") == true(), c.ud_col("likes") == true()))
    if "Likes" in filters:
        conds.append(c.ud_col("likes") == true())
    if "Dislikes" in filters:
        conds.append(c.ud_col("likes") == false())
    is_resumable = True if "IsResumable" in filters else q.is_resumable
    if is_resumable is not None:
        conds.append(c.ud_col("playback_position_ticks") > 0 if is_resumable
                     else func.coalesce(c.ud_col("playback_position_ticks"), 0) == 0)
    is_folder = q.is_folder
    if "IsFolder" in filters:
        is_folder = True
    if "IsNotFolder" in filters:
        is_folder = False
    if is_folder is not None:
        conds.append(items.c.is_folder == (true() if is_folder else false()))
    fts_term = search_index.match_expression(q.search_term or "") if q.search_term else None
    use_index = fts_term is not None and search_index.ready(s.get_bind())
    if use_index:
        conds.append(items.c.id.in_(search_index.matching_ids_sql().bindparams(fts_term=fts_term)
                                    .columns(sql_column("item_id"))))
    if q.search_term and q.search_term.strip() and (
            not use_index or search_index.phrase_is_partial(q.search_term)):
        term = q.search_term.strip().lower()
        pattern = "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        conds.append(or_(func.lower(items.c.name).like(pattern, escape="\\"),
                         func.lower(items.c.original_title).like(pattern, escape="\\")))
    if q.name_starts_with:
        prefix = q.name_starts_with.lower()
        conds.append(starts_with(items.c.sort_name, prefix))
    if q.name_starts_with_or_greater:
        conds.append(binary(items.c.sort_name) >= q.name_starts_with_or_greater.lower())
    if q.name_less_than:
        conds.append(binary(items.c.sort_name) < q.name_less_than.lower())
    if q.min_community_rating is not None:
        conds.append(items.c.community_rating >= q.min_community_rating)
    if q.min_critic_rating is not None:
        conds.append(items.c.critic_rating >= q.min_critic_rating)
    if q.has_subtitles is not None:
        cond = like_ci(items.c.media_streams_json, '%"Subtitle"%')
        conds.append(cond if q.has_subtitles else not_(cond))
    if q.has_overview is not None:
        cond = and_(items.c.overview.is_not(None), items.c.overview != "")
        conds.append(cond if q.has_overview else not_(cond))
    if q.has_official_rating is not None:
        cond = and_(items.c.official_rating.is_not(None), items.c.official_rating != "")
        conds.append(cond if q.has_official_rating else not_(cond))
    for flag, key in ((q.has_imdb_id, "Imdb"), (q.has_tmdb_id, "Tmdb"), (q.has_tvdb_id, "Tvdb")):
        if flag is not None:
            cond = like_ci(items.c.provider_ids_json, f'%"{key}"%')
            conds.append(cond if flag else not_(cond))
    if q.is_hd is not None:
        conds.append(items.c.width >= 1200 if q.is_hd else func.coalesce(items.c.width, 0) < 1200)
    if q.is_4k is not None:
        conds.append(items.c.width >= 3800 if q.is_4k else func.coalesce(items.c.width, 0) < 3800)
    if q.is_3d is True:
        conds.append(false())
    if q.is_locked is not None:
        conds.append(items.c.is_locked == (true() if q.is_locked else false()))
    if q.is_place_holder is True:
        conds.append(false())
    if q.is_missing is not None or "Virtual" in q.location_types or "Virtual" in q.exclude_location_types:
        pass
    if q.is_missing is not None:
        conds.append(items.c.is_virtual == (true() if q.is_missing else false()))
    if q.location_types:
        wanted = set(q.location_types)
        options = []
        if "Virtual" in wanted:
            options.append(items.c.is_virtual == true())
        if "FileSystem" in wanted:
            options.append(items.c.is_virtual == false())
        conds.append(or_(*options) if options else false())
    if q.exclude_location_types:
        unwanted = set(q.exclude_location_types)
        if "Virtual" in unwanted:
            conds.append(items.c.is_virtual == false())
        if "FileSystem" in unwanted:
            conds.append(items.c.is_virtual == true())
    if q.series_status:
        conds.append(and_(items.c.type == "Series", items.c.status.in_(q.series_status)))
    if q.video_types:
        conds.append(func.coalesce(items.c.video_type, "VideoFile").in_(q.video_types))
        conds.append(items.c.media_type == "Video")
    if q.min_premiere_date is not None:
        conds.append(items.c.premiere_date >= q.min_premiere_date)
    if q.max_premiere_date is not None:
        conds.append(items.c.premiere_date <= q.max_premiere_date)
    if q.min_date_created is not None:
        conds.append(items.c.date_created >= q.min_date_created)
    if q.index_number is not None:
        conds.append(items.c.index_number == q.index_number)
    if q.parent_index_number is not None:
        conds.append(items.c.parent_index_number == q.parent_index_number)
    for image_type in q.image_types:
        conds.append(like_ci(items.c.images_json, f'%"{image_type}"%'))
    for flag, trailer in ((q.has_trailer, True), (q.has_special_feature, False)):
        if flag is None:
            continue
        extra = items.alias("extra")
        kind = extra.c.extra_type == "Trailer" if trailer else extra.c.extra_type.not_in(("Trailer", "ThemeSong",
                                                                                         "ThemeVideo"))
        cond = exists(select(literal(1)).select_from(extra).where(extra.c.owner_id == items.c.id,
                                                                 extra.c.extra_type.is_not(None), kind))
        conds.append(cond if flag else not_(cond))
    for value, column, op in ((q.min_width, items.c.width, ">="), (q.min_height, items.c.height, ">="),
                              (q.max_width, items.c.width, "<="), (q.max_height, items.c.height, "<=")):
        if value is not None:
            conds.append(column >= value if op == ">=" else column <= value)
    return conds


def _artist_names(s: Session, q: ItemQuery, id_list: list[str]) -> list[str]:
    if not id_list:
        return []
    rows = s.execute(select(items.c.id, items.c.name).where(items.c.id.in_(id_list),
                                                            items.c.type == "MusicArtist")).all()
    found = {r.id: r.name for r in rows}
    names = [found[i] for i in id_list if i in found]
    missing = [i for i in id_list if i not in found]
    return names + (names_of(s, q).names(s, missing, ("MusicArtist",)) if missing else [])


SORT_KEYS = ("Default", "AiredEpisodeOrder", "Album", "AlbumArtist", "Artist", "DateCreated", "OfficialRating",
             "DatePlayed", "PremiereDate", "StartDate", "SortName", "Name", "Random", "Runtime", "CommunityRating",
             "ProductionYear", "PlayCount", "CriticRating", "IsFolder", "IsUnplayed", "IsPlayed", "SeriesSortName",
             "VideoBitRate", "AirTime", "Studio", "IsFavoriteOrLiked", "DateLastContentAdded", "SeriesDatePlayed",
             "ParentIndexNumber", "IndexNumber", "SimilarityScore", "SearchScore")


def _sort_columns(c: _Ctx, key: str) -> list:
    col = items.c
    match key:
        case "SortName" | "Default" | "SimilarityScore":
            return [col.sort_name]
        case "Name":
            return [func.lower(col.name)]
        case "SearchScore":
            term = (c.q.search_term or "").strip().lower()
            if not term:
                return [col.sort_name]
            escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            score = case((func.lower(col.name) == term, 0),
                         (func.lower(col.name).like(escaped + "%", escape="\\"), 1), else_=2)
            return [score, col.sort_name]
        case "DateCreated" | "DateLastContentAdded":
            return [col.date_created]
        case "PremiereDate" | "StartDate" | "AirTime":
            return [col.premiere_date]
        case "ProductionYear":
            return [col.production_year]
        case "CommunityRating":
            return [col.community_rating]
        case "CriticRating":
            return [col.critic_rating]
        case "OfficialRating":
            return [col.official_rating]
        case "Runtime":
            return [col.run_time_ticks]
        case "Random":
            return [func.random()]
        case "IndexNumber":
            return [col.index_number]
        case "ParentIndexNumber":
            return [col.parent_index_number]
        case "AiredEpisodeOrder":
            return [col.parent_index_number, col.index_number]
        case "Album":
            return [func.lower(col.album)]
        case "AlbumArtist":
            return [func.lower(col.album_artists_json)]
        case "Artist":
            return [func.lower(col.artists_json)]
        case "Studio":
            return [func.lower(col.studios_json)]
        case "SeriesSortName":
            return [func.lower(col.series_name)]
        case "IsFolder":
            return [col.is_folder]
        case "VideoBitRate":
            return [col.bitrate]
        case "DatePlayed" | "SeriesDatePlayed":
            return [c.ud_col("last_played_date")]
        case "PlayCount":
            return [func.coalesce(c.ud_col("play_count"), 0)]
        case "IsPlayed":
            return [func.coalesce(c.ud_col("played"), false())]
        case "IsUnplayed":
            return [not_(func.coalesce(c.ud_col("played"), false()))]
        case "IsFavoriteOrLiked":
            return [func.coalesce(c.ud_col("is_favorite"), false())]
    return [col.sort_name]


def _order_by(c: _Ctx) -> list:
    q = c.q
    keys = [k for k in q.sort_by if k] or ["SortName"]
    order: list = []
    for i, key in enumerate(keys):
        direction = q.sort_order[i] if i < len(q.sort_order) else (q.sort_order[0] if q.sort_order else "Ascending")
        for column in _sort_columns(c, key):
            if direction == "Descending":
                # Jellyfin (on SQLite) takes NULL as the smallest value: a never-played item
                # comes first ascending and last descending. PostgreSQL's default is the reverse.
                order.append(column.desc().nulls_last() if c.postgres else column.desc())
            else:
                order.append(column.asc().nulls_first() if c.postgres else column.asc())
    if "Random" not in keys and q.stable_order:
        order.append(items.c.id.asc())
    return order


def _check_paging(q: ItemQuery) -> None:
    if q.start_index < 0:
        raise BadRequestError("startIndex must not be negative.")
    if q.limit is not None and q.limit < 0:
        raise BadRequestError("limit must not be negative.")


def source_of(c: _Ctx) -> Any:
    if not c.needs_user_data:
        return items
    return items.outerjoin(c.ud, and_(c.ud.c.item_id == items.c.id, c.ud.c.user_id == (c.q.user_id or "")))


def compile_query(s: Session, q: ItemQuery, columns: list | None = None) -> tuple[Select, Select | None]:
    """(page select, count select or None)."""
    _check_paging(q)
    c = _Ctx(q, postgres=s.get_bind().dialect.name == "postgresql")
    conds = _conditions(s, c)
    order = _order_by(c)
    source = source_of(c)
    page = select(*(columns if columns is not None else [items])).select_from(source).where(*conds).order_by(*order)
    if q.start_index:
        page = page.offset(q.start_index)
    if q.limit is not None:
        page = page.limit(q.limit)
    count = None
    if q.enable_total_record_count:
        count = select(func.count()).select_from(source).where(*conds)
    return page, count


def scope(s: Session, q: ItemQuery) -> tuple[Any, list]:
    """(FROM clause, WHERE conditions) of a query without ordering or paging."""
    c = _Ctx(q)
    conds = _conditions(s, c)
    return source_of(c), conds


def _adjacent(s: Session, q: ItemQuery) -> tuple[list[ItemRow], int]:
    """The item before, the item itself and the item after ``adjacent_to`` in the query's order."""
    target = q.adjacent_to
    q.adjacent_to = None
    start, limit, q.start_index, q.limit = q.start_index, q.limit, 0, None
    try:
        page, _ = compile_query(s, q, [items.c.id])
    finally:
        q.adjacent_to, q.start_index, q.limit = target, start, limit
    order = [r[0] for r in s.execute(page).all()]
    if target not in order:
        return [], 0
    i = order.index(target)
    wanted = order[max(0, i - 1): i + 2]
    found = get_rows(s, wanted)
    rows = [found[x] for x in wanted if x in found]
    return rows, len(rows)


class PackedIds:
    """An ordered list of 32-character lowercase hex ids held as one bytes object of their binary
    values: 16 bytes an id instead of about 90 for a str in a list, so a cached 100k-item ordering
    costs 1.5 MB, not 9 (3 as text until stop 31: the page fill's deep pages hold one while a pass
    runs). Slicing gives a list of str, as slicing the list did."""

    __slots__ = ("_data", "_count")
    WIDTH = 32  # characters of an id
    SIZE = 16  # bytes of a packed id

    def __init__(self, ids: list[str]) -> None:
        self._data = bytes.fromhex("".join(ids))
        self._count = len(ids)

    @classmethod
    def fits(cls, ids: Sequence[str]) -> bool:
        return all(len(i) == cls.WIDTH for i in ids) and _LOWER_HEX.fullmatch("".join(ids)) is not None

    @classmethod
    def joined(cls, parts: list[bytes], count: int) -> PackedIds:
        """Made of ``count`` ids already packed (``bytes.fromhex``), a part at a time (``_read_ordered``)."""
        packed = cls.__new__(cls)
        packed._data = b"".join(parts)
        packed._count = count
        return packed

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: slice) -> list[str]:
        start, stop, step = index.indices(self._count)
        data, size, width = self._data, self.SIZE, self.WIDTH
        if step == 1:  # (a page: its ids made text at once, then cut)
            text = data[start * size:stop * size].hex()
            return [text[i:i + width] for i in range(0, len(text), width)]
        return [data[i * size:(i + 1) * size].hex() for i in range(start, stop, step)]

    def pick(self, positions: Iterable[int]) -> list[str]:
        """The ids at these positions, in that order."""
        data, size = self._data, self.SIZE
        return [data[i * size:(i + 1) * size].hex() for i in positions]


_LOWER_HEX = re.compile("[0-9a-f]*")


#: What a cached answer is checked against: ``Database.generations`` (content generation,
#: generation), or one int that stands for both.
Generations = int | tuple[int, int]


def _current(generation: Generations, reads_user_data: bool) -> int:
    if isinstance(generation, int):
        return generation
    return generation[1] if reads_user_data else generation[0]


class _Lru:
    """Entries stamped with the generation they were computed at (see ``CountCache``)."""

    def __init__(self, size: int) -> None:
        self._entries: OrderedDict[str, tuple[bool, int, Any]] = OrderedDict()
        self._size = size

    def get(self, key: str, generation: Generations) -> Any:
        found = self._entries.get(key)
        if found is None or found[1] != _current(generation, found[0]):
            return None
        self._entries.move_to_end(key)
        return found[2]

    def put(self, key: str, generation: Generations, value: Any, reads_user_data: bool) -> None:
        self._entries[key] = (reads_user_data, _current(generation, reads_user_data), value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)


class CountCache:
    """Totals, ordered id lists (deep paging, Random) and page statements of recent queries,
    kept while the database has not been written since: paging through a large view counts
    once, not per page, and builds its statement once. An answer whose SQL reads ``user_data``
    is kept while ``Database.generation`` is unchanged (any write); any other while
    ``Database.content_generation`` is (a write of more than user data), so play-state writes
    do not make every library page count again. The key is the whole query, so the viewer's
    scope (libraries, parental rules, user) is part of it."""

    def __init__(self, size: int = 256, id_lists: int = 8) -> None:
        self._entries = _Lru(size)
        self._ids = _Lru(id_lists)
        #: the page-ids statement of a query shape as driver SQL and parameters (``_page_ids``);
        #: it holds no user data, only what the conditions read from the library
        self._sql = _Lru(size)
        self._lock = threading.Lock()

    @staticmethod
    def key(q: ItemQuery) -> str:
        """The query without its paging and order (``repr`` of it so changed, and back: a copy
        made per request cost more than the repr)."""
        kept = q.start_index, q.limit, q.sort_by, q.sort_order
        q.start_index, q.limit, q.sort_by, q.sort_order = 0, None, [], []
        try:
            return repr(q)
        finally:
            q.start_index, q.limit, q.sort_by, q.sort_order = kept

    @staticmethod
    def ids_key(q: ItemQuery) -> str:
        """The query without its paging (see ``key``)."""
        kept = q.start_index, q.limit
        q.start_index, q.limit = 0, None
        try:
            return repr(q)
        finally:
            q.start_index, q.limit = kept

    def orderings(self) -> int:
        """How many whole ordered id lists are kept (tests, benches)."""
        with self._lock:
            return len(self._ids._entries)

    def get_ids(self, key: str, generation: Generations) -> list[str] | PackedIds | None:
        with self._lock:
            found: list[str] | PackedIds | None = self._ids.get(key, generation)
            return found

    def put_ids(self, key: str, generation: Generations, ordered: list[str] | PackedIds,
                reads_user_data: bool = True) -> None:
        packed = ordered if isinstance(ordered, PackedIds) or not PackedIds.fits(ordered) else PackedIds(ordered)
        with self._lock:
            self._ids.put(key, generation, packed, reads_user_data)

    def get_sql(self, key: str, generation: Generations) -> tuple[str, tuple[Any, ...]] | None:
        with self._lock:
            found: tuple[str, tuple[Any, ...]] | None = self._sql.get(key, generation)
            return found

    def put_sql(self, key: str, generation: Generations, sql: tuple[str, tuple[Any, ...]]) -> None:
        with self._lock:
            self._sql.put(key, generation, sql, False)

    def get(self, key: str, generation: Generations) -> int | None:
        with self._lock:
            found: int | None = self._entries.get(key, generation)
            return found

    def get_value(self, key: str, generation: Generations) -> Any:
        """Another answer kept for the generation (e.g. by_name's distinct values of a kind);
        it must not depend on user data."""
        with self._lock:
            return self._entries.get(key, generation)

    def put_value(self, key: str, generation: Generations, value: Any) -> None:
        with self._lock:
            self._entries.put(key, generation, value, False)

    def put(self, key: str, generation: Generations, total: int, reads_user_data: bool = True) -> None:
        with self._lock:
            self._entries.put(key, generation, total, reads_user_data)


def _reads_user_data(s: Session, statement: Select[Any]) -> bool:
    """Whether a statement's answer depends on user data (its SQL names the table)."""
    return "user_data" in str(statement.compile(dialect=s.connection().dialect))


DEEP_PAGE = 1000  # from this startIndex on, the whole ordered id list is read once and cached


def _pick(ordered: list[str] | PackedIds, positions: list[int]) -> list[str]:
    return ordered.pick(positions) if isinstance(ordered, PackedIds) else [ordered[i] for i in positions]


def _unpaged_ids(s: Session, q: ItemQuery) -> Any:
    """The select of the query's ids in its order, without its startIndex and limit."""
    start, limit, q.start_index, q.limit = q.start_index, q.limit, 0, None
    try:
        page, _ = compile_query(s, q, [items.c.id])
    finally:
        q.start_index, q.limit = start, limit
    return page


#: ids read at a time into a whole ordered list (``_read_ordered``)
ORDERED_CHUNK = 2048


def _read_ordered(s: Session, page: Any) -> list[str] | PackedIds:
    """The select's ids, packed a chunk at a time as they are read: a 100k listing read as rows and
    a list of str made ~200k small objects at once (~15 MiB of pymalloc arenas, for a moment), and
    the objects kept from around then (caches, the fragment store's map) held several of those
    arenas in the process for its life. A list of str when an id does not fit ``PackedIds``."""
    parts: list[bytes] = []
    count = 0
    loose: list[str] | None = None
    for chunk in s.execute(page).scalars().partitions(ORDERED_CHUNK):
        if loose is None and PackedIds.fits(chunk):
            parts.append(bytes.fromhex("".join(chunk)))
            count += len(chunk)
            continue
        if loose is None:
            loose = PackedIds.joined(parts, count)[0:count]
            parts.clear()
        loose.extend(chunk)
    return loose if loose is not None else PackedIds.joined(parts, count)


def _ordered_ids(s: Session, q: ItemQuery, counts: CountCache, generation: Generations,
                 key: str | None = None) -> list[str] | PackedIds:
    """The query's whole ordered id list (startIndex and limit ignored), from the cache or read
    once (from the covering index) and cached with its total for this write generation."""
    key = key or counts.ids_key(q)
    ordered = counts.get_ids(key, generation)
    if ordered is None:
        page = _unpaged_ids(s, q)
        ordered = _read_ordered(s, page)
        reads_user_data = _reads_user_data(s, page)
        counts.put_ids(key, generation, ordered, reads_user_data)
        counts.put(counts.key(q), generation, len(ordered), reads_user_data)
        ordered = counts.get_ids(key, generation) or ordered
    return ordered


T = TypeVar("T")
#: What ``run_query_with`` reads a page's ids into (``get_rows``: the ItemRows by id), or a list
#: of every id's entry in the page's order (``StoreUse.page``: a warm page's stored rows).
Fetch = Callable[["Session", list[str]], Mapping[str, T] | list[T]]


def _in_order(found: Mapping[str, T] | list[T], page_ids: list[str]) -> list[T]:
    """The page's entries in its order (``Fetch``'s answer: a list is that already)."""
    if found.__class__ is list:
        return found
    return [found[i] for i in page_ids if i in found]  # type: ignore[call-overload]


def _random_page(s: Session, q: ItemQuery, counts: CountCache, generation: Generations,
                 fetch: Fetch[T]) -> tuple[list[T], int]:
    """sortBy=Random: ``limit`` items drawn uniformly from the query's scope, as ORDER BY random()
    with OFFSET/LIMIT would give, but from the scope's cached id list (in SortName order, shared
    with that listing) instead of sorting every row of the scope on every request."""
    kept = q.sort_by, q.sort_order  # (the query itself so ordered, and back: a copy cost more)
    q.sort_by, q.sort_order = ["SortName"], ["Ascending"]
    try:
        ordered = _ordered_ids(s, q, counts, generation)
    finally:
        q.sort_by, q.sort_order = kept
    total = len(ordered)
    wanted = max(0, total - q.start_index)
    if q.limit is not None:
        wanted = min(wanted, q.limit)
    page_ids = _pick(ordered, random.sample(range(total), wanted))
    rows = _in_order(fetch(s, page_ids), page_ids)
    return rows, total if q.enable_total_record_count else q.start_index + len(rows)


def run_query(s: Session, q: ItemQuery, counts: CountCache | None = None,
              generation: Generations = 0) -> tuple[list[ItemRow], int]:
    """The page of item rows and the total (or the page's end when the count is off).

    Two steps: the page's ids from the (covering) index, then those rows by primary key, so
    skipping startIndex rows never reads the wide rows. Deep pages of a cacheable query read the
    query's ordered id list once and slice it (so does any page of it while the list is cached);
    sortBy=Random draws from the scope's list (``_random_page``)."""
    return run_query_with(s, q, counts, generation, get_rows)


def run_query_with(s: Session, q: ItemQuery, counts: CountCache | None, generation: Generations,
                   fetch: Fetch[T]) -> tuple[list[T], int]:
    """``run_query`` with the second step given: ``fetch(session, page ids)`` maps the ids to
    what the caller wants of each item (``ItemService.query_reply``: a stored fragment of the
    current epoch, else the row); ids it leaves out are left out of the page."""
    if q.adjacent_to:
        near, n = _adjacent(s, q)
        near_ids = [r.id for r in near]
        return _in_order(fetch(s, near_ids), near_ids), n
    _check_paging(q)
    keys = [k for k in q.sort_by if k]
    if counts is not None and keys and keys[0] == "Random":
        return _random_page(s, q, counts, generation, fetch)
    cacheable = counts is not None and "Random" not in keys
    if counts is not None and cacheable:
        key = counts.ids_key(q)
        ordered = _ordered_ids(s, q, counts, generation, key) if q.start_index >= DEEP_PAGE \
            else counts.get_ids(key, generation)
        if ordered is not None:
            end = None if q.limit is None else q.start_index + q.limit
            page_ids = ordered[q.start_index:end]
            rows = _in_order(fetch(s, page_ids), page_ids)
            return rows, len(ordered) if q.enable_total_record_count else q.start_index + len(rows)
    by_statement = _page_ids(s, q, counts, generation) if counts is not None and cacheable else None
    count = None
    if by_statement is None:
        page, count = compile_query(s, q, [items.c.id])
        page_ids = [r[0] for r in s.execute(page).all()]
    else:
        page_ids = by_statement
    rows = _in_order(fetch(s, page_ids), page_ids)
    if q.enable_total_record_count:
        if (q.limit is None or len(rows) < q.limit) and (rows or q.start_index == 0):
            total = q.start_index + len(rows)
        elif counts is not None and cacheable:
            key = counts.key(q)
            cached_total = counts.get(key, generation)
            if cached_total is not None:
                total = cached_total
            else:
                if count is None:
                    _, count = compile_query(s, q, [items.c.id])
                total = s.execute(count).scalar() or 0 if count is not None else 0
                counts.put(key, generation, total, count is None or _reads_user_data(s, count))
        else:
            if count is None:
                _, count = compile_query(s, q, [items.c.id])
            total = s.execute(count).scalar() or 0 if count is not None else 0
    else:
        total = q.start_index + len(rows)
    return rows, total


def _page_ids(s: Session, q: ItemQuery, counts: CountCache, generation: Generations) -> list[str] | None:
    """The page's ids by the query shape's statement, built once per write generation (building
    the select and its conditions costs more than SQLite walking the index): SQLAlchemy compiles
    it to driver SQL with its parameters bound and processed, LIMIT/OFFSET added per page. None
    when the driver's parameters are not positional (the caller builds the statement). Parental
    conditions list the library's ratings (``_distinct_ratings``, read for the content generation,
    never older than the stamp the statement is kept under): kept the same way, the rules are in
    the key."""
    conn = s.connection()
    if conn.dialect.paramstyle != "qmark":
        return None
    key = counts.ids_key(q)
    cached = counts.get_sql(key, generation)
    if cached is None:
        shape = _parent_shape(s, q, counts)
        template = counts.get_sql(shape[0], generation) if shape is not None else None
        if template is not None and shape is not None:  # (the shape's statement, this parent's id bound)
            parent = shape[1]
            cached = (template[0], tuple(parent if v is _THE_PARENT else v for v in template[1]))
        else:
            cached = _driver_sql(conn.dialect, _unpaged_ids(s, q))
            if cached is None:
                return None
            if shape is not None:
                at = [i for i, v in enumerate(cached[1]) if v == shape[1]]
                if len(at) == 1:  # (the parent's one condition; anything else: no template)
                    marked = list(cached[1])
                    marked[at[0]] = _THE_PARENT
                    counts.put_sql(shape[0], generation, (cached[0], tuple(marked)))
        counts.put_sql(key, generation, cached)
    sql, bound = cached
    paging = (-1 if q.limit is None else q.limit, q.start_index)
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql + " LIMIT ? OFFSET ?", (*bound, *paging))
        return [r[0] for r in cursor.fetchall()]
    finally:
        cursor.close()


#: where a shape's statement (``_parent_shape``) binds the parent's id
_THE_PARENT = object()
#: parent types whose recursive scope (``_parent_scope``) is one condition binding the parent's id
_BOUND_PARENTS = frozenset(("Series", "Season", "MusicAlbum"))


def _parent_shape(s: Session, q: ItemQuery, counts: CountCache) -> tuple[str, str] | None:
    """(key of the query's shape, parent id) for a query whose statement is its shape's with only
    the parent's id bound differently: the episodes of any series (any season, an album's tracks,
    a folder's children) compile to one statement. ``_parent_scope`` builds the condition from
    the parent's type alone for these: a series, season or album when recursive, any item but a
    collection or playlist when not. None for any other query, or one whose other values name the
    parent too. Building and compiling a page's select cost 3-4 ms; the parent's type, one probe."""
    parent = q.parent_id
    if parent is None or parent == ROOT_FOLDER_ID:
        return None
    found = driver_rows(s, "SELECT type FROM items WHERE id IN ", [parent])
    kind = found[0][0] if found else None
    if kind is None or (kind not in _BOUND_PARENTS if q.recursive else kind in ("BoxSet", "Playlist")):
        return None
    shape = "shape:" + counts.ids_key(replace(q, parent_id=f"<{kind}>"))
    return None if parent in shape else (shape, parent)


def _driver_sql(dialect: Any, statement: Any) -> tuple[str, tuple[Any, ...]] | None:
    """The statement as driver SQL with its parameters bound and processed (expanding IN lists
    rendered), for positional drivers; None when a parameter has no value to bind."""
    compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    values = compiled.construct_params()
    names = compiled.positiontup or []
    if any(name not in values for name in names):
        return None
    processors: Any = compiled._bind_processors  # name -> the type's bind processor
    return compiled.string, tuple(processors[n](values[n]) if n in processors else values[n] for n in names)


def parental_where(s: Session, rules: ParentalRules) -> tuple[str, tuple[Any, ...]] | None:
    """``parental_conditions`` as driver SQL over ``items`` (unaliased) and its bound values,
    made once per ``parental_key`` and dialect (a statement on the DB-API cursor can carry the
    rules without building and compiling a select per request); ``("", ())`` when they hide
    nothing; None for a driver whose parameters are not positional."""
    dialect = s.connection().dialect
    if dialect.paramstyle != "qmark":
        return None
    return _parental_where(parental_key(s, rules), dialect)


_WHERE = "\nWHERE "


@lru_cache(maxsize=64)
def _parental_where(key: tuple[ParentalRules, tuple[str, ...]], dialect: Any) -> tuple[str, tuple[Any, ...]] | None:
    conds = conditions_for(key)
    if not conds:
        return "", ()
    found = _driver_sql(dialect, select(items.c.id).where(and_(*conds)))
    if found is None or _WHERE not in found[0]:
        return None
    sql, bound = found
    return sql[sql.index(_WHERE) + len(_WHERE):], bound


_ITEM_COLUMNS = tuple(items.columns.keys())
_DATE_COLUMNS = frozenset(name for name, column in items.columns.items()
                          if getattr(column.type, "python_type", None) is datetime
                          or column.type.__class__.__name__ == "UTCDateTime")
_SELECT_ROWS = "SELECT " + ", ".join(f'"{c}"' for c in _ITEM_COLUMNS) + " FROM items WHERE id IN "


_fromisoformat = datetime.fromisoformat


def _to_datetime(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


_DATE_INDEXES = tuple(i for i, name in enumerate(_ITEM_COLUMNS) if name in _DATE_COLUMNS)


class ItemRow(NamedTuple):
    """One ``items`` row read without SQLAlchemy's per-value result processing (the hot path of
    every page): a named tuple with attribute access like a Row, datetimes parsed, booleans as
    ints. The fields are the table's columns in their order (checked below and in
    tests/library/query/test_item_row.py): a new column in ``Item`` needs its field here."""

    id: str
    type: str
    media_type: str
    is_folder: int  # 0/1 on SQLite, a bool on PostgreSQL
    library_id: str | None
    parent_id: str | None
    path: str | None
    name: str
    sort_name: str
    forced_sort_name: str | None
    original_title: str | None
    overview: str | None
    tagline: str | None
    official_rating: str | None
    community_rating: float | None
    critic_rating: float | None
    production_year: int | None
    premiere_date: datetime | None
    end_date: datetime | None
    date_created: datetime
    date_modified: datetime | None
    run_time_ticks: int | None
    size: int | None
    container: str | None
    bitrate: int | None
    width: int | None
    height: int | None
    video_type: str | None
    extra_type: str | None
    owner_id: str | None
    index_number: int | None
    index_number_end: int | None
    parent_index_number: int | None
    series_id: str | None
    series_name: str | None
    season_id: str | None
    season_name: str | None
    album_id: str | None
    album: str | None
    genres_json: str
    studios_json: str
    tags_json: str
    artists_json: str
    album_artists_json: str
    provider_ids_json: str
    media_streams_json: str
    chapters_json: str
    images_json: str
    lyrics_path: str | None
    file_size: int | None
    file_mtime: float | None
    is_locked: int  # 0/1 on SQLite, a bool on PostgreSQL
    locked_fields_json: str
    is_virtual: int  # 0/1 on SQLite, a bool on PostgreSQL
    status: str | None
    scan_signature: str | None
    fingerprint: str | None

    @classmethod
    def from_db(cls, values: Sequence[Any]) -> ItemRow:
        """From the driver's values in column order (``_SELECT_ROWS``, or ``select(items)``)."""
        out = list(values)
        for i in _DATE_INDEXES:
            value = out[i]
            if value.__class__ is str:
                try:  # SQLite's naive UTC text; parsing it with the offset is 8x cheaper than .replace()
                    out[i] = _fromisoformat(value + "+00:00")
                except ValueError:  # text that states its own offset
                    out[i] = _to_datetime(value)
            elif value is not None:
                out[i] = _to_datetime(value)
        return cls._make(out)


@lru_cache(maxsize=64)
def narrow_select(columns: tuple[str, ...] | None) -> str:
    """``SELECT <every column of items, in order>`` where a column not in ``columns`` is read as
    NULL (its field None in ``ItemRow.from_db``): for a reader that knows the columns its use of
    the rows needs (``dto.row_columns``; such a row is never the whole item, and no digest of it
    is stored). ``columns`` None: every column."""
    keep = set(_ITEM_COLUMNS if columns is None else columns)
    unknown = keep - set(_ITEM_COLUMNS)
    if unknown:
        raise ValueError(f"not columns of items: {sorted(unknown)}")
    return "SELECT " + ", ".join(f'"{c}"' if c in keep else "NULL" for c in _ITEM_COLUMNS) + " FROM items"


def item_rows(result: Iterable[Sequence[Any]]) -> list[ItemRow]:
    """The ``ItemRow``s of a ``select(items)`` result (SQLAlchemy has converted the values)."""
    return [ItemRow._make(r) for r in result]


if ItemRow._fields != _ITEM_COLUMNS:
    raise RuntimeError("ItemRow's fields differ from the items table's columns: "
                       f"{set(ItemRow._fields) ^ set(_ITEM_COLUMNS)} (server/library/catalog/query.py)")


_MARKERS = {"qmark": "?", "format": "%s", "pyformat": "%s"}


def _driver_connection(s: Session | LeanSession) -> tuple[Any, str] | None:
    """``LeanSession.driver_connection`` (a read of ``Database.read_driver``), else None."""
    return s.driver_connection() if type(s) is LeanSession else None


def driver_rows(s: Session, head: str, values: Sequence[Any], tail: str = "",
                before: Sequence[Any] = ()) -> Sequence[Sequence[Any]] | None:
    """``head (?, ?, ...) tail`` with one marker per value, run on the session's DB-API cursor:
    no statement building, caching or per-value result processing, which at 100 values cost more
    than SQLite answering. The rows as the driver gives them; None for a driver whose parameter
    style is not positional (the caller then builds the statement with SQLAlchemy). In
    ``Database.read_driver``, on the read's pooled connection while it made no session."""
    driver = _driver_connection(s)
    if driver is None:
        conn = s.connection()
        dbapi, style = conn.connection.dbapi_connection, conn.dialect.paramstyle
    else:
        dbapi, style = driver
    marker = _MARKERS.get(style)
    if marker is None:
        return None
    sql = head + "(" + ", ".join([marker] * len(values)) + ")" + tail
    cursor = dbapi.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql, (*before, *values))
        found: Sequence[Sequence[Any]] = cursor.fetchall()
        return found
    finally:
        cursor.close()


def get_rows(s: Session, id_list: list[str]) -> dict[str, ItemRow]:
    """Rows by id in one query (per 500 ids)."""
    if not id_list:
        return {}
    out: dict[str, ItemRow] = {}
    from_db = ItemRow.from_db
    for start in range(0, len(id_list), 500):
        chunk = list(dict.fromkeys(id_list[start:start + 500]))
        found = driver_rows(s, _SELECT_ROWS, chunk)
        if found is None:  # an unusual driver: let SQLAlchemy render the statement
            found = list(s.connection().execute(select(*items.columns).where(items.c.id.in_(chunk))).all())
        for values in found:
            row = from_db(values)
            out[row.id] = row
    return out


class UserDataRow(NamedTuple):
    """One ``user_data`` row as the item paths read it (``get_user_data``): the table's columns in
    their order, booleans as bool, the date as SQLAlchemy gives it (naive, UTC)."""

    user_id: str
    item_id: str
    played: bool
    play_count: int
    is_favorite: bool
    playback_position_ticks: int
    last_played_date: datetime | None
    rating: float | None
    likes: bool | None
    audio_stream_index: int | None
    subtitle_stream_index: int | None


_UD_COLUMNS = tuple(user_data.columns.keys())
if UserDataRow._fields != _UD_COLUMNS:
    raise RuntimeError("UserDataRow's fields differ from the user_data table's columns: "
                       f"{set(UserDataRow._fields) ^ set(_UD_COLUMNS)} (server/library/catalog/query.py)")
_SELECT_USER_DATA = ("SELECT " + ", ".join(f'"{c}"' for c in _UD_COLUMNS)
                     + " FROM user_data WHERE user_id = {marker} AND item_id IN ")


def _user_data_row(v: Sequence[Any]) -> UserDataRow:
    last_played = v[6]
    if isinstance(last_played, str):
        last_played = datetime.fromisoformat(last_played)
    return UserDataRow(v[0], v[1], bool(v[2]), v[3], bool(v[4]), v[5], last_played, v[7],
                       None if v[8] is None else bool(v[8]), v[9], v[10])


class KeptUserData:
    """Users' whole user data, kept while ``Database.user_data_stamp`` is unchanged (no content
    write, no write of this user's data or of anyone's undeclared; in a reader process no write at
    all, the owner's ``generation``), so a page of stored fragments reads none: at 100k items a page's statement on a pooled connection cost ~0.3 ms of
    CPU, a lookup per id a few microseconds. Taken only for a user who asked ``AFTER`` pages at
    one generation (a user whose writes come between every page, as a playing client's do, is
    read per page as before), and only when they have at most ``ROWS`` rows (~400 B each kept);
    ``USERS`` users at most, least recently used out."""

    ROWS = 10_000
    USERS = 2
    AFTER = 3

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: user -> (user_data_stamp, asks at it, their rows by item id: None until read, or too many)
        self._users: OrderedDict[str, tuple[Hashable, int, dict[str, UserDataRow] | None]] = OrderedDict()
        self.loads = 0  # whole reads (tests, benchmarks)

    def rows(self, bind: Engine, user_id: str, item_ids: Sequence[str],
             generation: Hashable) -> dict[str, UserDataRow] | None:
        """The user's rows of ``item_ids`` as of ``generation`` (``Database.user_data_stamp``, taken
        before the call), or None (not kept: read them per page)."""
        with self._lock:
            entry = self._users.get(user_id)
            if entry is None or entry[0] != generation:
                entry = (generation, 0, None)
            asks = entry[1] + 1
            kept = entry[2]
            self._users[user_id] = (generation, asks, kept)
            self._users.move_to_end(user_id)
            while len(self._users) > self.USERS:
                self._users.popitem(last=False)
        if kept is None:
            if asks != self.AFTER:
                return None
            kept = _pooled_rows_of(bind, user_id, self.ROWS + 1)
            self.loads += 1
            if kept is None or len(kept) > self.ROWS:
                return None
            with self._lock:
                entry = self._users.get(user_id)
                if entry is not None and entry[0] == generation:
                    self._users[user_id] = (generation, entry[1], kept)
        get = kept.get
        return {i: row for i in item_ids if (row := get(i)) is not None}


_KEPT_USER_DATA: weakref.WeakKeyDictionary[Engine, KeptUserData] = weakref.WeakKeyDictionary()


def kept_user_data(bind: Engine) -> KeptUserData:
    """The ``KeptUserData`` of an engine (of a ``Database``)."""
    found = _KEPT_USER_DATA.get(bind)
    if found is None:
        found = _KEPT_USER_DATA.setdefault(bind, KeptUserData())
    return found


def _pooled_rows_of(bind: Engine, user_id: str, limit: int) -> dict[str, UserDataRow] | None:
    """Up to ``limit`` user data rows of a user on a pooled DB-API connection (None: a driver whose
    parameters are not positional)."""
    marker = _MARKERS.get(bind.dialect.paramstyle)
    if marker is None:
        return None
    head = _SELECT_USER_DATA.split(" AND item_id IN ")[0].format(marker=marker)
    raw = bind.raw_connection()
    try:
        cursor = raw.cursor()
        try:
            cursor.execute(f"{head} LIMIT {int(limit)}", (user_id,))
            return {row.item_id: row for row in map(_user_data_row, cursor.fetchall())}
        finally:
            cursor.close()
    finally:
        raw.close()


def get_user_data(s: Session, user_id: str, item_ids: Sequence[str], pooled: bool = False) -> dict[str, UserDataRow]:
    """The user's data rows of these items, by item id, in one query (per 500 ids).

    ``pooled`` (a reply made of stored fragments, e.g. a GetItems page or a filled InstantMix):
    the user's kept rows (``KeptUserData``) when they are kept; else, when the session has used
    no connection yet (the page's only statement), read on a connection taken from the pool for
    the statement, not through the session, whose transaction (begun for this one statement,
    then rolled back and closed) cost more than SQLite answering. (A session that did begin a
    transaction, a mix's: its snapshot may be older than the kept rows, as it may be older than
    a pooled read's; user data is read as it is now either way.)"""
    if pooled:
        database = s.info.get("database")
        bind = s.get_bind()
        if database is not None and isinstance(bind, Engine):  # (generation before the read)
            kept = kept_user_data(bind).rows(bind, user_id, item_ids, database.user_data_stamp(user_id))
            if kept is not None:
                return kept
        if not s.in_transaction():
            found_pooled = _pooled_user_data(s, user_id, item_ids)
            if found_pooled is not None:
                return found_pooled
    out: dict[str, UserDataRow] = {}
    driver = _driver_connection(s)
    marker = _MARKERS.get(s.connection().dialect.paramstyle if driver is None else driver[1])
    ids_list = list(dict.fromkeys(item_ids))
    for start in range(0, len(ids_list), 500):
        chunk = ids_list[start:start + 500]
        found = None if marker is None else driver_rows(s, _SELECT_USER_DATA.format(marker=marker), chunk,
                                                        before=(user_id,))
        if found is None:
            found = list(s.connection().execute(select(*user_data.columns).where(
                user_data.c.user_id == user_id, user_data.c.item_id.in_(chunk))).all())
        for values in found:
            row = _user_data_row(values)
            out[row.item_id] = row
    return out


def _pooled_user_data(s: Session, user_id: str, item_ids: Sequence[str]) -> dict[str, UserDataRow] | None:
    """``get_user_data`` on a pooled DB-API connection (None: no engine known, or a driver whose
    parameters are not positional)."""
    bind = s.get_bind()
    marker = _MARKERS.get(bind.dialect.paramstyle)
    if marker is None or not isinstance(bind, Engine):
        return None
    out: dict[str, UserDataRow] = {}
    ids_list = list(dict.fromkeys(item_ids))
    raw = bind.raw_connection()  # (returned to the pool, reset by a rollback, on close)
    try:
        cursor = raw.cursor()
        try:
            head = _SELECT_USER_DATA.format(marker=marker)
            for start in range(0, len(ids_list), 500):
                chunk = ids_list[start:start + 500]
                cursor.execute(head + "(" + ", ".join([marker] * len(chunk)) + ")", (user_id, *chunk))
                for values in cursor.fetchall():
                    row = _user_data_row(values)
                    out[row.item_id] = row
        finally:
            cursor.close()
    finally:
        raw.close()
    return out


def get_row(s: Session, item_id: str) -> ItemRow | None:
    return get_rows(s, [item_id]).get(item_id)


def count_by_type(s: Session, q: ItemQuery) -> dict[str, int]:
    """Rows per item type in a query's scope. MusicArtist rows are counted although recursive
    listings leave them out (they are the artists of the user's music libraries)."""
    q.include_types = []
    q.include_structural = True
    source, conds = scope(s, q)
    conds.append(items.c.type != "CollectionFolder")
    # grouped by (library_id, type): the order of the covering (library_id, type, owner_id, ...)
    # index, so the count never reads the wide rows
    # (a single pass over the index: with a small page cache, see single_pass; the desktop app
    # asks the counts at every start)
    with single_pass(s):
        rows = s.execute(select(items.c.type, func.count()).select_from(source).where(*conds)
                         .group_by(items.c.library_id, items.c.type)).all()
    out: dict[str, int] = {}
    for kind, n in rows:
        out[kind] = out.get(kind, 0) + n
    return out


def filter_values(s: Session, q: ItemQuery) -> dict[str, list]:
    """Distinct genres, tags, official ratings and years of the items in a query's scope."""
    source, conds = scope(s, q)
    v = item_values.alias("fv")
    out: dict[str, list] = {"Genre": [], "Tag": []}
    rows = s.execute(select(v.c.kind, func.min(v.c.value)).select_from(source.join(v, v.c.item_id == items.c.id))
                     .where(*conds, v.c.kind.in_(("Genre", "Tag")))
                     .group_by(v.c.kind, v.c.clean_value).order_by(v.c.kind, v.c.clean_value)).all()
    for kind, value in rows:
        if value:
            out[kind].append(value)
    pairs = s.execute(select(items.c.official_rating, items.c.production_year).select_from(source)
                      .where(*conds).group_by(items.c.official_rating, items.c.production_year)).all()
    out["OfficialRating"] = sorted({r for r, _ in pairs if r})
    out["Year"] = sorted({y for _, y in pairs if y is not None})
    return out

