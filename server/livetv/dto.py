"""Wire shapes of Live TV objects: channels, guide programmes, timers, series timers, recordings."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from server.livetv.guide import Program
from server.livetv.tuners import Channel
from server.wire import models as w

if TYPE_CHECKING:
    from server.db.tables import LiveTvSeriesTimer, LiveTvTimer

TICKS_PER_SECOND = 10_000_000


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def channel_dto(server_id: str, ch: Channel, current: w.BaseItemDto | None = None) -> w.BaseItemDto:
    return w.BaseItemDto(Name=ch.name, ServerId=server_id, Id=ch.id, Type="TvChannel", MediaType="Video",
                         IsFolder=False, ChannelNumber=ch.number, Number=ch.number, ChannelType="TV",
                         LocationType="Remote", ImageTags={}, BackdropImageTags=[],
                         Genres=[ch.group] if ch.group else [], CurrentProgram=current)


def program_dto(server_id: str, p: Program, channels: dict[str, Channel], categories: dict[str, list[str]],
                timers: dict[str, LiveTvTimer] | None = None) -> w.BaseItemDto:
    channel = channels.get(p.channel_id)
    timer = (timers or {}).get(p.id)
    flags: dict[str, Any] = p.flags(categories)  # IsMovie, IsSports, ... (all BaseItemDto booleans)
    now = datetime.now(UTC)
    return w.BaseItemDto(
        Name=p.name, ServerId=server_id, Id=p.id, Type="Program", MediaType="Video", IsFolder=False,
        LocationType="Remote", ChannelId=p.channel_id, ChannelName=channel.name if channel else None,
        ChannelNumber=channel.number if channel else None, StartDate=p.start, EndDate=p.end,
        EpisodeTitle=p.episode_title, Overview=p.overview, Genres=list(p.categories),
        ParentIndexNumber=p.season, IndexNumber=p.episode, ProductionYear=p.year, OfficialRating=p.rating,
        RunTimeTicks=int((p.end - p.start).total_seconds() * TICKS_PER_SECOND), IsPremiere=p.is_premiere,
        IsRepeat=p.is_repeat, IsLive=p.start <= now < p.end, ImageTags={}, BackdropImageTags=[],
        TimerId=timer.id if timer else None, SeriesTimerId=timer.series_timer_id if timer else None,
        **flags)


def timer_dto(server_id: str, t: LiveTvTimer, channels: dict[str, Channel],
              program: w.BaseItemDto | None = None) -> w.TimerInfoDto:
    channel = channels.get(t.channel_id)
    start, end = _aware(t.start_date), _aware(t.end_date)
    return w.TimerInfoDto(
        Id=t.id, Type="Timer", ServerId=server_id, ExternalId=t.id, ChannelId=t.channel_id,
        ExternalChannelId=t.channel_id, ChannelName=channel.name if channel else None, ProgramId=t.program_id,
        ExternalProgramId=t.program_id, Name=t.name, Overview=t.overview, StartDate=start, EndDate=end,
        ServiceName="Reelroom", Priority=t.priority, PrePaddingSeconds=t.pre_padding_seconds,
        PostPaddingSeconds=t.post_padding_seconds, IsPrePaddingRequired=False, IsPostPaddingRequired=False,
        KeepUntil=t.keep_until, Status=t.status, SeriesTimerId=t.series_timer_id,
        ExternalSeriesTimerId=t.series_timer_id, ParentBackdropImageTags=[],
        RunTimeTicks=int((end - start).total_seconds() * TICKS_PER_SECOND), ProgramInfo=program)


def series_timer_dto(server_id: str, s: LiveTvSeriesTimer, channels: dict[str, Channel]) -> w.SeriesTimerInfoDto:
    channel = channels.get(s.channel_id or "")
    return w.SeriesTimerInfoDto(
        Id=s.id, Type="SeriesTimer", ServerId=server_id, ExternalId=s.id, ChannelId=s.channel_id,
        ExternalChannelId=s.channel_id, ChannelName=channel.name if channel else None, ProgramId=s.program_id,
        Name=s.name, ServiceName="Reelroom", Priority=s.priority, PrePaddingSeconds=s.pre_padding_seconds,
        PostPaddingSeconds=s.post_padding_seconds, IsPrePaddingRequired=False, IsPostPaddingRequired=False,
        KeepUntil=s.keep_until, RecordAnyTime=s.record_any_time, SkipEpisodesInLibrary=False,
        RecordAnyChannel=s.record_any_channel, KeepUpTo=s.keep_up_to, RecordNewOnly=s.record_new_only,
        Days=json.loads(s.days_json or "[]"), DayPattern=None, ImageTags={}, ParentBackdropImageTags=[])


def recording_dto(server_id: str, t: LiveTvTimer, channels: dict[str, Channel]) -> w.BaseItemDto:
    channel = channels.get(t.channel_id)
    start, end = _aware(t.start_date), _aware(t.end_date)
    total = max((end - start).total_seconds(), 1)
    done = None
    if t.status == "InProgress":
        done = max(0.0, min(100.0, (datetime.now(UTC) - start).total_seconds() / total * 100))
    return w.BaseItemDto(
        Name=t.name, ServerId=server_id, Id=t.id, Type="Recording", MediaType="Video", IsFolder=False,
        LocationType="FileSystem", Path=t.recording_path, Overview=t.overview, ChannelId=t.channel_id,
        ChannelName=channel.name if channel else None, StartDate=start, EndDate=end, Status=t.status,
        TimerId=t.id, SeriesTimerId=t.series_timer_id, CompletionPercentage=done, Container="ts",
        RunTimeTicks=int(total * TICKS_PER_SECOND), ImageTags={}, BackdropImageTags=[])
