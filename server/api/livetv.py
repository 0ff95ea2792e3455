"""LiveTv: tuner hosts, listing providers, channels, the XMLTV guide, timers, series timers and
recordings. Services: server/livetv/tuners.py (tuners, channels, guide), guide.py (XMLTV),
recordings.py (timers and the recorder); dto shapes: server/livetv/dto.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from litestar import Response
from litestar.params import JSONBody
from litestar.response import Stream

from server.api.base import operation
from server.api.params import DtoOptions, Paging
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.guid import normalize_guid
from server.library.catalog.query import ItemQuery
from server.livetv import dto
from server.livetv.guide import query_programs
from server.livetv.items import RECORDINGS_FOLDER_ID
from server.livetv.schedules_direct import store_password
from server.livetv.tuners import TUNER_TYPES, Channel
from server.wire import models as w


def _channel_dto(ctx: ServerContext, ch: Channel, with_program: bool = False) -> w.BaseItemDto:
    current = None
    if with_program:
        program = ctx.livetv.guide.airing(ch.id)
        if program is not None:
            current = dto.program_dto(ctx.system_id, program, {ch.id: ch}, ctx.livetv.categories())
    return dto.channel_dto(ctx.system_id, ch, current)


def _empty(start: int | None = None) -> w.BaseItemDtoQueryResult:
    return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=start or 0)


@operation("GetLiveTvInfo")
async def get_live_tv_info(ctx: ServerContext) -> w.LiveTvInfo:
    hosts = ctx.livetv.options().TunerHosts or []
    users = [u.id for u in await ctx.users.all() if u.policy.EnableLiveTvAccess]
    service = w.LiveTvServiceInfo(Name="Reelroom", HomePageUrl="", Status="Ok", StatusMessage="", Version="",
                                  HasUpdateAvailable=False, IsVisible=False,
                                  Tuners=[h.FriendlyName or h.Url or "" for h in hosts])
    return w.LiveTvInfo(Services=[service], IsEnabled=bool(hosts), EnabledUsers=users)


@operation("AddTunerHost")
async def add_tuner_host(ctx: ServerContext, data: JSONBody[w.TunerHostInfo]) -> w.TunerHostInfo:
    tuner = await ctx.livetv.add_tuner(data)
    await ctx.livetv.channels()  # its channels (and the Live TV view) become items now
    return tuner


@operation("DeleteTunerHost")
async def delete_tuner_host(ctx: ServerContext, id: str | None = None) -> None:
    ctx.livetv.delete_tuner(id)
    await ctx.livetv.channels()


@operation("GetTunerHostTypes")
async def get_tuner_host_types() -> list[w.NameIdPair]:
    return [w.NameIdPair(Name=name, Id=kind) for kind, name in TUNER_TYPES.items()]


@operation("DiscoverTuners")
async def discover_tuners(newDevicesOnly: bool = False) -> list[w.TunerHostInfo]:
    return []  # HDHomeRun discovery broadcasts on the LAN; Reelroom adds tuners by URL instead.


@operation("DiscvoverTuners")
async def discvover_tuners(newDevicesOnly: bool = False) -> list[w.TunerHostInfo]:
    return []


@operation("ResetTuner")
async def reset_tuner(ctx: ServerContext, tunerId: str) -> None:
    if not any(h.Id == tunerId for h in ctx.livetv.options().TunerHosts or []):
        raise NotFoundError(f"No tuner {tunerId}.")


@operation("AddListingProvider")
async def add_listing_provider(ctx: ServerContext, data: JSONBody[w.ListingsProviderInfo], pw: str | None = None,
                               validateListings: bool = False, validateLogin: bool = False
                               ) -> w.ListingsProviderInfo:
    source = ctx.livetv.listing_sources.get((data.Type or "").lower())
    if source is not None:  # Schedules Direct: keep the password's SHA-1 only, check the account
        data = await source.validate(store_password(msgspec.structs.replace(data, Type=source.type), pw),
                                     validateLogin, validateListings)
    provider = await ctx.livetv.add_listing_provider(data, validate=True)
    ctx.tasks.start("RefreshGuide")  # the guide follows its providers without waiting a day
    return provider


@operation("DeleteListingProvider")
async def delete_listing_provider(ctx: ServerContext, id: str | None = None) -> None:
    ctx.livetv.delete_listing_provider(id)
    ctx.tasks.start("RefreshGuide")


@operation("GetDefaultListingProvider")
async def get_default_listing_provider() -> w.ListingsProviderInfo:
    return w.ListingsProviderInfo(Type="xmltv", EnableAllTuners=True, EnabledTuners=[], NewsCategories=["news"],
                                  SportsCategories=["sports", "basketball", "baseball", "football"],
                                  KidsCategories=["kids", "family", "children", "childrens", "disney"],
                                  MovieCategories=["movie"], ChannelMappings=[])


@operation("GetLineups")
async def get_lineups(ctx: ServerContext, id: str | None = None, type: str | None = None,
                      location: str | None = None, country: str | None = None) -> list[w.NameIdPair]:
    info = next((p for p in ctx.livetv.options().ListingProviders or [] if id and p.Id == id), None)
    source = ctx.livetv.listing_sources.get(((info.Type if info else None) or type or "").lower())
    if source is None:
        return []
    return await source.lineups(info, country or (info.Country if info else None),
                                location or (info.ZipCode if info else None))


@operation("GetSchedulesDirectCountries", media_type="application/json")
async def get_schedules_direct_countries(ctx: ServerContext) -> Response[Any]:
    return Response(content=await ctx.schedules_direct.countries(), media_type="application/json")


async def _channel_page(ctx: ServerContext, viewer, *, ids: list[str] | None = None, is_favorite: bool | None = None,
                        start: int = 0, limit: int | None = None, item_options: DtoOptions,
                        with_program: bool = True) -> w.BaseItemDtoQueryResult:
    """Channels as items (server/livetv/items.py): user data, favourites and logos come from the
    item store; the programme on air from the guide."""
    await ctx.livetv.channels()  # the item rows follow the tuners' playlists
    q = ctx.items.scoped(ItemQuery(recursive=True, include_types=["TvChannel"], ids=list(ids or []),
                                   is_favorite=is_favorite, sort_by=["SortName"], sort_order=["Ascending"],
                                   start_index=max(start, 0), limit=limit), viewer)
    result = await ctx.items.query(q, item_options.options(ctx.items, viewer))
    if with_program:
        channels = {c.id: c for c in await ctx.livetv.channels()}
        categories = ctx.livetv.categories()
        for item in result.Items or []:
            program = ctx.livetv.guide.airing(item.Id)
            if program is not None:
                item.CurrentProgram = dto.program_dto(ctx.system_id, program, channels, categories)
    return result


@operation("GetLiveTvChannels")
async def get_live_tv_channels(ctx: ServerContext, auth: AuthInfo | None, item_options: DtoOptions, page: Paging,
                               userId: str | None = None, isFavorite: bool | None = None,
                               addCurrentProgram: bool = True) -> w.BaseItemDtoQueryResult:
    viewer = await _viewer(ctx, auth, userId)
    start, limit = page.clamped()
    return await _channel_page(ctx, viewer, is_favorite=isFavorite, start=start, limit=limit,
                               item_options=item_options,
                               with_program=addCurrentProgram)


@operation("GetChannel")
async def get_channel(ctx: ServerContext, auth: AuthInfo | None, channelId: str, userId: str | None = None
                      ) -> w.BaseItemDto:
    key = normalize_guid(channelId)
    viewer = await _viewer(ctx, auth, userId)
    found = (await _channel_page(ctx, viewer, ids=[key], item_options=DtoOptions(fields=["Overview", "Genres"]))
             if key else None)
    if found is None or not found.Items:
        raise NotFoundError(f"No channel {channelId}.")
    return found.Items[0]


async def _viewer(ctx: ServerContext, auth: AuthInfo | None, user_id: str | None):
    viewer = await ctx.items.viewer(auth, user_id)
    if not viewer.may_watch_livetv:
        raise ForbiddenError("This user may not use Live TV (EnableLiveTvAccess).")
    return viewer


# -- the guide ----------------------------------------------------------------------------


@operation("GetGuideInfo")
async def get_guide_info(ctx: ServerContext) -> w.GuideInfo:
    now = datetime.now(UTC)
    days = ctx.livetv.options().GuideDays or 14
    return w.GuideInfo(StartDate=now, EndDate=now + timedelta(days=days))


async def _programs_result(ctx: ServerContext, programs, start: int | None, limit: int | None,
                           sort_by: list[str] | None = None, descending: bool = False) -> w.BaseItemDtoQueryResult:
    if sort_by and any(k.casefold() == "name" for k in sort_by):
        programs = sorted(programs, key=lambda p: (p.name.casefold(), p.start), reverse=descending)
    elif descending:
        programs = list(reversed(programs))
    start = max(start or 0, 0)
    page = programs[start: start + limit if limit is not None else None]
    channels = {c.id: c for c in await ctx.livetv.channels()}
    timers = {t.program_id: t for t in await ctx.recordings.timers() if t.program_id}
    categories = ctx.livetv.categories()
    return w.BaseItemDtoQueryResult(
        Items=[dto.program_dto(ctx.system_id, p, channels, categories, timers) for p in page],
        TotalRecordCount=len(programs), StartIndex=start)


def _flags(isMovie, isSeries, isNews, isKids, isSports) -> dict[str, bool | None]:
    return {"IsMovie": isMovie, "IsSeries": isSeries, "IsNews": isNews, "IsKids": isKids, "IsSports": isSports}


@operation("GetLiveTvPrograms")
async def get_live_tv_programs(ctx: ServerContext, channelIds: list[str] | None = None,
                               minStartDate: datetime | None = None, hasAired: bool | None = None,
                               isAiring: bool | None = None, maxStartDate: datetime | None = None,
                               minEndDate: datetime | None = None, maxEndDate: datetime | None = None,
                               isMovie: bool | None = None, isSeries: bool | None = None, isNews: bool | None = None,
                               isKids: bool | None = None, isSports: bool | None = None, *, page: Paging,
                               sortBy: list[str] | None = None, sortOrder: list[str] | None = None,
                               genres: list[str] | None = None, seriesTimerId: str | None = None
                               ) -> w.BaseItemDtoQueryResult:
    program_ids = None
    if seriesTimerId:
        program_ids = {t.program_id for t in await ctx.recordings.timers(series_timer_id=seriesTimerId)}
    programs = query_programs(
        ctx.livetv.guide.programs, channel_ids=set(channelIds or []) or None, min_start=minStartDate,
        max_start=maxStartDate, min_end=minEndDate, max_end=maxEndDate, has_aired=hasAired, is_airing=isAiring,
        flags=_flags(isMovie, isSeries, isNews, isKids, isSports), categories=ctx.livetv.categories(),
        genres={g.casefold() for g in genres or []} or None, program_ids=program_ids)
    return await _programs_result(ctx, programs, page.startIndex, page.limit, sortBy,
                                  bool(sortOrder) and sortOrder[0] == "Descending")


@operation("GetPrograms")
async def get_programs(ctx: ServerContext, data: JSONBody[w.GetProgramsDto]) -> w.BaseItemDtoQueryResult:
    program_ids = None
    if data.SeriesTimerId:
        program_ids = {t.program_id for t in await ctx.recordings.timers(series_timer_id=data.SeriesTimerId)}
    programs = query_programs(
        ctx.livetv.guide.programs, channel_ids=set(data.ChannelIds or []) or None, min_start=data.MinStartDate,
        max_start=data.MaxStartDate, min_end=data.MinEndDate, max_end=data.MaxEndDate, has_aired=data.HasAired,
        is_airing=data.IsAiring, flags=_flags(data.IsMovie, data.IsSeries, data.IsNews, data.IsKids, data.IsSports),
        categories=ctx.livetv.categories(), genres={g.casefold() for g in data.Genres or []} or None,
        program_ids=program_ids)
    return await _programs_result(ctx, programs, data.StartIndex, data.Limit, data.SortBy,
                                  bool(data.SortOrder) and data.SortOrder[0] == "Descending")


@operation("GetRecommendedPrograms")
async def get_recommended_programs(ctx: ServerContext, page: Paging, isAiring: bool | None = None,
                                   hasAired: bool | None = None, isSeries: bool | None = None,
                                   isMovie: bool | None = None, isNews: bool | None = None, isKids: bool | None = None,
                                   isSports: bool | None = None) -> w.BaseItemDtoQueryResult:
    programs = query_programs(ctx.livetv.guide.programs, is_airing=isAiring,
                              has_aired=hasAired if hasAired is not None else False,
                              flags=_flags(isMovie, isSeries, isNews, isKids, isSports),
                              categories=ctx.livetv.categories())
    return await _programs_result(ctx, programs, 0, page.limit)


@operation("GetProgram")
async def get_program(ctx: ServerContext, programId: str) -> w.BaseItemDto:
    program = ctx.livetv.guide.by_id.get(programId)
    if program is None:
        raise NotFoundError(f"No program {programId}.")
    result = await _programs_result(ctx, [program], 0, 1)
    return result.Items[0]


@operation("GetChannelMappingOptions")
async def get_channel_mapping_options(ctx: ServerContext, providerId: str | None = None
                                      ) -> w.ChannelMappingOptionsDto:
    provider = ctx.livetv.provider(providerId)
    if not ctx.livetv.guide.provider_channels.get(provider.Id or ""):
        await ctx.livetv.refresh_guide_quietly()
    provider_channels = ctx.livetv.guide.provider_channels.get(provider.Id or "", [])
    mappings = {m.Name: m.Value for m in provider.ChannelMappings or []}
    by_id = {p.id: p for p in provider_channels}
    tuner_channels = []
    for ch in await ctx.livetv.channels():
        key = ch.number or ch.tvg_id or ch.id
        mapped = by_id.get(mappings.get(key, "")) or by_id.get(ch.tvg_id or "") or next(
            (p for p in provider_channels if p.number and p.number == ch.number), None)
        tuner_channels.append(w.TunerChannelMapping(Name=ch.name, Id=key, ProviderChannelId=mapped.id if mapped else None,
                                                    ProviderChannelName=mapped.name if mapped else None))
    return w.ChannelMappingOptionsDto(
        TunerChannels=tuner_channels, ProviderChannels=[w.NameIdPair(Name=p.name, Id=p.id) for p in provider_channels],
        Mappings=[w.NameValuePair(Name=k, Value=v) for k, v in mappings.items()],
        ProviderName="Schedules Direct" if provider.Type == "schedulesdirect" else "XmlTV")


@operation("SetChannelMapping")
async def set_channel_mapping(ctx: ServerContext, data: JSONBody[w.SetChannelMappingDto]) -> w.TunerChannelMapping:
    if not data.TunerChannelId or not data.ProviderChannelId:
        raise BadRequestError("TunerChannelId and ProviderChannelId are required.")
    await ctx.livetv.set_channel_mapping(data.ProviderId, data.TunerChannelId, data.ProviderChannelId)
    provider_channels = ctx.livetv.guide.provider_channels.get(data.ProviderId or "", [])
    mapped = next((p for p in provider_channels if p.id == data.ProviderChannelId), None)
    tuner = next((c for c in await ctx.livetv.channels()
                  if data.TunerChannelId in (c.number, c.tvg_id, c.id)), None)
    return w.TunerChannelMapping(Name=tuner.name if tuner else data.TunerChannelId, Id=data.TunerChannelId,
                                 ProviderChannelId=data.ProviderChannelId,
                                 ProviderChannelName=mapped.name if mapped else None)


# -- timers and recordings --------------------------------------------------------------


async def _channels(ctx: ServerContext) -> dict[str, Channel]:
    return {c.id: c for c in await ctx.livetv.channels()}


@operation("GetTimers")
async def get_timers(ctx: ServerContext, channelId: str | None = None, seriesTimerId: str | None = None,
                     isActive: bool | None = None, isScheduled: bool | None = None) -> w.TimerInfoDtoQueryResult:
    timers = await ctx.recordings.timers(channelId, seriesTimerId, isActive, isScheduled)
    channels = await _channels(ctx)
    return w.TimerInfoDtoQueryResult(Items=[dto.timer_dto(ctx.system_id, t, channels) for t in timers],
                                     TotalRecordCount=len(timers), StartIndex=0)


@operation("GetTimer")
async def get_timer(ctx: ServerContext, timerId: str) -> w.TimerInfoDto:
    timer = await ctx.recordings.get_timer(timerId)
    return dto.timer_dto(ctx.system_id, timer, await _channels(ctx))


@operation("GetDefaultTimer")
async def get_default_timer(ctx: ServerContext, programId: str | None = None) -> w.SeriesTimerInfoDto:
    options = ctx.livetv.options()
    base = w.SeriesTimerInfoDto(
        ServerId=ctx.system_id, ServiceName="Reelroom", PrePaddingSeconds=options.PrePaddingSeconds or 0,
        PostPaddingSeconds=options.PostPaddingSeconds or 0, IsPrePaddingRequired=False, IsPostPaddingRequired=False,
        Priority=0, KeepUntil="UntilDeleted", RecordAnyTime=True, RecordAnyChannel=False, RecordNewOnly=False,
        SkipEpisodesInLibrary=False, KeepUpTo=0, Days=[], ImageTags={}, ParentBackdropImageTags=[])
    if not programId:
        return base
    program = ctx.livetv.guide.by_id.get(programId)
    if program is None:
        raise NotFoundError(f"No program {programId}.")
    channel = (await _channels(ctx)).get(program.channel_id)
    return w.SeriesTimerInfoDto(**{
        **{f: getattr(base, f) for f in base.__struct_fields__},
        "ProgramId": program.id, "ExternalProgramId": program.id, "ChannelId": program.channel_id,
        "ChannelName": channel.name if channel else None, "Name": program.name, "Overview": program.overview,
        "StartDate": program.start, "EndDate": program.end})


@operation("CreateTimer")
async def create_timer(ctx: ServerContext, data: JSONBody[w.TimerInfoDto]) -> None:
    await ctx.recordings.create_timer(data)


@operation("UpdateTimer")
async def update_timer(ctx: ServerContext, timerId: str, data: JSONBody[w.TimerInfoDto]) -> None:
    await ctx.recordings.update_timer(timerId, data)


@operation("CancelTimer")
async def cancel_timer(ctx: ServerContext, timerId: str) -> None:
    await ctx.recordings.cancel_timer(timerId)


@operation("GetSeriesTimers")
async def get_series_timers(ctx: ServerContext, sortBy: str | None = None, sortOrder: str | None = None
                            ) -> w.SeriesTimerInfoDtoQueryResult:
    series = await ctx.recordings.series_timers()
    if sortOrder == "Descending":
        series.reverse()
    channels = await _channels(ctx)
    return w.SeriesTimerInfoDtoQueryResult(Items=[dto.series_timer_dto(ctx.system_id, s, channels) for s in series],
                                           TotalRecordCount=len(series), StartIndex=0)


@operation("GetSeriesTimer")
async def get_series_timer(ctx: ServerContext, timerId: str) -> w.SeriesTimerInfoDto:
    series = await ctx.recordings.get_series_timer(timerId)
    return dto.series_timer_dto(ctx.system_id, series, await _channels(ctx))


@operation("CreateSeriesTimer")
async def create_series_timer(ctx: ServerContext, data: JSONBody[w.SeriesTimerInfoDto]) -> None:
    await ctx.recordings.create_series_timer(data)


@operation("UpdateSeriesTimer")
async def update_series_timer(ctx: ServerContext, timerId: str, data: JSONBody[w.SeriesTimerInfoDto]) -> None:
    await ctx.recordings.update_series_timer(timerId, data)


@operation("CancelSeriesTimer")
async def cancel_series_timer(ctx: ServerContext, timerId: str) -> None:
    await ctx.recordings.cancel_series_timer(timerId)


async def _recording_dtos(ctx: ServerContext, viewer, timers, fields: list[str] | None = None) -> list[w.BaseItemDto]:
    """Recordings as items (server/livetv/items.py) with the timer's facts on top."""
    channels = await _channels(ctx)
    ids = [t.id for t in timers]
    rows, _ = await ctx.items.rows(ctx.items.scoped(ItemQuery(recursive=True, ids=ids), viewer)) if ids else ([], 0)
    by_id = {r.id: r for r in rows}
    built = {d.Id: d for d in await ctx.items.dtos(list(by_id.values()), ctx.items.options(viewer, all_fields=True))}
    out = []
    for t in timers:
        base = dto.recording_dto(ctx.system_id, t, channels)
        item = built.get(t.id)
        if item is None:
            if viewer.may_watch_livetv:
                out.append(base)  # recorded before recordings were items
            continue
        program = ctx.livetv.guide.by_id.get(t.program_id or "")
        flags = program.flags(ctx.livetv.categories()) if program is not None else {}
        for name in ("ChannelId", "ChannelName", "StartDate", "EndDate", "Status", "TimerId", "SeriesTimerId",
                     "CompletionPercentage"):
            setattr(item, name, getattr(base, name))
        for name, value in flags.items():
            setattr(item, name, value)
        if program is not None and program.episode_title:
            item.EpisodeTitle = program.episode_title
        item.IsFolder = False
        out.append(item)
    return out


