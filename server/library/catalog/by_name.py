"""Items by name: genres, music genres, studios, artists, album artists, persons and years.

They are not rows of their own (MusicArtist rows of music libraries aside): a genre is the
set of items carrying it in ``item_values``, a year the items of that production year, a
person the ``people`` row. Listings are one grouped SQL query over the same item scope as
GET /Items (parent, types, the user's libraries), so the counts agree with the item lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import case, func, literal, select
from sqlalchemy.orm import Session

from server.db.dialect import binary, starts_with
from server.db.handles import item_people, item_values, items, people, user_data
from server.db.tables import ByNameArtwork
from server.library.catalog import ids
from server.library.catalog.dto import DtoOptions, apply_images, build_dtos, decode_json
from server.library.catalog.query import ItemQuery, item_rows, scope
from server.wire import models as w

COUNT_TYPES = (("MovieCount", "Movie"), ("SeriesCount", "Series"), ("EpisodeCount", "Episode"),
               ("SongCount", "Audio"), ("AlbumCount", "MusicAlbum"), ("MusicVideoCount", "MusicVideo"),
               ("TrailerCount", "Trailer"))

# kind asked for -> (item_values kinds, BaseItemKind of the result)
VALUE_KINDS = {
    "Genre": (("Genre",), "Genre"),
    "MusicGenre": (("Genre",), "MusicGenre"),
    "Studio": (("Studio",), "Studio"),
    "MusicArtist": (("Artist", "AlbumArtist"), "MusicArtist"),
    "AlbumArtist": (("AlbumArtist",), "MusicArtist"),
}
MUSIC_TYPES = ("Audio", "MusicAlbum", "MusicVideo")


@dataclass
class NameQuery:
    kind: str  # a key of VALUE_KINDS, "Year" or "Person"
    scope: ItemQuery
    search_term: str | None = None
    name_starts_with: str | None = None
    name_starts_with_or_greater: str | None = None
    name_less_than: str | None = None
    descending: bool = False
    is_favorite: bool | None = None
    person_types: list[str] = field(default_factory=list)
    exclude_person_types: list[str] = field(default_factory=list)
    appears_in_item_id: str | None = None
    with_counts: bool = True  # per-type counts (ItemCounts); ChildCount is always there
    start_index: int = 0
    limit: int | None = None
    enable_total_record_count: bool = True


@dataclass
class NameEntry:
    kind: str  # BaseItemKind
    name: str
    id: str
    counts: dict[str, int] = field(default_factory=dict)
    image_tag: str | None = None


def _count_columns(distinct: bool = True, per_type: bool = True) -> list:
    """ChildCount and the per-type counts. ``distinct`` is needed only where one item can
    appear twice in a group (an artist as both Artist and AlbumArtist of a track); the per-type
    counts cost most and are only computed when the DTOs will show them (ItemCounts)."""
    if distinct:
        cols = [func.count(func.distinct(items.c.id)).label("ChildCount")]
    else:
        cols = [func.count().label("ChildCount")]
    if per_type:
        for label, kind in COUNT_TYPES:
            if distinct:
                cols.append(func.count(func.distinct(case((items.c.type == kind, items.c.id)))).label(label))
            else:
                cols.append(func.sum(case((items.c.type == kind, 1), else_=0)).label(label))
    return cols


def _counts(row: Any) -> dict[str, int]:
    m = row._mapping
    return {k: int(m[k] or 0) for k in ("ChildCount", *(label for label, _ in COUNT_TYPES)) if k in m}


def _name_filters(column, nq: NameQuery) -> list:
    conds = []
    if nq.search_term and nq.search_term.strip():
        term = nq.search_term.strip().lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        conds.append(func.lower(column).like(f"%{term}%", escape="\\"))
    if nq.name_starts_with:
        prefix = nq.name_starts_with.lower()
        conds.append(starts_with(func.lower(column), prefix))
    if nq.name_starts_with_or_greater:
        conds.append(binary(func.lower(column)) >= nq.name_starts_with_or_greater.lower())
    if nq.name_less_than:
        conds.append(binary(func.lower(column)) < nq.name_less_than.lower())
    return conds


def _favorites(s: Session, user_id: str | None) -> set[str]:
    if not user_id:
        return set()
    return set(s.execute(select(user_data.c.item_id).where(user_data.c.user_id == user_id,
                                                           user_data.c.is_favorite.is_(True))).scalars())


def _page(entries: list[NameEntry], nq: NameQuery, favorites: set[str] | None) -> tuple[list[NameEntry], int]:
    if favorites is not None:
        entries = [e for e in entries if (e.id in favorites) == bool(nq.is_favorite)]
    total = len(entries)
    end = None if nq.limit is None else nq.start_index + nq.limit
    return entries[nq.start_index:end], total


def _sql_page(s: Session, q: Any, nq: NameQuery, make: Any, group_key: Any) -> tuple[list[NameEntry], int]:
    """The page from SQL; the total from a lean count of the groups, and only when the page
    does not already tell it."""
    page = q.offset(nq.start_index or None)
    if nq.limit is not None:
        page = page.limit(nq.limit)
    entries = [make(r) for r in s.execute(page).all()]
    end = nq.start_index + len(entries)
    if not nq.enable_total_record_count or nq.limit is None or (len(entries) < nq.limit and
                                                                (entries or nq.start_index == 0)):
        return entries, end
    groups = q.with_only_columns(group_key).order_by(None).subquery()
    return entries, s.execute(select(func.count()).select_from(groups)).scalar() or 0


def list_names(s: Session, nq: NameQuery) -> tuple[list[NameEntry], int]:
    """One page of by-name entries with their item counts, and the total."""
    use_sql_paging = nq.is_favorite is None
    if nq.kind == "Person":
        return _persons(s, nq, use_sql_paging)
    source, conds = scope(s, nq.scope)
    single_kind = nq.kind == "Year" or len(VALUE_KINDS[nq.kind][0]) == 1
    cols = _count_columns(distinct=not single_kind, per_type=nq.with_counts)
    if nq.kind == "Year":
        column = items.c.production_year
        q = (select(column.label("name"), *cols).select_from(source)
             .where(*conds, column.is_not(None)).group_by(column)
             .order_by(column.desc() if nq.descending else column.asc()))
        make = lambda r: NameEntry("Year", str(r.name), ids.by_name_id("Year", str(r.name)), _counts(r))  # noqa: E731
        group_key = column
    else:
        value_kinds, result_kind = VALUE_KINDS[nq.kind]
        v = item_values.alias("nv")
        q = (select(func.min(v.c.value).label("name"), v.c.clean_value, *cols)
             .select_from(source.join(v, v.c.item_id == items.c.id))
             .where(*conds, v.c.kind.in_(value_kinds) if len(value_kinds) > 1 else v.c.kind == value_kinds[0],
                    *_name_filters(v.c.clean_value, nq))
             .group_by(v.c.clean_value)
             .order_by(v.c.clean_value.desc() if nq.descending else v.c.clean_value.asc()))
        id_kind = result_kind
        make = lambda r: NameEntry(result_kind, r.name, ids.by_name_id(id_kind, r.name), _counts(r))  # noqa: E731
        group_key = v.c.clean_value
    if use_sql_paging:
        return _sql_page(s, q, nq, make, group_key)
    entries = [make(r) for r in s.execute(q).all()]
    return _page(entries, nq, _favorites(s, nq.scope.user_id))


def _persons(s: Session, nq: NameQuery, use_sql_paging: bool) -> tuple[list[NameEntry], int]:
    ip = item_people.alias("pip")
    conds = list(_name_filters(people.c.name, nq))
    if nq.person_types:
        conds.append(ip.c.kind.in_(nq.person_types))
    if nq.exclude_person_types:
        conds.append(ip.c.kind.not_in(nq.exclude_person_types))
    if nq.appears_in_item_id:
        conds.append(ip.c.item_id == nq.appears_in_item_id)
    allowed = nq.scope.allowed_library_ids
    source = people.join(ip, ip.c.person_id == people.c.id).join(items, items.c.id == ip.c.item_id)
    if allowed is not None:
        conds.append(items.c.library_id.in_(sorted(allowed)) if allowed else literal(False))
    order = func.lower(people.c.name)
    q = (select(people.c.id, people.c.name, people.c.image_tag, *_count_columns(per_type=nq.with_counts))
         .select_from(source)
         .where(*conds).group_by(people.c.id).order_by(order.desc() if nq.descending else order.asc()))

    def make(r: Any) -> NameEntry:
        return NameEntry("Person", r.name, r.id, _counts(r), r.image_tag)

    if use_sql_paging:
        return _sql_page(s, q, nq, make, people.c.id)
    return _page([make(r) for r in s.execute(q).all()], nq, _favorites(s, nq.scope.user_id))


def find_name(s: Session, kind: str, name: str, q: ItemQuery) -> NameEntry | None:
    """One by-name entry by its name (case-insensitive), with counts; None when no item has it."""
    clean = name.strip().lower()
    source, conds = scope(s, q)
    cols = _count_columns()
    if kind == "Person":
        row = s.execute(select(people.c.id, people.c.name, people.c.image_tag)
                        .where(func.lower(people.c.name) == clean)).first()
        if row is None:
            return None
        ip = item_people.alias("fip")
        counts = s.execute(select(*cols).select_from(source.join(ip, ip.c.item_id == items.c.id))
                           .where(*conds, ip.c.person_id == row.id)).first()
        return NameEntry("Person", row.name, row.id, _counts(counts), row.image_tag)
    if kind == "Year":
        try:
            year = int(name)
        except ValueError:
            return None
        counts = s.execute(select(*cols).select_from(source).where(*conds, items.c.production_year == year)).first()
        if not counts or not counts.ChildCount:
            return None
        return NameEntry("Year", str(year), ids.by_name_id("Year", str(year)), _counts(counts))
    value_kinds, result_kind = VALUE_KINDS[kind]
    v = item_values.alias("fv")
    row = s.execute(select(func.min(v.c.value).label("name"), *cols)
                    .select_from(source.join(v, v.c.item_id == items.c.id))
                    .where(*conds, v.c.kind.in_(value_kinds), v.c.clean_value == clean)).first()
    if row is None or not row.ChildCount:
        return None
    return NameEntry(result_kind, row.name, ids.by_name_id(result_kind, row.name), _counts(row))


def build_name_dtos(s: Session, entries: list[NameEntry], opts: DtoOptions, server_id: str) -> list[w.BaseItemDto]:
    """DTOs of by-name entries; a MusicArtist with a row of its own (music libraries) is built
    from that row (images, overview) and gets the counts on top. One query per kind of lookup."""
    if not entries:
        return []
    artist_ids = [e.id for e in entries if e.kind == "MusicArtist"]
    rows = {}
    if artist_ids:
        artist_rows = item_rows(s.execute(select(items).where(items.c.id.in_(artist_ids))).all())
        rows = {r.id: dto for r, dto in zip(artist_rows, build_dtos(s, artist_rows, opts, server_id), strict=True)}
    uds = {}
    if opts.enable_user_data and opts.user_id:
        uds = {r.item_id: r for r in s.execute(select(user_data).where(
            user_data.c.user_id == opts.user_id, user_data.c.item_id.in_([e.id for e in entries]))).all()}
    art: dict[str, list[dict]] = {}
    if opts.enable_images or opts.has("PrimaryImageAspectRatio"):
        wanted = [e.id for e in entries if e.id not in rows and e.kind in ("Genre", "MusicGenre", "MusicArtist")]
        if wanted:  # collages and covers made by server/artwork (or the by-name folder's own picture)
            for art_id, text in s.execute(select(ByNameArtwork.id, ByNameArtwork.images_json)
                                          .where(ByNameArtwork.id.in_(wanted))).all():
                found = decode_json(text, [])
                art[art_id] = [i for i in found if isinstance(i, dict) and i.get("Type") and i.get("Tag")] \
                    if isinstance(found, list) else []
    out = []
    want_counts = opts.has("ItemCounts") or opts.has("ChildCount") or opts.has("RecursiveItemCount")
    for e in entries:
        dto = rows.get(e.id)
        if dto is None:
            dto = w.BaseItemDto(Name=e.name, ServerId=server_id, Id=e.id, Type=e.kind,
                                IsFolder=e.kind != "Person", LocationType="FileSystem", MediaType="Unknown",
                                ChannelId=None)
            images = art.get(e.id, [])
            if opts.enable_images and images:
                apply_images(dto, images, opts)
            elif opts.enable_images:
                dto.ImageTags = {"Primary": e.image_tag} if e.image_tag else {}
                dto.BackdropImageTags = []
                dto.ImageBlurHashes = {}
            if e.kind == "Year":
                dto.ProductionYear = int(e.name)
            if opts.has("PrimaryImageAspectRatio") and images and images[0].get("Width") and images[0].get("Height"):
                dto.PrimaryImageAspectRatio = images[0]["Width"] / images[0]["Height"]
            elif opts.has("PrimaryImageAspectRatio") and e.image_tag:
                dto.PrimaryImageAspectRatio = 2 / 3
            if opts.has("SortName"):
                dto.SortName = e.name.lower()
            if opts.has("DateCreated"):
                dto.DateCreated = None
            if opts.user_id and opts.enable_user_data:
                ud = uds.get(e.id)
                dto.UserData = w.UserItemDataDto(
                    PlaybackPositionTicks=0, PlayCount=ud.play_count if ud else 0,
                    IsFavorite=bool(ud.is_favorite) if ud else False, Played=bool(ud.played) if ud else False,
                    Likes=ud.likes if ud else None, Rating=ud.rating if ud else None, Key=e.id, ItemId=e.id)
        if want_counts and e.counts:
            for key, value in e.counts.items():
                if key == "ChildCount":
                    if opts.has("ChildCount") or opts.has("ItemCounts"):
                        dto.ChildCount = value
                elif opts.has("ItemCounts"):
                    setattr(dto, key, value)
            if opts.has("RecursiveItemCount"):
                dto.RecursiveItemCount = e.counts.get("ChildCount", 0)
        out.append(dto)
    return out


def is_music_scope(q: ItemQuery, collection_type: str | None) -> bool:
    if collection_type == "music":
        return True
    return bool(q.include_types) and all(t in MUSIC_TYPES for t in q.include_types)


__all__ = ["NameEntry", "NameQuery", "build_name_dtos", "find_name", "is_music_scope", "list_names"]
