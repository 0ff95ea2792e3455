"""Build the ASGI application for one ServerContext.

Every module in ``server/api`` contributes the route handlers it defines; every spec operation
without one gets a 501 stub (see ``server/api/not_implemented.py``). The Litestar app sits behind
the wire middleware, which speaks Jellyfin's HTTP dialect (see ``server/http/wire_middleware``), and
that behind the web host (``server/web/host.py``: CORS, and the web client at ``/web/``).
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import re

from litestar import Litestar
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.routes import HTTPRoute

import server.api
from server.api.base import authorize, provide_auth, provide_ctx
from server.api.not_implemented import NOT_IMPLEMENTED, stub_handlers
from server.context import ServerContext
from server.errors import ReelroomError
from server.http import problems
from server.http.responses import WireResponse
from server.http.routing import template_path
from server.http.wire_middleware import WireMiddleware
from server.version import reelroom_version
from server.web.host import WebHostMiddleware
from server.wire.operations import BY_ID

MAX_BODY = 50 * 1024 * 1024


def collect_handlers() -> list[BaseRouteHandler]:
    handlers: list[BaseRouteHandler] = []
    for info in pkgutil.iter_modules(server.api.__path__):
        if info.name in ("base", "not_implemented"):
            continue
        module = importlib.import_module(f"server.api.{info.name}")
        for value in vars(module).values():
            if isinstance(value, BaseRouteHandler) and value.fn.__module__ == module.__name__:
                handlers.append(value)
    return handlers


def implemented_operations(handlers: list[BaseRouteHandler]) -> set[str]:
    return {h.opt["op"] for h in handlers if "op" in h.opt}


def create_app(ctx: ServerContext) -> WebHostMiddleware:
    handlers = collect_handlers()
    implemented = implemented_operations(handlers)
    overlap = implemented & NOT_IMPLEMENTED
    if overlap:
        raise RuntimeError(f"Implemented operations are still listed as not implemented: {sorted(overlap)}")
    handlers += stub_handlers(set(BY_ID) - implemented)

    async def on_startup() -> None:
        ctx.init_task = asyncio.create_task(ctx.initialize(), name="server-initialize")

    async def on_shutdown() -> None:
        await ctx.close()

    app = Litestar(
        route_handlers=handlers,
        guards=[authorize],
        dependencies={"ctx": Provide(provide_ctx, sync_to_thread=False),
                      "auth": Provide(provide_auth, sync_to_thread=False)},
        exception_handlers={
            ReelroomError: problems.handle_reelroom_error,
            HTTPException: problems.handle_http_exception,
            Exception: problems.handle_unexpected,
        },
        openapi_config=OpenAPIConfig(title="Reelroom", version=reelroom_version(), path="/api-docs/litestar",
                                     render_plugins=[]),
        on_startup=[on_startup],
        on_shutdown=[on_shutdown],
        request_max_body_size=MAX_BODY,
        response_class=WireResponse,
        logging_config=None,
        debug=False,
    )
    app.state.ctx = ctx
    wire = WireMiddleware(app, ctx.startup)
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        template = re.sub(r"\{(\w+):\w+\}", r"{\1}", template_path(route.path))
        for method, entry in route.route_handler_map.items():
            handler = entry[0] if isinstance(entry, tuple) else entry
            if isinstance(handler, HTTPRouteHandler):
                wire.add_route(template, method, BY_ID.get(handler.opt.get("op", "")))
    return WebHostMiddleware(wire, ctx.web, lambda: ctx.config.server().CorsHosts, ctx.server_name, ctx.port)
