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

import copy
import functools
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from uvicorn.protocols.http.httptools_impl import RequestResponseCycle
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

from server.errors import ReelroomError
from server.http import handoff, limits, reply_cache
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
                 admit_caller: Callable[..., Awaitable[None]], kept_lookup: Callable[..., bytes | None],
                 cors_headers: Callable[[str | None], list[tuple[bytes, bytes]]] | None = None) -> None:
        self.wire = wire
        self.litestar = litestar
        self.route = route
        self.with_cors = with_cors
        self.origin = origin
        self.guard_plan = guard_plan
        self.check_caller = check_caller
        self.admit_caller = admit_caller
        self.kept_lookup = kept_lookup
        #: the CORS headers ``with_cors`` adds for an origin (None: hand-off heads are not kept)
        self.cors_headers = cors_headers
        #: the last hand-off head built (``_Offer.head``): (uvicorn's default headers it was
        #: built with, what else it was built from, the head)
        self.head_kept: tuple[Any, tuple[Any, ...], tuple[bytes, bytes] | None] | None = None
        self.ctx = litestar.state.ctx
        self.enabled = True
        self._checked: bool | None = None  # see _plain
        self.served = 0  # pages the lane answered
        self.passed = 0  # requests it took and gave to the app

    def _plain(self, handler: Any) -> bool:
        """Whether Litestar does nothing for this route but what the lane does: one guard (the
        app's), no middleware, no after-request or after-response hook, no response headers or
        cookies, no response cache, no background task, the app's response class. Checked once;
        a route that gains any of these is left to the app (and the lane says so in the log)."""
        if self._checked is None:
            layers = handler.ownership_layers
            self._checked = bool(
                len(handler.resolve_guards()) == 1 and not handler.resolve_middleware()
                and not any(layer.after_request for layer in layers) and handler.resolve_after_response() is None
                and not handler.resolve_response_headers() and not handler.resolve_response_cookies()
                and not handler.cache and handler.background is None and not self.litestar.middleware
                and handler.resolve_response_class() is self.litestar.response_class)
            if not self._checked:
                log.warning("GET /Items has Litestar hooks the Items lane does not run; the app answers it")
        return self._checked

    @staticmethod
    def takes(scope: Scope) -> bool:
        """Whether a request may be the lane's (cheap: GET of a path ending in /Items, any case)."""
        path: str = scope["path"]
        return bool(scope["method"] == "GET" and path[-6:].lower() == "/items")

    def bind(self, app: ASGIApp, cycle: RequestResponseCycle | None = None) -> ASGIApp:
        """The ASGI callable uvicorn's cycle runs for a request the lane takes: the lane, else
        ``app``. ``cycle``: uvicorn's cycle of the request, on a plain socket connection whose
        socket may go to a reader process (server/http/protocol.py), else None."""

        return functools.partial(self.serve, app, cycle=cycle)  # (no coroutine of its own around serve's)

    async def serve(self, app: ASGIApp, scope: Scope, receive: Any, send: Send,
                    cycle: RequestResponseCycle | None = None) -> None:
        started = False

        async def sending(message: dict[str, Any]) -> None:
            nonlocal started
            started = True
            await send(message)

        if self.enabled:
            try:
                if await self._answer(scope, sending, cycle):
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

    async def _answer(self, scope: Scope, send: Send, cycle: RequestResponseCycle | None = None) -> bool:
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
        if parser is None or plan.json_body or not self._plain(handler):
            return False
        new_scope["litestar_app"] = self.litestar
        new_scope["state"] = dict(scope.get("state") or ())  # the app's own state stays as it was
        casing = camel_case_requested.set(wants_camel_case(accept_header(scope)))
        slot = reply_cache.pending.set(None)
        offer = _Offer(self, cycle, scope, handler) if cycle is not None else None
        offered = handoff.current.set(offer)
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
                try:
                    body = await handler.fn(**kwargs)
                except BaseException as exc:
                    if offer is None or not offer.handed:
                        raise
                    # a reader has the connection and may have written part of the reply: never
                    # answer it again, close it (a reader that died, a cancelled request)
                    offer.abort()
                    if isinstance(exc, Exception):
                        log.warning("A reader process ended while writing a reply; the connection is closed")
                        return True
                    raise
            if type(body) is handoff.Handed and offer is not None:
                self.served += 1
                await offer.finish(body)
                return True
            if type(body) is not bytes:
                return False
        finally:
            handoff.current.reset(offered)
            reply_cache.pending.reset(slot)
            camel_case_requested.reset(casing)
        self.served += 1  # (before the reply goes out: a test reads it once the reply is in)
        out = json_charset_sender(self.with_cors(send, self.origin(scope)))
        await out(_start(handler, str(len(body)).encode("latin-1")))
        await out({"type": "http.response.body", "body": body})
        return True


def _start(handler: Any, length: bytes) -> dict[str, Any]:
    """The reply's ``http.response.start`` (Litestar's head of a ``bytes`` reply)."""
    return {"type": "http.response.start", "status": handler.status_code,
            "headers": [(b"content-type", handler.media_type.encode("latin-1")), (b"content-length", length)]}


#: The Content-Length a hand-off's head is built with, then split at (any number works: it is
#: cut out, and a head that holds it anywhere else is not handed off).
_MARK = b"1073741827"
_LENGTH_FIELD = b"\r\ncontent-length: "


