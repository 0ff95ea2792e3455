"""Persons: the people (cast and crew) of the items the user may see."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import guid_or_none
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.library.catalog.by_name import NameQuery
from server.library.catalog.query import ItemQuery
from server.wire import models as w


@operation("GetPersons")
async def get_persons(ctx: ServerContext, auth: AuthInfo | None, limit: int | None = None,
                      searchTerm: str | None = None, fields: list[str] | None = None,
                      filters: list[str] | None = None, isFavorite: bool | None = None,
                      enableUserData: bool | None = None, imageTypeLimit: int | None = None,
                      enableImageTypes: list[str] | None = None, excludePersonTypes: list[str] | None = None,
                      personTypes: list[str] | None = None, appearsInItemId: str | None = None,
                      userId: str | None = None, enableImages: bool | None = None) -> w.BaseItemDtoQueryResult:
    if limit is not None and limit < 0:
        raise BadRequestError("limit must not be negative.")
    viewer = await ctx.items.viewer(auth, userId)
    if filters and "IsFavorite" in filters:
        isFavorite = True
    q = ctx.items.scoped(ItemQuery(recursive=True), viewer)
    nq = NameQuery(kind="Person", scope=q, search_term=searchTerm, is_favorite=isFavorite,
                   person_types=list(personTypes or ()), exclude_person_types=list(excludePersonTypes or ()),
                   appears_in_item_id=guid_or_none(appearsInItemId, "appearsInItemId"), limit=limit)
    opts = ctx.items.options(viewer, fields, enable_images=enableImages, image_type_limit=imageTypeLimit,
                             enable_image_types=enableImageTypes, enable_user_data=enableUserData)
    return await ctx.items.names(nq, opts)


@operation("GetPerson")
async def get_person(ctx: ServerContext, auth: AuthInfo | None, name: str, userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("Person", name, viewer)