@operation("GetRecordings")
async def get_recordings(ctx: ServerContext, auth: AuthInfo | None, channelId: str | None = None,
                         userId: str | None = None, *, page: Paging, isInProgress: bool | None = None, seriesTimerId: str | None = None,
                         isMovie: bool | None = None, isSeries: bool | None = None, isKids: bool | None = None,
                         isSports: bool | None = None, isNews: bool | None = None) -> w.BaseItemDtoQueryResult:
    viewer = await _viewer(ctx, auth, userId)
    recordings = await ctx.recordings.recordings(channelId, isInProgress, seriesTimerId)
    items = await _recording_dtos(ctx, viewer, recordings)
    wanted = _flags(isMovie, isSeries, isNews, isKids, isSports)
    items = [i for i in items if all(v is None or bool(getattr(i, k, None)) == v for k, v in wanted.items())]
    start, limit = page.clamped()
    shown = items[start: start + limit if limit is not None else None]
    return w.BaseItemDtoQueryResult(Items=shown, TotalRecordCount=len(items), StartIndex=start)


@operation("GetRecording")
async def get_recording(ctx: ServerContext, auth: AuthInfo | None, recordingId: str, userId: str | None = None
                        ) -> w.BaseItemDto:
    viewer = await _viewer(ctx, auth, userId)
    recording = await ctx.recordings.recording(recordingId)
    found = await _recording_dtos(ctx, viewer, [recording])
    if not found:
        raise NotFoundError(f"No recording {recordingId}.")
    return found[0]


