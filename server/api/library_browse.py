"""Library (browse part): media folders, item counts and an item's ancestors."""

from __future__ import annotations

from server.api.base import operation
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


@operation("GetMediaFolders")
async def get_media_folders(ctx: ServerContext, auth: AuthInfo | None,
                            isHidden: bool | None = None) -> w.BaseItemDtoQueryResult:
    viewer = await ctx.items.viewer(auth, None)
    if isHidden:  # Reelroom has no hidden libraries
        return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=0)
    rows = await ctx.items.library_rows(ctx.items.unrestricted(viewer))
    dtos = await ctx.items.dtos(rows, ctx.items.options(viewer, ["PrimaryImageAspectRatio", "Path", "DateCreated"]))
    return w.BaseItemDtoQueryResult(Items=dtos, TotalRecordCount=len(dtos), StartIndex=0)


@operation("GetItemCounts")
async def get_item_counts(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None,
                          isFavorite: bool | None = None) -> w.ItemCounts:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.counts(viewer, isFavorite)


@operation("GetAncestors")
async def get_ancestors(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                        userId: str | None = None) -> list[w.BaseItemDto]:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.ancestors(itemId, viewer)
