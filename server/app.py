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
from typing import Any

from litestar import Litestar, Router
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.routes import HTTPRoute, WebSocketRoute

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


class _PathIndex:
    """What ``Router.register`` asks of ``route_handler_method_map``: the handlers of one path.

    Litestar rebuilds the whole path -> handlers map from every route for each handler it
    registers, which made registering the ~400 handlers quadratic and a large part of start-up.
    ``register`` only appends routes or replaces one in place by another of the same path, so an
    index from path to positions, extended as routes are appended, gives the same answer; should
    a position hold another path, Litestar's own map answers."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self.positions: dict[str, list[int]] = {}
        self.seen = 0

    def get(self, path: str, default: Any = None) -> Any:
        routes = self.router.routes
        for i in range(self.seen, len(routes)):
            self.positions.setdefault(routes[i].path, []).append(i)
        self.seen = len(routes)
        found: dict[str, Any] = {}
        for i in self.positions.get(path, ()):
            route = routes[i]
            if route.path != path:  # not the way register() keeps routes
                return Router.route_handler_method_map.fget(self.router).get(path, default)  # type: ignore[attr-defined]
            if isinstance(route, HTTPRoute):
                for handler in route.route_handlers:
                    for method in handler.http_methods:
                        found[method] = handler
            else:
                found["websocket" if isinstance(route, WebSocketRoute) else "asgi"] = route.route_handler
        return found if found else default


class _App(Litestar):
    @property
    def route_handler_method_map(self) -> _PathIndex:  # type: ignore[override]
        index = self.__dict__.get("_path_index")
        if index is None:
            index = self.__dict__["_path_index"] = _PathIndex(self)
        return index


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

    app = _App(
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