@operation("DeleteRecording")
async def delete_recording(ctx: ServerContext, recordingId: str) -> None:
    await ctx.recordings.delete_recording(recordingId)


async def _recording_folder_rows(ctx: ServerContext, viewer, parent_id: str, kinds: list[str]):
    q = ctx.items.scoped(ItemQuery(parent_id=parent_id, include_types=kinds, sort_by=["SortName"]), viewer)
    try:
        rows, _ = await ctx.items.rows(q)
    except NotFoundError:  # no recording yet, so no Recordings folder
        return []
    return rows


@operation("GetRecordingFolders")
async def get_recording_folders(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None
                                ) -> w.BaseItemDtoQueryResult:
    viewer = await _viewer(ctx, auth, userId)
    try:
        row = await ctx.items.row(RECORDINGS_FOLDER_ID, viewer)
    except NotFoundError:
        return _empty()
    found = await ctx.items.dtos([row], ctx.items.options(viewer, ["ChildCount", "RecursiveItemCount"]))
    return w.BaseItemDtoQueryResult(Items=found, TotalRecordCount=len(found), StartIndex=0)


@operation("GetRecordingGroups")
async def get_recording_groups(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None
                               ) -> w.BaseItemDtoQueryResult:
    return await _recording_series(ctx, auth, userId, Paging())


