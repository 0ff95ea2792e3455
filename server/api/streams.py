"""Audio and Videos streams (GET and HEAD, with and without `.{container}`), universal audio,
Download and File. The handlers hand the query to ``ctx.streams`` (server/playback/streams.py),
which serves the file as it is (byte ranges) or relays an ffmpeg remux/transcode from a pipe."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.response import Stream

from server.api.base import operation, provide_auth, require_user
from server.api.params import StreamOptions
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.guid import normalize_guid
from server.wire import models as w


async def _stream(ctx: ServerContext, request: Request[Any, Any, Any], item_id: str, audio: bool,
                  container: str | None, q: dict[str, Any], head: bool) -> Response[Any]:
    try:
        return await ctx.streams.stream(item_id, audio=audio, container=container, options=q, head=head)
    except NotFoundError:
        if await ctx.live_streams.channel(item_id) is None:
            raise
    return await _channel_stream(ctx, request, item_id, container or q.get("container") or "ts", q, head)


async def _channel_stream(ctx: ServerContext, request: Request[Any, Any, Any], channel_id: str, container: str,
                          q: dict[str, Any], head: bool) -> Response[Any]:
    """A live TV channel on a stream route, as Jellyfin serves it: the opened live stream
    (``LiveStreamId`` from /LiveStreams/Open) relayed as MPEG-TS, or the channel's shared tuner
    stream when none is given. Other containers are refused with a 400 (live TV is ts or HLS)."""
    viewer = await ctx.items.viewer(provide_auth(request), None)
    if not viewer.may_watch_livetv:  # hidden from this user, as on /Items/{id}
        raise NotFoundError(f"Item {channel_id} not found.")
    if container.lower() not in ("ts", "mpegts"):
        raise BadRequestError("Live TV channels stream as ts (or HLS: /videos/{id}/live.m3u8).")
    live_id = q.get("liveStreamId")
    opened = ctx.live_streams.get(live_id) if live_id else None
    if live_id and opened is None:
        raise NotFoundError(f"No live stream {live_id}.")
    if opened is not None and opened.channel.id != normalize_guid(channel_id):
        raise BadRequestError(f"Live stream {live_id} is not of channel {channel_id}.")
    if head:
        return Response(content=b"", media_type="video/mp2t", headers={"Accept-Ranges": "none"})
    return Stream(await ctx.live_streams.relay(live_id or channel_id, "ts"), media_type="video/mp2t",
                  headers={"Accept-Ranges": "none", "Cache-Control": "no-cache"})


# The stream routes take the spec's long parameter list; StreamOptions holds the ones Reelroom acts
# on. Anything else a client sends is accepted and ignored, as Jellyfin does for options that do not
# apply to a direct stream. HEAD answers as GET would (the same parameters).


@operation("GetVideoStream")
async def get_video_stream(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str,
                           stream: StreamOptions) -> Response[Any]:
    return await _stream(ctx, request, itemId, False, stream.container, stream.given(), head=False)


@operation("HeadVideoStream")
async def head_video_stream(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str,
                            stream: StreamOptions) -> Response[None]:
    return await _stream(ctx, request, itemId, False, stream.container, stream.given(), head=True)


@operation("GetVideoStreamByContainer")
async def get_video_stream_by_container(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str,
                                        stream: StreamOptions) -> Response[Any]:
    return await _stream(ctx, request, itemId, False, stream.container, stream.given(), head=False)


@operation("HeadVideoStreamByContainer")
async def head_video_stream_by_container(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str,
                                         stream: StreamOptions) -> Response[None]:
    return await _stream(ctx, request, itemId, False, stream.container, stream.given(), head=True)


@operation("GetAudioStream")
async def get_audio_stream(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str,
                           stream: StreamOptions) -> Response[Any]:
    return await _stream(ctx, request, itemId, True, stream.container, stream.given(), head=False)


@operation("HeadAudioStream")
async def head_audio_stream(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str,
                            stream: StreamOptions) -> Response[None]:
    return await _stream(ctx, request, itemId, True, stream.container, stream.given(), head=True)


@operation("GetAudioStreamByContainer")
async def get_audio_stream_by_container(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str,
                                        stream: StreamOptions) -> Response[Any]:
    return await _stream(ctx, request, itemId, True, stream.container, stream.given(), head=False)


@operation("HeadAudioStreamByContainer")
async def head_audio_stream_by_container(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str,
                                         stream: StreamOptions) -> Response[None]:
    return await _stream(ctx, request, itemId, True, stream.container, stream.given(), head=True)


# -- universal audio ------------------------------------------------------------------------------


async def _universal(ctx: ServerContext, auth: AuthInfo | None, itemId: str, head: bool, container: list[str] | None,
                     mediaSourceId: str | None, deviceId: str | None, audioCodec: str | None,
                     maxAudioChannels: int | None, maxStreamingBitrate: int | None, audioBitRate: int | None,
                     startTimeTicks: int | None, transcodingContainer: str | None,
                     transcodingProtocol: str | None) -> Response[Any]:
    return await ctx.streams.universal(
        require_user(auth), itemId, head=head, container=container, media_source_id=mediaSourceId,
        device_id=deviceId, audio_codec=audioCodec, max_audio_channels=maxAudioChannels,
        max_streaming_bitrate=maxStreamingBitrate, audio_bitrate=audioBitRate, start_ticks=startTimeTicks,
        transcoding_container=transcodingContainer, transcoding_protocol=transcodingProtocol)


@operation("GetUniversalAudioStream")
async def get_universal_audio_stream(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                                     container: list[str] | None = None, mediaSourceId: str | None = None,
                                     deviceId: str | None = None, userId: str | None = None,
                                     audioCodec: str | None = None, maxAudioChannels: int | None = None,
                                     maxStreamingBitrate: int | None = None, audioBitRate: int | None = None,
                                     startTimeTicks: int | None = None, transcodingContainer: str | None = None,
                                     transcodingProtocol: str | None = None) -> Response[Any]:
    return await _universal(ctx, auth, itemId, False, container, mediaSourceId, deviceId, audioCodec,
                            maxAudioChannels, maxStreamingBitrate, audioBitRate, startTimeTicks,
                            transcodingContainer, transcodingProtocol)


@operation("HeadUniversalAudioStream")
async def head_universal_audio_stream(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                                      container: list[str] | None = None, mediaSourceId: str | None = None,
                                      deviceId: str | None = None, userId: str | None = None,
                                      audioCodec: str | None = None, maxAudioChannels: int | None = None,
                                      maxStreamingBitrate: int | None = None, audioBitRate: int | None = None,
                                      startTimeTicks: int | None = None, transcodingContainer: str | None = None,
                                      transcodingProtocol: str | None = None) -> Response[None]:
    return await _universal(ctx, auth, itemId, True, container, mediaSourceId, deviceId, audioCodec,
                            maxAudioChannels, maxStreamingBitrate, audioBitRate, startTimeTicks,
                            transcodingContainer, transcodingProtocol)


# -- Download and File ----------------------------------------------------------------------------


@operation("GetDownload")
async def get_download(ctx: ServerContext, auth: AuthInfo | None, itemId: str) -> Response[Any]:
    return await ctx.streams.download(require_user(auth), itemId)


@operation("GetFile")
async def get_file(ctx: ServerContext, auth: AuthInfo | None, itemId: str) -> Response[Any]:
    require_user(auth)
    return await ctx.streams.file(itemId)


# -- versions ---------------------------------------------------------------------------------------


@operation("GetAdditionalPart")
async def get_additional_part(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                              userId: str | None = None) -> Any:
    viewer = await ctx.items.viewer(auth, userId)
    await ctx.items.row(itemId, viewer)
    return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=0)  # no multi-part files


@operation("MergeVersions")
async def merge_versions(ctx: ServerContext, ids: list[str] | None = None) -> None:
    wanted = [normalize_guid(i) for i in ids or []]
    if len(wanted) < 2 or any(i is None for i in wanted):
        raise BadRequestError("ids must name at least two items.")
    await ctx.versions.merge(wanted)


@operation("DeleteAlternateSources")
async def delete_alternate_sources(ctx: ServerContext, itemId: str) -> None:
    row = await ctx.items.row(itemId)
    await ctx.versions.split(row)
