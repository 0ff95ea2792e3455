"""DynamicHls and HlsSegment: master and main playlists, segments (ts and fMP4) cut by a shared
ffmpeg job per play session, and DELETE /Videos/ActiveEncodings. The handlers parse the query and
call ``ctx.transcodes`` (server/playback/hls_service.py); a channel's live playlist is
``ctx.live_streams`` (server/livetv/live.py).

Segment URLs in the playlists are relative and carry the playlist's own query (api_key
included), so a player fetches them without headers."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from server.api.base import operation
from server.api.params import StreamOptions
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.playback.hls_playlists import HLS_PLAYLIST_MEDIA_TYPE
from server.playback.hls_service import HlsParams, Segment, query_without

_BOOL_KEYS = {"allowvideostreamcopy", "allowaudiostreamcopy"}
_SEGMENT_ONLY = ("runtimeTicks", "actualSegmentLengthTicks")
_PLAYLIST_HEADERS = {"Cache-Control": "no-cache"}


def _raw(request: Request[Any, Any, Any]) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in request.query_params.multi_items()]


def _query(request: Request[Any, Any, Any], auth: AuthInfo | None,
           stream: StreamOptions | None = None) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The stream parameters as lower-cased names -> value (from ``stream``, else from the query
    string: first values), and the raw pairs."""
    raw = _raw(request)
    q: dict[str, Any] = {}
    if stream is not None:
        q = {name.lower(): value for name, value in stream.given().items()}
    else:
        for key, value in raw:
            name = key.lower()
            if name in q:
                continue
            q[name] = value.lower() != "false" if name in _BOOL_KEYS else value
    if not q.get("deviceid") and auth is not None:
        q["deviceid"] = auth.device_id
    return q, raw


def _params(request: Request[Any, Any, Any], auth: AuthInfo | None,
            stream: StreamOptions) -> tuple[HlsParams, list[tuple[str, str]]]:
    q, raw = _query(request, auth, stream)
    return HlsParams.from_query(q, dict(raw)), raw


def _playlist(text: str, head: bool = False) -> Response[Any]:
    return Response(content=b"" if head else text.encode(), media_type=HLS_PLAYLIST_MEDIA_TYPE,
                    headers=_PLAYLIST_HEADERS)


def _segment_reply(segment: Segment, headers: dict[str, str] | None = None) -> Response[Any]:
    return Response(content=segment.data, media_type=segment.media_type, headers=headers)


async def _master(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, item_id: str, audio_only: bool,
                  head: bool, stream: StreamOptions) -> Response[Any]:
    if not audio_only:
        row = await ctx.items.row(item_id, await ctx.items.viewer(auth, None))
        if row.type == "TvChannel":  # a channel's only variant is its live playlist
            query = request.url.query
            return _playlist("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=8000000\n"
                             f"live.m3u8{'?' + query if query else ''}\n", head)
    params, raw = _params(request, auth, stream)
    text = await ctx.transcodes.master_playlist(item_id, params, query_without(raw, *_SEGMENT_ONLY),
                                                audio_only=audio_only)
    return _playlist(text, head)


async def _main(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, item_id: str,
                audio_only: bool, stream: StreamOptions) -> Response[Any]:
    params, raw = _params(request, auth, stream)
    text = await ctx.transcodes.main_playlist(item_id, params, query_without(raw, *_SEGMENT_ONLY),
                                              audio_only=audio_only)
    return _playlist(text)


async def _segment(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, item_id: str, segment_id: int,
                   container: str, audio_only: bool, stream: StreamOptions) -> Response[Any]:
    params, _raw_q = _params(request, auth, stream)
    segment = await ctx.transcodes.segment_for(item_id, params, segment_id, container, audio_only=audio_only)
    return _segment_reply(segment, {"Cache-Control": "no-cache"})


# -- DynamicHls -----------------------------------------------------------------------------------


@operation("GetMasterHlsVideoPlaylist")
async def get_master_hls_video_playlist(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None,
                                        itemId: str, stream: StreamOptions) -> Response[Any]:
    return await _master(ctx, request, auth, itemId, False, head=False, stream=stream)


@operation("HeadMasterHlsVideoPlaylist")
async def head_master_hls_video_playlist(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None,
                                         itemId: str, stream: StreamOptions) -> Response[None]:
    return await _master(ctx, request, auth, itemId, False, head=True, stream=stream)


@operation("GetMasterHlsAudioPlaylist")
async def get_master_hls_audio_playlist(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None,
                                        itemId: str, stream: StreamOptions) -> Response[Any]:
    return await _master(ctx, request, auth, itemId, True, head=False, stream=stream)


