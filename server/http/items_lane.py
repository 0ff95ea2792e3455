"""The Items lane: a GET /Items page answered at the HTTP protocol, past ASGI and Litestar.

An Items page is the request a browsing client sends most, and the one the server's event loop
spends most on. Through the app it passes uvicorn's proxy-headers middleware, WebHostMiddleware,
WireMiddleware, Litestar's router, its request and kwargs machinery, the guard, the route's
``before_request``, the handler and Litestar's response; most of those layers do nothing for this
request but cost their share of the event loop. Here, once the request head is complete
(``server/http/protocol.py`` asks :meth:`ItemsLane.takes` for every request and runs
:meth:`ItemsLane.serve` in place of the app for those it takes), the page is answered by the very
functions those layers call, in their order:

- ``WireMiddleware.rewrite``: prefixes (``/emby``, ``/mediabrowser``), the legacy alias
  ``/Users/{userId}/Items``, case-insensitive matching, the tidied query and its problem;
  ``accept_header`` and ``wants_camel_case``: the casing;
- ``check_caller`` and ``admit_caller`` (``server/api/base.py``): the guard (token, scopes,
  activity) with the route's own ``guard_plan``;
- ``kept_lookup`` (``server/api/replies.py``): the whole-reply cache, as the route's
  ``before_request``;
- the route's compiled query parser (``server/http/fast_query.py``) and its handler function
  (``get_items``, with its parameter groups: the same function Litestar calls, which hands the
  page to a reader process or encodes it here);
- the reply: Litestar's head of a ``bytes`` reply (status, ``content-type``, ``content-length``)
  through ``json_charset_sender`` and ``WebHostMiddleware.with_cors``, then uvicorn's own
  ``RequestResponseCycle.send`` (Date header, keep-alive, ``connection: close``, flow control,
  access log, pipelining: the protocol's sender writes head and body in one ``writev``).

Anything else goes to the app as it is, untouched, so every other reply (and every error) stays
byte for byte what it was: another method (HEAD), a request with a body or ``Expect``, forwarded
headers (uvicorn's proxy middleware would rewrite the client), start-up's 503 window, a server
closing, a parameter problem, a query the compiled parser does not take wholly, a userId Litestar
would read differently, a guard that refuses (no or bad token, a missing permission), any
exception before the reply starts (the page is asked again through the app, which answers it
as ever: a read-only request, asked twice only when it fails). ``REELROOM_ITEMS_LANE=0`` (read
when the app is built) turns the lane off; ``tests/api/test_items_lane.py`` sends the same
requests with the lane on and off to a real server and compares the replies byte for byte.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from server.errors import ReelroomError
from server.http import limits, reply_cache
from server.http.wire_middleware import WireMiddleware, accept_header, json_charset_sender
from server.wire.casing import camel_case_requested, wants_camel_case

log = logging.getLogger("reelroom.http")

Scope = dict[str, Any]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

OPERATION = "GetItems"
ENV_SWITCH = "REELROOM_ITEMS_LANE"

# Request headers that send a request to the app: a body, 100-continue, forwarded-for headers
# (uvicorn's proxy middleware would rewrite the client and scheme).
_TO_APP = frozenset({b"transfer-encoding", b"expect", b"x-forwarded-for", b"x-forwarded-proto"})


class _ToApp(Exception):
    """This request is the app's after all."""


def lane_enabled(environ: dict[str, str] | None = None) -> bool:
    """``REELROOM_ITEMS_LANE``: on unless 0, off, no or false."""
    text = (os.environ if environ is None else environ).get(ENV_SWITCH, "").strip().lower()
    return text not in ("0", "off", "no", "false")


class _Request:
    """What the handler's wrapper reads of Litestar's request: its scope (``ctx``, ``auth``;
    ``server/api/params.py``'s INJECTED)."""

    __slots__ = ("scope",)

    def __init__(self, scope: Scope) -> None:
        self.scope = scope


