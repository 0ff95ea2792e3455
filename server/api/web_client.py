"""Reelroom's own routes for the hosted web client (not in the Jellyfin spec): its status, and
installing it from a path or URL, asked from this machine only (the tray's "Install web app…")."""

from __future__ import annotations

import ipaddress
from typing import Any

import msgspec
from litestar import Request
from litestar.params import JSONBody

from server.api.base import reelroom_route
from server.context import ServerContext
from server.errors import BadRequestError, ForbiddenError


def from_this_machine(scope: dict) -> bool:
    client = scope.get("client")
    try:
        address = ipaddress.ip_address(client[0]) if client else None
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address is not None and address.is_loopback


class WebInstallRequest(msgspec.Struct, kw_only=True):
    Path: str | None = None
    Url: str | None = None
    Sha256: str | None = None


@reelroom_route("GET", "/Reelroom/WebClient", auth="admin", media_type="application/json")
async def web_client_status(ctx: ServerContext) -> dict[str, Any]:
    return ctx.web.status()


@reelroom_route("POST", "/Reelroom/WebClient/Install", auth="admin", media_type="application/json",
                status_code=200)
async def install_web_client(ctx: ServerContext, request: Request[Any, Any, Any], data: JSONBody[WebInstallRequest]) -> dict[str, Any]:
    if bool(data.Path) == bool(data.Url):
        raise BadRequestError("Give either Path (a tarball or folder on the server) or Url.")
    if data.Url and not data.Url.lower().startswith(("http://", "https://")):
        raise BadRequestError("Url must be an http or https address.")
    # The server installs what it is pointed at and then serves it to everyone at /web/: only a
    # client on this machine (the tray, or an admin's shell) may ask, so a remote admin session
    # cannot publish server files or fetch internal URLs through it.
    if not from_this_machine(request.scope):
        raise ForbiddenError("The web app can be installed only from the server's own machine.")
    return await ctx.web.install(data.Path or data.Url or "", data.Sha256)
