"""Items by name: genres, music genres, studios, artists, album artists, persons and years.

They are not rows of their own (MusicArtist rows of music libraries aside): a genre is the
set of items carrying it in ``item_values``, a year the items of that production year, a
person the ``people`` row. Listings are one grouped SQL query over the same item scope as
GET /Items (parent, types, the user's libraries), so the counts agree with the item lists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import msgspec
from sqlalchemy import (
    ColumnElement,
    Integer,
    Row,
    String,
    and_,
    bindparam,
    case,
    cast,
    false,
    func,
    literal,
    select,
    tuple_,
)

from server.db.dialect import binary, starts_with
from server.db.handles import (
    item_field_counts,
    item_people,
    item_value_counts,
    item_values,
    items,
    people,
    user_data,
)
from server.db.schema import byname_artwork
from server.library.catalog import facets, ids
from server.library.catalog.dto import (
    PLAYED_FOLDERS,
    DtoOptions,
    apply_images,
    build_dtos,
    decode_json,
    user_data_dto,
    user_data_rows,
)
from server.library.catalog.generation_cache import GenerationCache
from server.library.catalog.query import (
    ROOT_FOLDER_ID,
    STRUCTURAL_TYPES,
    Generations,
    ItemQuery,
    ItemRow,
    ParentalRules,
    _reads_user_data,
    conditions_for,
    get_rows,
    parental_conditions,
    parental_key,
    scope,
)
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

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
    #: whether the DTOs show any count (ItemCounts, ChildCount, RecursiveItemCount): under
    #: parental rules the page's counts are recounted over the visible items only when shown
    want_counts: bool = True
    start_index: int = 0
    limit: int | None = None
    enable_total_record_count: bool = True
    #: (cache, database generation, or ``Database.generations``): totals of full pages are kept
    #: while nothing was written (CountCache: the full generation unless stored as reading no user data)
    totals: tuple[Any, Generations] | None = field(default=None, repr=False, compare=False)


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


_COUNT_LABELS = frozenset(("ChildCount", *(label for label, _ in COUNT_TYPES)))


def _counts(row: Row[*tuple[Any, ...]] | None) -> dict[str, int]:
    """The row's count columns (ChildCount and the per-type counts present), by label (an
    aggregate's one row; none: nothing counted)."""
    if row is None:
        return {"ChildCount": 0}
    return {k: int(v or 0) for k, v in zip(row._fields, row, strict=True) if k in _COUNT_LABELS}


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


def _sql_page(s: Session, q: Any, nq: NameQuery, make: Any, group_key: Any,
              make_all: Callable[[Sequence[Any]], list[NameEntry]] | None = None) -> tuple[list[NameEntry], int]:
    """The page from SQL; the total from a lean count of the groups, and only when the page
    does not already tell it. ``make_all`` (rows -> entries) replaces ``make`` when entries
    need a lookup over the whole page."""
    page = q.offset(nq.start_index or None)
    if nq.limit is not None:
        page = page.limit(nq.limit)
    rows = s.execute(page).all()
    entries = make_all(rows) if make_all is not None else [make(r) for r in rows]
    total = _known_total(nq, entries)
    if total is not None:
        return entries, total
    groups = q.with_only_columns(group_key).order_by(None).subquery()
    count = select(func.count()).select_from(groups)
    return entries, _keep_total(nq, s.execute(count).scalar() or 0,
                                nq.is_favorite is not None or _reads_user_data(s, count))


def _totals_key(nq: NameQuery) -> str:
    return "names:" + repr(replace(nq, start_index=0, limit=None, descending=False))


def _known_total(nq: NameQuery, entries: list[NameEntry]) -> int | None:
    """The total when the page tells it (not asked for, or the last page) or while the totals
    cache (``nq.totals``, kept while nothing is written) has it; None: it must be counted."""
    if not nq.enable_total_record_count or nq.limit is None or (len(entries) < nq.limit and
                                                                (entries or nq.start_index == 0)):
        return nq.start_index + len(entries)
    if nq.totals is None:
        return None
    cache, generation = nq.totals
    total: int | None = cache.get(_totals_key(nq), generation)
    return total


def _keep_total(nq: NameQuery, total: int, reads_user_data: bool = True) -> int:
    """Keep a counted total: with ``Database.generations`` as the stamp, one that reads no user
    data stays while only user data is written (a play-state write does not make the next
    list count again)."""
    if nq.totals is not None:
        cache, generation = nq.totals
        cache.put(_totals_key(nq), generation, total, reads_user_data)
    return total


@dataclass(frozen=True)
class _Shape:
    """What decides a by-name statement's SQL (which conditions are present), not its values:
    the statements are built once per shape and the values bound per request."""

    libraries: str  # "all", "none" or "some"
    exclude_libraries: bool
    include: bool
    exclude: bool
    search: bool
    starts_with: bool
    starts_with_or_greater: bool
    less_than: bool
    offset: bool
    limit: bool
    #: the search term's matches listed (``name_in``) instead of ``LIKE '%term%'`` (_matching_values)
    search_in: bool = False


def _shape(nq: NameQuery, libraries: tuple[str, ...] | None, exclude_libraries: Any = (), include: Any = None,
           exclude: Any = (), paged: bool = True) -> _Shape:
    return _Shape(libraries="all" if libraries is None else ("some" if libraries else "none"),
                  exclude_libraries=bool(exclude_libraries), include=include is not None, exclude=bool(exclude),
                  search=bool(nq.search_term and nq.search_term.strip()), starts_with=bool(nq.name_starts_with),
                  starts_with_or_greater=bool(nq.name_starts_with_or_greater), less_than=bool(nq.name_less_than),
                  offset=paged and bool(nq.start_index), limit=paged and nq.limit is not None)


def _name_params(nq: NameQuery) -> dict[str, Any]:
    """The values of ``_bound_name_filters``' parameters (the same rules as ``_name_filters``)."""
    params: dict[str, Any] = {}
    if nq.search_term and nq.search_term.strip():
        term = nq.search_term.strip().lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params["name_like"] = f"%{term}%"
    if nq.name_starts_with:
        prefix = nq.name_starts_with.lower()
        params["name_prefix"], params["name_prefix_end"] = prefix, prefix + "\uffff"
    if nq.name_starts_with_or_greater:
        params["name_from"] = nq.name_starts_with_or_greater.lower()
    if nq.name_less_than:
        params["name_below"] = nq.name_less_than.lower()
    return params


def _page_params(nq: NameQuery, shape: _Shape) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if shape.offset:
        params["page_offset"] = nq.start_index
    if shape.limit:
        params["page_limit"] = nq.limit
    return params


