"""Trickplay: the HLS image playlist and the tile sheets (server/trickplay/service.py)."""

from __future__ import annotations

from typing import Any

from litestar import Response

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.playback.range_response import RangeFileResponse


@operation("GetTrickplayHlsPlaylist")
async def get_trickplay_hls_playlist(ctx: ServerContext, auth: AuthInfo | None, itemId: str, width: int,
                                     mediaSourceId: str | None = None) -> Response[Any]:
    auth = require_user(auth)
    row = await ctx.items.row(itemId)
    text = await ctx.trickplay.playlist(row.id, width, auth.token)
    return Response(content=text.encode(), media_type="application/x-mpegURL")


@operation("GetTrickplayTileImage")
async def get_trickplay_tile_image(ctx: ServerContext, itemId: str, width: int, index: int,
                                   mediaSourceId: str | None = None) -> Response[Any]:
    row = await ctx.items.row(itemId)
    return RangeFileResponse(await ctx.trickplay.tile(row.id, width, index), media_type="image/jpeg",
                             headers={"Cache-Control": "public, max-age=86400"})
