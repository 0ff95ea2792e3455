"""Tmdb: TMDb's image configuration for clients."""

from __future__ import annotations

from server.api.base import operation
from server.context import ServerContext
from server.wire import models as w


@operation("TmdbClientConfiguration")
async def tmdb_client_configuration(ctx: ServerContext) -> w.ConfigImageTypes:
    return await ctx.metadata.tmdb_client_configuration()