def _bound_name_filters(column: Any, shape: _Shape) -> list[ColumnElement[bool]]:
    """``_name_filters`` with bound parameters (values from ``_name_params``)."""
    conds: list[ColumnElement[bool]] = []
    lowered = func.lower(column)
    if shape.search:
        conds.append(lowered.like(bindparam("name_like", type_=String()), escape="\\"))
    if shape.search_in:
        conds.append(column.in_(bindparam("name_in", expanding=True, type_=String())))
    if shape.starts_with:
        conds.append(binary(lowered) >= bindparam("name_prefix", type_=String()))
        conds.append(binary(lowered) < bindparam("name_prefix_end", type_=String()))
    if shape.starts_with_or_greater:
        conds.append(binary(lowered) >= bindparam("name_from", type_=String()))
    if shape.less_than:
        conds.append(binary(lowered) < bindparam("name_below", type_=String()))
    return conds


def _paged(q: Any, shape: _Shape) -> Any:
    if shape.offset:
        q = q.offset(bindparam("page_offset", type_=Integer()))
    if shape.limit:
        q = q.limit(bindparam("page_limit", type_=Integer()))
    return q


def _bound_scope_conditions(t: Any, shape: _Shape) -> list[ColumnElement[bool]]:
    """``facets.scope_conditions`` with bound parameters (values from ``_scope_params``)."""
    conds: list[ColumnElement[bool]] = [t.c.item_count > 0]
    if shape.libraries == "some":
        conds.append(t.c.library_id.in_(bindparam("libraries", expanding=True, type_=String())))
    elif shape.libraries == "none":
        conds.append(false())
    if shape.exclude_libraries:
        conds.append(t.c.library_id.not_in(bindparam("exclude_libraries", expanding=True, type_=String())))
    if shape.include:
        conds.append(t.c.item_type.in_(bindparam("include_types", expanding=True, type_=String())))
    if shape.exclude:
        conds.append(t.c.item_type.not_in(bindparam("exclude_types", expanding=True, type_=String())))
    return conds


def _scope_params(sc: facets.Scope) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if sc.libraries:
        params["libraries"] = list(sc.libraries)
    if sc.exclude_libraries:
        params["exclude_libraries"] = list(sc.exclude_libraries)
    if sc.include is not None:
        params["include_types"] = list(sc.include)
    if sc.exclude:
        params["exclude_types"] = list(sc.exclude)
    return params


@dataclass(frozen=True)
class _Statements:
    page: Any  # the entries in order (with OFFSET/LIMIT when the shape has them)
    total: Any  # how many groups there are
    spelled: Any = None  # AnyArtist: the least spelling of a page's names (``cleans``)


@lru_cache(maxsize=256)
def _kept_statements(kind: str, with_counts: bool, descending: bool, shape: _Shape) -> _Statements:
    return _build_kept_statements(kind, with_counts, descending, shape)


@lru_cache(maxsize=64)
def _visible_statements(kind: str, descending: bool, shape: _Shape,
                        parental: tuple[ParentalRules, tuple[str, ...]]) -> _Statements:
    """``_build_kept_statements`` with ``_visible_exists`` for the viewer's rules, built once per
    shape and ``parental_key`` (the rules and the library's rating strings the conditions list:
    a rating new to the library is another key; tags are looked up when the statement runs)."""
    return _build_kept_statements(kind, False, descending, shape,
                                  _visible_exists(list(conditions_for(parental)), kind, shape))


def _visible_exists(conditions: list[Any], kind: str, shape: _Shape) -> Any:
    """For a kept-count group (a value, or a year): whether an item in the scope carrying it is
    one the viewer's parental rules let them see (the same ``parental_conditions`` as the item
    queries; the scope's values are the kept statement's bound ones). One indexed probe per group
    (item_values' (kind, clean_value, item_id), or the production year's index) that stops at the
    first visible item."""
    t = item_field_counts if kind == "Year" else item_value_counts
    library = func.coalesce(items.c.library_id, "")
    in_scope: list[Any] = [items.c.owner_id.is_(None), *conditions]
    if shape.libraries == "some":
        in_scope.append(library.in_(bindparam("libraries", expanding=True, type_=String())))
    elif shape.libraries == "none":
        in_scope.append(false())
    if shape.exclude_libraries:
        in_scope.append(library.not_in(bindparam("exclude_libraries", expanding=True, type_=String())))
    if shape.include:
        in_scope.append(items.c.type.in_(bindparam("include_types", expanding=True, type_=String())))
    if shape.exclude:
        in_scope.append(items.c.type.not_in(bindparam("exclude_types", expanding=True, type_=String())))
    if kind == "Year":
        inner = select(literal(1)).select_from(items).where(
            items.c.production_year == cast(t.c.value, Integer), *in_scope)
    else:
        v = item_values.alias("visible_values")
        value_kinds = VALUE_KINDS[kind][0]
        inner = select(literal(1)).select_from(v.join(items, items.c.id == v.c.item_id)).where(
            v.c.kind.in_(value_kinds) if len(value_kinds) > 1 else v.c.kind == value_kinds[0],
            v.c.clean_value == t.c.clean_value, *in_scope)
    return inner.exists()


@lru_cache(maxsize=64)
def _kept_statements_without(kind: str, with_counts: bool, descending: bool, shape: _Shape,
                             hidden_pairs: tuple[tuple[str, str], ...]) -> _Statements:
    """``_kept_statements`` leaving out the kept rows of these (library, item type) pairs (every
    item of theirs hidden from the viewer: ``_parental_profile``)."""
    return _build_kept_statements(kind, with_counts, descending, shape, hidden_pairs=hidden_pairs)


@lru_cache(maxsize=64)
def _kept_statements_hiding(kind: str, descending: bool, shape: _Shape) -> _Statements:
    """``_kept_statements`` leaving out the values bound as ``hidden_values`` (``_hidden_out``:
    every item in scope carrying them hidden from the viewer), built once per shape."""
    return _build_kept_statements(kind, False, descending, shape, hiding=True)


