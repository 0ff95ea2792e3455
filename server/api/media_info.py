"""MediaInfo: PlaybackInfo (GET and POST) and live streams (server/playback/service.py)."""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
from litestar import Request
from litestar.params import JSONBody

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.guid import normalize_guid
from server.wire import models as w


def _remote(request: Request[Any, Any, Any]) -> str | None:
    client = request.scope.get("client")
    return client[0] if client else None


@operation("GetPlaybackInfo")
async def get_playback_info(ctx: ServerContext, auth: AuthInfo | None, request: Request[Any, Any, Any], itemId: str,
                            userId: str | None = None) -> w.PlaybackInfoResponse:
    return await ctx.playback.info(require_user(auth), itemId, userId, w.PlaybackInfoDto(), _remote(request))


@operation("GetPostedPlaybackInfo")
async def get_posted_playback_info(
    ctx: ServerContext, auth: AuthInfo | None, request: Request[Any, Any, Any], itemId: str, userId: str | None = None,
    maxStreamingBitrate: int | None = None, startTimeTicks: int | None = None, audioStreamIndex: int | None = None,
    subtitleStreamIndex: int | None = None, maxAudioChannels: int | None = None, mediaSourceId: str | None = None,
    liveStreamId: str | None = None, autoOpenLiveStream: bool | None = None, enableDirectPlay: bool | None = None,
    enableDirectStream: bool | None = None, enableTranscoding: bool | None = None,
    allowVideoStreamCopy: bool | None = None, allowAudioStreamCopy: bool | None = None,
    data: JSONBody[w.PlaybackInfoDto | None] = None,
) -> w.PlaybackInfoResponse:
    dto = data or w.PlaybackInfoDto()
    # Query values fill what the body leaves out (clients send either).
    from_query = {"UserId": userId, "MaxStreamingBitrate": maxStreamingBitrate, "StartTimeTicks": startTimeTicks,
                  "AudioStreamIndex": audioStreamIndex, "SubtitleStreamIndex": subtitleStreamIndex,
                  "MaxAudioChannels": maxAudioChannels, "MediaSourceId": mediaSourceId, "LiveStreamId": liveStreamId,
                  "AutoOpenLiveStream": autoOpenLiveStream, "EnableDirectPlay": enableDirectPlay,
                  "EnableDirectStream": enableDirectStream, "EnableTranscoding": enableTranscoding,
                  "AllowVideoStreamCopy": allowVideoStreamCopy, "AllowAudioStreamCopy": allowAudioStreamCopy}
    dto = msgspec.structs.replace(dto, **{k: v for k, v in from_query.items()
                                         if v is not None and getattr(dto, k) is None})
    return await ctx.playback.info(require_user(auth), itemId, dto.UserId or userId, dto, _remote(request))


@operation("OpenLiveStream")
async def open_live_stream(ctx: ServerContext, auth: AuthInfo | None, request: Request[Any, Any, Any], openToken: str | None = None,
                           userId: str | None = None, playSessionId: str | None = None, itemId: str | None = None,
                           data: JSONBody[w.OpenLiveStreamDto | None] = None) -> w.LiveStreamResponse:
    """A Live TV channel (its OpenToken, in the body or the query, as jellyfin-web sends it) opens
    on its tuner: the answer carries the LiveStreamId, the probed MediaStreams and the live HLS
    TranscodingUrl (server/livetv/playback.py). Library items need no opening: the answer is
    the item's decided media source with a live stream id."""
    auth = require_user(auth)
    dto = data or w.OpenLiveStreamDto()
    token = dto.OpenToken or openToken
    item_id = dto.ItemId or itemId or token
    if not item_id:
        raise BadRequestError("OpenToken or ItemId is required.")
    viewer = await ctx.items.viewer(auth, dto.UserId or userId)
    key = normalize_guid(token or item_id)
    row = await ctx.items.row(key, viewer) if key else None
    if row is not None and row.type == "TvChannel":
        channel = await ctx.livetv.channel(row.id)
        source = await ctx.channel_playback.open(channel, auth, dto.DeviceProfile, dto.PlaySessionId or playSessionId)
        return w.LiveStreamResponse(MediaSource=source)
    info = await ctx.playback.info(auth, item_id, dto.UserId or userId, w.PlaybackInfoDto(
        DeviceProfile=dto.DeviceProfile, MaxStreamingBitrate=dto.MaxStreamingBitrate,
        StartTimeTicks=dto.StartTimeTicks, AudioStreamIndex=dto.AudioStreamIndex,
        SubtitleStreamIndex=dto.SubtitleStreamIndex, MaxAudioChannels=dto.MaxAudioChannels,
        EnableDirectPlay=dto.EnableDirectPlay, EnableDirectStream=dto.EnableDirectStream), _remote(request))
    if not info.MediaSources:
        raise NotFoundError(f"Item {item_id} has nothing to play.")
    return w.LiveStreamResponse(MediaSource=msgspec.structs.replace(info.MediaSources[0], LiveStreamId=uuid.uuid4().hex))


@operation("CloseLiveStream")
async def close_live_stream(ctx: ServerContext, auth: AuthInfo | None, liveStreamId: str) -> None:
    require_user(auth)
    await ctx.live_streams.close(liveStreamId)  # a channel's tuner is released with its last viewer
