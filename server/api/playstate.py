"""Playstate reports: /Sessions/Playing (start, progress, stopped, ping) and the older
/PlayingItems routes. They update the user's data and the Sessions view
(server/playback/service.py PlaybackReports)."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


@operation("ReportPlaybackStart")
async def report_playback_start(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.PlaybackStartInfo]) -> None:
    await ctx.playback_reports.start(require_user(auth), data)


@operation("ReportPlaybackProgress")
async def report_playback_progress(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.PlaybackProgressInfo]) -> None:
    await ctx.playback_reports.progress(require_user(auth), data)


@operation("ReportPlaybackStopped")
async def report_playback_stopped(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.PlaybackStopInfo]) -> None:
    await ctx.playback_reports.stop(require_user(auth), data)


@operation("PingPlaybackSession")
async def ping_playback_session(ctx: ServerContext, auth: AuthInfo | None, playSessionId: str | None = None) -> None:
    require_user(auth)
    ctx.playback_reports.ping(playSessionId)


@operation("OnPlaybackStart")
async def on_playback_start(ctx: ServerContext, auth: AuthInfo | None, itemId: str, mediaSourceId: str | None = None,
                            audioStreamIndex: int | None = None, subtitleStreamIndex: int | None = None,
                            playMethod: str | None = None, liveStreamId: str | None = None,
                            playSessionId: str | None = None, canSeek: bool = False) -> None:
    await ctx.playback_reports.start(require_user(auth), w.PlaybackStartInfo(
        ItemId=itemId, MediaSourceId=mediaSourceId, AudioStreamIndex=audioStreamIndex,
        SubtitleStreamIndex=subtitleStreamIndex, PlayMethod=playMethod, LiveStreamId=liveStreamId,
        PlaySessionId=playSessionId, CanSeek=canSeek, PositionTicks=0))


@operation("OnPlaybackProgress")
async def on_playback_progress(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                               mediaSourceId: str | None = None, positionTicks: int | None = None,
                               audioStreamIndex: int | None = None, subtitleStreamIndex: int | None = None,
                               volumeLevel: int | None = None, playMethod: str | None = None,
                               liveStreamId: str | None = None, playSessionId: str | None = None,
                               repeatMode: str | None = None, isPaused: bool = False, isMuted: bool = False) -> None:
    await ctx.playback_reports.progress(require_user(auth), w.PlaybackProgressInfo(
        ItemId=itemId, MediaSourceId=mediaSourceId, PositionTicks=positionTicks, AudioStreamIndex=audioStreamIndex,
        SubtitleStreamIndex=subtitleStreamIndex, VolumeLevel=volumeLevel, PlayMethod=playMethod,
        LiveStreamId=liveStreamId, PlaySessionId=playSessionId, RepeatMode=repeatMode, IsPaused=isPaused,
        IsMuted=isMuted))


@operation("OnPlaybackStopped")
async def on_playback_stopped(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                              mediaSourceId: str | None = None, nextMediaType: str | None = None,
                              positionTicks: int | None = None, liveStreamId: str | None = None,
                              playSessionId: str | None = None) -> None:
    await ctx.playback_reports.stop(require_user(auth), w.PlaybackStopInfo(
        ItemId=itemId, MediaSourceId=mediaSourceId, NextMediaType=nextMediaType, PositionTicks=positionTicks,
        LiveStreamId=liveStreamId, PlaySessionId=playSessionId, Failed=False))