@operation("GetRecordingGroup")
async def get_recording_group(ctx: ServerContext, auth: AuthInfo | None, groupId: str) -> w.BaseItemDto:
    viewer = await _viewer(ctx, auth, None)
    key = normalize_guid(groupId)
    row = await ctx.items.row(key or groupId, viewer)
    if row.type != "Folder" or row.parent_id != RECORDINGS_FOLDER_ID:
        raise NotFoundError(f"No recording group {groupId}.")
    return (await ctx.items.dtos([row], ctx.items.options(viewer, ["ChildCount"])))[0]


@operation("GetRecordingsSeries")
async def get_recordings_series(ctx: ServerContext, auth: AuthInfo | None, page: Paging,
                                userId: str | None = None) -> w.BaseItemDtoQueryResult:
    return await _recording_series(ctx, auth, userId, page)


async def _recording_series(ctx: ServerContext, auth: AuthInfo | None, userId: str | None,
                            page: Paging) -> w.BaseItemDtoQueryResult:
    """Recordings of a series are grouped in a folder per series (server/livetv/items.py)."""
    viewer = await _viewer(ctx, auth, userId)
    rows = await _recording_folder_rows(ctx, viewer, RECORDINGS_FOLDER_ID, ["Folder"])
    start, limit = page.clamped()
    found = await ctx.items.dtos(rows[start: start + limit if limit is not None else None], ctx.items.options(viewer, ["ChildCount", "RecursiveItemCount"]))
    return w.BaseItemDtoQueryResult(Items=found, TotalRecordCount=len(rows), StartIndex=start)


# -- streams: a recording as it is written, and a channel's live stream ------------------------


@operation("GetLiveRecordingFile")
async def get_live_recording_file(ctx: ServerContext, recordingId: str) -> Stream:
    return Stream(await ctx.recordings.follow(recordingId), media_type="video/mp2t")


@operation("GetLiveStreamFile")
async def get_live_stream_file(ctx: ServerContext, streamId: str, container: str) -> Stream:
    """An opened live stream (its LiveStreamId), or a channel by id, relayed from the shared tuner
    stream as MPEG-TS (server/livetv/live.py)."""
    return Stream(await ctx.live_streams.relay(streamId, container), media_type="video/mp2t")
