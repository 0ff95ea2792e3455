"""Subtitle: delivery in the client's format, the HLS subtitle playlist, upload and delete,
fallback fonts, and remote subtitles (search, download, fetch) through the subtitle providers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Response
from litestar.params import JSONBody

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.playback.range_response import RangeFileResponse
from server.subtitles.service import subtitle_stream
from server.wire import models as w


async def _subtitle(ctx: ServerContext, item_id: str, index: int, fmt: str, start: int | None, end: int | None,
                    copy_timestamps: bool | None, add_vtt_time_map: bool | None) -> Response[Any]:
    row = await ctx.items.row(item_id)
    text, media_type = await ctx.subtitles.render(row, index, fmt, start, end, bool(copy_timestamps),
                                                  bool(add_vtt_time_map))
    return Response(content=text.encode("utf-8"), media_type=media_type)


@operation("GetSubtitle")
async def get_subtitle(ctx: ServerContext, routeItemId: str, routeMediaSourceId: str, routeIndex: int,
                       routeFormat: str, endPositionTicks: int | None = None, copyTimestamps: bool | None = None,
                       addVttTimeMap: bool | None = None, startPositionTicks: int | None = None) -> Response[Any]:
    return await _subtitle(ctx, routeItemId, routeIndex, routeFormat, startPositionTicks, endPositionTicks,
                           copyTimestamps, addVttTimeMap)


@operation("GetSubtitleWithTicks")
async def get_subtitle_with_ticks(ctx: ServerContext, routeItemId: str, routeMediaSourceId: str, routeIndex: int,
                                  routeStartPositionTicks: int, routeFormat: str,
                                  endPositionTicks: int | None = None, copyTimestamps: bool | None = None,
                                  addVttTimeMap: bool | None = None) -> Response[Any]:
    return await _subtitle(ctx, routeItemId, routeIndex, routeFormat, routeStartPositionTicks, endPositionTicks,
                           copyTimestamps, addVttTimeMap)


@operation("GetSubtitlePlaylist")
async def get_subtitle_playlist(ctx: ServerContext, auth: AuthInfo | None, itemId: str, index: int,
                                mediaSourceId: str, segmentLength: int | None = None) -> Response[Any]:
    auth = require_user(auth)
    row = await ctx.items.row(itemId)
    subtitle_stream(row, index)  # 404 for a stream the item does not have
    text = ctx.subtitles.playlist(row.id, mediaSourceId, index, row.run_time_ticks, segmentLength or 30, auth.token)
    return Response(content=text.encode(), media_type="application/x-mpegURL")


@operation("UploadSubtitle")
async def upload_subtitle(ctx: ServerContext, itemId: str, data: JSONBody[w.UploadSubtitleDto]) -> None:
    row = await ctx.items.row(itemId)
    await ctx.subtitles.upload(row, data, ctx.paths.data_dir)


@operation("DeleteSubtitle")
async def delete_subtitle(ctx: ServerContext, itemId: str, index: int) -> None:
    row = await ctx.items.row(itemId)
    roots = [Path(r).resolve() for r in ctx.filesystem.roots()] + [ctx.paths.data_dir.resolve()]
    roots += [Path(p).resolve() for p in await ctx.library.physical_paths()]
    await ctx.subtitles.delete(row, index, roots)


@operation("GetFallbackFontList")
async def get_fallback_font_list(ctx: ServerContext) -> list[w.FontFile]:
    return await ctx.subtitles.fonts()


@operation("GetFallbackFont")
async def get_fallback_font(ctx: ServerContext, name: str) -> Response[Any]:
    path = ctx.subtitles.font(name)
    return RangeFileResponse(path, media_type=f"font/{path.suffix.lstrip('.').lower()}")


@operation("SearchRemoteSubtitles")
async def search_remote_subtitles(ctx: ServerContext, itemId: str, language: str,
                                  isPerfectMatch: bool | None = None) -> list[w.RemoteSubtitleInfo]:
    row = await ctx.items.row(itemId)
    return await ctx.remote_text.search_subtitles(row, language, bool(isPerfectMatch))


@operation("DownloadRemoteSubtitles")
async def download_remote_subtitles(ctx: ServerContext, itemId: str, subtitleId: str) -> None:
    row = await ctx.items.row(itemId)
    await ctx.remote_text.download_subtitle(row, subtitleId)


@operation("GetRemoteSubtitles")
async def get_remote_subtitles(ctx: ServerContext, subtitleId: str) -> Response[Any]:
    content, fmt = await ctx.remote_text.remote_subtitle(subtitleId)
    media = {"srt": "application/x-subrip", "vtt": "text/vtt", "ass": "text/x-ssa", "ssa": "text/x-ssa"}
    return Response(content=content, media_type=media.get(fmt, "text/plain"))
