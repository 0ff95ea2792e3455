"""UserViews: the libraries a user sees on the home screen."""

from __future__ import annotations

from server.api.base import operation
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w

_VIEW_FIELDS = ["PrimaryImageAspectRatio", "DisplayPreferencesId", "SortName", "DateCreated"]


@operation("GetUserViews")
async def get_user_views(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None,
                         includeExternalContent: bool | None = None, presetViews: list[str] | None = None,
                         includeHidden: bool | None = None) -> w.BaseItemDtoQueryResult:
    viewer = await ctx.items.viewer(auth, userId)
    views = await ctx.items.views(viewer, include_hidden=bool(includeHidden), preset=presetViews or [],
                                  fields=_VIEW_FIELDS)
    return w.BaseItemDtoQueryResult(Items=views, TotalRecordCount=len(views), StartIndex=0)


@operation("GetGroupingOptions")
async def get_grouping_options(ctx: ServerContext, auth: AuthInfo | None,
                               userId: str | None = None) -> list[w.SpecialViewOptionDto]:
    viewer = await ctx.items.viewer(auth, userId)
    rows = await ctx.items.library_rows(viewer)
    return [w.SpecialViewOptionDto(Name=r.name, Id=r.id) for r in rows]
