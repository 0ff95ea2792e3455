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

from collections.abc import Callable
from typing import Any

from litestar import Request, delete, get, head, patch, post, put
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.handlers.http_handlers import HTTPRouteHandler

from server.api.params import expand_groups
from server.auth.header import identify
from server.auth.policy import check_access
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, UnauthorizedError
from server.http import limits
from server.http.routing import internal_path
from server.wire.operations import BY_ID, Operation

_DECORATORS: dict[str, type[HTTPRouteHandler]] = {"GET": get, "POST": post, "DELETE": delete, "PUT": put, "PATCH": patch, "HEAD": head}
_PATH_TYPES = {"int32": "int", "int64": "int", "float": "float"}


def litestar_path(op: Operation) -> str:
    path = internal_path(op.path)
    for name, where, kind, _enum, _req in op.params:
        if where == "path":
            path = path.replace("{" + name + "}", "{" + name + ":" + _PATH_TYPES.get(kind, "str") + "}")
    return path


def operation(operation_id: str, **kwargs: Any) -> Callable[[Callable[..., Any]], HTTPRouteHandler]:
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
    route = decorator(litestar_path(op), **options)

    def register(fn: Callable[..., Any]) -> HTTPRouteHandler:
        return route(expand_groups(fn, op.params))

    return register


def reelroom_route(method: str, path: str, *, auth: str = "none",
                   **kwargs: Any) -> Callable[[Callable[..., Any]], HTTPRouteHandler]:
    """A route that is not in the Jellyfin spec (web pages, robots.txt, the socket).
    ``auth`` is "none", "user" or "admin"."""
    route = _DECORATORS[method](path, opt={"auth": auth, **kwargs.pop("opt", {})}, include_in_schema=False, **kwargs)

    def register(fn: Callable[..., Any]) -> HTTPRouteHandler:
        return route(expand_groups(fn, None))

    return register


def _client_ip(connection: ASGIConnection) -> str:
    client = connection.scope.get("client")
    return client[0] if client else ""


async def authenticate_connection(connection: ASGIConnection, ctx: ServerContext) -> AuthInfo | None:
    headers = {k.lower(): v for k, v in connection.headers.items()}
    query = {k.lower(): v for k, v in connection.query_params.items()}
    identity = identify(headers, query)
    if not identity.token:
        return None
    auth = await ctx.tokens.authenticate(identity)
    if auth is None:
        raise UnauthorizedError("The access token is not valid.")
    return auth


async def authorize(connection: ASGIConnection, handler: BaseRouteHandler) -> None:
    """The one guard of every route: authenticate the caller and check the operation's scopes."""
    ctx: ServerContext = connection.app.state.ctx
    opt = handler.opt
    op_id = opt.get("op")
    if op_id:
        op = BY_ID[op_id]
        requires_auth, scopes = op.requires_auth, op.scopes
    else:
        level = opt.get("auth", "none")
        requires_auth = level != "none"
        scopes = ("RequiresElevation",) if level == "admin" else ("DefaultAuthorization",)
    try:
        auth = await authenticate_connection(connection, ctx)
    except UnauthorizedError:
        if requires_auth and not (not ctx.wizard_completed and "FirstTimeSetupOrElevated" in scopes):
            raise
        auth = None
    remote = _client_ip(connection)
    check_access(requires_auth, scopes, auth, wizard_completed=ctx.wizard_completed,
                 is_local=ctx.is_local_address(remote))
    problem = connection.scope.get(limits.SCOPE_KEY)
    if problem:
        # A bad parameter found before routing (server.http.limits): reported only now, after
        # the caller has been checked, so that no token means 401 whatever the parameters.
        raise BadRequestError(problem)
    if op_id and isinstance(connection, Request) and _has_json_body(connection, BY_ID[op_id]):
        # Read (and so bound and check) a JSON body now, so that every body operation refuses a
        # malformed one with 400, even a handler that answers before it would read its body.
        await connection.body()
    connection.state["auth"] = auth
    if auth is not None:
        await ctx.note_activity(auth, remote)
        if connection.path_params:  # an item the caller may not see is a 404, on every route
            user_id = next((v for k, v in connection.query_params.items() if k.lower() == "userid"), None)
            await ctx.items.check_path_items(auth, connection.path_params, user_id)


def _has_json_body(connection: Request, op: Operation) -> bool:
    if not any("json" in t for t in op.body_types):
        return False
    content_type = connection.headers.get("content-type", "").lower()
    return "json" in content_type or (not content_type and connection.headers.get("content-length", "0") != "0")


def provide_ctx(request: Request) -> ServerContext:
    return request.app.state.ctx


def provide_auth(request: Request) -> AuthInfo | None:
    return request.state.get("auth")


def require_user(auth: AuthInfo | None) -> AuthInfo:
    if auth is None:
        raise UnauthorizedError("A valid access token is required.")
    return auth
