"""Search: search hints for the client's search box."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import Paging, guid_or_none
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.library.catalog.query import ItemQuery
from server.library.catalog.search import SearchRequest
from server.wire import models as w


@operation("GetSearchHints")
async def get_search_hints(ctx: ServerContext, auth: AuthInfo | None, searchTerm: str, page: Paging,
                           userId: str | None = None,
                           includeItemTypes: list[str] | None = None, excludeItemTypes: list[str] | None = None,
                           mediaTypes: list[str] | None = None, parentId: str | None = None,
                           isMovie: bool | None = None, isSeries: bool | None = None, isNews: bool | None = None,
                           isKids: bool | None = None, isSports: bool | None = None,
                           includePeople: bool | None = None, includeMedia: bool | None = None,
                           includeGenres: bool | None = None, includeStudios: bool | None = None,
                           includeArtists: bool | None = None) -> w.SearchHintResult:
    if not searchTerm or not searchTerm.strip():
        raise BadRequestError("searchTerm is required.")
    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    include = list(includeItemTypes or ())
    if isMovie:
        include.append("Movie")
    if isSeries:
        include.append("Series")
    scope = ctx.items.scoped(ItemQuery(parent_id=guid_or_none(parentId, "parentId"), include_types=include,
                                       exclude_types=list(excludeItemTypes or ()),
                                       media_types=list(mediaTypes or ())), viewer)
    narrowed = bool(include or mediaTypes)
    req = SearchRequest(term=searchTerm.strip(), scope=scope, start_index=start, limit=limit,
                        include_media=includeMedia is not False,
                        include_people=includePeople is not False and not narrowed,
                        include_genres=includeGenres is not False and not narrowed,
                        include_studios=includeStudios is not False and not narrowed,
                        include_artists=includeArtists is not False and not narrowed)
    return await ctx.items.search(req, ctx.items.options(viewer, enable_user_data=False))
