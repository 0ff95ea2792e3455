"""DynamicHls and HlsSegment: master and main playlists, segments (ts and fMP4) cut by a shared
ffmpeg job per play session (server/playback/hls_service.py), and DELETE /Videos/ActiveEncodings.

Segment URLs in the playlists are relative and carry the playlist's own query (api_key
included), so a player fetches them without headers."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from server.api.base import operation
from server.api.params import StreamOptions
from server.api.streams import _source_row
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.guid import normalize_guid
from server.playback.hls_playlists import HLS_PLAYLIST_MEDIA_TYPE
from server.playback.hls_service import HlsParams, main_playlist, master_playlist, query_without

_BOOL_KEYS = {"allowvideostreamcopy", "allowaudiostreamcopy"}
_SEGMENT_ONLY = ("runtimeTicks", "actualSegmentLengthTicks")
_PLAYLIST_HEADERS = {"Cache-Control": "no-cache"}


def _raw(request: Request) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in request.query_params.multi_items()]


def _query(request: Request, auth: AuthInfo | None,
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


async def _plan(ctx: ServerContext, request: Request, auth: AuthInfo | None, item_id: str, audio_only: bool,
                stream: StreamOptions):
    q, raw = _query(request, auth, stream)
    params = HlsParams.from_query(q, dict(raw))
    row = await _source_row(ctx, item_id, params.media_source_id)
    plan = await ctx.transcodes.plan(row, params, audio_only=audio_only)
    return row, params, plan, raw


def _playlist(text: str, head: bool = False) -> Response:
    return Response(content=b"" if head else text.encode(), media_type=HLS_PLAYLIST_MEDIA_TYPE,
                    headers=_PLAYLIST_HEADERS)


async def _master(ctx: ServerContext, request: Request, auth: AuthInfo | None, item_id: str, audio_only: bool,
                  head: bool, stream: StreamOptions) -> Response:
    if not audio_only:
        row = await ctx.items.row(item_id, await ctx.items.viewer(auth, None))
        if row.type == "TvChannel":  # a channel's only variant is its live playlist
            query = request.url.query
            return _playlist("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=8000000\n"
                             f"live.m3u8{'?' + query if query else ''}\n", head)
    _row, _params, plan, raw = await _plan(ctx, request, auth, item_id, audio_only, stream)
    return _playlist(master_playlist(plan, query_without(raw, *_SEGMENT_ONLY)), head)


async def _main(ctx: ServerContext, request: Request, auth: AuthInfo | None, item_id: str,
                audio_only: bool, stream: StreamOptions) -> Response:
    row, params, plan, raw = await _plan(ctx, request, auth, item_id, audio_only, stream)
    # Start ffmpeg now: the first segment request follows within milliseconds.
    await ctx.transcodes.job_for(row, params, plan)
    return _playlist(main_playlist(plan, query_without(raw, *_SEGMENT_ONLY)))


def _segment_media_type(container: str, audio_only: bool) -> str:
    if container == "mp4":
        return "audio/mp4" if audio_only else "video/mp4"
    return "video/mp2t"


async def _segment(ctx: ServerContext, request: Request, auth: AuthInfo | None, item_id: str, segment_id: int,
                   container: str, audio_only: bool, stream: StreamOptions) -> Response:
    container = container.lower()
    if container not in ("ts", "mp4"):
        raise BadRequestError(f"Segments are .ts or .mp4, not .{container}.")
    row, params, plan, _raw_q = await _plan(ctx, request, auth, item_id, audio_only, stream)
    if plan.request.segment_extension != container:
        raise BadRequestError(f"This stream's segments are .{plan.request.segment_extension}, not .{container}.")
    if segment_id == -1 and container != "mp4":
        raise BadRequestError("Only fMP4 streams have an init segment (-1.mp4).")
    if segment_id < -1:
        raise BadRequestError("The segment number must not be negative.")
    job = await ctx.transcodes.job_for(row, params, plan)
    data = await ctx.transcodes.segment(job, segment_id)
    return Response(content=data, media_type=_segment_media_type(container, audio_only),
                    headers={"Cache-Control": "no-cache"})


# -- DynamicHls -----------------------------------------------------------------------------------


@operation("GetMasterHlsVideoPlaylist")
async def get_master_hls_video_playlist(ctx: ServerContext, request: Request, auth: AuthInfo | None,
                                        itemId: str, stream: StreamOptions) -> Response:
    return await _master(ctx, request, auth, itemId, False, head=False, stream=stream)


@operation("HeadMasterHlsVideoPlaylist")
async def head_master_hls_video_playlist(ctx: ServerContext, request: Request, auth: AuthInfo | None,
                                         itemId: str, stream: StreamOptions) -> Response[None]:
    return await _master(ctx, request, auth, itemId, False, head=True, stream=stream)


@operation("GetMasterHlsAudioPlaylist")
async def get_master_hls_audio_playlist(ctx: ServerContext, request: Request, auth: AuthInfo | None,
                                        itemId: str, stream: StreamOptions) -> Response:
    return await _master(ctx, request, auth, itemId, True, head=False, stream=stream)


@operation("HeadMasterHlsAudioPlaylist")
async def head_master_hls_audio_playlist(ctx: ServerContext, request: Request, auth: AuthInfo | None,
                                         itemId: str, stream: StreamOptions) -> Response[None]:
    return await _master(ctx, request, auth, itemId, True, head=True, stream=stream)


@operation("GetVariantHlsVideoPlaylist")
async def get_variant_hls_video_playlist(ctx: ServerContext, request: Request, auth: AuthInfo | None,
                                         itemId: str, stream: StreamOptions) -> Response:
    return await _main(ctx, request, auth, itemId, False, stream=stream)


@operation("GetVariantHlsAudioPlaylist")
async def get_variant_hls_audio_playlist(ctx: ServerContext, request: Request, auth: AuthInfo | None,
                                         itemId: str, stream: StreamOptions) -> Response:
    return await _main(ctx, request, auth, itemId, True, stream=stream)


@operation("GetLiveHlsStream")
async def get_live_hls_stream(ctx: ServerContext, request: Request, auth: AuthInfo | None, itemId: str,
                              stream: StreamOptions) -> Response:
    viewer = await ctx.items.viewer(auth, None)
    row = await ctx.items.row(itemId, viewer)
    if row.type == "TvChannel":
        return await _live_channel_playlist(ctx, request, auth, row, stream)
    # Library items have a known runtime, so the "live" playlist is the full VOD list.
    return await _main(ctx, request, auth, itemId, False, stream)


def _codec_set(value: str | None, default: tuple[str, ...]) -> set[str]:
    found = {c.strip().lower() for c in (value or "").split(",") if c.strip()}
    return found or set(default)


async def _live_channel_playlist(ctx: ServerContext, request: Request, auth: AuthInfo | None, row,
                                 options: StreamOptions) -> Response:
    """A channel's sliding-window playlist (server/livetv/live.py). The stream is the one the
    LiveStreamId names; without one, the channel's running stream or a new one (released when
    idle). Segments are served by the legacy segment route under the encoder's id."""
    from server.livetv.playback import DEFAULT_AUDIO_CODECS, DEFAULT_VIDEO_CODECS

    q, _ = _query(request, auth, options)
    channel = await ctx.livetv.channel(row.id)
    stream = ctx.live_streams.get(q.get("livestreamid"))
    if stream is None or stream.channel.id != channel.id:
        stream = ctx.live_streams.for_channel(channel.id)
        if stream is None:
            _, stream = await ctx.live_streams.open(channel)
    await ctx.live_streams.probe(stream)
    job = await ctx.live_streams.hls_for(stream, _codec_set(q.get("videocodec"), DEFAULT_VIDEO_CODECS),
                                         _codec_set(q.get("audiocodec"), DEFAULT_AUDIO_CODECS))
    text = await job.wait_playlist()
    lines = [f"hls/{job.id}/{line.strip()}" if line.strip() and not line.startswith("#") else line
             for line in text.splitlines()]
    return _playlist("\n".join(lines) + "\n")


