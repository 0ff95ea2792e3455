"""Related items: similar items, instant mixes, movie recommendations, suggestions and theme
media. Scoring happens in SQL over ``item_values`` and ``item_people`` (indexed by kind and
value), never by loading the library into Python.

- Similar: items of the seed's kind (movies and trailers for a movie, series for a series,
  albums for an album, artists for an artist) ranked by shared genres (10 each), people (5;
  directors 8), album artists (6), artists (4), studios (3) and tags (2).
- Instant mix: audio tracks sharing a genre or an artist with the seed (a song, album, artist,
  genre or playlist), in random order, the seed song first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, case, func, literal, or_, select, true, union_all
from sqlalchemy.orm import Session

from server.db.handles import item_people, item_values, items, user_data
from server.db.handles import playlist_entries as entries
from server.db.tables import Person
from server.errors import NotFoundError
from server.library.catalog.dto import DtoOptions, build_dtos
from server.library.catalog.items import Viewer
from server.library.catalog.query import ByNameIndex, ItemQuery, ItemRow, get_row, get_rows, item_rows
from server.wire import models as w

if TYPE_CHECKING:
    from server.db.database import Database
    from server.library.catalog.items import ItemService


INSTANT_MIX_LIMIT = 200
_WEIGHTS = {"Genre": 10, "AlbumArtist": 6, "Artist": 4, "Studio": 3, "Tag": 2}
_SIMILAR_TYPES = {"Movie": ("Movie", "Trailer"), "Trailer": ("Movie", "Trailer"), "Series": ("Series",),
                  "Episode": ("Series",), "Season": ("Series",), "MusicAlbum": ("MusicAlbum",),
                  "MusicArtist": ("MusicArtist",), "Audio": ("Audio",)}


@dataclass
class Seed:
    """What a similarity or mix starts from: values (clean, by kind), people and the row."""

    row: ItemRow | _Pseudo | None
    values: dict[str, set[str]] = field(default_factory=dict)
    person_ids: set[str] = field(default_factory=set)

    def add(self, kind: str, value: str) -> None:
        if value:
            self.values.setdefault(kind, set()).add(value.strip().lower())


def _values_of(s: Session, item_ids: list[str] | Any, kinds: tuple[str, ...]) -> list[tuple[str, str]]:
    q = select(item_values.c.kind, item_values.c.clean_value).where(
        item_values.c.item_id.in_(item_ids), item_values.c.kind.in_(kinds)).distinct()
    return [(r[0], r[1]) for r in s.execute(q).all()]


def _artist_tracks(name: str):
    return select(item_values.c.item_id).where(item_values.c.kind.in_(("Artist", "AlbumArtist")),
                                               item_values.c.clean_value == name.strip().lower())


def seed_of(s: Session, row: ItemRow | _Pseudo, kinds: tuple[str, ...] = ("Genre", "Studio", "Tag", "Artist", "AlbumArtist")) -> Seed:
    seed = Seed(row)
    if row.type == "MusicArtist":
        for kind, value in _values_of(s, _artist_tracks(row.name), ("Genre",)):
            seed.add(kind, value)
        seed.add("Artist", row.name)
        return seed
    if row.type in ("Season", "Episode") and row.series_id:
        source = [row.series_id]
    elif row.type == "Playlist":
        source = select(entries.c.item_id).where(entries.c.playlist_id == row.id)
    else:
        source = [row.id]
    for kind, value in _values_of(s, source, kinds):
        seed.add(kind, value)
    people_source = source
    seed.person_ids = {r[0] for r in s.execute(select(item_people.c.person_id).where(
        item_people.c.item_id.in_(people_source))).all()}
    return seed


def _value_score(seed: Seed):
    """(item_id, score) rows for items sharing the seed's values and people."""
    parts = []
    v = item_values
    for kind, weight in _WEIGHTS.items():
        wanted = sorted(seed.values.get(kind, ()))
        if wanted:
            parts.append(select(v.c.item_id.label("item_id"), literal(weight).label("score"))
                         .where(v.c.kind == kind, v.c.clean_value.in_(wanted)))
    if seed.person_ids:
        p = item_people
        weight = case((p.c.kind == "Director", 8), else_=5)
        parts.append(select(p.c.item_id.label("item_id"), weight.label("score"))
                     .where(p.c.person_id.in_(sorted(seed.person_ids))))
    if not parts:
        return None
    u = union_all(*parts).subquery("matches")
    return select(u.c.item_id, func.sum(u.c.score).label("score")).group_by(u.c.item_id).subquery("scores")


