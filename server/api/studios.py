"""Studios: studios of the items in scope, as by-name items."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import name_listing
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


@operation("GetStudios")
async def get_studios(ctx: ServerContext, auth: AuthInfo | None, startIndex: int | None = None,
                      limit: int | None = None, searchTerm: str | None = None, parentId: str | None = None,
                      fields: list[str] | None = None, excludeItemTypes: list[str] | None = None,
                      includeItemTypes: list[str] | None = None, isFavorite: bool | None = None,
                      enableUserData: bool | None = None, imageTypeLimit: int | None = None,
                      enableImageTypes: list[str] | None = None, userId: str | None = None,
                      nameStartsWithOrGreater: str | None = None, nameStartsWith: str | None = None,
                      nameLessThan: str | None = None, enableImages: bool | None = None,
                      enableTotalRecordCount: bool | None = None) -> w.BaseItemDtoQueryResult:
    return await name_listing(
        ctx, auth, "Studio", userId=userId, startIndex=startIndex, limit=limit, searchTerm=searchTerm,
        parentId=parentId, fields=fields, excludeItemTypes=excludeItemTypes, includeItemTypes=includeItemTypes,
        isFavorite=isFavorite, enableUserData=enableUserData, imageTypeLimit=imageTypeLimit,
        enableImageTypes=enableImageTypes, nameStartsWithOrGreater=nameStartsWithOrGreater,
        nameStartsWith=nameStartsWith, nameLessThan=nameLessThan, enableImages=enableImages,
        enableTotalRecordCount=enableTotalRecordCount)


@operation("GetStudio")
async def get_studio(ctx: ServerContext, auth: AuthInfo | None, name: str, userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("Studio", name, viewer)
