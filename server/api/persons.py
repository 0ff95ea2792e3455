"""Persons: the people (cast and crew) of the items the user may see."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import DtoOptions, Paging, guid_or_none
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.library.catalog.by_name import NameQuery
from server.library.catalog.query import ItemQuery
from server.wire import models as w


@operation("GetPersons")
async def get_persons(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging,
                      searchTerm: str | None = None, filters: list[str] | None = None,
                      isFavorite: bool | None = None, excludePersonTypes: list[str] | None = None,
                      personTypes: list[str] | None = None, appearsInItemId: str | None = None,
                      userId: str | None = None) -> w.BaseItemDtoQueryResult:
    _start, limit = page.bounds()
    viewer = await ctx.items.viewer(auth, userId)
    if filters and "IsFavorite" in filters:
        isFavorite = True
    q = ctx.items.scoped(ItemQuery(recursive=True), viewer)
    nq = NameQuery(kind="Person", scope=q, search_term=searchTerm, is_favorite=isFavorite,
                   person_types=list(personTypes or ()), exclude_person_types=list(excludePersonTypes or ()),
                   appears_in_item_id=guid_or_none(appearsInItemId, "appearsInItemId"), limit=limit)
    return await ctx.items.names(nq, dto.options(ctx.items, viewer))


@operation("GetPerson")
async def get_person(ctx: ServerContext, auth: AuthInfo | None, name: str, userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("Person", name, viewer)
