"""Studios: studios of the items in scope, as by-name items."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import name_listing
from server.api.params import DtoOptions, NameFilters, Paging
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


@operation("GetStudios")
async def get_studios(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging, names: NameFilters,
                      userId: str | None = None) -> w.BaseItemDtoQueryResult:
    return await name_listing(ctx, auth, "Studio", dto, page, names, userId=userId)


@operation("GetStudio")
async def get_studio(ctx: ServerContext, auth: AuthInfo | None, name: str, userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("Studio", name, viewer)