def _build_kept_statements(kind: str, with_counts: bool, descending: bool, shape: _Shape,
                           visible: Any = None, hidden_pairs: tuple[tuple[str, str], ...] = (),
                           hiding: bool = False) -> _Statements:
    """``_kept_statements``; ``visible`` (``_visible_exists``): only rows with an item the viewer
    may see count (their counts are the kept ones, replaced by ``_kept_minus_hidden`` or
    ``_visible_counts``); ``hidden_pairs``: the kept rows of these (library, item type) pairs are
    left out; ``hiding``: the values bound as ``hidden_values`` are left out."""
    t = item_field_counts if kind == "Year" else item_value_counts
    cols = [facets.count_sum(t).label("ChildCount")]
    if with_counts:
        cols += [facets.count_sum(t, type_name).label(label) for label, type_name in COUNT_TYPES]
    conds = _bound_scope_conditions(t, shape)
    if hidden_pairs:
        conds.append(tuple_(t.c.library_id, t.c.item_type).not_in(list(hidden_pairs)))
    if hiding:
        conds.append(t.c.clean_value.not_in(bindparam("hidden_values", expanding=True, type_=String())))
    spelled = None
    if kind == "Year":
        year = cast(t.c.value, Integer)
        q = (select(year.label("name"), *cols).where(t.c.facet == "Year", *conds).group_by(t.c.value)
             .order_by(year.desc() if descending else year.asc()))
        if visible is not None:
            q = q.having(visible)
        group_key = t.c.value
    else:
        value_kinds, _result_kind = VALUE_KINDS[kind]
        single = len(value_kinds) == 1
        extra = [func.min(t.c.value).label("name")] if single else []
        q = (select(t.c.clean_value, *extra, *cols)
             .where(t.c.kind == (value_kinds[0] if single else "AnyArtist"), *conds,
                    *_bound_name_filters(t.c.clean_value, shape))
             .group_by(t.c.clean_value)
             .order_by(t.c.clean_value.desc() if descending else t.c.clean_value.asc()))
        if visible is not None:
            q = q.having(visible)
        group_key = t.c.clean_value
        if not single:
            spelled = (select(t.c.clean_value, func.min(t.c.value))
                       .where(t.c.kind.in_(value_kinds),
                              t.c.clean_value.in_(bindparam("cleans", expanding=True, type_=String())), *conds)
                       .group_by(t.c.clean_value))
    total = select(func.count()).select_from(q.with_only_columns(group_key).order_by(None).subquery())
    return _Statements(page=_paged(q, shape), total=total, spelled=spelled)


def _run_page(s: Session, st: _Statements, params: dict[str, Any], nq: NameQuery, shape: _Shape,
              make_all: Callable[[Sequence[Any]], list[NameEntry]]) -> tuple[list[NameEntry], int]:
    """``_sql_page`` for statements built once per shape: the page, and the total only when the
    page does not tell it (kept in ``nq.totals`` while nothing is written)."""
    rows = s.execute(st.page, {**params, **_page_params(nq, shape)}).all()
    entries = make_all(rows)
    total = _known_total(nq, entries)
    if total is not None:
        return entries, total
    # the kept counts' and people's statements name no user data (a favourites filter is applied
    # in Python and never pages in SQL)
    return entries, _keep_total(nq, s.execute(st.total, params).scalar() or 0, nq.is_favorite is not None)


#: more matches than this and the term is matched in SQL (LIKE) instead of listed
_MAX_MATCHES = 200


def _matching_values(s: Session, nq: NameQuery) -> list[str] | None:
    """The kept values (clean, lower case) of the query's kind that contain the search term,
    found in the kind's distinct values kept in ``nq.totals``' cache for the generation (any
    write reads them again): a search matches a few thousand artist names in Python in
    microseconds, where ``lower(clean_value) LIKE '%term%'`` over the kept rows cost SQLite
    1.5-2 ms at 100k items. None when not kept (no cache) or when too many match."""
    if nq.totals is None or not nq.search_term or not nq.search_term.strip():
        return None
    cache, generation = nq.totals
    value_kinds, _ = VALUE_KINDS[nq.kind]
    kept_kind = value_kinds[0] if len(value_kinds) == 1 else "AnyArtist"
    key = f"by-name values {kept_kind}"
    values: tuple[str, ...] | None = cache.get_value(key, generation)
    if values is None:
        t = item_value_counts.c
        values = tuple(sorted(r[0] for r in s.execute(
            select(t.clean_value).where(t.kind == kept_kind, t.item_count > 0).distinct()).all()))
        cache.put_value(key, generation, values)
    term = nq.search_term.strip().lower()
    found = [v for v in values if term in v.lower()]
    return found if len(found) <= _MAX_MATCHES else None


def _parental_profile(s: Session, nq: NameQuery, rules: ParentalRules) -> dict[tuple[str, str], tuple[int, int]] | None:
    return parental_profile(s, rules, nq.totals)


def parental_profile(s: Session, rules: ParentalRules, totals: tuple[Any, Generations] | None
                     ) -> dict[tuple[str, str], tuple[int, int]] | None:
    """For the viewer's parental rules: per (library, item type) of the items the kept counts
    count (no owner), how many there are and how many the rules hide, in one grouped query kept
    in ``totals``' cache (CountCache, ``Database.generations``) for the content generation (any
    write of more than user data: a rating or tag edit, a scan) and keyed by the rules (a policy
    change is another key). None when not kept (no cache)."""
    return _profile(s, rules, totals, "parental", items.c.type, items.c.owner_id.is_(None))


def _profile(s: Session, rules: ParentalRules, totals: tuple[Any, Generations] | None, name: str,
             item_type: Any, which: Any) -> dict[tuple[str, str], tuple[int, int]] | None:
    """Per (library, ``item_type``) of the items ``which`` selects: how many there are and how many
    ``rules`` hide, in one grouped query kept in ``totals``' cache for the content generation and
    keyed by ``name`` and the rules (``parental_profile``, ``people_profile``). None without a cache."""
    if totals is None:
        return None
    cache, generation = totals
    key = f"by-name {name} profile {rules!r}"
    found: dict[tuple[str, str], tuple[int, int]] | None = cache.get_value(key, generation)
    if found is None:
        flag = _hidden_flag(parental_conditions(s, rules))
        library = func.coalesce(items.c.library_id, "")
        found = {(r[0], r[1]): (int(r[2]), int(r[3] or 0)) for r in s.execute(
            select(library, item_type, func.count(), literal(0) if flag is None else func.sum(flag))
            .where(which).group_by(library, item_type)).all()}
        cache.put_value(key, generation, found)
    return found


def _hidden_flag(conds: list[Any]) -> Any:
    """1 for an item ``parental_conditions``' ``conds`` hide (any of them false or unknown), else
    0; None when there are no conditions (nothing is hidden)."""
    return case((and_(*conds), 0), else_=1) if conds else None


