"""Configuration: the server configuration and its named sections."""

from __future__ import annotations

import msgspec
from litestar import Request

from server.api.base import operation, reelroom_route
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.metadata.settings import without_secrets
from server.wire import models as w
from server.wire.body import canonical_keys


@operation("GetConfiguration")
async def get_configuration(ctx: ServerContext) -> w.ServerConfiguration:
    return ctx.config.server()


@operation("UpdateConfiguration")
async def update_configuration(ctx: ServerContext, data: w.ServerConfiguration) -> None:
    ctx.config.save("system", data)


@operation("GetNamedConfiguration", media_type="application/json")
async def get_named_configuration(ctx: ServerContext, auth: AuthInfo | None, key: str) -> object:
    if key.lower() not in ctx.config.NAMED_TYPES and key.lower() not in ctx.config.EXTRA_KEYS:
        raise NotFoundError(f"No configuration named {key!r}.")
    value = ctx.config.get(key)
    if auth is None or not auth.is_admin:
        value = without_secrets(key.lower(), value)
    return value


@operation("UpdateNamedConfiguration")
async def update_named_configuration(ctx: ServerContext, key: str, request: Request) -> None:
    raw = await request.body()
    name = key.lower()
    tp = ctx.config.NAMED_TYPES.get(name)
    try:
        data = msgspec.json.decode(raw or b"{}")
    except msgspec.DecodeError as exc:
        raise BadRequestError(f"The request body is not valid JSON: {exc}") from None
    if tp is not None:
        try:
            value = msgspec.convert(canonical_keys(data, tp), tp, strict=False)
        except msgspec.ValidationError as exc:
            raise BadRequestError(f"Invalid {key} configuration: {exc}") from None
    elif name in ctx.config.EXTRA_KEYS:
        value = ctx.config.validate_extra(name, data)
    else:
        raise NotFoundError(f"No configuration named {key!r}.")
    ctx.config.save(name, value)


@operation("GetDefaultMetadataOptions")
async def get_default_metadata_options() -> w.MetadataOptions:
    return w.MetadataOptions(ItemType=None, DisabledMetadataSavers=[], LocalMetadataReaderOrder=[],
                             DisabledMetadataFetchers=[], MetadataFetcherOrder=[], DisabledImageFetchers=[],
                             ImageFetcherOrder=[])


@reelroom_route("POST", "/System/MediaEncoder/Path", auth="admin", status_code=204)
async def update_media_encoder_path(request: Request) -> None:
    """Jellyfin 10.10 keeps this route (hidden from its spec) as a no-op, for security: the ffmpeg
    path is not settable over HTTP. jellyfin-web's transcoding page still posts to it on save."""
    return None
