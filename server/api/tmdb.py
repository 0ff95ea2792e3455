"""Tmdb: TMDb's image configuration for clients; Reelroom's own route that checks and saves the
user's TMDb API key (the native wizard and the tray's Settings use it)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request

from server.api.base import operation, reelroom_route
from server.context import ServerContext
from server.errors import BadRequestError
from server.wire import models as w


@operation("TmdbClientConfiguration")
async def tmdb_client_configuration(ctx: ServerContext) -> w.ConfigImageTypes:
    return await ctx.metadata.tmdb_client_configuration()


@reelroom_route("POST", "/Reelroom/Metadata/TmdbKey", auth="admin", status_code=200)
async def set_tmdb_key(ctx: ServerContext, request: Request[Any, Any, Any]) -> dict:
    """Body ``{"ApiKey": "..."}``: checked once with a test call to TMDb (400 when TMDb refuses
    it), then saved. An empty key switches TMDb off."""
    try:
        body = msgspec.json.decode(await request.body())
    except msgspec.DecodeError:
        raise BadRequestError("The body must be JSON: {\"ApiKey\": \"...\"}.") from None
    if not isinstance(body, dict) or not isinstance(body.get("ApiKey", body.get("apiKey", "")), str | None):
        raise BadRequestError("ApiKey must be a string.")
    enabled = await ctx.metadata.set_tmdb_key(body.get("ApiKey", body.get("apiKey")))
    return {"Enabled": enabled}
