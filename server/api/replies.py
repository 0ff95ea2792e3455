"""The whole-reply cache's two ends on a route (server/http/reply_cache.py).

``kept_reply(op)`` is the route's Litestar ``before_request``: it runs after the guard (token,
permissions, activity) and before the parameters are parsed; a valid kept reply is answered as it
is, else a slot is left for the handler, which calls ``keep`` with the bytes it made and its viewer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from litestar import Request

from server.guid import normalize_guid
from server.http.reply_cache import MAX_QUERY
from server.library.catalog.items import Viewer
from server.wire.casing import camel_case_requested

if TYPE_CHECKING:
    from server.http.reply_cache import ReplyCache

T = TypeVar("T")


def kept_reply(operation_id: str, *, sortable: bool = False) -> Callable[[Request[Any, Any, Any]], Awaitable[bytes | None]]:
    """``sortable``: the operation takes ``sortBy`` (a random sort is never kept)."""

    async def before(request: Request[Any, Any, Any]) -> bytes | None:
        return kept_lookup(request.scope, operation_id, sortable, lambda: request.query_params.get("userId"))

    before.kept_operation = (operation_id, sortable)  # type: ignore[attr-defined]  # (for the Items lane)
    return before


def kept_lookup(scope: Any, operation_id: str, sortable: bool, named_user: Callable[[], str | None]) -> bytes | None:
    """The kept reply of this request (after the guard left its caller in the state), else None
    with a slot left for ``keep``. ``named_user``: the query's userId as Litestar reads it, asked
    only when the query does not name it once and plainly. The route's ``before_request`` and the
    Items lane (server/http/items_lane.py) both call it."""
    cache: ReplyCache = scope["litestar_app"].state.ctx.replies
    state = scope.get("state")
    auth = state.get("auth") if state else None
    query: bytes = scope.get("query_string", b"")
    if auth is None or not cache.enabled or len(query) > MAX_QUERY:
        return None
    if sortable and b"random" in query.lower():
        return None
    user = auth.user
    if b"userId=" in query:
        named = _named_user(query)
        if named is None:  # (not once and plainly: as Litestar reads it)
            named = named_user()
        viewer_id = normalize_guid(named) if named else (user.id if user is not None else None)
    else:
        viewer_id = user.id if user is not None else None
    principal = user.id if user is not None else ("key", auth.token)
    key = (operation_id, principal, scope["path"], query, camel_case_requested.get())
    return cache.lookup(key, viewer_id, user)


def _named_user(query: bytes) -> str | None:
    """The userId of a query string that names it once as a whole key (what WireMiddleware leaves:
    spec spelling, a GUID tidied to 32 hex digits), without parsing the rest; else None."""
    at = query.find(b"userId=")
    if at < 0 or (at > 0 and query[at - 1] != 0x26) or query.find(b"userId=", at + 1) >= 0:  # 0x26: &
        return None
    end = query.find(b"&", at)
    return unquote(query[at + 7:end if end >= 0 else len(query)].decode("latin-1"))


def keep(ctx: Any, body: T, viewer: Viewer) -> T:
    """Store ``body`` for the slot ``kept_reply`` left (if any); returns ``body``."""
    ctx.replies.keep(body, viewer.user_id, viewer.user, viewer.parental is not None)
    return body
