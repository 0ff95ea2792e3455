"""Configuration: the server configuration and its named sections."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from litestar import Request
from litestar.params import JSONBody

from server.api.base import operation, reelroom_route
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.system.configuration import ConfigSection
from server.wire import models as w


@operation("GetConfiguration")
async def get_configuration(ctx: ServerContext) -> w.ServerConfiguration:
    return ctx.config.server()


@operation("UpdateConfiguration")
async def update_configuration(ctx: ServerContext, data: JSONBody[w.ServerConfiguration]) -> None:
    await asyncio.to_thread(ctx.config.save, "system", data)  # a file write, then the listeners


def _public_section(ctx: ServerContext, key: str) -> ConfigSection:
    section = ctx.config.section(key)
    if section is None or not section.public:
        raise NotFoundError(f"No configuration named {key!r}.")
    return section


@operation("GetNamedConfiguration", media_type="application/json")
async def get_named_configuration(ctx: ServerContext, auth: AuthInfo | None, key: str) -> object:
    section = _public_section(ctx, key)
    value = ctx.config.get(section.key)
    if section.redact is not None and (auth is None or not auth.is_admin):
        value = section.redact(value)
    return value


@operation("UpdateNamedConfiguration")
async def update_named_configuration(ctx: ServerContext, key: str, request: Request[Any, Any, Any]) -> None:
    raw = await request.body()
    try:
        data = msgspec.json.decode(raw or b"{}")
    except msgspec.DecodeError as exc:
        raise BadRequestError(f"The request body is not valid JSON: {exc}") from None
    section = _public_section(ctx, key)
    value = ctx.config.parse(section.key, data)  # BadRequestError (400) when the section refuses it
    await asyncio.to_thread(ctx.config.save, section.key, value)  # a file write, then the listeners


@operation("GetDefaultMetadataOptions")
async def get_default_metadata_options() -> w.MetadataOptions:
    return w.MetadataOptions(ItemType=None, DisabledMetadataSavers=[], LocalMetadataReaderOrder=[],
                             DisabledMetadataFetchers=[], MetadataFetcherOrder=[], DisabledImageFetchers=[],
                             ImageFetcherOrder=[])


@reelroom_route("POST", "/System/MediaEncoder/Path", auth="admin", status_code=204)
async def update_media_encoder_path(request: Request[Any, Any, Any]) -> None:
    """Jellyfin 10.10 keeps this route (hidden from its spec) as a no-op, for security: the ffmpeg
    path is not settable over HTTP. jellyfin-web's transcoding page still posts to it on save."""
    return None