class ItemsLane:
    """Built with the app (``server/app.py``, which passes in the functions of the layers above
    this one): ``wire`` the WireMiddleware, ``litestar`` the Litestar app and ``route`` its GET
    /Items route; ``with_cors`` and ``origin``: WebHostMiddleware's; ``guard_plan``,
    ``check_caller``, ``admit_caller``: the guard's (``server/api/base.py``); ``kept_lookup``: the
    whole-reply cache's lookup (``server/api/replies.py``)."""

    def __init__(self, *, wire: WireMiddleware, litestar: Any, route: Any,
                 with_cors: Callable[[Send, str | None], Send], origin: Callable[[Scope], str | None],
                 guard_plan: Callable[[Any], Any], check_caller: Callable[..., Awaitable[Any]],
                 admit_caller: Callable[..., Awaitable[None]], kept_lookup: Callable[..., bytes | None]) -> None:
        self.wire = wire
        self.litestar = litestar
        self.route = route
        self.with_cors = with_cors
        self.origin = origin
        self.guard_plan = guard_plan
        self.check_caller = check_caller
        self.admit_caller = admit_caller
        self.kept_lookup = kept_lookup
        self.ctx = litestar.state.ctx
        self.enabled = True
        self.served = 0  # pages the lane answered
        self.passed = 0  # requests it took and gave to the app

    @staticmethod
    def takes(scope: Scope) -> bool:
        """Whether a request may be the lane's (cheap: GET of a path ending in /Items, any case)."""
        path: str = scope["path"]
        return bool(scope["method"] == "GET" and path[-6:].lower() == "/items")

    def bind(self, app: ASGIApp) -> ASGIApp:
        """The ASGI callable uvicorn's cycle runs for a request the lane takes: the lane, else ``app``."""

        async def lane(scope: Scope, receive: Any, send: Send) -> None:
            await self.serve(app, scope, receive, send)

        return lane

    async def serve(self, app: ASGIApp, scope: Scope, receive: Any, send: Send) -> None:
        started = False

        async def sending(message: dict[str, Any]) -> None:
            nonlocal started
            started = True
            await send(message)

        if self.enabled:
            try:
                if await self._answer(scope, sending):
                    return
            except (_ToApp, ReelroomError):
                if started:
                    raise
            except Exception:
                if started:
                    raise
                log.warning("The Items lane failed on a request; the app answers it", exc_info=True)
            self.passed += 1
        await app(scope, receive, send)

    async def _answer(self, scope: Scope, send: Send) -> bool:
        """Answer the page; False (nothing sent) when the app must."""
        for name, value in scope["headers"]:
            if name in _TO_APP or (name == b"content-length" and value.strip() != b"0"):
                return False
        wire, ctx = self.wire, self.ctx
        if not wire.startup.ready or ctx.closing:
            return False
        new_scope, info = wire.rewrite(scope)
        if info is None or info.op is None or info.op.operation_id != OPERATION or limits.SCOPE_KEY in new_scope:
            return False
        handler, model = self.route.route_handler_map["GET"]  # (compiled on the route's first use)
        parser = getattr(model, "parser", None)
        plan = self.guard_plan(handler)
        if parser is None or plan.json_body:
            return False
        new_scope["litestar_app"] = self.litestar
        new_scope["state"] = dict(scope.get("state") or ())  # the app's own state stays as it was
        casing = camel_case_requested.set(wants_camel_case(accept_header(scope)))
        slot = reply_cache.pending.set(None)
        try:
            auth = await self.check_caller(new_scope, ctx, plan)
            await self.admit_caller(new_scope, ctx, auth, _no_path_items)
            body: Any = None
            kept = getattr(handler.before_request, "kept_operation", None)
            if kept is not None:
                body = self.kept_lookup(new_scope, kept[0], kept[1], _to_app)
            if not body:
                kwargs = parser.parse(new_scope["query_string"], {}, _Request(new_scope))
                if kwargs is None:
                    return False
                body = await handler.fn(**kwargs)
            if type(body) is not bytes:
                return False
        finally:
            reply_cache.pending.reset(slot)
            camel_case_requested.reset(casing)
        self.served += 1  # (before the reply goes out: a test reads it once the reply is in)
        out = json_charset_sender(self.with_cors(send, self.origin(scope)))
        await out({"type": "http.response.start", "status": handler.status_code,
                   "headers": [(b"content-type", handler.media_type.encode("latin-1")),
                               (b"content-length", str(len(body)).encode("latin-1"))]})
        await out({"type": "http.response.body", "body": body})
        return True


def _no_path_items() -> Any:
    raise _ToApp  # (asked only for a route with path parameters: GET /Items has none)


def _to_app() -> str | None:
    raise _ToApp  # a userId the query does not name once and plainly: Litestar's reading


def find_route(litestar: Any) -> Any:
    """The Litestar app's route of GET /Items, or None."""
    for route in litestar.routes:
        if any(getattr(h, "opt", {}).get("op") == OPERATION for h in getattr(route, "route_handlers", ())):
            return route
    return None