def _unhidden_scope(s: Session, nq: NameQuery, rules: ParentalRules, shape: _Shape,
                    params: dict[str, Any]) -> tuple[tuple[str, str], ...] | None:
    """When the viewer's rules hide, among the kept rows in the list's scope, either every item
    of a (library, item type) pair or none of them: those pairs (to leave out; the rest are
    counted as kept, every item of theirs visible). None when a pair in scope carrying the
    list's kind is only partly hidden (then each name is probed and recounted)."""
    profile = _parental_profile(s, nq, rules)
    if profile is None:
        return None
    partial = sorted(p for p, (n, h) in profile.items() if 0 < h < n)
    whole = tuple(sorted(p for p, (n, h) in profile.items() if h and h == n))
    if partial and _partly_hidden_in_scope(s, nq, shape, params, partial):
        return None
    return whole


def _partly_hidden_in_scope(s: Session, nq: NameQuery, shape: _Shape, params: dict[str, Any],
                            partial: list[tuple[str, str]]) -> bool:
    """Whether a kept row of the list's kind in scope belongs to one of the ``partial`` pairs
    (library, item type). The answer depends on the kept counts only, so it is kept in
    ``nq.totals``' cache for the content generation (with the profile it follows from): building
    and running this probe cost a restricted Search/Hints ~1 ms per name kind, every request."""
    cache, generation = nq.totals if nq.totals is not None else (None, 0)
    key = ""
    if cache is not None:
        key = f"by-name partly hidden {nq.kind} {shape!r} {partial!r} {sorted(params.items())!r}"
        known: bool | None = cache.get_value(key, generation)
        if known is not None:
            return known
    t = item_field_counts if nq.kind == "Year" else item_value_counts
    value_kinds = VALUE_KINDS[nq.kind][0] if nq.kind != "Year" else ()
    kind_cond = (t.c.facet == "Year" if nq.kind == "Year" else
                 t.c.kind == (value_kinds[0] if len(value_kinds) == 1 else "AnyArtist"))
    probe = select(literal(1)).where(kind_cond, *_bound_scope_conditions(t, shape),
                                     tuple_(t.c.library_id, t.c.item_type).in_(partial)).limit(1)
    found = s.execute(probe, params).first() is not None
    if cache is not None:
        cache.put_value(key, generation, found)
    return found


def _kept_listing(s: Session, nq: NameQuery, use_sql_paging: bool) -> tuple[list[NameEntry], int] | None:
    """The list from the kept counts (server/library/catalog/facets.py) when the scope is
    one they answer (libraries and item types); None otherwise. The statements are built once
    per shape (``_kept_statements``) and the request's values bound. With parental rules, a
    kept row counts only when an item it counts is one the viewer may see (``_visible_exists``),
    and the page's counts are those of the visible items (``_visible_counts``)."""
    rules = nq.scope.parental if nq.scope.parental is not None and nq.scope.parental.active else None
    sc = facets.simple_scope(s, replace(nq.scope, parental=None) if rules is not None else nq.scope,
                             STRUCTURAL_TYPES, ROOT_FOLDER_ID)
    if sc is None:
        return None
    t = item_field_counts if nq.kind == "Year" else item_value_counts
    if facets.counts_playlists(s, t, sc):
        return None
    shape = _shape(nq, sc.libraries, sc.exclude_libraries, sc.include, sc.exclude, paged=use_sql_paging)
    matches = _matching_values(s, nq) if shape.search and nq.kind != "Year" else None
    if matches is not None:
        shape = replace(shape, search=False, search_in=True)
    params = {**_scope_params(sc), **(_name_params(nq) if nq.kind != "Year" else {})}
    hidden_pairs = _unhidden_scope(s, nq, rules, shape, _scope_params(sc)) if rules is not None else None
    if hidden_pairs is not None:  # each pair in scope wholly hidden or wholly shown: the kept counts answer
        rules = None
        st = (_kept_statements_without(nq.kind, nq.with_counts, nq.descending, shape, hidden_pairs) if hidden_pairs
              else _kept_statements(nq.kind, nq.with_counts, nq.descending, shape))
    elif rules is None:
        st = _kept_statements(nq.kind, nq.with_counts, nq.descending, shape)
    elif nq.kind == "Year":  # a year's probe would walk every item of that year: kept less hidden, or grouped
        return _years_minus_hidden(s, nq, rules, shape, _scope_params(sc), use_sql_paging)
    else:
        hidden_out = _hidden_out(s, nq, rules, shape, _scope_params(sc))
        if hidden_out is not None:  # the kept rows less the values with nothing left in scope
            st = _kept_statements_hiding(nq.kind, nq.descending, shape)
            params["hidden_values"] = hidden_out
        else:  # a probe per group for an item the viewer may see
            st = _visible_statements(nq.kind, nq.descending, shape, parental_key(s, rules))
    if matches is not None:
        params.pop("name_like", None)
        params["name_in"] = matches
    if nq.kind == "Year":
        def make_all(rows: Sequence[Any]) -> list[NameEntry]:
            return [NameEntry("Year", str(r.name), ids.by_name_id("Year", str(r.name)), _counts(r)) for r in rows]
    else:
        result_kind = VALUE_KINDS[nq.kind][1]

        def make_all(rows: Sequence[Any]) -> list[NameEntry]:
            spelled: dict[str, str] = {}
            if st.spelled is not None:  # the spelling: the least one among the artist and album artist rows
                cleans = [r.clean_value for r in rows]
                for start in range(0, len(cleans), 500):
                    spelled.update(s.execute(st.spelled, {**params, "cleans": cleans[start:start + 500]}).all())
            out = []
            for r in rows:
                name = (spelled.get(r.clean_value) or r.clean_value) if st.spelled is not None else r.name
                out.append(NameEntry(result_kind, name, ids.by_name_id(result_kind, name), _counts(r)))
            return out
    if rules is not None:
        kept_make_all = make_all
        partial_rules = rules

        def make_all(rows: Sequence[Any]) -> list[NameEntry]:
            entries = kept_make_all(rows)
            keys = [r.name if nq.kind == "Year" else r.clean_value for r in rows]
            if nq.kind == "Year" or not _kept_minus_hidden(s, nq, partial_rules, shape, params, entries, keys):
                _visible_counts(s, nq, entries, keys)
            return entries
    if use_sql_paging:
        return _run_page(s, st, params, nq, shape, make_all)
    return _page(make_all(s.execute(st.page, params).all()), nq, _favorites(s, nq.scope.user_id))


