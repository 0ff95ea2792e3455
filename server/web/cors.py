"""CORS as Jellyfin 10.10 applies it (its CorsPolicyProvider over ASP.NET Core's CORS middleware).

The server configuration's ``CorsHosts`` (default ``["*"]``) is the policy: any method, any
header; with ``*`` (or an empty list) any origin, otherwise exactly the listed origins, with
credentials allowed. A preflight (``OPTIONS`` with ``Origin`` and
``Access-Control-Request-Method``) is answered here with 204, echoing the requested method and
headers (the Authorization / X-Emby-* headers Jellyfin clients send) when the origin is allowed.
Reelroom sends ``Access-Control-Allow-Origin: *`` on every response under the default policy,
with or without an ``Origin`` header.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Header values we echo must be plain tokens (no CR/LF or other surprises).
_TOKEN_LIST = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~,\- ]*$")


def _normalize_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


class CorsPolicy:
    def __init__(self, hosts_getter: Callable[[], list[str] | None]) -> None:
        self._hosts_getter = hosts_getter
        self._last: tuple[str, ...] | None = None
        self._any = True
        self._allowed: frozenset[str] = frozenset()

    def _refresh(self) -> None:
        hosts = tuple(h for h in (self._hosts_getter() or []) if isinstance(h, str) and h.strip())
        if hosts == self._last:
            return
        self._last = hosts
        self._any = not hosts or "*" in hosts
        self._allowed = frozenset(_normalize_origin(h) for h in hosts)

    def response_headers(self, origin: str | None) -> list[tuple[bytes, bytes]]:
        """Headers for an ordinary (non-preflight) response."""
        self._refresh()
        if self._any:
            return _ANY_ORIGIN
        headers = [(b"vary", b"Origin")]
        if origin and _normalize_origin(origin) in self._allowed:
            headers += [(b"access-control-allow-origin", origin.strip().encode("latin-1")),
                        (b"access-control-allow-credentials", b"true")]
        return headers

    def preflight_headers(self, origin: str, method: str, request_headers: str) -> list[tuple[bytes, bytes]]:
        """Headers for the 204 answer to a preflight; only Vary when the origin is not allowed."""
        headers = list(self.response_headers(origin))  # a copy: it is extended below
        if not any(name == b"access-control-allow-origin" for name, _ in headers):
            return headers
        if _TOKEN_LIST.match(method) and method.strip():
            headers.append((b"access-control-allow-methods", method.strip().upper().encode()))
        if request_headers.strip() and _TOKEN_LIST.match(request_headers):
            headers.append((b"access-control-allow-headers", request_headers.strip().encode()))
        return headers


def is_preflight(scope: dict, headers: dict[bytes, bytes]) -> bool:
    return (scope["method"] == "OPTIONS" and b"origin" in headers
            and b"access-control-request-method" in headers)


# The headers of every response under the default policy (any origin); never changed in place.
_ANY_ORIGIN: list[tuple[bytes, bytes]] = [(b"access-control-allow-origin", b"*")]
_ANY_ORIGIN_NAMES = frozenset({b"access-control-allow-origin"})


def with_cors(send: Callable, extra: list[tuple[bytes, bytes]]) -> Callable:
    """``send`` that adds ``extra`` to the response head (replacing any the app set itself)."""
    names = _ANY_ORIGIN_NAMES if extra is _ANY_ORIGIN else {name for name, _ in extra} - {b"vary"}

    async def wrapped(message: dict) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", ()) if k.lower() not in names]
            message = {**message, "headers": headers + extra}
        await send(message)

    return wrapped