@operation("HeadMasterHlsAudioPlaylist")
async def head_master_hls_audio_playlist(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None,
                                         itemId: str, stream: StreamOptions) -> Response[None]:
    return await _master(ctx, request, auth, itemId, True, head=True, stream=stream)


@operation("GetVariantHlsVideoPlaylist")
async def get_variant_hls_video_playlist(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None,
                                         itemId: str, stream: StreamOptions) -> Response[Any]:
    return await _main(ctx, request, auth, itemId, False, stream=stream)


@operation("GetVariantHlsAudioPlaylist")
async def get_variant_hls_audio_playlist(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None,
                                         itemId: str, stream: StreamOptions) -> Response[Any]:
    return await _main(ctx, request, auth, itemId, True, stream=stream)


@operation("GetLiveHlsStream")
async def get_live_hls_stream(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, itemId: str,
                              stream: StreamOptions) -> Response[Any]:
    viewer = await ctx.items.viewer(auth, None)
    row = await ctx.items.row(itemId, viewer)
    if row.type == "TvChannel":
        return await _live_channel_playlist(ctx, request, auth, row, stream)
    # Library items have a known runtime, so the "live" playlist is the full VOD list.
    return await _main(ctx, request, auth, itemId, False, stream)


async def _live_channel_playlist(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, row,
                                 options: StreamOptions) -> Response[Any]:
    """A channel's sliding-window playlist (server/livetv/live.py); segments are served by the
    legacy segment route under the encoder's id."""
    q, _ = _query(request, auth, options)
    channel = await ctx.livetv.channel(row.id)
    text = await ctx.live_streams.channel_playlist(channel, q.get("livestreamid"), q.get("videocodec"),
                                                   q.get("audiocodec"))
    return _playlist(text)


@operation("GetHlsVideoSegment")
async def get_hls_video_segment(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, itemId: str,
                                playlistId: str, segmentId: int, container: str,
                                stream: StreamOptions) -> Response[Any]:
    return await _segment(ctx, request, auth, itemId, segmentId, container, audio_only=False, stream=stream)


@operation("GetHlsAudioSegment")
async def get_hls_audio_segment(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, itemId: str,
                                playlistId: str, segmentId: int, container: str,
                                stream: StreamOptions) -> Response[Any]:
    return await _segment(ctx, request, auth, itemId, segmentId, container, audio_only=True, stream=stream)


# -- HlsSegment (legacy) ----------------------------------------------------------------------------


@operation("GetHlsPlaylistLegacy")
async def get_hls_playlist_legacy(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, itemId: str,
                                  playlistId: str) -> Response[Any]:
    """The old playlist route: the session's playlist, with segments under the same folder. The
    playlist id names the play session, so the anonymous legacy segment route can only read
    segments of a job an authorized request started."""
    q, raw = _query(request, auth)
    q["playsessionid"] = playlistId
    return _playlist(await ctx.transcodes.legacy_playlist(itemId, HlsParams.from_query(q, dict(raw))))


@operation("GetHlsVideoSegmentLegacy")
async def get_hls_video_segment_legacy(ctx: ServerContext, itemId: str, playlistId: str, segmentId: str,
                                       segmentContainer: str) -> Response[Any]:
    live = ctx.live_streams.hls_job(playlistId)  # a live channel's segment (the encoder id is unguessable)
    if live is not None:
        return _segment_reply(await ctx.live_streams.hls_segment(live, segmentId, segmentContainer))
    return _segment_reply(await ctx.transcodes.legacy_video_segment(itemId, playlistId, segmentId, segmentContainer))


@operation("GetHlsAudioSegmentLegacyAac")
async def get_hls_audio_segment_legacy_aac(ctx: ServerContext, itemId: str, segmentId: str) -> Response[Any]:
    return _segment_reply(await ctx.transcodes.legacy_audio_segment(itemId, segmentId))


@operation("GetHlsAudioSegmentLegacyMp3")
async def get_hls_audio_segment_legacy_mp3(ctx: ServerContext, itemId: str, segmentId: str) -> Response[Any]:
    return _segment_reply(await ctx.transcodes.legacy_audio_segment(itemId, segmentId))


@operation("StopEncodingProcess")
async def stop_encoding_process(ctx: ServerContext, deviceId: str | None = None,
                                playSessionId: str | None = None) -> None:
    await ctx.transcodes.stop_encoding(deviceId, playSessionId)