class _Capture:
    """A transport that keeps what is written (the head, built on a copy of the cycle)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.parts.append(data)

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False


class _Offer:
    """The lane's hand-off offer (server/http/handoff.py) for one request: the reply's head
    is built by uvicorn's own ``send`` on a copy of the cycle (status line, Date, Server, the
    headers in their order and casing, ``connection: close`` when the connection is closing),
    through the same CORS and charset layers as a reply the owner writes, with a marked
    Content-Length split out; the reader puts its body's length between the parts. Once the
    reader wrote, ``finish`` does the cycle's bookkeeping of that reply as uvicorn's ``send`` would
    (no bytes), so the access log, keep-alive, ``connection: close``, pipelining and flow control
    are what they would have been."""

    __slots__ = ("cycle", "handed", "handler", "lane", "scope")

    def __init__(self, lane: ItemsLane, cycle: RequestResponseCycle, scope: Scope, handler: Any) -> None:
        self.lane = lane
        self.cycle = cycle
        self.scope = scope
        self.handler = handler
        self.handed = False

    def fd(self) -> int | None:
        cycle = self.cycle
        transport: Any = cycle.transport
        if (cycle.disconnected or cycle.response_started or transport is None or transport.is_closing()
                or transport.get_write_buffer_size() or cycle.flow.write_paused):
            return None
        sock = transport.get_extra_info("socket")
        return sock.fileno() if sock is not None else None

    def keeps(self) -> bool:
        return bool(self.lane.ctx.replies.would_keep())

    async def head(self) -> tuple[bytes, bytes] | None:
        """The head, built by uvicorn's ``send`` on a copy of the cycle, or the one built last
        when that was built from the same: uvicorn's default headers (the very list, which it
        replaces each second with the Date), keep-alive, the handler and the CORS headers of
        this origin (a page asked by one client after another asks the same head)."""
        cycle = self.cycle
        lane = self.lane
        key: tuple[Any, ...] | None = None
        if lane.cors_headers is not None and cycle.chunked_encoding is None and not cycle.response_started:
            key = (cycle.keep_alive, self.handler, cycle.scope["method"],
                   tuple(lane.cors_headers(lane.origin(self.scope))))
            kept = lane.head_kept
            if kept is not None and kept[0] is cycle.default_headers and kept[1] == key:
                return kept[2]
        head = await self._build_head()
        if key is not None:
            lane.head_kept = (cycle.default_headers, key, head)
        return head

    async def _build_head(self) -> tuple[bytes, bytes] | None:
        dry = copy.copy(self.cycle)
        capture = _Capture()
        dry.transport = capture  # type: ignore[assignment]
        dry.access_log = False

        async def send(message: Any) -> None:
            await RequestResponseCycle.send(dry, message)

        out = json_charset_sender(self.lane.with_cors(send, self.lane.origin(self.scope)))
        await out(_start(self.handler, _MARK))
        head = b"".join(capture.parts)
        field = _LENGTH_FIELD + _MARK + b"\r\n"
        if head.count(_MARK) != 1 or head.count(field) != 1 or not head.endswith(b"\r\n\r\n"):
            return None
        at = head.index(field) + len(_LENGTH_FIELD)
        return head[:at], head[at + len(_MARK):]

    async def finish(self, handed: handoff.Handed) -> None:
        """The reply a reader wrote: its rest (if the client did not take it all) written here,
        then the cycle's bookkeeping; the connection closed when the reader's write failed."""
        self.handed = False
        cycle = self.cycle
        if handed.failed:
            self.abort()
            return
        real: Any = cycle.transport
        if handed.rest and not real.is_closing():
            real.write(handed.rest)  # (after what the reader wrote: it wrote nothing more)
        # What uvicorn's ``RequestResponseCycle.send`` does for this reply's head and body, less
        # the writes (the bytes are on the wire) and the head it built already (``head``, the
        # same send on a copy of the cycle): wait while the transport's buffer is over its mark,
        # the access log line, the response complete (a closing connection closed), then
        # uvicorn's next step (a pipelined request, the keep-alive timer). Its head's bookkeeping
        # reads only the status, Content-Length, Transfer-Encoding and Connection, and the lane's
        # head has a Content-Length and neither of the others (CORS and charset add none), so
        # the cycle's keep-alive stays as the head was built with. (Once going through ``send``
        # twice with its writes dropped.)
        if cycle.flow.write_paused and not cycle.disconnected:
            await cycle.flow.drain()
        if cycle.disconnected:
            return
        cycle.response_started = True
        cycle.waiting_for_100_continue = False
        if cycle.access_log:
            scope: Any = cycle.scope
            cycle.access_logger.info('%s - "%s %s HTTP/%s" %d', get_client_addr(scope), scope["method"],
                                     get_path_with_query_string(scope), scope["http_version"],
                                     self.handler.status_code)
        cycle.chunked_encoding = False
        cycle.expected_content_length = 0
        cycle.response_complete = True
        cycle.message_event.set()
        if not cycle.keep_alive:
            real.close()
        cycle.on_response()

    def abort(self) -> None:
        """Close the connection, and tell uvicorn's cycle it is gone (no reply, no 500)."""
        self.handed = False
        cycle = self.cycle
        cycle.disconnected = True
        cycle.message_event.set()
        if cycle.transport is not None:
            cycle.transport.close()


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
