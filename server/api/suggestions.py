"""Suggestions: random items of the asked kinds (the query engine)."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import Paging
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


@operation("GetSuggestions")
async def get_suggestions(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None,
                          mediaType: list[str] | None = None, type: list[str] | None = None, *, page: Paging,
                          enableTotalRecordCount: bool | None = None) -> w.BaseItemDtoQueryResult:
    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    opts = ctx.items.options(viewer, [])
    return await ctx.browse.related.suggestions(viewer, opts, list(mediaType or ()), list(type or ()), start, limit,
                                                bool(enableTotalRecordCount))
