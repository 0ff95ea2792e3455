"""TV shows: seasons, episodes, Next Up and upcoming episodes.

Seasons, episodes and upcoming episodes are item queries (the query engine). Next Up follows
Jellyfin: for each series the user has watched (most recently watched first), the last
watched episode is the played one furthest along (season, episode; specials left out) and the
next up is the first unplayed episode after it. With ``enableRewatching`` the last watched is
the most recently played episode and the next one may have been played before. A series named
by ``seriesId`` that was never watched offers its first episode unless ``disableFirstEpisode``.
Everything is indexed SQL over the user's played episodes: one grouped query for the series,
then two small queries per series on the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, false, func, or_, select, true
from sqlalchemy.orm import Session

from server.db.tables import UserData
from server.errors import NotFoundError
from server.library.dto import DtoOptions, build_dtos
from server.library.items import Viewer
from server.library.query import ItemQuery, items
from server.wire import models as w

if TYPE_CHECKING:
    from server.context import ServerContext

user_data = UserData.__table__


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
    return and_(c.series_id == series_id, c.type == "Episode", c.owner_id.is_(None), c.is_virtual == false(),
                func.coalesce(c.parent_index_number, 1) != 0)


def _order_key(row: Any) -> tuple[int, int]:
    return (row.parent_index_number if row.parent_index_number is not None else 1, row.index_number or 0)


def _after(row: Any):
    """Episodes that come after ``row`` in (season, episode) order."""
    c = items.c
    season, number = _order_key(row)
    season_col = func.coalesce(c.parent_index_number, 1)
    return or_(season_col > season, and_(season_col == season, func.coalesce(c.index_number, 0) > number))


def _watched_series(s: Session, user_id: str, nq: NextUpQuery, allowed: frozenset[str] | None) -> list[tuple[str, Any]]:
    """(series id, last played date) of the series with played episodes, most recent first."""
    c = items.c
    last = func.max(user_data.c.last_played_date)
    q = (select(c.series_id, last).select_from(items.join(user_data, and_(
        user_data.c.item_id == c.id, user_data.c.user_id == user_id)))
        .where(c.type == "Episode", c.series_id.is_not(None), user_data.c.played == true())
        .group_by(c.series_id).order_by(last.desc(), c.series_id))
    if nq.series_id:
        q = q.where(c.series_id == nq.series_id)
    if nq.parent_id:
        q = q.where(or_(c.library_id == nq.parent_id, c.series_id == nq.parent_id, c.season_id == nq.parent_id))
    if allowed is not None:
        q = q.where(c.library_id.in_(sorted(allowed)))
    if nq.date_cutoff is not None:
        q = q.having(last >= nq.date_cutoff)
    return [(r[0], r[1]) for r in s.execute(q).all()]


def _next_for_series(s: Session, user_id: str, series_id: str, nq: NextUpQuery) -> Any | None:
    c = items.c
    joined = items.outerjoin(user_data, and_(user_data.c.item_id == c.id, user_data.c.user_id == user_id))
    played = func.coalesce(user_data.c.played, false()) == true()
    season_col, number_col = func.coalesce(c.parent_index_number, 1), func.coalesce(c.index_number, 0)
    base = select(items).select_from(joined).where(_episodes(series_id))
    if nq.enable_rewatching:
        last = s.execute(base.where(played).order_by(user_data.c.last_played_date.desc(), season_col.desc(),
                                                     number_col.desc()).limit(1)).first()
    else:
        last = s.execute(base.where(played).order_by(season_col.desc(), number_col.desc()).limit(1)).first()
    q = base
    if last is not None:
        q = q.where(_after(last))
        if not nq.enable_rewatching:
            q = q.where(~played)
    else:
        if nq.disable_first_episode:
            return None
        q = q.where(~played)
    if not nq.enable_resumable:
        q = q.where(func.coalesce(user_data.c.playback_position_ticks, 0) == 0)
    return s.execute(q.order_by(season_col, number_col, c.sort_name, c.id).limit(1)).first()


def next_up_rows(s: Session, user_id: str, nq: NextUpQuery, allowed: frozenset[str] | None) -> tuple[list[Any], int]:
    series = _watched_series(s, user_id, nq, allowed)
    if nq.series_id and not series:
        series = [(nq.series_id, None)]
    found: list[Any] = []
    wanted_end = None if nq.limit is None or nq.enable_total_record_count else nq.start_index + nq.limit
    for series_id, _date in series:
        row = _next_for_series(s, user_id, series_id, nq)
        if row is not None:
            found.append(row)
            if wanted_end is not None and len(found) >= wanted_end:
                break
    end = None if nq.limit is None else nq.start_index + nq.limit
    return found[nq.start_index:end], len(found)


class TvService:
    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx

    async def _series(self, series_id: str, viewer: Viewer) -> Any:
        row = await self.ctx.items.row(series_id, viewer)
        if row.type != "Series":
            raise NotFoundError(f"Series {series_id} not found.")
        return row

    async def seasons(self, series_id: str, viewer: Viewer, opts: DtoOptions, *, is_special: bool | None = None,
                      is_missing: bool | None = None, adjacent_to: str | None = None) -> w.BaseItemDtoQueryResult:
        series = await self._series(series_id, viewer)
        q = ItemQuery(parent_id=series.id, include_types=["Season"], sort_by=["IndexNumber", "SortName"],
                      is_missing=is_missing, adjacent_to=adjacent_to)
        if is_special is not None:
            q.index_number = 0 if is_special else None
        self.ctx.items.scoped(q, viewer)
        result = await self.ctx.items.query(q, opts)
        if is_special is False:
            result.Items = [i for i in result.Items or [] if i.IndexNumber != 0]
            result.TotalRecordCount = len(result.Items)
        return result

    async def episodes(self, series_id: str, viewer: Viewer, opts: DtoOptions, *, season: int | None = None,
                       season_id: str | None = None, is_missing: bool | None = None, adjacent_to: str | None = None,
                       start_item_id: str | None = None, start_index: int = 0, limit: int | None = None,
                       sort_by: str | None = None) -> w.BaseItemDtoQueryResult:
        series = await self._series(series_id, viewer)
        if season_id:
            season_row = await self.ctx.items.row(season_id, viewer)
            if season_row.type != "Season":
                raise NotFoundError(f"Season {season_id} not found.")
            q = ItemQuery(parent_id=season_row.id, recursive=True)
        else:
            q = ItemQuery(parent_id=series.id, recursive=True, parent_index_number=season)
        q.include_types = ["Episode"]
        q.is_missing = is_missing
        q.adjacent_to = adjacent_to
        q.sort_by = [sort_by] if sort_by and sort_by != "Default" else ["AiredEpisodeOrder", "SortName"]
        self.ctx.items.scoped(q, viewer)
        if not start_item_id:
            q.start_index, q.limit = start_index, limit
            return await self.ctx.items.query(q, opts)
        rows, _ = await self.ctx.items.rows(q)
        ids = [r.id for r in rows]
        if start_item_id in ids:
            rows = rows[ids.index(start_item_id):]
        total = len(rows)
        rows = rows[start_index:None if limit is None else start_index + limit]
        return w.BaseItemDtoQueryResult(Items=await self.ctx.items.dtos(rows, opts), TotalRecordCount=total,
                                        StartIndex=start_index)

    async def next_up(self, viewer: Viewer, nq: NextUpQuery, opts: DtoOptions) -> w.BaseItemDtoQueryResult:
        if viewer.user_id is None:
            return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=nq.start_index)
        if nq.series_id:
            await self._series(nq.series_id, viewer)
        nq.date_cutoff = _utc(nq.date_cutoff)
        user_id, allowed = viewer.user_id, viewer.allowed_library_ids

        def read(s: Session) -> w.BaseItemDtoQueryResult:
            rows, total = next_up_rows(s, user_id, nq, allowed)
            return w.BaseItemDtoQueryResult(Items=build_dtos(s, rows, opts, self.ctx.system_id),
                                            TotalRecordCount=total, StartIndex=nq.start_index)

        return await self.ctx.db.read(read)

    async def upcoming(self, viewer: Viewer, opts: DtoOptions, *, parent_id: str | None, start_index: int,
                       limit: int | None) -> w.BaseItemDtoQueryResult:
        since = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)
        q = ItemQuery(parent_id=parent_id, recursive=True, include_types=["Episode"], min_premiere_date=since,
                      sort_by=["PremiereDate", "AiredEpisodeOrder", "SortName"], start_index=start_index, limit=limit)
        self.ctx.items.scoped(q, viewer)
        return await self.ctx.items.query(q, opts)


