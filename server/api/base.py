"""How a handler is declared.

    @operation("GetPublicSystemInfo")
    async def get_public_system_info(ctx: ServerContext) -> w.PublicSystemInfo: ...

Shared parameter lists (image options, DTO options, paging, stream options) are declared as one
parameter typed with their group (server/api/params.py), which ``operation`` expands.

``operation`` takes the method, path, tag and success status from the spec's operation table,
so a handler cannot drift from the contract, and ``grep -r '"GetPublicSystemInfo"' server/api``
finds the code behind any operation. Authorization is not declared per handler: the guard
below reads the operation's security scopes from the same table.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from litestar import Request
from litestar._kwargs.kwargs_model import KwargsModel
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.handlers.http_handlers import HTTPRouteHandler

from server.api.params import expand_groups
from server.auth.header import parse_authorization
from server.auth.policy import check_access
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, UnauthorizedError
from server.http import limits
from server.http.fast_query import FastKwargs, QueryParser, compile_parser
from server.http.routing import internal_path
from server.wire.operations import BY_ID, Operation

_SLOT_NAMES: dict[type, tuple[str, ...]] = {}


def _slot_names(cls: type) -> tuple[str, ...]:
    """The attribute names of a class whose instances have slots only (as ``copyreg._slotnames``)."""
    names = _SLOT_NAMES.get(cls)
    if names is None:
        found: list[str] = []
        for klass in cls.__mro__:
            slots = klass.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name in ("__dict__", "__weakref__"):
                    continue
                if name.startswith("__") and not name.endswith("__"):  # a private name, as stored
                    name = f"_{klass.__name__.lstrip('_')}{name}"
                found.append(name)
        names = _SLOT_NAMES[cls] = tuple(found)
    return names


class _Route(HTTPRouteHandler):
    """Litestar's route handler, with two changes:

    - its guard gets the handler itself: Litestar hands each guard a ``copy`` of the handler (some
      60 attributes copied on every request); ``authorize`` only reads its ``opt``;
    - the function Litestar sees (``fn``: the handler as written, with its parameter groups
      expanded by :func:`~server.api.params.expand_groups`) is made when something first asks for
      it: compiling the route on its first request (``server/app.py``'s ``_LazyHandlerMap``), the
      OpenAPI document. Expanding all ~390 handlers at import was ~0.1 s of every start, for
      routes most servers never see. ``declared`` is the function as written."""

    __slots__ = ("_expand", "declared")

    def expand_later(self, fn: Callable[..., Any], params: Any, path: str) -> _Route:
        """Take ``fn`` as written; ``expand_groups(fn, params, path)`` runs on the first use of ``fn``."""
        super().__call__(fn)  # Litestar's checks of the function (sync or async)
        self.declared = fn
        self._expand: tuple[Any, str] | None = (params, path)
        return self

    @property
    def fn(self) -> Any:
        expand = getattr(self, "_expand", None)
        if expand is not None:
            self._fn = expand_groups(self._fn, *expand)
            self._expand = None
        return super().fn

    @property
    def handler_name(self) -> str:
        """The function's name (the expanded function keeps the declared one's), without expanding it."""
        declared = getattr(self, "declared", None)
        return declared.__name__ if declared is not None else super().handler_name

    def __str__(self) -> str:
        """Litestar's identifier of the handler (module and qualified name, which the expanded
        function keeps), without expanding it."""
        declared = getattr(self, "declared", None)
        return f"{declared.__module__}.{declared.__qualname__}" if declared is not None else super().__str__()

    def __copy__(self) -> _Route:
        """``copy.copy`` (Litestar registers a copy of each handler): the same attributes, without
        the generic reduce protocol's state dictionaries (~4 µs a handler instead of ~9)."""
        cls = type(self)
        new = object.__new__(cls)
        for name in _slot_names(cls):
            try:
                setattr(new, name, getattr(self, name))
            except AttributeError:  # not set on this handler: not on its copy either
                pass
        return new

    def create_kwargs_model(self, path_parameters: Any) -> KwargsModel:
        """Litestar's kwargs model, with the handler's query and path parameters parsed in one pass
        when it takes nothing else (``server/http/fast_query.py``; Litestar's models still parse a
        request the table does not take, and raise their 400s)."""
        model = super().create_kwargs_model(path_parameters)
        fn = self.fn
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
            defaults = {name: p.default for name, p in inspect.signature(fn).parameters.items()
                        if p.default is not inspect.Parameter.empty}
        except Exception:  # a handler whose hints cannot be resolved here keeps Litestar's path
            return model
        parser = compile_parser(model, hints, defaults)
        if parser is None:
            return model
        signature = self.signature_model
        if "_reelroom_fast" not in vars(signature):
            slow = signature.parse_values_from_connection_kwargs

            def parse_values(cls: Any, connection: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
                if type(kwargs) is FastKwargs:
                    return kwargs  # parsed already
                values: dict[str, Any] = slow(connection=connection, kwargs=kwargs)
                return values

            setattr(signature, "parse_values_from_connection_kwargs", classmethod(parse_values))  # noqa: B010
            setattr(signature, "_reelroom_fast", True)  # noqa: B010
        return _FastKwargsModel.wrap(model, parser)

    async def authorize_connection(self, connection: ASGIConnection[Any, Any, Any, Any]) -> None:
        for guard in self.resolve_guards():
            await guard(connection, self)  # type: ignore[misc]  # every guard is async (ensure_async_callable)


class _FastKwargsModel(KwargsModel):
    """Litestar's kwargs model of a handler, whose ``to_kwargs`` asks the compiled parser first."""

    __slots__ = ("parser", "slow")
    parser: QueryParser
    slow: KwargsModel

    @classmethod
    def wrap(cls, model: KwargsModel, parser: QueryParser) -> _FastKwargsModel:
        fast = cls.__new__(cls)
        for name in KwargsModel.__slots__:
            setattr(fast, name, getattr(model, name))
        fast.parser = parser
        fast.slow = model
        return fast

    async def to_kwargs(self, connection: ASGIConnection[Any, Any, Any, Any]) -> dict[str, Any]:
        scope = connection.scope
        parsed = self.parser.parse(scope.get("query_string", b""), scope.get("path_params") or {}, connection)
        if parsed is None:
            kwargs: dict[str, Any] = await self.slow.to_kwargs(connection)
            return kwargs
        return parsed


def _route(method: str) -> Callable[..., _Route]:
    def decorator(path: str, **options: Any) -> _Route:
        return _Route(path, http_method=method, **options)

    return decorator


# What Litestar's get, post, ... decorators make (they only set the method), as _Route.
_DECORATORS: dict[str, Callable[..., _Route]] = {
    method: _route(method) for method in ("GET", "POST", "DELETE", "PUT", "PATCH", "HEAD")}
_PATH_TYPES = {"int32": "int", "int64": "int", "float": "float"}


def litestar_path(op: Operation) -> str:
    path = internal_path(op.path)
    for name, where, kind, _enum, _req in op.params:
        if where == "path":
            path = path.replace("{" + name + "}", "{" + name + ":" + _PATH_TYPES.get(kind, "str") + "}")
    return path


def operation(operation_id: str, **kwargs: Any) -> Callable[[Callable[..., Any]], _Route]:
    """The Litestar route decorator for a spec operation."""
    op = BY_ID[operation_id]
    decorator = _DECORATORS[op.method]
    options: dict[str, Any] = {
        "operation_id": operation_id,
        "tags": [op.tag] if op.tag else None,
        "opt": {"op": operation_id, **kwargs.pop("opt", {})},
        "deprecated": op.deprecated,
    }
    if op.method != "HEAD":
        options["status_code"] = op.success_status
    if op.success_media == "application/json":
        options["media_type"] = "application/json"  # even for a bare string (Ping, ParentPath)
    options.update(kwargs)
    path = litestar_path(op)
    route = decorator(path, **options)

    def register(fn: Callable[..., Any]) -> _Route:
        return route.expand_later(fn, op.params, path)

    return register


def reelroom_route(method: str, path: str, *, auth: str = "none",
                   **kwargs: Any) -> Callable[[Callable[..., Any]], _Route]:
    """A route that is not in the Jellyfin spec (web pages, robots.txt, the socket).
    ``auth`` is "none", "user" or "admin"."""
    route = _DECORATORS[method](path, opt={"auth": auth, **kwargs.pop("opt", {})}, include_in_schema=False, **kwargs)

    def register(fn: Callable[..., Any]) -> _Route:
        return route.expand_later(fn, None, path)

    return register


@dataclass(frozen=True, slots=True)
class GuardPlan:
    """What the guard needs of one handler, worked out on its first request instead of each."""

    requires_auth: bool
    scopes: tuple[str, ...]
    setup_may_skip_token: bool  # before the wizard is done a bad token is no token here
    json_body: bool  # a JSON body is read (bounded and checked) before the handler runs


_PLANS: dict[str, GuardPlan] = {}  # by operation id, or "auth:<level>" for a route outside the spec


def guard_plan(handler: BaseRouteHandler) -> GuardPlan:
    opt = handler.opt
    op_id = opt.get("op")
    key = op_id or "auth:" + opt.get("auth", "none")
    plan = _PLANS.get(key)
    if plan is None:
        if op_id:
            op = BY_ID[op_id]
            requires_auth, scopes = op.requires_auth, op.scopes
            json_body = any("json" in t for t in op.body_types)
        else:
            level = opt.get("auth", "none")
            requires_auth = level != "none"
            scopes = ("RequiresElevation",) if level == "admin" else ("DefaultAuthorization",)
            json_body = False
        plan = _PLANS[key] = GuardPlan(requires_auth, scopes, "FirstTimeSetupOrElevated" in scopes, json_body)
    return plan


# What an Authorization / X-Emby-Authorization header value says: (whether it is a MediaBrowser
# or Emby header with parameters, its Token). Clients send the same value on every request, so
# it is parsed once (a bounded map, cleared when full).
_HEADER_TOKENS: dict[bytes, tuple[bool, str | None]] = {}
_HEADER_TOKENS_MAX = 1024
_TOKEN_HEADERS = (b"x-emby-authorization", b"authorization", b"x-emby-token", b"x-mediabrowser-token")


def _header_token(value: bytes) -> tuple[bool, str | None]:
    hit = _HEADER_TOKENS.get(value)
    if hit is None:
        params = parse_authorization(value.decode("latin-1"))
        hit = (bool(params), params.get("Token") if params else None)
        if len(_HEADER_TOKENS) >= _HEADER_TOKENS_MAX:
            _HEADER_TOKENS.clear()
        _HEADER_TOKENS[value] = hit
    return hit


def request_token(scope: Any) -> str | None:
    """The caller's token, read as ``server.auth.header.identify`` reads it: the parameters of
    X-Emby-Authorization, else of Authorization (MediaBrowser or Emby scheme); their Token, else
    X-Emby-Token, X-MediaBrowser-Token, the query's ApiKey, api_key (keys in any case); a header
    or key given twice counts by its last value. Straight from the ASGI scope: no header or query
    map is built for it."""
    found: dict[bytes, bytes] = {}
    for name, value in scope.get("headers", ()):
        if name in _TOKEN_HEADERS:
            found[name] = value
        elif name.lower() in _TOKEN_HEADERS:
            found[name.lower()] = value
    token: str | None = None
    if found:
        for name in (b"x-emby-authorization", b"authorization"):
            value = found.get(name)
            if value is not None:
                has_params, header_token = _header_token(value)
                if has_params:
                    token = header_token
                    break
        token = token or _text(found.get(b"x-emby-token")) or _text(found.get(b"x-mediabrowser-token"))
    if not token:
        query: bytes = scope.get("query_string", b"")
        if query and (b"api" in query.lower() or b"%" in query):  # a key may be percent-encoded
            keys: dict[str, str] = {}
            for key, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
                low = key.lower()
                if low in ("apikey", "api_key"):
                    keys[low] = value
            token = keys.get("apikey") or keys.get("api_key")
    return token or None


def _text(value: bytes | None) -> str | None:
    return value.decode("latin-1") if value else None


async def authenticate_scope(scope: Any, ctx: ServerContext) -> AuthInfo | None:
    """The caller the request's token names; None without a token; 401 for a token that is not valid."""
    token = request_token(scope)
    if not token:
        return None
    auth = await ctx.tokens.authenticate_token(token)
    if auth is None:
        raise UnauthorizedError("The access token is not valid.")
    return auth


async def authorize(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """The one guard of every route: authenticate the caller and check the operation's scopes."""
    scope: dict[str, Any] = connection.scope  # type: ignore[assignment]
    ctx: ServerContext = scope["litestar_app"].state.ctx
    plan = guard_plan(handler)
    auth = await check_caller(scope, ctx, plan)
    if plan.json_body and isinstance(connection, Request) and _has_json_body(connection):
        # Read (and so bound and check) a JSON body now, so that every body operation refuses a
        # malformed one with 400, even a handler that answers before it would read its body.
        await connection.body()
    await admit_caller(scope, ctx, auth, lambda: connection.query_params.items())


async def check_caller(scope: dict[str, Any], ctx: ServerContext, plan: GuardPlan) -> AuthInfo | None:
    """The guard's first half, read from the ASGI scope alone: the caller (None: no token, where
    the operation allows none), their operation's scopes, and the problem WireMiddleware left
    with a parameter; raises the 401, 403 or 400. ``authorize`` and the Items lane
    (server/http/items_lane.py) both call it."""
    try:
        auth = await authenticate_scope(scope, ctx)
    except UnauthorizedError:
        if plan.requires_auth and not (plan.setup_may_skip_token and not ctx.wizard_completed):
            raise
        auth = None
    if plan.requires_auth:
        client = scope.get("client")
        check_access(True, plan.scopes, auth, wizard_completed=ctx.wizard_completed,
                     is_local=ctx.is_local_address(client[0] if client else ""))
    problem = scope.get(limits.SCOPE_KEY)
    if problem:
        # A bad parameter found before routing (server.http.limits): reported only now, after
        # the caller has been checked, so that no token means 401 whatever the parameters.
        raise BadRequestError(problem)
    return auth


async def admit_caller(scope: dict[str, Any], ctx: ServerContext, auth: AuthInfo | None,
                       query_items: Callable[[], Any]) -> None:
    """The guard's second half: leave ``auth`` in the request's state for the handler, note the
    session's activity and check the items in the path against the caller's scope (404).
    ``query_items``: the query's (key, value) pairs, as Litestar parses them (asked only for a
    route with path parameters)."""
    state = scope.get("state")
    if state is None:
        state = scope["state"] = {}
    state["auth"] = auth
    if auth is not None:
        client = scope.get("client")
        await ctx.note_activity(auth, client[0] if client else "")
        path_params = scope.get("path_params")
        if path_params:  # an item the caller may not see is a 404, on every route
            user_id = next((v for k, v in query_items() if k.lower() == "userid"), None)
            await ctx.items.check_path_items(auth, path_params, user_id)


def _has_json_body(connection: Request[Any, Any, Any]) -> bool:
    content_type = connection.headers.get("content-type", "").lower()
    return "json" in content_type or (not content_type and connection.headers.get("content-length", "0") != "0")


def provide_ctx(request: Request[Any, Any, Any]) -> ServerContext:
    return request.app.state.ctx


def provide_auth(request: Request[Any, Any, Any]) -> AuthInfo | None:
    return request.state.get("auth")


def require_user(auth: AuthInfo | None) -> AuthInfo:
    if auth is None:
        raise UnauthorizedError("A valid access token is required.")
    return auth
