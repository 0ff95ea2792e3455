"""Progressive streams for handlers (``ctx.streams``): Audio and Videos streams, universal audio,
Download and File.

A request is served from the file as it is (byte ranges, ``RangeFileResponse``) when it asks
for it statically or for the file's own container and codecs; otherwise ffmpeg remuxes or
transcodes into a pipe (``server/playback/pipe.py``) whose output is relayed as it comes and
which is killed when the client leaves. ``stream_plan`` / ``universal_plan``
(server/playback/service.py) decide which. ``source_row`` is the item row (or one of its
alternate versions) a stream or an HLS request plays, with its file checked.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from litestar import Response
from litestar.response import Redirect, Stream

from server.auth.service import AuthInfo
from server.errors import ForbiddenError, NotFoundError
from server.guid import normalize_guid
from server.playback.pipe import FfmpegPipe
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

SOURCE_CACHE_SIZE = 256  # media sources kept (few are played at once)


class StreamService:
    """``ctx.streams``. ``row`` is ItemService.row (an item by id, 404 when unknown), ``db`` the
    database (alternate versions), ``ffmpeg_path`` the configured ffmpeg (blocking)."""

    def __init__(self, row: Callable[[str], Awaitable[Any]], db: Any, ffmpeg_path: Callable[[], str]) -> None:
        self._row = row
        self._db = db
        self._ffmpeg_path = ffmpeg_path
        # (item id, media source id) -> (database generation read at, row): a player asks for
        # the same file again and again (seeks, ranges, loops); while nothing was written since,
        # the row is known without waiting for a database reader behind library pages
        self._sources: dict[tuple[str, str | None], tuple[int, Any]] = {}

    async def source_row(self, item_id: str, media_source_id: str | None) -> Any:
        """The row of the media source to play: the item, or the alternate version
        ``media_source_id`` names; 404 when there is no such source or its file is missing.
        (The caller's right to see the item is the guard's check, before this.)"""
        generation = self._db.generation  # taken before reading: a write during the read outdates it
        key = (normalize_guid(item_id) or item_id, normalize_guid(media_source_id) if media_source_id else None)
        cached = self._sources.get(key)
        if cached is not None and cached[0] == generation:
            row = cached[1]
        else:
            row = await self._read_source(item_id, media_source_id)
            if len(self._sources) >= SOURCE_CACHE_SIZE:
                self._sources.clear()
            self._sources[key] = (generation, row)
        if not await asyncio.to_thread(os.path.isfile, row.path):
            raise NotFoundError(f"The file of item {item_id} is missing.")
        return row

    async def _read_source(self, item_id: str, media_source_id: str | None) -> Any:
        row = await self._row(item_id)
        if media_source_id:
            wanted = normalize_guid(media_source_id)
            if wanted != row.id:
                rows = source_rows(row, await item_versions(self._db, row))
                if wanted not in rows:
                    raise NotFoundError(f"Item {item_id} has no media source {media_source_id}.")
                row = rows[wanted]
        if row.is_folder or not row.path:
            raise NotFoundError(f"Item {item_id} has no file to stream.")
        return row

    # -- Audio and Videos streams ------------------------------------------------------------

    async def stream(self, item_id: str, *, audio: bool, container: str | None, options: dict[str, Any],
                     head: bool) -> Response[Any]:
        """A stream route's reply. ``options``: the query values the handler was given, by the
        spec's names (mediaSourceId, static, videoCodec, audioCodec, startTimeTicks, ...)."""
        q = options
        row = await self.source_row(item_id, q.get("mediaSourceId"))
        plan = stream_plan(row, audio=audio, container=container or q.get("container"), static=q.get("static"),
                           video_codec=q.get("videoCodec"), audio_codec=q.get("audioCodec"),
                           start_ticks=q.get("startTimeTicks"), audio_bitrate=q.get("audioBitRate"),
                           video_bitrate=q.get("videoBitRate"), max_width=q.get("maxWidth"),
                           max_height=q.get("maxHeight"),
                           audio_channels=q.get("audioChannels") or q.get("maxAudioChannels"),
                           audio_stream_index=q.get("audioStreamIndex"))
        if plan.direct:
            return _file_reply(plan)
        return await self._ffmpeg_reply(plan, head)

    async def _ffmpeg_reply(self, plan: StreamPlan, head: bool) -> Response[Any]:
        media_type = media_type_for(f"x.{plan.container}", plan.container)
        headers = {"Accept-Ranges": "none", "Cache-Control": "no-cache"}
        if head:
            return Response(content=b"", media_type=media_type, headers=headers)
        assert plan.args is not None, "a plan that is not direct carries ffmpeg's arguments"
        pipe = await FfmpegPipe.start(await asyncio.to_thread(self._ffmpeg_path), plan.args)
        return Stream(pipe.chunks(), media_type=media_type, headers=headers)

    # -- universal audio ---------------------------------------------------------------------

    async def universal(self, auth: AuthInfo, item_id: str, *, head: bool, container: list[str] | None,
                        media_source_id: str | None, device_id: str | None, audio_codec: str | None,
                        max_audio_channels: int | None, max_streaming_bitrate: int | None,
                        audio_bitrate: int | None, start_ticks: int | None, transcoding_container: str | None,
                        transcoding_protocol: str | None) -> Response[Any]:
        """Direct when the file fits the client's containers and bitrate, a 302 to the HLS audio
        playlist for ``transcodingProtocol=hls``, else a progressive transcode."""
        row = await self.source_row(item_id, media_source_id)
        containers = [c for entry in container or [] for c in entry.split(",") if c]
        kind, plan = universal_plan(row, containers=containers, audio_codec=audio_codec,
                                    max_bitrate=max_streaming_bitrate, transcoding_container=transcoding_container,
                                    audio_bitrate=audio_bitrate, max_channels=max_audio_channels,
                                    start_ticks=start_ticks)
        assert plan is not None, "universal_plan always returns a plan"
        if kind == "direct":
            return _file_reply(plan)
        if (transcoding_protocol or "").lower() == "hls":
            rate = audio_bitrate or (min(max_streaming_bitrate, 320_000) if max_streaming_bitrate else 192_000)
            query = {"MediaSourceId": row.id, "DeviceId": device_id or auth.device_id, "api_key": auth.token,
                     "AudioCodec": (audio_codec or "aac").split(",")[0],
                     "SegmentContainer": transcoding_container or "ts", "AudioBitrate": rate,
                     "TranscodingMaxAudioChannels": max_audio_channels, "StartTimeTicks": start_ticks,
                     "PlaySessionId": uuid.uuid4().hex}
            query = {k: v for k, v in query.items() if v is not None}
            return Redirect(f"/audio/{row.id}/main.m3u8?{urlencode(query)}", status_code=302)
        return await self._ffmpeg_reply(plan, head)

    # -- Download and File -------------------------------------------------------------------

    async def download(self, auth: AuthInfo, item_id: str) -> Response[Any]:
        row = await self.source_row(item_id, None)
        if auth.user is not None and auth.user.policy.EnableContentDownloading is False:
            raise ForbiddenError("This user may not download media.")
        name = Path(row.path).name
        disposition = f"attachment; filename*=UTF-8''{quote(name, safe='')}"
        return RangeFileResponse(row.path, container=file_container(row), headers={"Content-Disposition": disposition})

    async def file(self, item_id: str) -> Response[Any]:
        row = await self.source_row(item_id, None)
        return RangeFileResponse(row.path, container=file_container(row))


def _file_reply(plan: StreamPlan) -> Response[Any]:
    return RangeFileResponse(plan.path, container=plan.container)