def _hidden_per_value(s: Session, kind: str, rules: ParentalRules,
                      totals: tuple[Any, Generations]) -> dict[str, tuple[tuple[str, str, int], ...]]:
    """For the viewer's parental rules and a list kind: per value (clean), the items carrying it
    that the rules hide (not ``parental_conditions``; counted as the kept counts count them: an
    artist that is both artist and album artist of a track once), by (library, item type), over the items the kept
    counts count (no owner). One grouped query kept in ``totals``' cache for the content
    generation (a rating, tag or value edit, a scan: counted again) and keyed by the rules (a
    policy or country change is another key)."""
    cache, generation = totals
    value_kinds = VALUE_KINDS[kind][0]
    key = f"by-name hidden per value {value_kinds!r} {rules!r}"
    found: dict[str, tuple[tuple[str, str, int], ...]] | None = cache.get_value(key, generation)
    if found is None:
        flag = _hidden_flag(parental_conditions(s, rules))
        v = item_values.alias("hv")
        library = func.coalesce(items.c.library_id, "")
        hidden = false() if flag is None else flag == 1
        grouped: dict[str, list[tuple[str, str, int]]] = {}
        for value, lib, item_type, n in s.execute(
                select(v.c.clean_value, library, items.c.type,
                       func.count(func.distinct(v.c.item_id)) if len(value_kinds) > 1 else func.count())
                .select_from(v.join(items, items.c.id == v.c.item_id))
                .where(v.c.kind.in_(value_kinds) if len(value_kinds) > 1 else v.c.kind == value_kinds[0],
                       items.c.owner_id.is_(None), hidden)
                .group_by(v.c.clean_value, library, items.c.type)).all():
            grouped.setdefault(value, []).append((lib, item_type or "", int(n)))
        found = {value: tuple(pairs) for value, pairs in grouped.items()}
        cache.put_value(key, generation, found)
    return found


def filter_hidden(s: Session, rules: ParentalRules, totals: tuple[Any, Generations]) -> facets.HiddenCounts:
    """For Items/Filters in a partly hidden scope (``facets.filter_values``): the items the
    viewer's rules hide (not ``parental_conditions``), counted as the kept counts count them (no
    owner): per Genre and Tag row (kind, clean value, spelling, library, item type) and per year
    and official rating (facet, value, library, item type). Two grouped queries kept in
    ``totals``' cache for the content generation (a rating, tag, genre edit, a scan: counted
    again) and keyed by the rules (a policy change is another key)."""
    cache, generation = totals
    key = f"by-name hidden filter rows {rules!r}"
    found: facets.HiddenCounts | None = cache.get_value(key, generation)
    if found is None:
        flag = _hidden_flag(parental_conditions(s, rules))
        hidden = false() if flag is None else flag == 1
        library = func.coalesce(items.c.library_id, "")
        v = item_values.alias("hf")
        values = {(r[0], r[1], r[2], r[3], r[4] or ""): int(r[5]) for r in s.execute(
            select(v.c.kind, v.c.clean_value, v.c.value, library, items.c.type, func.count())
            .select_from(v.join(items, items.c.id == v.c.item_id))
            .where(v.c.kind.in_(("Genre", "Tag")), items.c.owner_id.is_(None), hidden)
            .group_by(v.c.kind, v.c.clean_value, v.c.value, library, items.c.type)).all()}
        fields: dict[tuple[str, str, str, str], int] = {}
        for year, rating, lib, item_type, n in s.execute(
                select(items.c.production_year, items.c.official_rating, library, items.c.type, func.count())
                .where(items.c.owner_id.is_(None), hidden)
                .group_by(items.c.production_year, items.c.official_rating, library, items.c.type)).all():
            if year is not None:
                k = ("Year", str(year), lib, item_type or "")
                fields[k] = fields.get(k, 0) + int(n)
            if rating:
                k = ("OfficialRating", rating, lib, item_type or "")
                fields[k] = fields.get(k, 0) + int(n)
        found = (values, fields)
        cache.put_value(key, generation, found)
    return found


#: more values with nothing left than this and the groups are probed instead (a list bound per request)
_MAX_HIDDEN_OUT = 5000


def _hidden_out(s: Session, nq: NameQuery, rules: ParentalRules, shape: _Shape,
                scope_params: dict[str, Any]) -> list[str] | None:
    """For a value list in a partly hidden scope: the values (clean) whose every item in the
    list's scope the viewer's rules hide -- per (library, item type) in scope, the kept count
    less the hidden items (``_hidden_per_value``) leaves none -- so the kept rows less these
    values are the groups with an item the viewer may see (what the probe per group finds,
    without probing up to a deep page's offset). Kept in ``nq.totals``' cache for the content
    generation, keyed by the kind, the rules and the scope's values. None without a cache or
    when there are too many."""
    if nq.totals is None:
        return None
    cache, generation = nq.totals
    value_kinds = VALUE_KINDS[nq.kind][0]
    kept_kind = value_kinds[0] if len(value_kinds) == 1 else "AnyArtist"
    key = f"by-name hidden out {kept_kind} {rules!r} {sorted(scope_params.items())!r}"
    found: tuple[str, ...] | None = cache.get_value(key, generation)
    if found is None:
        hidden = _hidden_per_value(s, nq.kind, rules, nq.totals)
        statement = _kept_pairs_statement(kept_kind, shape)
        values = sorted(hidden)
        kept: dict[str, dict[tuple[str, str], int]] = {}
        for start in range(0, len(values), 500):
            for value, lib, item_type, n in s.execute(
                    statement, {**scope_params, "page_values": values[start:start + 500]}).all():
                kept.setdefault(value, {})[(lib, item_type)] = int(n or 0)
        out = []
        for value, pairs in kept.items():
            left = dict(pairs)
            for lib, item_type, n in hidden.get(value, ()):
                if (lib, item_type) in left:
                    left[(lib, item_type)] -= n
            if not any(n > 0 for n in left.values()):
                out.append(value)
        found = tuple(sorted(out))
        cache.put_value(key, generation, found)
    return list(found) if len(found) <= _MAX_HIDDEN_OUT else None


