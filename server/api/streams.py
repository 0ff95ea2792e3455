"""Audio and Videos streams (GET and HEAD, with and without `.{container}`), universal audio,
Download and File. The file as it is goes out with byte ranges (RangeFileResponse); a request
for another container or codec is remuxed or transcoded by ffmpeg into a pipe
(server/playback/service.py decides which)."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from litestar import Request, Response
from litestar.response import Redirect, Stream

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.guid import normalize_guid
from server.media import spawn
from server.playback.range_response import RangeFileResponse
from server.playback.ranges import media_type_for
from server.playback.service import (
    StreamPlan,
    file_container,
    item_versions,
    source_rows,
    stream_plan,
    universal_plan,
)
from server.wire import models as w

PIPE_CHUNK = 256 * 1024


async def _source_row(ctx: ServerContext, item_id: str, media_source_id: str | None) -> Any:
    row = await ctx.items.row(item_id)
    if media_source_id:
        wanted = normalize_guid(media_source_id)
        if wanted != row.id:
            rows = source_rows(row, await item_versions(ctx.db, row))
            if wanted not in rows:
                raise NotFoundError(f"Item {item_id} has no media source {media_source_id}.")
            row = rows[wanted]
    if row.is_folder or not row.path:
        raise NotFoundError(f"Item {item_id} has no file to stream.")
    if not await asyncio.to_thread(os.path.isfile, row.path):
        raise NotFoundError(f"The file of item {item_id} is missing.")
    return row


def _file_reply(plan: StreamPlan, extra: dict[str, str] | None = None) -> Response:
    return RangeFileResponse(plan.path, container=plan.container, headers=extra)


async def _ffmpeg_reply(ctx: ServerContext, plan: StreamPlan, head: bool) -> Response:
    media_type = media_type_for(f"x.{plan.container}", plan.container)
    headers = {"Accept-Ranges": "none", "Cache-Control": "no-cache"}
    if head:
        return Response(content=b"", media_type=media_type, headers=headers)
    ffmpeg = await asyncio.to_thread(ctx.ffmpeg_path)
    proc = await spawn.exec_async(
        ffmpeg, *plan.args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, start_new_session=True)

    async def relay():
        try:
            while chunk := await proc.stdout.read(PIPE_CHUNK):
                yield chunk
        finally:  # the client went away or the stream ended: never leave ffmpeg behind
            if proc.returncode is None:
                spawn.kill(proc)
            await proc.wait()

    return Stream(relay(), media_type=media_type, headers=headers)


async def _stream(ctx: ServerContext, request: Request, item_id: str, audio: bool, container: str | None,
                  q: dict[str, Any], head: bool) -> Response:
    row = await _source_row(ctx, item_id, q.get("mediaSourceId"))
    plan = stream_plan(row, audio=audio, container=container or q.get("container"), static=q.get("static"),
                       video_codec=q.get("videoCodec"), audio_codec=q.get("audioCodec"),
                       start_ticks=q.get("startTimeTicks"), audio_bitrate=q.get("audioBitRate"),
                       video_bitrate=q.get("videoBitRate"), max_width=q.get("maxWidth"),
                       max_height=q.get("maxHeight"), audio_channels=q.get("audioChannels") or q.get(
                           "maxAudioChannels"), audio_stream_index=q.get("audioStreamIndex"))
    if plan.direct:
        return _file_reply(plan)
    return await _ffmpeg_reply(ctx, plan, head)


def _query_of(values: dict[str, Any]) -> dict[str, Any]:
    """A handler's query parameters that were given (its ``locals()`` at the start)."""
    return {k: v for k, v in values.items() if v is not None and k not in ("ctx", "request", "itemId", "container")}


# The stream routes take the spec's long parameter list; these are the ones Reelroom acts on.
# Anything else a client sends is accepted and ignored, as Jellyfin does for options that do not
# apply to a direct stream.


@operation("GetVideoStream")
async def get_video_stream(ctx: ServerContext, request: Request, itemId: str, container: str | None = None,
                           static: bool | None = None, mediaSourceId: str | None = None,
                           videoCodec: str | None = None, audioCodec: str | None = None,
                           startTimeTicks: int | None = None, audioBitRate: int | None = None,
                           videoBitRate: int | None = None, maxWidth: int | None = None, maxHeight: int | None = None,
                           audioChannels: int | None = None, maxAudioChannels: int | None = None,
                           audioStreamIndex: int | None = None) -> Response:
    return await _stream(ctx, request, itemId, False, container, _query_of(locals()), head=False)


@operation("HeadVideoStream")
async def head_video_stream(ctx: ServerContext, request: Request, itemId: str, container: str | None = None,
                            static: bool | None = None, mediaSourceId: str | None = None,
                            videoCodec: str | None = None, audioCodec: str | None = None,
                            startTimeTicks: int | None = None) -> Response[None]:
    return await _stream(ctx, request, itemId, False, container, _query_of(locals()), head=True)


