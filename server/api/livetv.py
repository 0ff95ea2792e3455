"""LiveTv: M3U and HDHomeRun tuner hosts, listing providers, channels from the tuners' playlists
and the guide window. Recording (timers, DVR) is not implemented (see not_implemented.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from server.api.base import operation
from server.context import ServerContext
from server.errors import NotFoundError
from server.livetv.tuners import TUNER_TYPES, Channel
from server.wire import models as w


def _channel_dto(ctx: ServerContext, ch: Channel) -> w.BaseItemDto:
    return w.BaseItemDto(Name=ch.name, ServerId=ctx.system_id, Id=ch.id, Type="TvChannel", MediaType="Video",
                         IsFolder=False, ChannelNumber=ch.number, Number=ch.number, ChannelType="TV",
                         LocationType="Remote", ImageTags={}, BackdropImageTags=[],
                         Genres=[ch.group] if ch.group else [])


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
async def add_tuner_host(ctx: ServerContext, data: w.TunerHostInfo) -> w.TunerHostInfo:
    return await ctx.livetv.add_tuner(data)


@operation("DeleteTunerHost")
async def delete_tuner_host(ctx: ServerContext, id: str | None = None) -> None:
    ctx.livetv.delete_tuner(id)


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
async def add_listing_provider(ctx: ServerContext, data: w.ListingsProviderInfo, pw: str | None = None,
                               validateListings: bool = False, validateLogin: bool = False
                               ) -> w.ListingsProviderInfo:
    return ctx.livetv.add_listing_provider(data)


@operation("DeleteListingProvider")
async def delete_listing_provider(ctx: ServerContext, id: str | None = None) -> None:
    ctx.livetv.delete_listing_provider(id)


@operation("GetDefaultListingProvider")
async def get_default_listing_provider() -> w.ListingsProviderInfo:
    return w.ListingsProviderInfo(Type="xmltv", EnableAllTuners=True, EnabledTuners=[], NewsCategories=["news"],
                                  SportsCategories=["sports", "basketball", "baseball", "football"],
                                  KidsCategories=["kids", "family", "children", "childrens", "disney"],
                                  MovieCategories=["movie"], ChannelMappings=[])


@operation("GetLineups")
async def get_lineups(id: str | None = None, type: str | None = None, location: str | None = None,
                      country: str | None = None) -> list[w.NameIdPair]:
    return []


@operation("GetLiveTvChannels")
async def get_live_tv_channels(ctx: ServerContext, startIndex: int | None = None, limit: int | None = None,
                               isFavorite: bool | None = None) -> w.BaseItemDtoQueryResult:
    channels = await ctx.livetv.channels()
    start = max(startIndex or 0, 0)
    page = channels[start: start + limit if limit is not None else None]
    return w.BaseItemDtoQueryResult(Items=[_channel_dto(ctx, c) for c in page], TotalRecordCount=len(channels),
                                    StartIndex=start)


@operation("GetChannel")
async def get_channel(ctx: ServerContext, channelId: str) -> w.BaseItemDto:
    for ch in await ctx.livetv.channels():
        if ch.id == channelId:
            return _channel_dto(ctx, ch)
    raise NotFoundError(f"No channel {channelId}.")


@operation("GetGuideInfo")
async def get_guide_info(ctx: ServerContext) -> w.GuideInfo:
    now = datetime.now(UTC)
    days = ctx.livetv.options().GuideDays or 14
    return w.GuideInfo(StartDate=now, EndDate=now + timedelta(days=days))


@operation("GetLiveTvPrograms")
async def get_live_tv_programs(startIndex: int | None = None) -> w.BaseItemDtoQueryResult:
    return _empty(startIndex)  # no guide data is loaded yet


@operation("GetPrograms")
async def get_programs(data: w.GetProgramsDto) -> w.BaseItemDtoQueryResult:
    return _empty(data.StartIndex)


@operation("GetRecommendedPrograms")
async def get_recommended_programs() -> w.BaseItemDtoQueryResult:
    return _empty()


@operation("GetRecordings")
async def get_recordings(startIndex: int | None = None) -> w.BaseItemDtoQueryResult:
    return _empty(startIndex)


@operation("GetRecordingFolders")
async def get_recording_folders() -> w.BaseItemDtoQueryResult:
    return _empty()


@operation("GetRecordingGroups")
async def get_recording_groups() -> w.BaseItemDtoQueryResult:
    return _empty()


@operation("GetRecordingsSeries")
async def get_recordings_series(startIndex: int | None = None) -> w.BaseItemDtoQueryResult:
    return _empty(startIndex)


@operation("GetTimers")
async def get_timers() -> w.TimerInfoDtoQueryResult:
    return w.TimerInfoDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=0)


@operation("GetSeriesTimers")
async def get_series_timers() -> w.SeriesTimerInfoDtoQueryResult:
    return w.SeriesTimerInfoDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=0)


@operation("GetProgram")
async def get_program(programId: str) -> w.BaseItemDto:
    raise NotFoundError(f"No program {programId}.")


@operation("GetRecording")
async def get_recording(recordingId: str) -> w.BaseItemDto:
    raise NotFoundError(f"No recording {recordingId}.")


@operation("GetTimer")
async def get_timer(timerId: str) -> w.TimerInfoDto:
    raise NotFoundError(f"No timer {timerId}.")


@operation("GetSeriesTimer")
async def get_series_timer(timerId: str) -> w.SeriesTimerInfoDto:
    raise NotFoundError(f"No series timer {timerId}.")