def _years_minus_hidden(s: Session, nq: NameQuery, rules: ParentalRules, shape: _Shape, params: dict[str, Any],
                        use_sql_paging: bool) -> tuple[list[NameEntry], int] | None:
    """The years list in a partly hidden scope: per year, the kept counts in the list's scope
    (per library and item type) less the items the rules hide (one grouped query over the items
    with ``parental_conditions``, kept in ``nq.totals``' cache for the content generation and
    keyed by the rules); a year with nothing left is not listed. The years are few: sorted and
    paged here. None without a cache (the grouped query over the items answers)."""
    if nq.totals is None:
        return None
    cache, generation = nq.totals
    key = f"by-name hidden per year {rules!r}"
    hidden: dict[tuple[int, str, str], int] | None = cache.get_value(key, generation)
    if hidden is None:
        flag = _hidden_flag(parental_conditions(s, rules))
        library = func.coalesce(items.c.library_id, "")
        hidden_cond = false() if flag is None else flag == 1
        hidden = {(int(r[0]), r[1], r[2] or ""): int(r[3]) for r in s.execute(
            select(items.c.production_year, library, items.c.type, func.count())
            .where(items.c.owner_id.is_(None), items.c.production_year.is_not(None), hidden_cond)
            .group_by(items.c.production_year, library, items.c.type)).all()}
        cache.put_value(key, generation, hidden)
    t = item_field_counts
    per_year: dict[int, dict[str, int]] = {}
    for value, lib, item_type, n in s.execute(
            select(t.c.value, t.c.library_id, t.c.item_type, func.sum(t.c.item_count))
            .where(t.c.facet == "Year", *_bound_scope_conditions(t, shape))
            .group_by(t.c.value, t.c.library_id, t.c.item_type), params).all():
        year = int(value)
        left = int(n or 0) - hidden.get((year, lib, item_type or ""), 0)
        if left > 0:
            by_type = per_year.setdefault(year, {})
            by_type[item_type or ""] = by_type.get(item_type or "", 0) + left
    entries = []
    for year in sorted(per_year, reverse=nq.descending):
        by_type = per_year[year]
        counts: dict[str, int] = {}
        if nq.want_counts:
            counts["ChildCount"] = sum(by_type.values())
            if nq.with_counts:
                for label, type_name in COUNT_TYPES:
                    counts[label] = by_type.get(type_name, 0)
        entries.append(NameEntry("Year", str(year), ids.by_name_id("Year", str(year)), counts))
    return _page(entries, nq, None if use_sql_paging else _favorites(s, nq.scope.user_id))


@lru_cache(maxsize=64)
def _kept_pairs_statement(kept_kind: str, shape: _Shape) -> Any:
    """The kept counts of a page's values (``page_values``) per library and item type in the
    list's scope (bound), built once per shape."""
    t = item_value_counts
    return (select(t.c.clean_value, t.c.library_id, t.c.item_type, func.sum(t.c.item_count))
            .where(t.c.kind == kept_kind,
                   t.c.clean_value.in_(bindparam("page_values", expanding=True, type_=String())),
                   *_bound_scope_conditions(t, shape))
            .group_by(t.c.clean_value, t.c.library_id, t.c.item_type))


def _kept_minus_hidden(s: Session, nq: NameQuery, rules: ParentalRules, shape: _Shape, params: dict[str, Any],
                       entries: list[NameEntry], keys: list[Any]) -> bool:
    """``_visible_counts`` for a value list in a partly hidden scope: the page's kept counts
    (per library and item type, in the list's scope) less the items the rules hide
    (``_hidden_per_value``, kept per content generation), instead of recounting every item that
    carries the page's names (all 95k tracks for the music genres at 100k). False when there is
    no cache to keep the hidden counts in (the caller recounts)."""
    if nq.totals is None:
        return False
    if not entries or not nq.want_counts:
        _visible_counts(s, nq, entries, keys)
        return True
    hidden = _hidden_per_value(s, nq.kind, rules, nq.totals)
    value_kinds = VALUE_KINDS[nq.kind][0]
    kept: dict[str, dict[tuple[str, str], int]] = {}
    scope_params = {k: v for k, v in params.items()
                    if k in ("libraries", "exclude_libraries", "include_types", "exclude_types")}
    statement = _kept_pairs_statement(value_kinds[0] if len(value_kinds) == 1 else "AnyArtist", shape)
    for start in range(0, len(keys), 500):
        chunk = [str(k) for k in keys[start:start + 500]]
        for value, lib, item_type, n in s.execute(statement, {**scope_params, "page_values": chunk}).all():
            kept.setdefault(value, {})[(lib, item_type)] = int(n or 0)
    for entry, key in zip(entries, keys, strict=True):
        pairs = dict(kept.get(str(key), {}))
        for lib, item_type, n in hidden.get(str(key), ()):
            if (lib, item_type) in pairs:  # hidden items are among the kept ones; out of scope: not counted
                pairs[(lib, item_type)] -= n
        total = sum(n for n in pairs.values() if n > 0)
        if not total:
            entry.counts = {"ChildCount": 0}
            continue
        counts = {"ChildCount": total}
        if nq.with_counts:
            for label, type_name in COUNT_TYPES:
                counts[label] = sum(n for (_lib, item_type), n in pairs.items() if item_type == type_name and n > 0)
        entry.counts = counts
    return True


def _visible_counts(s: Session, nq: NameQuery, entries: list[NameEntry], keys: list[Any]) -> None:
    """Replace the page's counts by those of the items the viewer may see (the item scope with
    its parental conditions: ``scope``), in one grouped query over the page's names only."""
    if not entries:
        return
    if not nq.want_counts:  # not shown: no kept count (which counts hidden items too) is left either
        for entry in entries:
            entry.counts = {}
        return
    source, conds = scope(s, nq.scope)
    if nq.kind == "Year":
        cols = _count_columns(distinct=False, per_type=nq.with_counts)
        group = items.c.production_year
        q = (select(group.label("key"), *cols).select_from(source)
             .where(*conds, group.in_([int(k) for k in keys])).group_by(group))
    else:
        value_kinds = VALUE_KINDS[nq.kind][0]
        cols = _count_columns(distinct=len(value_kinds) > 1, per_type=nq.with_counts)
        v = item_values.alias("cv")
        group = v.c.clean_value
        q = (select(group.label("key"), *cols).select_from(source.join(v, v.c.item_id == items.c.id))
             .where(*conds, v.c.kind.in_(value_kinds), group.in_(list(keys))).group_by(group))
    found = {str(r.key): _counts(r) for r in s.execute(q).all()}
    for entry, key in zip(entries, keys, strict=True):
        entry.counts = found.get(str(key), {"ChildCount": 0})


def list_names(s: Session, nq: NameQuery) -> tuple[list[NameEntry], int]:
    """One page of by-name entries with their item counts, and the total."""
    use_sql_paging = nq.is_favorite is None
    if nq.kind == "Person":
        return _persons(s, nq, use_sql_paging)
    kept = _kept_listing(s, nq, use_sql_paging)
    if kept is not None:
        return kept
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


@dataclass(frozen=True)
class _PersonShape:
    names: _Shape  # name filters and paging ("libraries": the user's libraries)
    person_types: bool
    exclude_person_types: bool
    appears_in: bool
    with_counts: bool
    descending: bool


