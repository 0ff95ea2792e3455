"""ItemUpdate: the metadata editor and folder content types (server/library/browse/editing.py)."""

from __future__ import annotations

from server.api.base import operation
from server.context import ServerContext
from server.wire import models as w


@operation("UpdateItem")
async def update_item(ctx: ServerContext, itemId: str, data: w.BaseItemDto) -> None:
    await ctx.browse.editing.update_item(itemId, data)


@operation("GetMetadataEditorInfo")
async def get_metadata_editor_info(ctx: ServerContext, itemId: str) -> w.MetadataEditorInfo:
    return await ctx.browse.editing.editor_info(itemId)


@operation("UpdateItemContentType")
async def update_item_content_type(ctx: ServerContext, itemId: str, contentType: str | None = None) -> None:
    await ctx.browse.editing.set_content_type(itemId, contentType)
