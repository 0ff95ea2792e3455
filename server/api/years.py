"""Years: production years of the items in scope, as by-name items."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import name_listing
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.wire import models as w


@operation("GetYears")
async def get_years(ctx: ServerContext, auth: AuthInfo | None, startIndex: int | None = None,
                    limit: int | None = None, sortOrder: list[str] | None = None, parentId: str | None = None,
                    fields: list[str] | None = None, excludeItemTypes: list[str] | None = None,
                    includeItemTypes: list[str] | None = None, mediaTypes: list[str] | None = None,
                    sortBy: list[str] | None = None, enableUserData: bool | None = None,
                    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
                    userId: str | None = None, recursive: bool | None = None,
                    enableImages: bool | None = None) -> w.BaseItemDtoQueryResult:
    from server.library.catalog.query import ItemQuery

    return await name_listing(
        ctx, auth, "Year", userId=userId, startIndex=startIndex, limit=limit, parentId=parentId, fields=fields,
        excludeItemTypes=excludeItemTypes, includeItemTypes=includeItemTypes, enableUserData=enableUserData,
        imageTypeLimit=imageTypeLimit, enableImageTypes=enableImageTypes, sortOrder=sortOrder,
        enableImages=enableImages, scope=ItemQuery(media_types=list(mediaTypes or ())))


@operation("GetYear")
async def get_year(ctx: ServerContext, auth: AuthInfo | None, year: int, userId: str | None = None) -> w.BaseItemDto:
    if not 0 < year < 10000:
        raise BadRequestError("year is out of range.")
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("Year", str(year), viewer)