@lru_cache(maxsize=256)
def _person_statements(shape: _PersonShape) -> tuple[Any, Any, Any]:
    """(page, total, counts of a page's people (``person_ids``)), built once per shape."""
    return _build_person_statements(shape, [])


def _build_person_statements(shape: _PersonShape, item_conditions: list[Any]) -> tuple[Any, Any, Any]:
    """``_person_statements`` with extra conditions on the linked items (the viewer's parental
    rules: those statements carry their values and are built per request)."""
    ip = item_people.alias("pip")
    link = [ip.c.person_id == people.c.id]
    if shape.person_types:
        link.append(ip.c.kind.in_(bindparam("person_types", expanding=True, type_=String())))
    if shape.exclude_person_types:
        link.append(ip.c.kind.not_in(bindparam("exclude_person_types", expanding=True, type_=String())))
    if shape.appears_in:
        link.append(ip.c.item_id == bindparam("appears_in", type_=String()))
    if shape.names.libraries == "some":
        link.append(items.c.library_id.in_(bindparam("libraries", expanding=True, type_=String())))
    elif shape.names.libraries == "none":
        link.append(literal(False))
    link += item_conditions
    linked = select(literal(1)).select_from(ip.join(items, items.c.id == ip.c.item_id)).where(*link).exists()
    order = func.lower(people.c.name)
    q = (select(people.c.id, people.c.name, people.c.image_tag)
         .where(*_bound_name_filters(people.c.name, shape.names), linked)
         .order_by(order.desc() if shape.descending else order.asc()))
    total = select(func.count()).select_from(q.with_only_columns(people.c.id).order_by(None).subquery())
    counts = (select(ip.c.person_id, *_count_columns(per_type=shape.with_counts))
              .select_from(ip.join(items, items.c.id == ip.c.item_id))
              .where(ip.c.person_id.in_(bindparam("person_ids", expanding=True, type_=String())), *link[1:])
              .group_by(ip.c.person_id))
    return _paged(q, shape.names), total, counts


@lru_cache(maxsize=64)
def _person_statements_with(shape: _PersonShape, parental: tuple[ParentalRules, tuple[str, ...]]
                            ) -> tuple[Any, Any, Any]:
    """``_person_statements`` whose links count only to items the viewer's rules let them see,
    built once per shape and ``parental_key`` (as ``_visible_statements``)."""
    return _build_person_statements(shape, list(conditions_for(parental)))


@lru_cache(maxsize=64)
def _person_statements_without(shape: _PersonShape, hidden_pairs: tuple[tuple[str, str], ...]
                               ) -> tuple[Any, Any, Any]:
    """``_person_statements`` leaving out the links to items of these (library, item type) pairs
    (every linked item of theirs hidden from the viewer, every other one shown: ``people_profile``)."""
    pair = tuple_(func.coalesce(items.c.library_id, ""), func.coalesce(items.c.type, ""))
    return _build_person_statements(shape, [pair.not_in(list(hidden_pairs))])


def people_profile(s: Session, rules: ParentalRules, totals: tuple[Any, Generations] | None
                   ) -> dict[tuple[str, str], tuple[int, int]] | None:
    """``parental_profile`` for the items linked to a person (any owner): per (library, item
    type), how many there are and how many the viewer's rules hide (``parental_conditions``), in
    one grouped query kept in ``totals``' cache for the content generation (a rating, tag or
    people edit, a scan: counted again) and keyed by the rules (a policy change is another key).
    None when not kept (no cache)."""
    return _profile(s, rules, totals, "people", func.coalesce(items.c.type, ""), _LINKED_TO_A_PERSON)


#: ``people_profile``'s items: those linked to a person
_LINKED_TO_A_PERSON = select(literal(1)).select_from(item_people).where(item_people.c.item_id == items.c.id).exists()


#: ``_people_hidden_pairs``: no linked item in the list's scope is one the viewer may see
_NOTHING_VISIBLE = (("", ""),)


def _people_hidden_pairs(s: Session, nq: NameQuery, rules: ParentalRules, libraries: tuple[str, ...] | None
                         ) -> tuple[tuple[str, str], ...] | None:
    """From ``people_profile``: ``_NOTHING_VISIBLE`` when the rules hide every linked item in
    the libraries in scope (no person can be listed: nothing is walked); the (library, item type)
    pairs to leave out when each pair in scope is wholly hidden or wholly shown (the links to
    the rest need no parental condition); None when a pair in scope is only partly hidden (each
    person is probed with the viewer's ``parental_conditions``)."""
    profile = people_profile(s, rules, nq.totals)
    if profile is None:
        return None
    in_scope = {p: nh for p, nh in profile.items() if libraries is None or p[0] in libraries}
    if all(h == n for n, h in in_scope.values()):
        return _NOTHING_VISIBLE
    if any(0 < h < n for n, h in in_scope.values()):
        return None
    return tuple(sorted(p for p, (n, h) in in_scope.items() if h))


def _persons(s: Session, nq: NameQuery, use_sql_paging: bool) -> tuple[list[NameEntry], int]:
    """People linked to an item in scope. The page comes first (people in name order that have
    such a link: an indexed probe per person), then the counts of that page only, so the cost
    does not grow with the number of links. The statements are built once per shape. With
    parental rules a person is listed only with an item the viewer may see: ``people_profile``
    answers at once when no linked item in scope is visible, and replaces the rules by the pairs
    they hide wholly when no pair is partly hidden; else each person is probed with the rules."""
    allowed = nq.scope.allowed_library_ids
    libraries = None if allowed is None else tuple(sorted(allowed))
    shape = _PersonShape(names=_shape(nq, libraries, paged=use_sql_paging), person_types=bool(nq.person_types),
                         exclude_person_types=bool(nq.exclude_person_types),
                         appears_in=bool(nq.appears_in_item_id), with_counts=nq.with_counts,
                         descending=nq.descending)
    rules = nq.scope.parental
    if rules is not None and rules.active:  # a person is listed only with an item the viewer may see
        hidden_pairs = _people_hidden_pairs(s, nq, rules, libraries)
        if hidden_pairs is _NOTHING_VISIBLE:
            return [], 0
        if hidden_pairs is None:
            page, total, counts_q = _person_statements_with(shape, parental_key(s, rules))
        elif hidden_pairs:
            page, total, counts_q = _person_statements_without(shape, hidden_pairs)
        else:
            page, total, counts_q = _person_statements(shape)
    else:
        page, total, counts_q = _person_statements(shape)
    params = _name_params(nq)
    if shape.person_types:
        params["person_types"] = list(nq.person_types)
    if shape.exclude_person_types:
        params["exclude_person_types"] = list(nq.exclude_person_types)
    if shape.appears_in:
        params["appears_in"] = nq.appears_in_item_id
    if libraries:
        params["libraries"] = list(libraries)

    def make_all(rows: Sequence[Any]) -> list[NameEntry]:
        counts: dict[str, Any] = {}
        person_ids = [r.id for r in rows]
        for start in range(0, len(person_ids), 500):
            counts.update((r.person_id, r) for r in s.execute(
                counts_q, {**params, "person_ids": person_ids[start:start + 500]}).all())
        return [NameEntry("Person", r.name, r.id, _counts(counts[r.id]) if r.id in counts else {"ChildCount": 0},
                          r.image_tag) for r in rows]

    st = _Statements(page=page, total=total)
    if use_sql_paging:
        return _run_page(s, st, params, nq, shape.names, make_all)
    return _page(make_all(s.execute(page, params).all()), nq, _favorites(s, nq.scope.user_id))


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
    return with_user_data(s, build_name_page(s, entries, opts, server_id), opts)


