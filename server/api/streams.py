"""Audio and Videos streams (GET and HEAD, with and without `.{container}`), universal audio,
Download and File. The handlers hand the query to ``ctx.streams`` (server/playback/streams.py),
which serves the file as it is (byte ranges) or relays an ffmpeg remux/transcode from a pipe."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from server.api.base import operation, require_user
from server.api.params import StreamOptions
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.guid import normalize_guid
from server.wire import models as w


async def _stream(ctx: ServerContext, request: Request, item_id: str, audio: bool, container: str | None,
                  q: dict[str, Any], head: bool) -> Response:
    return await ctx.streams.stream(item_id, audio=audio, container=container, options=q, head=head)


# The stream routes take the spec's long parameter list; StreamOptions holds the ones Reelroom acts
# on. Anything else a client sends is accepted and ignored, as Jellyfin does for options that do not
# apply to a direct stream. HEAD answers as GET would (the same parameters).


@operation("GetVideoStream")
async def get_video_stream(ctx: ServerContext, request: Request, itemId: str,
                           stream: StreamOptions) -> Response:
    return await _stream(ctx, request, itemId, False, stream.container, stream.given(), head=False)


@operation("HeadVideoStream")
async def head_video_stream(ctx: ServerContext, request: Request, itemId: str,
                            stream: StreamOptions) -> Response[None]:
    return await _stream(ctx, request, itemId, False, stream.container, stream.given(), head=True)


@operation("GetVideoStreamByContainer")
async def get_video_stream_by_container(ctx: ServerContext, request: Request, itemId: str,
                                        stream: StreamOptions) -> Response:
    return await _stream(ctx, request, itemId, False, stream.container, stream.given(), head=False)


@operation("HeadVideoStreamByContainer")
async def head_video_stream_by_container(ctx: ServerContext, request: Request, itemId: str,
                                         stream: StreamOptions) -> Response[None]:
    return await _stream(ctx, request, itemId, False, stream.container, stream.given(), head=True)


@operation("GetAudioStream")
async def get_audio_stream(ctx: ServerContext, request: Request, itemId: str,
                           stream: StreamOptions) -> Response:
    return await _stream(ctx, request, itemId, True, stream.container, stream.given(), head=False)


@operation("HeadAudioStream")
async def head_audio_stream(ctx: ServerContext, request: Request, itemId: str,
                            stream: StreamOptions) -> Response[None]:
    return await _stream(ctx, request, itemId, True, stream.container, stream.given(), head=True)


@operation("GetAudioStreamByContainer")
async def get_audio_stream_by_container(ctx: ServerContext, request: Request, itemId: str,
                                        stream: StreamOptions) -> Response:
    return await _stream(ctx, request, itemId, True, stream.container, stream.given(), head=False)


@operation("HeadAudioStreamByContainer")
async def head_audio_stream_by_container(ctx: ServerContext, request: Request, itemId: str,
                                         stream: StreamOptions) -> Response[None]:
    return await _stream(ctx, request, itemId, True, stream.container, stream.given(), head=True)


# -- universal audio ------------------------------------------------------------------------------


async def _universal(ctx: ServerContext, auth: AuthInfo | None, itemId: str, head: bool, container: list[str] | None,
                     mediaSourceId: str | None, deviceId: str | None, audioCodec: str | None,
                     maxAudioChannels: int | None, maxStreamingBitrate: int | None, audioBitRate: int | None,
                     startTimeTicks: int | None, transcodingContainer: str | None,
                     transcodingProtocol: str | None) -> Response:
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
                                     transcodingProtocol: str | None = None) -> Response:
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
async def get_download(ctx: ServerContext, auth: AuthInfo | None, itemId: str) -> Response:
    return await ctx.streams.download(require_user(auth), itemId)


@operation("GetFile")
async def get_file(ctx: ServerContext, auth: AuthInfo | None, itemId: str) -> Response:
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