@operation("GetHlsVideoSegment")
async def get_hls_video_segment(ctx: ServerContext, request: Request, auth: AuthInfo | None, itemId: str,
                                playlistId: str, segmentId: int, container: str,
                                stream: StreamOptions) -> Response:
    return await _segment(ctx, request, auth, itemId, segmentId, container, audio_only=False, stream=stream)


@operation("GetHlsAudioSegment")
async def get_hls_audio_segment(ctx: ServerContext, request: Request, auth: AuthInfo | None, itemId: str,
                                playlistId: str, segmentId: int, container: str,
                                stream: StreamOptions) -> Response:
    return await _segment(ctx, request, auth, itemId, segmentId, container, audio_only=True, stream=stream)


# -- HlsSegment (legacy) ----------------------------------------------------------------------------


@operation("GetHlsPlaylistLegacy")
async def get_hls_playlist_legacy(ctx: ServerContext, request: Request, auth: AuthInfo | None, itemId: str,
                                  playlistId: str) -> Response:
    """The old playlist route: the session's playlist, with segments under the same folder. The
    playlist id names the play session, so the anonymous legacy segment route can only read
    segments of a job an authorized request started."""
    q, raw = _query(request, auth)
    q["playsessionid"] = playlistId
    params = HlsParams.from_query(q, dict(raw))
    row = await _source_row(ctx, itemId, params.media_source_id)
    plan = await ctx.transcodes.plan(row, params, audio_only=False)
    await ctx.transcodes.job_for(row, params, plan)
    text = main_playlist(plan, "")
    text = text.replace("hls1/main/", "")
    return _playlist(text)


