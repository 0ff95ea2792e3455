"""Years: production years of the items in scope, as by-name items."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import name_listing
from server.api.params import DtoOptions, NameFilters, Paging
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.wire import models as w


@operation("GetYears")
async def get_years(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging, names: NameFilters,
                    mediaTypes: list[str] | None = None, sortBy: list[str] | None = None, userId: str | None = None,
                    recursive: bool | None = None) -> w.BaseItemDtoQueryResult:
    from server.library.catalog.query import ItemQuery

    return await name_listing(ctx, auth, "Year", dto, page, names, userId=userId,
                              scope=ItemQuery(media_types=list(mediaTypes or ())))


@operation("GetYear")
async def get_year(ctx: ServerContext, auth: AuthInfo | None, year: int, userId: str | None = None) -> w.BaseItemDto:
    if not 0 < year < 10000:
        raise BadRequestError("year is out of range.")
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("Year", str(year), viewer)
