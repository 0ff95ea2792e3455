"""UserViews: the libraries a user sees on the home screen."""

from __future__ import annotations

from server.api.base import operation
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w
from server.wire.casing import camel_case_requested

_VIEW_FIELDS = ["PrimaryImageAspectRatio", "DisplayPreferencesId", "SortName", "DateCreated"]


@operation("GetUserViews")
async def get_user_views(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None,
                         includeExternalContent: bool | None = None, presetViews: list[str] | None = None,
                         includeHidden: bool | None = None) -> bytes:
    """A BaseItemDtoQueryResult of the user's libraries, encoded (ItemService.views_reply)."""
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.views_reply(viewer, camel_case_requested.get(), include_hidden=bool(includeHidden),
                                       fields=_VIEW_FIELDS)


@operation("GetGroupingOptions")
async def get_grouping_options(ctx: ServerContext, auth: AuthInfo | None,
                               userId: str | None = None) -> list[w.SpecialViewOptionDto]:
    viewer = await ctx.items.viewer(auth, userId)
    rows = await ctx.items.library_rows(viewer)
    return [w.SpecialViewOptionDto(Name=r.name, Id=r.id) for r in rows]
