"""UserLibrary: one item, the root folder, intros, trailers, special features, latest media,
favourites and ratings."""

from __future__ import annotations

from server.api.base import operation
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


@operation("GetItem")
async def get_item(ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.item(itemId, viewer)