@dataclass
class NamePage:
    """By-name DTOs made without UserData (``build_name_page``): they depend on the library's
    content only, so ``NamePages`` keeps them while nothing but user data is written, and
    ``with_user_data`` makes each reply's copies with the viewer's UserData. ``rows``: per DTO,
    the item row its UserData is made from (a MusicArtist row: ``dto._user_data_dto``), or None
    (a by-name entry's own UserData)."""

    dtos: list[w.BaseItemDto]
    rows: list[ItemRow | None]
    total: int = 0


def build_name_page(s: Session, entries: list[NameEntry], opts: DtoOptions, server_id: str,
                    total: int = 0) -> NamePage:
    """``build_name_dtos`` without UserData (whatever ``opts.enable_user_data`` says)."""
    if not entries:
        return NamePage([], [], total)
    bare = replace(opts, enable_user_data=False) if opts.enable_user_data else opts
    artist_ids = [e.id for e in entries if e.kind == "MusicArtist"]
    rows: dict[str, tuple[ItemRow, w.BaseItemDto]] = {}
    if artist_ids:
        # (their rows in the entries' order, read on the driver's cursor as an Items page's: get_rows)
        found = get_rows(s, artist_ids)
        artist_rows = [found[i] for i in artist_ids if i in found]
        rows = {r.id: (r, dto) for r, dto in zip(artist_rows, build_dtos(s, artist_rows, bare, server_id),
                                                 strict=True)}
    art: dict[str, list[dict]] = {}
    if opts.enable_images or opts.has("PrimaryImageAspectRatio"):
        wanted = [e.id for e in entries if e.id not in rows and e.kind in ("Genre", "MusicGenre", "MusicArtist")]
        if wanted:  # collages and covers made by server/artwork (or the by-name folder's own picture)
            b = byname_artwork.c  # (on the table: a reader process never loads the ORM classes)
            for art_id, text in s.execute(select(b.id, b.images_json).where(b.id.in_(wanted))).all():
                found = decode_json(text, [])
                art[art_id] = [i for i in found if isinstance(i, dict) and i.get("Type") and i.get("Tag")] \
                    if isinstance(found, list) else []
    out = []
    user_rows: list[ItemRow | None] = []
    want_counts = opts.has("ItemCounts") or opts.has("ChildCount") or opts.has("RecursiveItemCount")
    for e in entries:
        found_row = rows.get(e.id)
        if found_row is not None:
            row, dto = found_row
            user_rows.append(row)
        else:
            user_rows.append(None)
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
    return NamePage(out, user_rows, total)


def with_user_data(s: Session, page: NamePage, opts: DtoOptions) -> list[w.BaseItemDto]:
    """The page's DTOs as a reply gives them: copies (the page's own may be kept) with the
    viewer's UserData when ``opts`` asks for it, read in one query. A row's UserData is made as
    ``build_dtos`` makes it (no folder counts: a MusicArtist is no series or season); a by-name
    entry's as Jellyfin's (no position, no last played date)."""
    if not (opts.enable_user_data and opts.user_id) or not page.dtos:
        return [msgspec.structs.replace(dto) for dto in page.dtos]
    uds = user_data_rows(s, opts.user_id, [dto.Id for dto in page.dtos if dto.Id])
    out = []
    for dto, row in zip(page.dtos, page.rows, strict=True):
        item_id = dto.Id or ""
        ud = uds.get(item_id)
        if row is not None:
            user = user_data_dto(row, ud, None)
        else:
            user = w.UserItemDataDto(
                PlaybackPositionTicks=0, PlayCount=ud.play_count if ud else 0,
                IsFavorite=bool(ud.is_favorite) if ud else False, Played=bool(ud.played) if ud else False,
                Likes=ud.likes if ud else None, Rating=ud.rating if ud else None, Key=item_id, ItemId=item_id)
        out.append(msgspec.structs.replace(dto, UserData=user))
    return out


class NamePages(GenerationCache[tuple[Any, ...], NamePage]):
    """Pages of by-name lists (``NamePage``: entries counted, DTOs without UserData) kept per
    content generation (``Database.content_generation`` read before the page was made: a
    play-state write keeps them, any other write does not), keyed by the whole ``NameQuery`` (the viewer's scope,
    rules and paging) and the DTO options. Only lists whose answer reads no user data are kept
    (no favourite or played filter)."""

    def __init__(self, size: int = 32) -> None:
        super().__init__(size)

    @staticmethod
    def key(nq: NameQuery, opts: DtoOptions) -> tuple[Any, ...] | None:
        """The page's key; None when its answer may read user data."""
        sc = nq.scope
        if (nq.is_favorite is not None or sc.filters or sc.is_played is not None or sc.is_favorite is not None
                or sc.is_resumable is not None or sc.sort_by):
            return None
        return (repr(nq), opts.fields, opts.enable_images, opts.image_type_limit, opts.enable_image_types,
                opts.can_delete, opts.can_download, opts.user_id)

    def put(self, key: tuple[Any, ...], generation: int, page: NamePage) -> None:
        if any(r is not None and r.type in PLAYED_FOLDERS for r in page.rows):
            return  # (their UserData carries played counts of their episodes)
        super().put(key, generation, page)


def is_music_scope(q: ItemQuery, collection_type: str | None) -> bool:
    if collection_type == "music":
        return True
    return bool(q.include_types) and all(t in MUSIC_TYPES for t in q.include_types)


__all__ = ["NameEntry", "NamePage", "NamePages", "NameQuery", "build_name_dtos", "build_name_page", "find_name", "is_music_scope", "list_names", "with_user_data"]