def _rows_in_order(s: Session, ordered_ids: list[str]) -> list[ItemRow]:
    found = get_rows(s, ordered_ids)
    return [found[i] for i in ordered_ids if i in found]


def similar_rows(s: Session, seed: Seed, types: tuple[str, ...], limit: int | None, exclude: list[str],
                 allowed: frozenset[str] | None, exclude_artists: list[str],
                 names: ByNameIndex | None = None) -> list[ItemRow]:
    """Best-scored items of ``types``; ties in random order (as Jellyfin). The scores are
    summed over ``item_values`` alone (covering index ix_item_values_listing); the best few
    hundred are then checked against ``items`` (type, extras, libraries): a large library
    costs one grouped index scan."""
    row = seed.row
    assert row is not None, "a similarity seed has a row (only mixes start from a genre name)"
    c = items.c
    if row.type == "MusicArtist":
        return _similar_artists(s, seed, limit, exclude, allowed)
    scores = _value_score(seed)
    if scores is None:
        return []
    wanted = limit if limit is not None else 500
    best = (select(scores.c.item_id, scores.c.score).where(scores.c.item_id != row.id)
            .order_by(scores.c.score.desc(), func.random()).limit(wanted * 10 + 200).subquery("best"))
    q = (select(c.id).select_from(best.join(items, c.id == best.c.item_id))
         .where(c.type.in_(types), c.owner_id.is_(None))
         .order_by(best.c.score.desc()))
    if exclude:
        q = q.where(c.id.not_in(exclude))
    if allowed is not None:
        q = q.where(c.library_id.in_(sorted(allowed)))
    if exclude_artists:
        excluded = [n.lower() for n in (names or ByNameIndex()).names(s, exclude_artists, ("MusicArtist",))]
        if excluded:
            q = q.where(c.id.not_in(select(item_values.c.item_id).where(
                item_values.c.kind.in_(("Artist", "AlbumArtist")), item_values.c.clean_value.in_(excluded))))
    if limit is not None:
        q = q.limit(limit)
    return _rows_in_order(s, [r[0] for r in s.execute(q).all()])


def _similar_artists(s: Session, seed: Seed, limit: int | None, exclude: list[str],
                     allowed: frozenset[str] | None) -> list[ItemRow]:
    genres = sorted(seed.values.get("Genre", ()))
    row = seed.row
    if not genres or row is None:
        return []
    a, g = item_values.alias("a"), item_values.alias("g")
    shared = (select(a.c.clean_value.label("artist"), func.count(func.distinct(g.c.clean_value)).label("score"))
              .select_from(a.join(g, and_(g.c.item_id == a.c.item_id, g.c.kind == "Genre")))
              .where(a.c.kind.in_(("Artist", "AlbumArtist")), g.c.clean_value.in_(genres),
                     a.c.clean_value != row.name.strip().lower())
              .group_by(a.c.clean_value).subquery("shared"))
    c = items.c
    q = (select(items).select_from(items.join(shared, shared.c.artist == func.lower(c.name)))
         .where(c.type == "MusicArtist", c.id != row.id, c.id.not_in(exclude))
         .order_by(shared.c.score.desc(), c.sort_name, c.id))
    if allowed is not None:
        q = q.where(c.library_id.in_(sorted(allowed)))
    if limit is not None:
        q = q.limit(limit)
    return item_rows(s.execute(q).all())


def mix_rows(s: Session, seed: Seed, limit: int, allowed: frozenset[str] | None) -> list[ItemRow]:
    """Audio sharing a genre or an artist with the seed, in random order, the seed song first.
    Candidates come from ``item_values`` alone (covering index) in random order; only a few
    times ``limit`` of them are checked against ``items``."""
    genres = sorted(seed.values.get("Genre", ()))
    artists = sorted(seed.values.get("Artist", set()) | seed.values.get("AlbumArtist", set()))
    v = item_values
    conds = []
    if genres:
        conds.append(and_(v.c.kind == "Genre", v.c.clean_value.in_(genres)))
    if artists:
        conds.append(and_(v.c.kind.in_(("Artist", "AlbumArtist")), v.c.clean_value.in_(artists)))
    if not conds:
        return []
    # No GROUP BY/DISTINCT: grouping sorted every candidate (thousands for an artist's genres)
    # before the random order; ORDER BY random() LIMIT keeps only a bounded heap. An item matching
    # two conditions may be drawn twice: duplicates are dropped below, keeping the first draw.
    picked = (select(v.c.item_id).where(or_(*conds)).order_by(func.random())
              .limit(limit * 4 + 100).subquery("picked"))
    c = items.c
    q = select(c.id).select_from(picked.join(items, c.id == picked.c.item_id)).where(
        c.type == "Audio", c.owner_id.is_(None))
    if allowed is not None:
        q = q.where(c.library_id.in_(sorted(allowed)))
    found = list(dict.fromkeys(r[0] for r in s.execute(q).all()))[:limit]
    first = seed.row.id if seed.row is not None and seed.row.type == "Audio" else None
    if first is not None:
        found = [first, *(i for i in found if i != first)][:limit]
    return _rows_in_order(s, found)