@operation("GetVideoStreamByContainer")
async def get_video_stream_by_container(ctx: ServerContext, request: Request, itemId: str, container: str,
                                        static: bool | None = None, mediaSourceId: str | None = None,
                                        videoCodec: str | None = None, audioCodec: str | None = None,
                                        startTimeTicks: int | None = None, audioBitRate: int | None = None,
                                        videoBitRate: int | None = None, maxWidth: int | None = None,
                                        maxHeight: int | None = None, audioChannels: int | None = None,
                                        maxAudioChannels: int | None = None,
                                        audioStreamIndex: int | None = None) -> Response:
    return await _stream(ctx, request, itemId, False, container, _query_of(locals()), head=False)


@operation("HeadVideoStreamByContainer")
async def head_video_stream_by_container(ctx: ServerContext, request: Request, itemId: str, container: str,
                                         static: bool | None = None, mediaSourceId: str | None = None,
                                         videoCodec: str | None = None, audioCodec: str | None = None,
                                         startTimeTicks: int | None = None) -> Response[None]:
    return await _stream(ctx, request, itemId, False, container, _query_of(locals()), head=True)


@operation("GetAudioStream")
async def get_audio_stream(ctx: ServerContext, request: Request, itemId: str, container: str | None = None,
                           static: bool | None = None, mediaSourceId: str | None = None,
                           audioCodec: str | None = None, startTimeTicks: int | None = None,
                           audioBitRate: int | None = None, audioChannels: int | None = None,
                           maxAudioChannels: int | None = None) -> Response:
    return await _stream(ctx, request, itemId, True, container, _query_of(locals()), head=False)


@operation("HeadAudioStream")
async def head_audio_stream(ctx: ServerContext, request: Request, itemId: str, container: str | None = None,
                            static: bool | None = None, mediaSourceId: str | None = None,
                            audioCodec: str | None = None) -> Response[None]:
    return await _stream(ctx, request, itemId, True, container, _query_of(locals()), head=True)


@operation("GetAudioStreamByContainer")
async def get_audio_stream_by_container(ctx: ServerContext, request: Request, itemId: str, container: str,
                                        static: bool | None = None, mediaSourceId: str | None = None,
                                        audioCodec: str | None = None, startTimeTicks: int | None = None,
                                        audioBitRate: int | None = None, audioChannels: int | None = None,
                                        maxAudioChannels: int | None = None) -> Response:
    return await _stream(ctx, request, itemId, True, container, _query_of(locals()), head=False)


@operation("HeadAudioStreamByContainer")
async def head_audio_stream_by_container(ctx: ServerContext, request: Request, itemId: str, container: str,
                                         static: bool | None = None, mediaSourceId: str | None = None,
                                         audioCodec: str | None = None) -> Response[None]:
    return await _stream(ctx, request, itemId, True, container, _query_of(locals()), head=True)


# -- universal audio ------------------------------------------------------------------------------


async def _universal(ctx: ServerContext, auth: AuthInfo | None, itemId: str, head: bool, container: list[str] | None,
                     mediaSourceId: str | None, deviceId: str | None, audioCodec: str | None,
                     maxAudioChannels: int | None, maxStreamingBitrate: int | None, audioBitRate: int | None,
                     startTimeTicks: int | None, transcodingContainer: str | None,
                     transcodingProtocol: str | None) -> Response:
    auth = require_user(auth)
    row = await _source_row(ctx, itemId, mediaSourceId)
    containers = [c for entry in container or [] for c in entry.split(",") if c]
    kind, plan = universal_plan(row, containers=containers, audio_codec=audioCodec, max_bitrate=maxStreamingBitrate,
                                transcoding_container=transcodingContainer, audio_bitrate=audioBitRate,
                                max_channels=maxAudioChannels, start_ticks=startTimeTicks)
    if kind == "direct":
        return _file_reply(plan)
    if (transcodingProtocol or "").lower() == "hls":
        query = {"MediaSourceId": row.id, "DeviceId": deviceId or auth.device_id, "api_key": auth.token,
                 "AudioCodec": (audioCodec or "aac").split(",")[0], "SegmentContainer": transcodingContainer or "ts",
                 "AudioBitrate": audioBitRate or (min(maxStreamingBitrate, 320_000) if maxStreamingBitrate else 192_000),
                 "TranscodingMaxAudioChannels": maxAudioChannels, "StartTimeTicks": startTimeTicks,
                 "PlaySessionId": uuid.uuid4().hex}
        query = {k: v for k, v in query.items() if v is not None}
        return Redirect(f"/audio/{row.id}/main.m3u8?{urlencode(query)}", status_code=302)
    return await _ffmpeg_reply(ctx, plan, head)


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
    auth = require_user(auth)
    row = await _source_row(ctx, itemId, None)
    if auth.user is not None and auth.user.policy.EnableContentDownloading is False:
        raise ForbiddenError("This user may not download media.")
    name = Path(row.path).name
    disposition = f"attachment; filename*=UTF-8''{quote(name, safe='')}"
    return RangeFileResponse(row.path, container=file_container(row), headers={"Content-Disposition": disposition})


@operation("GetFile")
async def get_file(ctx: ServerContext, auth: AuthInfo | None, itemId: str) -> Response:
    require_user(auth)
    row = await _source_row(ctx, itemId, None)
    return RangeFileResponse(row.path, container=file_container(row))


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
