"""VideoAttachments (fonts in MKV files) and MediaSegments (intro/outro from chapters)."""

from __future__ import annotations

from typing import Any

from litestar import Response

from server.api.base import operation
from server.context import ServerContext
from server.playback.range_response import RangeFileResponse
from server.subtitles.extras import attachment, media_segments
from server.wire import models as w


@operation("GetAttachment")
async def get_attachment(ctx: ServerContext, videoId: str, mediaSourceId: str, index: int) -> Response[Any]:
    row = await ctx.items.row(mediaSourceId if len(mediaSourceId) == 32 else videoId)
    path, mime = await attachment(row, index, ctx.paths.cache_dir / "attachments", ctx.ffmpeg_path)
    return RangeFileResponse(path, media_type=mime)


@operation("GetItemSegments")
async def get_item_segments(ctx: ServerContext, itemId: str,
                            includeSegmentTypes: list[str] | None = None) -> w.MediaSegmentDtoQueryResult:
    row = await ctx.items.row(itemId)
    found = media_segments(row, set(includeSegmentTypes or []) or None)
    return w.MediaSegmentDtoQueryResult(Items=found, TotalRecordCount=len(found), StartIndex=0)
