"""Suggestions: random items of the asked kinds (the query engine)."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import paging
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


@operation("GetSuggestions")
async def get_suggestions(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None,
                          mediaType: list[str] | None = None, type: list[str] | None = None,
                          startIndex: int | None = None, limit: int | None = None,
                          enableTotalRecordCount: bool | None = None) -> w.BaseItemDtoQueryResult:
    viewer = await ctx.items.viewer(auth, userId)
    start, limit = paging(startIndex, limit)
    opts = ctx.items.options(viewer, [])
    return await ctx.browse.related.suggestions(viewer, opts, list(mediaType or ()), list(type or ()), start, limit,
                                                bool(enableTotalRecordCount))
