"""ItemUpdate: the metadata editor and folder content types (server/library/browse/editing.py)."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.params import JSONBody

from server.api.base import operation
from server.context import ServerContext
from server.wire import models as w


@operation("UpdateItem")
async def update_item(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str, data: JSONBody[w.BaseItemDto]) -> None:
    from server.library.browse.editing import null_fields

    # a field sent as null is not the same as one left out (the decoded body cannot tell them apart)
    await ctx.browse.editing.update_item(itemId, data, null_fields(await request.body()))


@operation("GetMetadataEditorInfo")
async def get_metadata_editor_info(ctx: ServerContext, itemId: str) -> w.MetadataEditorInfo:
    return await ctx.browse.editing.editor_info(itemId)


@operation("UpdateItemContentType")
async def update_item_content_type(ctx: ServerContext, itemId: str, contentType: str | None = None) -> None:
    await ctx.browse.editing.set_content_type(itemId, contentType)
