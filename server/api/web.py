"""Dashboard pages, BitrateTest, robots.txt and the OpenAPI document. The web client itself
(``/``, ``/web/...``) is served in front of the API by ``server/web/host.py``."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.response import Redirect, Stream

from server.api.base import operation, reelroom_route
from server.context import ServerContext
from server.errors import BadRequestError
from server.http.routing import template_path
from server.wire import models as w

BITRATE_TEST_MAX = 100 * 1024 * 1024


@operation("GetDashboardConfigurationPage", media_type="text/html")
async def get_dashboard_configuration_page(ctx: ServerContext, name: str | None = None) -> Response[Any]:
    content, media = ctx.plugins.config_page(name)
    return Response(content=content, media_type=media)


@operation("GetConfigurationPages")
async def get_configuration_pages(ctx: ServerContext, enableInMainMenu: bool | None = None
                                  ) -> list[w.ConfigurationPageInfo]:
    out = []
    for record, page in ctx.plugins.config_pages():
        if enableInMainMenu is not None and bool(page.enable_in_main_menu) != enableInMainMenu:
            continue
        out.append(w.ConfigurationPageInfo(Name=page.name, EnableInMainMenu=bool(page.enable_in_main_menu),
                                           MenuSection=page.menu_section, MenuIcon=page.menu_icon,
                                           DisplayName=page.display_name or page.name, PluginId=record.id))
    return out


@operation("GetBitrateTestBytes", media_type="application/octet-stream")
async def get_bitrate_test_bytes(size: int = 102400) -> Stream:
    if size <= 0 or size > BITRATE_TEST_MAX:
        raise BadRequestError(f"size must be between 1 and {BITRATE_TEST_MAX} bytes.")

    async def chunks():
        left = size
        block = os.urandom(min(size, 1024 * 1024))
        while left > 0:
            piece = block[: min(left, len(block))]
            left -= len(piece)
            yield piece

    return Stream(chunks(), media_type="application/octet-stream", headers={"Content-Length": str(size)})


@reelroom_route("GET", "/robots.txt")
async def robots_txt() -> Redirect:
    return Redirect(path="/web/robots.txt", status_code=302)


@reelroom_route("GET", "/web/robots.txt", media_type="text/plain")
async def web_robots_txt() -> str:
    return "User-agent: *\nDisallow: /\n"


_OPENAPI_CACHE: dict[int, bytes] = {}
_OPENAPI_LOCK = threading.Lock()


def _openapi_bytes(app) -> bytes:
    """The document, built once per app (seconds of work for ~400 operations) under a lock."""
    with _OPENAPI_LOCK:
        cached = _OPENAPI_CACHE.get(id(app))
        if cached is None:
            # Routes compile on first use (server/app.py); the document needs every one compiled,
            # in Litestar's order. A route a request compiles meanwhile on the loop ends the same.
            compile_all = getattr(app, "compile_all", None)
            if compile_all is not None:
                compile_all()
            schema = app.openapi_schema.to_schema()
            schema["paths"] = {template_path(p): v for p, v in schema.get("paths", {}).items()}
            cached = msgspec.json.encode(schema)
            _OPENAPI_CACHE[id(app)] = cached
        return cached


@reelroom_route("GET", "/api-docs/openapi.json", media_type="application/json")
async def openapi_document(request: Request[Any, Any, Any]) -> Response[Any]:
    # Built off the event loop: the first request must not stall every other client.
    content = await asyncio.to_thread(_openapi_bytes, request.app)
    return Response(content=content, media_type="application/json; charset=utf-8")
