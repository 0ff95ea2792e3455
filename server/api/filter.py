"""Filter: the genres, tags, ratings and years a client can filter the current view by."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import guid_or_none
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.library.catalog import ids
from server.library.catalog.by_name import MUSIC_TYPES
from server.library.catalog.query import ItemQuery
from server.wire import models as w


@operation("GetQueryFiltersLegacy")
async def get_query_filters_legacy(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None,
                                   parentId: str | None = None, includeItemTypes: list[str] | None = None,
                                   mediaTypes: list[str] | None = None) -> w.QueryFiltersLegacy:
    viewer = await ctx.items.viewer(auth, userId)
    q = ItemQuery(parent_id=guid_or_none(parentId, "parentId"), recursive=True,
                  include_types=list(includeItemTypes or ()), media_types=list(mediaTypes or ()))
    values = await ctx.items.filter_values(q, viewer)
    return w.QueryFiltersLegacy(Genres=values["Genre"], Tags=values["Tag"], OfficialRatings=values["OfficialRating"],
                                Years=values["Year"])


@operation("GetQueryFilters")
async def get_query_filters(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None,
                            parentId: str | None = None, includeItemTypes: list[str] | None = None,
                            isAiring: bool | None = None, isMovie: bool | None = None, isSports: bool | None = None,
                            isKids: bool | None = None, isNews: bool | None = None, isSeries: bool | None = None,
                            recursive: bool | None = None) -> w.QueryFilters:
    viewer = await ctx.items.viewer(auth, userId)
    parent = guid_or_none(parentId, "parentId")
    q = ItemQuery(parent_id=parent, recursive=recursive is not False, include_types=list(includeItemTypes or ()))
    values = await ctx.items.filter_values(q, viewer)
    music = bool(includeItemTypes) and all(t in MUSIC_TYPES for t in includeItemTypes or ())
    if parent and not music:
        music = await ctx.items.collection_type_of(parent) == "music"
    kind = "MusicGenre" if music else "Genre"
    return w.QueryFilters(Genres=[w.NameGuidPair(Name=g, Id=ids.by_name_id(kind, g)) for g in values["Genre"]],
                          Tags=values["Tag"])
