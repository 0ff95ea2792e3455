"""Lyrics: LRC/TXT sidecars and embedded lyrics tags; upload and delete; remote lyrics through the lyrics providers (LrcLib)."""

from __future__ import annotations

from typing import Any

from litestar import Request

from server.api.base import operation
from server.context import ServerContext
from server.errors import BadRequestError
from server.wire import models as w


@operation("GetLyrics")
async def get_lyrics(ctx: ServerContext, itemId: str) -> w.LyricDto:
    return await ctx.lyrics.get(await ctx.items.row(itemId))


@operation("UploadLyrics")
async def upload_lyrics(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str, fileName: str | None = None) -> w.LyricDto:
    row = await ctx.items.row(itemId)
    body = await request.body()
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadRequestError("Lyrics must be UTF-8 text.") from None
    return await ctx.lyrics.upload(row, text, fileName, ctx.paths.data_dir)


@operation("DeleteLyrics")
async def delete_lyrics(ctx: ServerContext, itemId: str) -> None:
    await ctx.lyrics.delete(await ctx.items.row(itemId))


@operation("SearchRemoteLyrics")
async def search_remote_lyrics(ctx: ServerContext, itemId: str) -> list[w.RemoteLyricInfoDto]:
    return await ctx.remote_text.search_lyrics(await ctx.items.row(itemId))


@operation("DownloadRemoteLyrics")
async def download_remote_lyrics(ctx: ServerContext, itemId: str, lyricId: str) -> w.LyricDto:
    return await ctx.remote_text.download_lyrics(await ctx.items.row(itemId), lyricId)


@operation("GetRemoteLyrics")
async def get_remote_lyrics(ctx: ServerContext, lyricId: str) -> w.LyricDto:
    return await ctx.remote_text.remote_lyrics(lyricId)