def _existing_job(ctx: ServerContext, item_id: str, session: str | None, audio_only: bool | None = None):
    try:
        item_id = normalize_guid(item_id)
    except ValueError:
        return None
    for job in ctx.transcodes.jobs:
        if job.key.item_id != item_id or job.closed:
            continue
        if session is not None and job.key.play_session_id != session:
            continue
        if audio_only is not None and job.request.audio_only != audio_only:
            continue
        return job
    return None


@operation("GetHlsVideoSegmentLegacy")
async def get_hls_video_segment_legacy(ctx: ServerContext, itemId: str, playlistId: str, segmentId: str,
                                       segmentContainer: str) -> Response:
    live = ctx.live_streams.hls_job(playlistId)  # a live channel's segment (the encoder id is unguessable)
    if live is not None:
        if not segmentId.isdigit() or segmentContainer.lower() != "ts":
            raise NotFoundError("No such live segment.")
        return Response(content=await live.segment(int(segmentId)), media_type="video/mp2t")
    job = _existing_job(ctx, itemId, playlistId, audio_only=False)
    if job is None or not segmentId.lstrip("-").isdigit():
        raise NotFoundError("No such segment: the legacy route only serves segments of a running transcode.")
    if job.request.segment_extension != segmentContainer.lower():
        raise NotFoundError(f"This transcode has no .{segmentContainer} segments.")
    data = await ctx.transcodes.segment(job, int(segmentId))
    return Response(content=data, media_type=_segment_media_type(segmentContainer.lower(), False))


async def _legacy_audio(ctx: ServerContext, item_id: str, segment_id: str) -> Response:
    job = _existing_job(ctx, item_id, None, audio_only=True)
    if job is None or not segment_id.isdigit() or not job.segment_path(int(segment_id)).is_file():
        raise NotFoundError("No such segment: the legacy route only serves segments already written.")
    data = await ctx.transcodes.segment(job, int(segment_id))
    return Response(content=data, media_type=_segment_media_type(job.request.segment_extension, True))


@operation("GetHlsAudioSegmentLegacyAac")
async def get_hls_audio_segment_legacy_aac(ctx: ServerContext, itemId: str, segmentId: str) -> Response:
    return await _legacy_audio(ctx, itemId, segmentId)


@operation("GetHlsAudioSegmentLegacyMp3")
async def get_hls_audio_segment_legacy_mp3(ctx: ServerContext, itemId: str, segmentId: str) -> Response:
    return await _legacy_audio(ctx, itemId, segmentId)


@operation("StopEncodingProcess")
async def stop_encoding_process(ctx: ServerContext, deviceId: str | None = None,
                                playSessionId: str | None = None) -> None:
    if not deviceId and not playSessionId:
        raise BadRequestError("Give a deviceId or a playSessionId.")
    await ctx.transcodes.stop_encoding(deviceId, playSessionId)
