"""Build the ASGI application for one ServerContext.

Every module in ``server/api`` contributes the route handlers it defines; every spec operation
without one gets a 501 stub (see ``server/api/not_implemented.py``). The Litestar app sits behind
the wire middleware, which speaks Jellyfin's HTTP dialect (see ``server/http/wire_middleware``), and
that behind the web host (``server/web/host.py``: CORS, and the web client at ``/web/``).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import pkgutil
import re
from copy import copy
from typing import Any

from litestar import Litestar, Router
from litestar.di import Provide
from litestar.events.emitter import SimpleEventEmitter
from litestar.exceptions import HTTPException, ImproperlyConfiguredException
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.routes import BaseRoute, HTTPRoute, WebSocketRoute
from litestar.utils.path import join_paths

import server.api
from server.api.base import (
    _Route,
    admit_caller,
    authorize,
    check_caller,
    guard_plan,
    provide_auth,
    provide_ctx,
)
from server.api.not_implemented import NOT_IMPLEMENTED, stub_handlers
from server.api.replies import kept_lookup
from server.context import ServerContext
from server.errors import ReelroomError
from server.http import admission, items_lane, problems
from server.http.responses import WireResponse
from server.http.routing import template_path
from server.http.wire_middleware import WireMiddleware
from server.version import reelroom_version
from server.web.host import WebHostMiddleware, request_origin
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


_PENDING: Any = object()  # a route's kwargs model before its first request


class _LazyHandlerMap(dict[str, tuple[HTTPRouteHandler, Any]]):
    """An ``HTTPRoute.route_handler_map`` whose handlers are compiled on the route's first request.

    Litestar compiles every handler when it registers it: it resolves the function's type hints,
    validates them, and builds a signature model and a kwargs model (msgspec structs and field
    definitions). For ~400 handlers that was most of building the app (~60% of its CPU) and ~9 MiB
    that stayed resident although a server sees only a few dozen of its routes. Here the map holds
    ``(handler, _PENDING)`` per method until a request looks a method up (``HTTPRoute.handle`` does
    ``route_handler_map[method]``); then the route's handlers get Litestar's own
    ``on_registration`` and kwargs models, exactly as at registration. Everything else that reads
    the map (the routing trie, the OpenAPI plugin, ``create_app``) only takes the handler.
    ``compile_all`` does the whole app at once (the tests use it so a misdeclared handler still
    fails at once)."""

    __slots__ = ("app", "route", "registered")

    def __init__(self, app: Litestar, route: HTTPRoute) -> None:
        super().__init__()
        self.app, self.route, self.registered = app, route, False
        for handler in route.route_handlers:
            for method in handler.http_methods:
                if dict.__contains__(self, method):
                    raise ImproperlyConfiguredException(
                        f"Handler already registered for path {route.path!r} and http method {method}")
                dict.__setitem__(self, method, (handler, _PENDING))

    def __getitem__(self, method: str) -> tuple[HTTPRouteHandler, Any]:
        entry = dict.__getitem__(self, method)
        if entry[1] is _PENDING:
            self.compile()
            entry = dict.__getitem__(self, method)
        return entry

    def compile(self) -> None:
        if not self.registered:
            for handler in self.route.route_handlers:
                handler.on_registration(self.app)
            self.registered = True
        path_parameters = self.route.path_parameters
        for method, (handler, model) in list(dict.items(self)):
            if model is _PENDING:
                dict.__setitem__(self, method, (handler, handler.create_kwargs_model(path_parameters=path_parameters)))


class _FirstRoute:
    """What ``HTTPRoute.create_options_handler`` reads of its route: the methods (the first route's)."""

    __slots__ = ("methods",)

    def __init__(self, methods: set[str]) -> None:
        self.methods = methods


class _App(Litestar):
    @property
    def route_handler_method_map(self) -> _PathIndex:  # type: ignore[override]
        index = self.__dict__.get("_path_index")
        if index is None:
            index = self.__dict__["_path_index"] = _PathIndex(self)
        return index

    @staticmethod
    def _get_default_plugins(plugins: list[Any]) -> list[Any]:
        """Litestar's defaults without its pydantic plugins: handlers take and return msgspec
        structs, never pydantic models (SQLModel rows stay inside the services; a test checks every
        handler), and those plugins import pydantic.v1 (~1.5 MiB, tens of ms) for nothing."""
        from litestar.plugins.core import MsgspecDIPlugin

        plugins.append(MsgspecDIPlugin())
        return plugins

    def __init__(self, **kwargs: Any) -> None:
        # While Litestar registers the handlers given here, they are gathered and made into routes
        # together at the end (_register_batch), and the routing trie is built once then instead of
        # after each handler (each build validated the whole trie again: quadratic).
        self.__dict__["_batch"] = []
        super().__init__(**kwargs)
        batch, self.__dict__["_batch"] = self.__dict__["_batch"], None
        self._add_routes(self._register_batch(batch))
        self.asgi_router.construct_routing_trie()

    def register(self, value: Any) -> None:  # type: ignore[override]  # as Litestar.register
        """Litestar's ``register``, with HTTP routes compiled on first use (``_LazyHandlerMap``).
        While the app is made, what is registered waits to be registered together, in order."""
        batch = self.__dict__.get("_batch")
        if batch is not None:
            batch.append(value)
            return
        self._add_routes(Router.register(self, value=value))
        self.asgi_router.construct_routing_trie()

    def _register_batch(self, values: list[Any]) -> list[BaseRoute]:
        """What ``Router.register`` makes of these values registered one after another, with each
        path's HTTP route made once. One by one, Litestar makes a path's route at its first HTTP
        handler (with an OPTIONS handler answering that route's methods: the first handler's), and
        at each further handler a new route of all the path's handlers, the first OPTIONS handler
        kept, found again by a scan of every route. Here each path's route is made with all its
        handlers where its first handler put it among the routes, its OPTIONS handler as the first
        route made it (the same ``Allow``); anything but an HTTP handler (the WebSocket handler,
        Litestar's OpenAPI router) is registered by Litestar in its place in the order.
        tests/system/test_app_routes.py compares the routes with Litestar's."""
        order: list[tuple[str | None, Any]] = []  # (a path, None) at its first handler, (None, a value)
        by_path: dict[str, list[HTTPRouteHandler]] = {}
        for value in values:
            if not isinstance(value, HTTPRouteHandler):
                order.append((None, value))
                continue
            value.owner = self  # (what _validate_registration_value does with a handler)
            copied = copy(value)  # as get_route_handler_map: one copy for all its paths
            for route_path in value.paths:
                path = join_paths([self.path, route_path])
                if path not in by_path:
                    by_path[path] = []
                    order.append((path, None))
                by_path[path].append(copied)
        routes: list[BaseRoute] = []
        for slot, value in order:
            if slot is None:
                routes += Router.register(self, value=value)
                continue
            path = slot
            path_handlers = by_path[path]
            first = path_handlers[0]
            ordered = list(dict.fromkeys(reversed(path_handlers)))  # the latest first, as Litestar adds them
            existing = [h for h in dict.fromkeys(self.route_handler_method_map.get(path, {}).values())
                        if isinstance(h, HTTPRouteHandler)]
            if existing:  # a route a value registered earlier made (a router's): Litestar's merge
                index = next(i for i, r in enumerate(self.routes) if r.path == path)
                self.routes[index] = route = HTTPRoute(path=path, route_handlers=ordered + existing)
                routes.append(route)
                continue
            if "OPTIONS" not in first.http_methods:
                # the OPTIONS handler of the first handler's route: its Allow names that route's methods
                first_route = _FirstRoute({*first.http_methods, "OPTIONS"})
                options = HTTPRoute.create_options_handler(first_route, path)  # type: ignore[arg-type]
                options.owner = first.owner
                ordered.append(options)
            route = HTTPRoute(path=path, route_handlers=ordered)
            self.routes.append(route)
            routes.append(route)
        return routes

    def _add_routes(self, routes: list[BaseRoute]) -> None:
        for route in routes:
            if isinstance(route, HTTPRoute):
                route.route_handler_map = _LazyHandlerMap(self, route)  # type: ignore[assignment]
            else:  # WebSocket and ASGI routes: one handler each, compiled now as Litestar does
                route.route_handler.on_registration(self)  # type: ignore[attr-defined]
                if isinstance(route, WebSocketRoute):
                    handler = route.route_handler
                    route.handler_parameter_model = handler.create_kwargs_model(path_parameters=route.path_parameters)
            for plugin in self.plugins.receive_route:
                plugin.receive_route(route)

    def compile_all(self) -> None:
        """Compile every route now, as Litestar would have at registration."""
        for route in self.routes:
            if isinstance(route, HTTPRoute) and isinstance(route.route_handler_map, _LazyHandlerMap):
                route.route_handler_map.compile()


class _QuietEmitter(SimpleEventEmitter):
    """Litestar's event emitter, which starts nothing when no listener is registered (Reelroom
    registers none): Litestar's own enters an anyio task group and a memory stream for its
    worker at every start, which imported anyio's asyncio backend (~15 modules, ~1.2 MiB) into an
    idle server. With listeners it is Litestar's emitter unchanged."""

    async def __aenter__(self) -> SimpleEventEmitter:
        return await super().__aenter__() if self.listeners else self

    def emit(self, event_id: str, *args: Any, **kwargs: Any) -> None:
        if self.listeners:
            super().emit(event_id, *args, **kwargs)


def _declared(handler: BaseRouteHandler) -> Any:
    """The handler's function as written (``_Route.declared``: its ``fn`` is made on first use)."""
    return handler.declared if isinstance(handler, _Route) else handler.fn


def collect_handlers() -> list[BaseRouteHandler]:
    handlers: list[BaseRouteHandler] = []
    for info in pkgutil.iter_modules(server.api.__path__):
        if info.name in ("base", "not_implemented"):
            continue
        module = importlib.import_module(f"server.api.{info.name}")
        for value in vars(module).values():
            if isinstance(value, BaseRouteHandler) and _declared(value).__module__ == module.__name__:
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

    limit = admission.limit_from_env()
    # browsing requests first come first served, a bound on those in flight
    # (server/http/admission.py; REELROOM_ADMIT=0 turns it off)
    admitting = admission.Admission(limit) if limit > 0 else None

    async def on_shutdown() -> None:
        if admitting is not None and admitting.stats.waited:
            logging.getLogger("reelroom.http").info("Admission: %s", admitting.stats.summary())
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
        event_emitter_backend=_QuietEmitter,
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
    host = WebHostMiddleware(wire, ctx.web, lambda: ctx.config.server().CorsHosts, ctx.server_name, ctx.port)
    route = items_lane.find_route(app)
    if route is not None and items_lane.lane_enabled():
        # GET /Items answered at the HTTP protocol by the functions of the layers it skips
        # (server/http/items_lane.py; REELROOM_ITEMS_LANE=0 turns it off)
        host.items_lane = items_lane.ItemsLane(
            wire=wire, litestar=app, route=route, with_cors=host.with_cors, origin=request_origin,
            cors_headers=host.cors.response_headers,
            guard_plan=guard_plan, check_caller=check_caller, admit_caller=admit_caller, kept_lookup=kept_lookup)
    host.admission = admitting
    return host
