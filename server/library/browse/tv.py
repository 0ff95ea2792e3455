"""TV shows: seasons, episodes, Next Up and upcoming episodes.

Seasons, episodes and upcoming episodes are item queries (the query engine). Next Up follows
Jellyfin: for each series the user has watched (most recently watched first), the last
watched episode is the played one furthest along (season, episode; specials left out) and the
next up is the first unplayed episode after it. With ``enableRewatching`` the last watched is
the most recently played episode and the next one may have been played before. A series named
by ``seriesId`` that was never watched offers its first episode unless ``disableFirstEpisode``.
All of it is one SQL query (a window over the user's played rows, then a correlated lookup per
series over its own rows)
(``next_up_ids``), whatever the number of series.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Select,
    String,
    and_,
    bindparam,
    exists,
    false,
    func,
    literal,
    literal_column,
    or_,
    select,
    true,
    tuple_,
)

from server.db.handles import items, user_data
from server.errors import NotFoundError
from server.guid import normalize_guid
from server.library.catalog.dto import DtoOptions, build_dtos
from server.library.catalog.items import Viewer
from server.library.catalog.query import (
    ItemQuery,
    ItemRow,
    ParentalRules,
    get_row,
    get_rows,
    parental_conditions,
    run_query,
)
from server.wire import models as w
from server.wire.casing import encode_wire

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database
    from server.library.catalog.items import ItemService



@dataclass
class NextUpQuery:
    series_id: str | None = None
    parent_id: str | None = None
    start_index: int = 0
    limit: int | None = None
    date_cutoff: datetime | None = None
    disable_first_episode: bool = False
    enable_resumable: bool = True
    enable_rewatching: bool = False
    enable_total_record_count: bool = True


def _utc(value: datetime | None) -> datetime | None:
    """Aware UTC (the database's datetime columns store aware values); naive input is UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _episodes(series_id: str):
    c = items.c
    # The type test is wrapped so that SQLite's planner takes the series_id index (a series'
    # few rows) rather than the type index (every episode of the library).
    return and_(c.series_id == series_id, func.coalesce(c.type, "") == "Episode", c.owner_id.is_(None),
                c.is_virtual == false(), func.coalesce(c.parent_index_number, 1) != 0)


def _first_episode(s: Session, user_id: str, series_id: str, nq: NextUpQuery,
                   parental: ParentalRules | None = None) -> ItemRow | None:
    """A series nobody watched yet: its first unplayed episode (the seriesId case) the viewer's
    parental rules let them see."""
    c = items.c
    joined = items.outerjoin(user_data, and_(user_data.c.item_id == c.id, user_data.c.user_id == user_id))
    played = func.coalesce(user_data.c.played, false()) == true()
    q = select(items).select_from(joined).where(_episodes(series_id), ~played)
    if parental is not None:
        q = q.where(*parental_conditions(s, parental))
    if not nq.enable_resumable:
        q = q.where(func.coalesce(user_data.c.playback_position_ticks, 0) == 0)
    season_col, number_col = func.coalesce(c.parent_index_number, 1), func.coalesce(c.index_number, 0)
    first = s.execute(q.order_by(season_col, number_col, c.sort_name, c.id).limit(1)).first()
    return None if first is None else ItemRow._make(first)


def next_up_ids(s: Session, user_id: str, nq: NextUpQuery, allowed: frozenset[str] | None) -> list[str]:
    """Every watched series' next episode, most recently watched series first: one query, built
    once per shape (which filters are present) with its values bound, so a request pays neither
    the statement's construction nor its compilation (together ~4 ms, several times the query)."""
    stmt = _next_up_statement(bool(nq.series_id), bool(nq.parent_id), allowed is not None,
                              nq.date_cutoff is not None, nq.enable_rewatching, nq.enable_resumable,
                              s.get_bind().dialect.name == "postgresql")
    params: dict[str, object] = {"user_id": user_id}
    if nq.series_id:
        params["series_id"] = nq.series_id
    if nq.parent_id:
        params["parent_id"] = nq.parent_id
    if allowed is not None:
        params["allowed"] = sorted(allowed)
    if nq.date_cutoff is not None:
        params["date_cutoff"] = nq.date_cutoff
    return [r[0] for r in s.execute(stmt, params).all() if r[0] is not None]


@lru_cache(maxsize=64)
def _next_up_statement(by_series: bool, by_parent: bool, by_library: bool, by_date: bool, rewatching: bool,
                       resumable: bool, postgres: bool = False) -> Select[Any]:
    """``played``: the user's played episodes (driven from user_data), numbered per series from the
    one that decides (furthest along; with rewatching, the most recently played) and carrying
    the series' last played date. ``last``: that deciding episode per series. ``following``: the
    episodes after it, in play order; the first of each is Next Up. A play date may be NULL (an
    episode marked played without one): newest first puts it last, as SQLite does by itself and
    PostgreSQL (NULL is its largest value) only when told (``postgres``)."""
    user_id = bindparam("user_id", type_=String())
    c, ud = items.c, user_data

    def newest_first(column: Any) -> Any:
        return column.desc().nulls_last() if postgres else column.desc()

    season, number = func.coalesce(c.parent_index_number, 1), func.coalesce(c.index_number, 0)
    decide = ([newest_first(ud.c.last_played_date)] if rewatching else []) + [season.desc(), number.desc()]
    played = (select(c.series_id.label("series_id"), season.label("s"), number.label("n"),
                     func.max(ud.c.last_played_date).over(partition_by=c.series_id).label("series_played"),
                     func.row_number().over(partition_by=c.series_id, order_by=decide).label("rn"))
              .select_from(ud.join(items, c.id == ud.c.item_id))
              .where(ud.c.user_id == user_id, ud.c.played == true(), func.coalesce(c.type, "") == "Episode",
                     c.series_id.is_not(None), c.owner_id.is_(None), season != 0))
    if by_series:
        played = played.where(c.series_id == bindparam("series_id", type_=String()))
    if by_parent:
        parent = bindparam("parent_id", type_=String())
        played = played.where(or_(c.library_id == parent, c.series_id == parent, c.season_id == parent))
    if by_library:
        played = played.where(c.library_id.in_(bindparam("allowed", expanding=True, type_=String())))
    played = played.subquery("played")
    last = select(played).where(played.c.rn == 1)
    if by_date:
        last = last.where(played.c.series_played >= bindparam("date_cutoff", type_=user_data.c.last_played_date.type))
    last = last.subquery("last")
    e = items.alias("e")
    ud2 = user_data.alias("ud2")
    # Spelled as ix_items_episode_order (0011_lists_fast) is built: the series, type and owner,
    # then the play order as the same expressions (literals, not parameters, so the planner
    # matches them): a seek past the deciding episode and a walk in index order to the first
    # candidate, with no episode row read and nothing sorted.
    es = func.coalesce(e.c.parent_index_number, literal_column("1"))
    en = func.coalesce(e.c.index_number, literal_column("0"))
    following = (select(e.c.id).where(
        e.c.series_id == last.c.series_id, e.c.type == "Episode", e.c.owner_id.is_(None),
        e.c.is_virtual == false(), es != 0, tuple_(es, en) > tuple_(last.c.s, last.c.n)))
    if not rewatching:
        following = following.where(~exists(select(literal(1)).where(
            ud2.c.user_id == user_id, ud2.c.item_id == e.c.id, ud2.c.played == true())))
    if not resumable:
        following = following.where(~exists(select(literal(1)).where(
            ud2.c.user_id == user_id, ud2.c.item_id == e.c.id, ud2.c.playback_position_ticks > 0)))
    # Per series (correlated), from ix_items_episode_order.
    next_id = following.order_by(es, en, e.c.sort_name, e.c.id).limit(1).correlate(last).scalar_subquery()
    # series with nothing next are dropped by the caller, not by a WHERE on the subquery (SQLite
    # would flatten it and run the per-series lookup twice)
    return select(next_id, last.c.series_played, last.c.series_id).order_by(newest_first(last.c.series_played),
                                                                           last.c.series_id)


def _parental_visible(s: Session, ids: list[str], parental: ParentalRules) -> list[str]:
    """``ids`` (in their order) that ``parental`` rules let the viewer see."""
    seen: set[str] = set()
    for at in range(0, len(ids), 500):
        chunk = ids[at:at + 500]
        seen.update(s.execute(select(items.c.id).where(items.c.id.in_(chunk), *parental_conditions(s, parental)))
                    .scalars())
    return [i for i in ids if i in seen]


def next_up_rows(s: Session, user_id: str, nq: NextUpQuery, allowed: frozenset[str] | None,
                 parental: ParentalRules | None = None) -> tuple[list[ItemRow], int]:
    """Next Up's page and total. ``parental``: the viewer's parental rules; an episode they hide
    is not offered (the series is left out, as its next episode is not for this viewer)."""
    found = next_up_ids(s, user_id, nq, allowed)
    if parental is not None and found:
        found = _parental_visible(s, found, parental)
    if nq.series_id and not found:
        watched = s.execute(select(func.count()).select_from(user_data.join(items, items.c.id == user_data.c.item_id))
                            .where(user_data.c.user_id == user_id, user_data.c.played == true(),
                                   items.c.series_id == nq.series_id)).scalar()
        if not watched and not nq.disable_first_episode:
            first = _first_episode(s, user_id, nq.series_id, nq, parental)
            return ([first] if first is not None and nq.start_index == 0 and nq.limit != 0 else []), \
                (1 if first is not None else 0)
    end = None if nq.limit is None else nq.start_index + nq.limit
    page = found[nq.start_index:end]
    rows = get_rows(s, page)
    return [rows[i] for i in page if i in rows], len(found)


class TvService:
    def __init__(self, db: Database, items: ItemService) -> None:
        self.db = db
        self.items = items

    async def _series(self, series_id: str, viewer: Viewer) -> ItemRow:
        row = await self.items.row(series_id, viewer)
        if row.type != "Series":
            raise NotFoundError(f"Series {series_id} not found.")
        return row

    async def _seasons_query(self, series_id: str, viewer: Viewer, is_special: bool | None,
                             is_missing: bool | None, adjacent_to: str | None) -> ItemQuery:
        series = await self._series(series_id, viewer)
        q = ItemQuery(parent_id=series.id, include_types=["Season"], sort_by=["IndexNumber", "SortName"],
                      is_missing=is_missing, adjacent_to=adjacent_to)
        if is_special is not None:
            q.index_number = 0 if is_special else None
        return self.items.scoped(q, viewer)

    async def seasons(self, series_id: str, viewer: Viewer, opts: DtoOptions, *, is_special: bool | None = None,
                      is_missing: bool | None = None, adjacent_to: str | None = None) -> w.BaseItemDtoQueryResult:
        q = await self._seasons_query(series_id, viewer, is_special, is_missing, adjacent_to)
        result = await self.items.query(q, opts)
        if is_special is False:
            result.Items = [i for i in result.Items or [] if i.IndexNumber != 0]
            result.TotalRecordCount = len(result.Items)
        return result

    async def seasons_reply(self, series_id: str, viewer: Viewer, opts: DtoOptions, camel: bool, *,
                            is_special: bool | None = None, is_missing: bool | None = None,
                            adjacent_to: str | None = None) -> bytes:
        """``seasons``' reply already encoded, from per-item fragments (ItemService.rows_reply)."""
        q = await self._seasons_query(series_id, viewer, is_special, is_missing, adjacent_to)
        items = self.items

        def read(s: Session) -> bytes:
            rows, total = run_query(s, q, items.count_cache, self.db.generations)
            if is_special is False:
                rows = [r for r in rows if r.index_number != 0]
                total = len(rows)
            return items.rows_reply(s, rows, total, q.start_index, opts, camel)

        return await self.db.read(read)

    async def _episodes_query(self, series_id: str, viewer: Viewer, season: int | None, season_id: str | None,
                              is_missing: bool | None, adjacent_to: str | None, sort_by: str | None) -> ItemQuery:
        series = await self._series(series_id, viewer)
        season_key: str | None = None
        if season_id:
            season_row = await self.items.row(season_id, viewer)
            if season_row.type != "Season":
                raise NotFoundError(f"Season {season_id} not found.")
            season_key = season_row.id
        return self.items.scoped(_episodes_of(series.id, season_key, season, is_missing, adjacent_to, sort_by),
                                 viewer)

    def _episodes_in_read(self, series_id: str, viewer: Viewer, season: int | None, season_id: str | None,
                          is_missing: bool | None, adjacent_to: str | None, sort_by: str | None
                          ) -> tuple[ItemQuery, Callable[[Session], None]] | None:
        """``_episodes_query``'s query made of the ids as given, and the check of its series (and
        season) to run in the page's read: it raises ``_ParentElsewhere`` for an id that is no
        series (season) the viewer may see. None: an id that is no GUID (as before: 404)."""
        series_key = normalize_guid(series_id)
        season_key = normalize_guid(season_id) if season_id else None
        if series_key is None or (season_id and season_key is None):
            return None
        items_ = self.items

        def check(s: Session) -> None:
            for key, kind in ((series_key, "Series"), (season_key, "Season")):
                if key is None:
                    continue
                row = get_row(s, key)
                if row is None or row.type != kind or not items_._may_see(s, row, viewer):
                    raise _ParentElsewhere

        return self.items.scoped(_episodes_of(series_key, season_key, season, is_missing, adjacent_to, sort_by),
                                 viewer), check

    @staticmethod
    def _from_start_item(rows: list[ItemRow], start_item_id: str, start_index: int,
                         limit: int | None) -> tuple[list[ItemRow], int]:
        ids = [r.id for r in rows]
        if start_item_id in ids:
            rows = rows[ids.index(start_item_id):]
        total = len(rows)
        return rows[start_index:None if limit is None else start_index + limit], total

    async def episodes(self, series_id: str, viewer: Viewer, opts: DtoOptions, *, season: int | None = None,
                       season_id: str | None = None, is_missing: bool | None = None, adjacent_to: str | None = None,
                       start_item_id: str | None = None, start_index: int = 0, limit: int | None = None,
                       sort_by: str | None = None) -> w.BaseItemDtoQueryResult:
        q = await self._episodes_query(series_id, viewer, season, season_id, is_missing, adjacent_to, sort_by)
        if not start_item_id:
            q.start_index, q.limit = start_index, limit
            return await self.items.query(q, opts)
        rows, total = self._from_start_item((await self.items.rows(q))[0], start_item_id, start_index, limit)
        return w.BaseItemDtoQueryResult(Items=await self.items.dtos(rows, opts), TotalRecordCount=total,
                                        StartIndex=start_index)

    async def episodes_reply(self, series_id: str, viewer: Viewer, opts: DtoOptions, camel: bool, *,
                             season: int | None = None, season_id: str | None = None,
                             is_missing: bool | None = None, adjacent_to: str | None = None,
                             start_item_id: str | None = None, start_index: int = 0, limit: int | None = None,
                             sort_by: str | None = None) -> bytes:
        """``episodes``' reply already encoded, from per-item fragments (ItemService.rows_reply).
        The series (and season) are checked in the page's own read (``query_reply_read`` run
        after the check: one thread hop and session, not two or three); one the viewer may not
        see goes the way it went before (its 404)."""
        if not start_item_id:
            folded = self._episodes_in_read(series_id, viewer, season, season_id, is_missing, adjacent_to, sort_by)
            if folded is not None:
                q, check = folded
                q.start_index, q.limit = start_index, limit
                page = self.items.query_reply_read(q, opts, camel)

                def checked(s: Session) -> bytes:
                    check(s)
                    return page(s)

                try:
                    return await self.db.read_lean(checked)
                except _ParentElsewhere:
                    pass
        q = await self._episodes_query(series_id, viewer, season, season_id, is_missing, adjacent_to, sort_by)
        if not start_item_id:
            q.start_index, q.limit = start_index, limit
            return await self.items.query_reply(q, opts, camel)
        items, start_id = self.items, start_item_id

        def read(s: Session) -> bytes:
            rows, total = self._from_start_item(run_query(s, q)[0], start_id, start_index, limit)
            return items.rows_reply(s, rows, total, start_index, opts, camel)

        return await self.db.read(read)

    async def next_up(self, viewer: Viewer, nq: NextUpQuery, opts: DtoOptions) -> w.BaseItemDtoQueryResult:
        if viewer.user_id is None:
            return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=nq.start_index)
        if nq.series_id:
            await self._series(nq.series_id, viewer)
        nq.date_cutoff = _utc(nq.date_cutoff)
        user_id, allowed, parental = viewer.user_id, viewer.allowed_library_ids, viewer.parental

        def read(s: Session) -> w.BaseItemDtoQueryResult:
            rows, total = next_up_rows(s, user_id, nq, allowed, parental)
            return w.BaseItemDtoQueryResult(Items=build_dtos(s, rows, opts, self.items.server_id),
                                            TotalRecordCount=total, StartIndex=nq.start_index)

        return await self.db.read(read)

    async def next_up_reply(self, viewer: Viewer, nq: NextUpQuery, opts: DtoOptions, camel: bool) -> bytes:
        """``next_up``'s reply already encoded, from per-item fragments (ItemService.rows_reply)."""
        if viewer.user_id is None:
            return encode_wire(w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=nq.start_index),
                               camel)
        if nq.series_id:
            await self._series(nq.series_id, viewer)
        nq.date_cutoff = _utc(nq.date_cutoff)
        user_id, allowed, parental, items = viewer.user_id, viewer.allowed_library_ids, viewer.parental, self.items

        def read(s: Session) -> bytes:
            rows, total = next_up_rows(s, user_id, nq, allowed, parental)
            return items.rows_reply(s, rows, total, nq.start_index, opts, camel)

        return await self.db.read(read)

    async def upcoming(self, viewer: Viewer, opts: DtoOptions, *, parent_id: str | None, start_index: int,
                       limit: int | None) -> w.BaseItemDtoQueryResult:
        since = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)
        q = ItemQuery(parent_id=parent_id, recursive=True, include_types=["Episode"], min_premiere_date=since,
                      sort_by=["PremiereDate", "AiredEpisodeOrder", "SortName"], start_index=start_index, limit=limit)
        self.items.scoped(q, viewer)
        return await self.items.query(q, opts)


class _ParentElsewhere(Exception):
    """A list's series or season is not one the viewer may see: checked again the way it was
    before, which answers its 404."""


def _episodes_of(series_id: str, season_id: str | None, season: int | None, is_missing: bool | None,
                 adjacent_to: str | None, sort_by: str | None) -> ItemQuery:
    """The (unscoped) query of a series' episodes, or of one season's (by id, else by number)."""
    if season_id is not None:
        q = ItemQuery(parent_id=season_id, recursive=True)
    else:
        q = ItemQuery(parent_id=series_id, recursive=True, parent_index_number=season)
    q.include_types = ["Episode"]
    q.is_missing = is_missing
    q.adjacent_to = adjacent_to
    q.sort_by = [sort_by] if sort_by and sort_by != "Default" else ["AiredEpisodeOrder", "SortName"]
    return q
