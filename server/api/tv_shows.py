"""TvShows: seasons, episodes, Next Up and upcoming episodes (server/library/browse/tv.py)."""

from __future__ import annotations

from datetime import datetime

from server.api.base import operation
from server.api.params import DtoOptions, Paging, guid_or_none
from server.api.replies import keep, kept_reply
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w
from server.wire.casing import camel_case_requested


@operation("GetEpisodes", before_request=kept_reply("GetEpisodes", sortable=True))
async def get_episodes(
    ctx: ServerContext, auth: AuthInfo | None, seriesId: str, dto: DtoOptions, page: Paging,
    userId: str | None = None, season: int | None = None, seasonId: str | None = None,
    isMissing: bool | None = None, adjacentTo: str | None = None, startItemId: str | None = None,
    sortBy: str | None = None,
) -> bytes:
    """A BaseItemDtoQueryResult, encoded by TvService.episodes_reply in the request's casing."""
    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    opts = dto.options(ctx.items, viewer)
    return keep(ctx, await ctx.browse.tv.episodes_reply(
        seriesId, viewer, opts, camel_case_requested.get(), season=season, season_id=guid_or_none(seasonId, "seasonId"), is_missing=isMissing,
        adjacent_to=guid_or_none(adjacentTo, "adjacentTo"), start_item_id=guid_or_none(startItemId, "startItemId"),
        start_index=start, limit=limit, sort_by=sortBy), viewer)


@operation("GetSeasons", before_request=kept_reply("GetSeasons"))
async def get_seasons(
    ctx: ServerContext, auth: AuthInfo | None, seriesId: str, dto: DtoOptions, userId: str | None = None,
    isSpecialSeason: bool | None = None, isMissing: bool | None = None, adjacentTo: str | None = None,
) -> bytes:
    """A BaseItemDtoQueryResult, encoded by TvService.seasons_reply in the request's casing."""
    viewer = await ctx.items.viewer(auth, userId)
    opts = dto.options(ctx.items, viewer)
    return keep(ctx, await ctx.browse.tv.seasons_reply(seriesId, viewer, opts, camel_case_requested.get(),
                                                       is_special=isSpecialSeason, is_missing=isMissing,
                                                       adjacent_to=guid_or_none(adjacentTo, "adjacentTo")), viewer)


@operation("GetNextUp", before_request=kept_reply("GetNextUp"))
async def get_next_up(
    ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging, userId: str | None = None,
    seriesId: str | None = None, parentId: str | None = None, nextUpDateCutoff: datetime | None = None,
    enableTotalRecordCount: bool | None = None, disableFirstEpisode: bool | None = None,
    enableResumable: bool | None = None, enableRewatching: bool | None = None,
) -> bytes:
    """A BaseItemDtoQueryResult, encoded by TvService.next_up_reply in the request's casing."""
    from server.library.browse.tv import NextUpQuery  # with ctx.browse.tv: loaded on first use

    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    opts = dto.options(ctx.items, viewer)
    nq = NextUpQuery(series_id=guid_or_none(seriesId, "seriesId"), parent_id=guid_or_none(parentId, "parentId"),
                     start_index=start, limit=limit, date_cutoff=nextUpDateCutoff,
                     disable_first_episode=bool(disableFirstEpisode), enable_resumable=enableResumable is not False,
                     enable_rewatching=bool(enableRewatching),
                     enable_total_record_count=enableTotalRecordCount is not False)
    return keep(ctx, await ctx.browse.tv.next_up_reply(viewer, nq, opts, camel_case_requested.get()), viewer)


@operation("GetUpcomingEpisodes")
async def get_upcoming_episodes(
    ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging, userId: str | None = None,
    parentId: str | None = None,
) -> w.BaseItemDtoQueryResult:
    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    opts = dto.options(ctx.items, viewer)
    return await ctx.browse.tv.upcoming(viewer, opts, parent_id=guid_or_none(parentId, "parentId"),
                                        start_index=start, limit=limit)
