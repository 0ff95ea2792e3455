"""Movies: recommendations ("Because you watched ...", server/library/browse/related.py)."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import DtoOptions, guid_or_none
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.wire import models as w


@operation("GetMovieRecommendations")
async def get_movie_recommendations(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions,
                                    userId: str | None = None, parentId: str | None = None,
                                    categoryLimit: int | None = None,
                                    itemLimit: int | None = None) -> list[w.RecommendationDto]:
    if (categoryLimit is not None and categoryLimit < 0) or (itemLimit is not None and itemLimit < 0):
        raise BadRequestError("Limits must not be negative.")
    viewer = await ctx.items.viewer(auth, userId)
    opts = dto.options(ctx.items, viewer)
    return await ctx.browse.related.movie_recommendations(
        viewer, opts, guid_or_none(parentId, "parentId"), 5 if categoryLimit is None else categoryLimit,
        8 if itemLimit is None else itemLimit)