class RelatedService:
    def __init__(self, db: Database, items: ItemService) -> None:
        self.db = db
        self.items = items

    async def _dtos(self, rows: list[ItemRow], opts: DtoOptions) -> w.BaseItemDtoQueryResult:
        dtos = await self.items.dtos(rows, opts)
        return w.BaseItemDtoQueryResult(Items=dtos, TotalRecordCount=len(dtos), StartIndex=0)

    async def similar(self, item_id: str, viewer: Viewer, opts: DtoOptions, *, limit: int | None,
                      exclude_artist_ids: list[str], kinds: tuple[str, ...] | None = None) -> w.BaseItemDtoQueryResult:
        row = await self._row_or_artist(item_id, viewer)
        types = kinds or _SIMILAR_TYPES.get(row.type, (row.type,))
        allowed = viewer.allowed_library_ids

        def read(s: Session) -> list[ItemRow]:
            return similar_rows(s, seed_of(s, row), types, limit, [], allowed, exclude_artist_ids,
                                self.items.by_name)

        return await self._dtos(await self.db.read(read), opts)

    async def _row_or_artist(self, item_id: str, viewer: Viewer) -> ItemRow:
        """An item row; a by-name artist id resolves to its MusicArtist row."""
        return await self.items.row(item_id, viewer)

    # -- instant mix ------------------------------------------------------------------------

    async def instant_mix(self, viewer: Viewer, opts: DtoOptions, limit: int | None, *, item_id: str | None = None,
                          genre_id: str | None = None, genre_name: str | None = None) -> w.BaseItemDtoQueryResult:
        limit = INSTANT_MIX_LIMIT if limit is None else min(limit, 10_000)
        allowed = viewer.allowed_library_ids
        row: ItemRow | _Pseudo | None = None
        if item_id is not None:
            row = await self._mix_seed_row(item_id, viewer)
        elif genre_id is not None:
            found = await self.db.read(lambda s: self.items.by_name.lookup(s, genre_id))
            if found is None or found[0] not in ("Genre", "MusicGenre"):
                raise NotFoundError("Genre not found.")
            genre_name = found[1]

        def read(s: Session) -> list[ItemRow]:
            if row is not None and row.type == "MusicGenre":
                seed = Seed(None)
                seed.add("Genre", row.name)
            elif row is not None:
                seed = seed_of(s, row, ("Genre", "Artist", "AlbumArtist"))
                if row.type == "MusicArtist":
                    seed.add("Artist", row.name)
            else:
                seed = Seed(None)
                seed.add("Genre", genre_name or "")
            return mix_rows(s, seed, limit, allowed)

        return await self._dtos(await self.db.read(read), opts)

    async def _mix_seed_row(self, item_id: str, viewer: Viewer) -> ItemRow | _Pseudo:
        key = item_id
        try:
            return await self.items.row(key, viewer)
        except NotFoundError:
            found = await self.db.read(lambda s: self.items.by_name.lookup(s, key))
            if found is None:
                raise
            kind, name = found
            if kind == "MusicArtist":
                return _Pseudo(id=key, type="MusicArtist", name=name)
            if kind in ("Genre", "MusicGenre"):
                return _Pseudo(id=key, type="MusicGenre", name=name)
            raise

    # -- recommendations and suggestions ----------------------------------------------------

    async def movie_recommendations(self, viewer: Viewer, opts: DtoOptions, parent_id: str | None,
                                    category_limit: int, item_limit: int) -> list[w.RecommendationDto]:
        if viewer.user_id is None:
            return []
        user_id, allowed = viewer.user_id, viewer.allowed_library_ids
        server_id = self.items.server_id

        def read(s: Session) -> list[w.RecommendationDto]:
            c = items.c
            base = (select(items).select_from(items.join(user_data, and_(user_data.c.item_id == c.id,
                                                                          user_data.c.user_id == user_id)))
                    .where(c.type == "Movie", c.owner_id.is_(None)))
            if parent_id:
                base = base.where(c.library_id == parent_id)
            if allowed is not None:
                base = base.where(c.library_id.in_(sorted(allowed)))
            played_ids = select(user_data.c.item_id).where(user_data.c.user_id == user_id, user_data.c.played == true())
            recent = item_rows(s.execute(base.where(user_data.c.played == true())
                                    .order_by(user_data.c.last_played_date.desc()).limit(category_limit)).all())
            liked = item_rows(s.execute(base.where(or_(user_data.c.is_favorite == true(), user_data.c.likes == true()))
                                   .order_by(func.random()).limit(category_limit)).all())
            out: list[w.RecommendationDto] = []
            excluded = [r[0] for r in s.execute(played_ids).all()]

            def category(seed_row: ItemRow, kind: str, seed: Seed) -> None:
                rows = similar_rows(s, seed, ("Movie",), item_limit, excluded, allowed, [])
                if rows:
                    out.append(w.RecommendationDto(Items=build_dtos(s, rows, opts, server_id), RecommendationType=kind,
                                                   BaselineItemName=seed_row.name, CategoryId=seed_row.id))

            for r in recent:
                category(r, "SimilarToRecentlyPlayed", seed_of(s, r))
            for r in liked:
                category(r, "SimilarToLikedItem", seed_of(s, r))
            for r in recent:
                for kind, label in (("Director", "HasDirectorFromRecentlyPlayed"),
                                    ("Actor", "HasActorFromRecentlyPlayed")):
                    person = s.execute(select(item_people.c.person_id, item_people.c.person_id).where(
                        item_people.c.item_id == r.id, item_people.c.kind == kind)
                        .order_by(item_people.c.sort_order).limit(1)).first()
                    if person is None:
                        continue
                    seed = Seed(r, person_ids={person[0]})
                    rows = similar_rows(s, seed, ("Movie",), item_limit, excluded, allowed, [])
                    name = s.execute(select(items.c.name).where(items.c.id == r.id)).scalar()
                    if rows:
                        pname = s.get(Person, person[0])
                        out.append(w.RecommendationDto(
                            Items=build_dtos(s, rows, opts, server_id), RecommendationType=label,
                            BaselineItemName=pname.name if pname else name, CategoryId=person[0]))
            return out[:category_limit]

        return await self.db.read(read)

    async def suggestions(self, viewer: Viewer, opts: DtoOptions, media_types: list[str], types: list[str],
                          start_index: int, limit: int | None, total: bool) -> w.BaseItemDtoQueryResult:
        q = ItemQuery(recursive=True, media_types=media_types, include_types=types, is_missing=False,
                      sort_by=["Random"], start_index=start_index, limit=limit, enable_total_record_count=total)
        self.items.scoped(q, viewer)
        return await self.items.query(q, opts)

    # -- theme media ------------------------------------------------------------------------

    async def theme(self, item_id: str, viewer: Viewer, opts: DtoOptions, kind: str, inherit: bool,
                    sort_by: list[str], sort_order: list[str]) -> w.ThemeMediaResult:
        row = await self.items.row(item_id, viewer)
        extra = "ThemeSong" if kind == "songs" else "ThemeVideo"
        owner: ItemRow | None = row
        result = None
        while owner is not None:
            q = ItemQuery(owner_id=owner.id, extra_types=[extra], sort_by=sort_by or ["SortName"], sort_order=sort_order)
            self.items.scoped(q, viewer)
            result = await self.items.query(q, opts)
            if result.Items or not inherit or not owner.parent_id:
                break
            parent_id = owner.parent_id
            owner = await self.db.read(lambda s, pid=parent_id: get_row(s, pid))
            if owner is not None and owner.type in ("CollectionFolder", "UserRootFolder"):
                owner = None
        items_ = result.Items if result else []
        return w.ThemeMediaResult(Items=items_, TotalRecordCount=len(items_), StartIndex=0,
                                  OwnerId=(owner.id if owner is not None and items_ else row.id))


@dataclass
class _Pseudo:
    """A by-name seed (an artist or genre with no item row)."""

    id: str
    type: str
    name: str
    series_id: str | None = None

    @property
    def is_folder(self) -> bool:
        return True

