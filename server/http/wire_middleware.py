"""The ASGI layer that makes Reelroom speak Jellyfin's dialect of HTTP.

Before Litestar sees a request it:
- strips the ``/emby`` and ``/mediabrowser`` prefixes;
- answers 503 (``Retry-After``, ``Message``) while the server is still starting;
- decodes a fully URL-encoded query string (``?a%3D1%26b%3D2``);
- matches the path case-insensitively and rewrites it to the route's own spelling
  (see :mod:`server.http.routing`), GUID path parameters in 32-hex form;
- renames query keys to the operation's spelling and tidies values by the parameter's kind:
  booleans, GUIDs, arrays (comma- or pipe-separated, or repeated keys; blanks and unknown enum
  members dropped), blank values of typed parameters dropped (kept per route and query string:
  clients repeat them);
- checks bounds (:mod:`server.http.limits`): integer parameters against their int32/int64
  format, single enum parameters, list sizes, name and search-term lengths; a problem is left on
  the scope for the authorization guard, which answers 401 first when the caller has no token
  and 400 otherwise;
- bounds, checks and renames JSON bodies: size (413), nesting depth, enum members and integer
  ranges (400 naming the property), properties renamed to the schema's spelling;
- picks PascalCase or camelCase for the reply, and labels JSON replies ``charset=utf-8``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote_plus, unquote

import msgspec

from server.errors import BadRequestError, PayloadTooLargeError
from server.guid import normalize_guid
from server.http import legacy_routes, limits
from server.http.routing import RouteIndex, RouteMatch, internal_path
from server.wire import models
from server.wire.body import canonical_keys
from server.wire.casing import camel_case_requested, wants_camel_case
from server.wire.operations import Operation

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]  # Litestar's own Scope/Receive/Send types are narrower

_PREFIXES = ("/emby/", "/mediabrowser/")
_NO_MATCH = object()


@dataclass
class StartupState:
    """Whether the server can take requests yet, and what to say while it cannot."""

    ready: bool = False
    message: str = "Reelroom is starting up."
    retry_after: int = 5
    failed: str | None = None


@dataclass
class RouteInfo:
    """What the middleware knows of one (template, method)."""

    op: Operation | None
    query: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)  # lower -> (name, kind, enum)
    path_kinds: dict[str, str] = field(default_factory=dict)
    body_struct: type | None = None
    json_body: bool = False



# Values Reelroom accepts beyond the spec's enum: photo libraries (CollectionType "photos", which
# 10.10's CollectionTypeOptions left out but Reelroom still scans as photo albums).
EXTRA_ENUM_MEMBERS: dict[str, tuple[str, ...]] = {"CollectionTypeOptions": ("photos",)}


def _route_info(op: Operation | None) -> RouteInfo:
    info = RouteInfo(op=op)
    if op is None:
        return info
    for name, where, kind, enum, _required in op.params:
        if where == "query":
            info.query[name.lower()] = (name, kind, enum)
        elif where == "path":
            info.path_kinds[name] = kind
    info.body_struct = limits.body_struct(op.body_schema)
    info.json_body = any("json" in t for t in op.body_types)
    return info


class _RouteTable(Mapping[tuple[str, str], RouteInfo]):
    """(template, method) -> RouteInfo, each made on the route's first request: a server gets
    requests on a few dozen of its ~725 (template, method) pairs (382 operations and the OPTIONS
    of each path), and their infos (two dicts and a tuple per parameter) were ~0.44 MiB made at
    start and kept for good. Holds each route's operation until then; reads as the mapping of
    every route's info did."""

    __slots__ = ("_infos", "_operations")

    def __init__(self) -> None:
        self._operations: dict[tuple[str, str], Operation | None] = {}
        self._infos: dict[tuple[str, str], RouteInfo] = {}

    def add(self, key: tuple[str, str], op: Operation | None) -> None:
        self._operations[key] = op
        self._infos.pop(key, None)  # a route added again: its info made anew from this operation

    def get(self, key: tuple[str, str], default: Any = None) -> Any:
        info = self._infos.get(key)
        if info is None:
            if key not in self._operations:
                return default
            # setdefault: two threads that make it at once keep the same one (the kept queries
            # are keyed by the info's id)
            info = self._infos.setdefault(key, _route_info(self._operations[key]))
        return info

    def __getitem__(self, key: tuple[str, str]) -> RouteInfo:
        info: RouteInfo | None = self.get(key)
        if info is None:
            raise KeyError(key)
        return info

    def __contains__(self, key: object) -> bool:
        return key in self._operations

    def __len__(self) -> int:
        return len(self._operations)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._operations)


_ENUM_MEMBERS: dict[str, frozenset[str]] = {name: frozenset(members) for name, members in models.ENUMS.items()}


def _tidy_scalar(kind: str, enum: str | None, value: str) -> str | None:
    value = value.strip()
    if kind == "str":
        return value
    if value == "" or value.lower() in ("null", "undefined"):
        return None
    if kind == "bool":
        low = value.lower()
        return {"true": "true", "false": "false", "1": "true", "0": "false"}.get(low, value)
    if kind == "uuid":
        return normalize_guid(value) or value
    if kind == "enum" and enum:
        return limits.ENUM_LOOKUP.get(enum, {}).get(value.lower(), value)
    if kind == "float":
        try:
            if not math.isfinite(float(value)):
                return value
        except ValueError:
            return value
    return value


def _tidy_query(pairs: list[tuple[str, str]], info: RouteInfo) -> tuple[list[tuple[str, str]], str | None]:
    """The query with keys and values tidied, and the first problem with a value (or None)."""
    out: list[tuple[str, str]] = []
    problem: str | None = None
    op_id = info.op.operation_id if info.op else ""
    counts: dict[str, int] = {}
    for key, value in pairs:
        hit = info.query.get(key.lower())
        if hit is None:
            out.append((key, value))
            continue
        name, kind, enum = hit
        if kind.startswith("array:"):
            item_kind = kind.split(":", 1)[1]
            for part in value.replace("|", ",").split(","):
                tidy = _tidy_scalar(item_kind, enum, part)
                if tidy in (None, ""):
                    continue
                if item_kind == "enum" and enum and tidy not in _ENUM_MEMBERS.get(enum, ()):
                    continue  # Jellyfin ignores unknown enum members in lists
                if item_kind in ("int32", "int64"):
                    bad = limits.check_int(name, item_kind, tidy)
                    if bad:
                        problem = problem or bad
                        continue
                if len(tidy) > limits.MAX_LIST_ITEM_CHARS:
                    problem = problem or f"An element of {name} is longer than {limits.MAX_LIST_ITEM_CHARS} characters."
                    continue
                counts[name] = counts.get(name, 0) + 1
                if counts[name] > limits.MAX_LIST_ITEMS:
                    problem = problem or f"{name} may hold at most {limits.MAX_LIST_ITEMS} values."
                    continue
                out.append((name, tidy))
            continue
        tidy = _tidy_scalar(kind, enum, value)
        if tidy is None:
            continue
        if kind in ("int32", "int64"):
            bad = limits.check_int(name, kind, tidy)
            if bad:
                problem = problem or bad
                continue
        elif kind == "enum" and enum and tidy not in _ENUM_MEMBERS.get(enum, ()) \
                and tidy not in EXTRA_ENUM_MEMBERS.get(enum, ()):
            problem = problem or f"'{tidy[:64]}' is not a valid {enum} value for {name}."
            continue
        elif kind == "str":
            cap = limits.name_limit(op_id, name)
            if cap is None:
                cap = limits.MAX_SEARCH_TERM_CHARS if name.lower() == "searchterm" else limits.MAX_STRING_PARAM_CHARS
            if len(tidy) > cap:
                problem = problem or f"{name} may be at most {cap} characters long."
                continue
        out.append((name, tidy))
    return out, problem


async def _send_plain_problem(send: Send, status: int, title: str, detail: str,
                              extra_headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = msgspec.json.encode({"type": "about:blank", "title": title, "status": status, "detail": detail})
    headers = [(b"content-type", b"application/problem+json; charset=utf-8"),
               (b"content-length", str(len(body)).encode()), *extra_headers]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# Request paths already matched against the route index (the index does not change once the app is
# built, so a path always matches the same way): most requests repeat a path (/Items, /UserViews,
# /Sessions/Playing/Progress ...). Bounded: cleared when full; long paths are not kept.
_MATCH_CACHE_MAX = 4096
_MATCH_CACHE_PATH_CHARS = 512
# Tidied query strings by (route, query string): bounded, the oldest out first; long ones (an
# Items page with twenty parameters and a random startIndex is seldom asked twice) not kept.
_QUERY_CACHE_MAX = 2048
_QUERY_CACHE_CHARS = 256
# The tidied parts of query strings not kept whole, by (route, "key=value"): see _tidied_by_parts.
_PART_CACHE_MAX = 1024
_PART_CACHE_CHARS = 256


def _parse_query(raw_query: bytes) -> list[tuple[str, str]]:
    """The query's pairs; a fully URL-encoded query string (``?a%3D1%26b%3D2``) decoded first."""
    if not raw_query:
        return []
    query = raw_query.decode("latin-1")
    if "=" not in query and "%3d" in query.lower():
        query = unquote(query)
    return parse_qsl(query, keep_blank_values=True)


def _plain_int_part(info: RouteInfo, part: str) -> tuple[str, str | None, tuple[str, ...]] | None:
    """``_tidied_by_parts``' tidied form of a ``key=digits`` part of an integer parameter, worked
    out without tidying it (nor keeping it: an Items page's ``startIndex`` is new on nearly every
    page, and kept it would push the page's other parts out): the key in the operation's spelling,
    the digits as they are (``_tidy_scalar`` keeps an integer's text, and nine digits are within
    int32), no problem. None for anything else (tidied as ever)."""
    key, sep, value = part.partition("=")
    if not sep or not value.isdigit() or not value.isascii() or len(value) > 9 or "%" in key or "+" in key:
        return None
    hit = info.query.get(key.lower())
    if hit is None or hit[1] not in ("int32", "int64"):
        return None
    return hit[0] + "=" + value, None, ()


class WireMiddleware:
    def __init__(self, app: ASGIApp, startup: StartupState) -> None:
        self.app = app
        self.startup = startup
        self.index = RouteIndex()
        self.routes = _RouteTable()  # RouteInfo of each (template, method), made on its first request
        self.websocket_path = "/socket"
        self._internal: dict[str, str] = {}  # template -> its Litestar path (routing.internal_path)
        self._matches: dict[str, RouteMatch | None] = {}
        self._queries: dict[tuple[int, bytes], tuple[bytes, str | None]] = {}  # see _tidied
        # (route, one key=value part) -> (its tidied form, its problem, the list names it adds to)
        self._parts: dict[tuple[int, str], tuple[str, str | None, tuple[str, ...]]] = {}

    def add_route(self, template: str, method: str, op: Operation | None) -> None:
        self.index.add(template)
        self.routes.add((template, method.upper()), op)
        self._internal[template] = internal_path(template)
        self._matches.clear()
        self._queries.clear()
        self._parts.clear()

    def _tidied(self, info: RouteInfo, raw_query: bytes) -> tuple[bytes, str | None]:
        """The query string as the route's operation spells and tidies it, and the first problem
        with a value: worked out once per (route, query string). The answer depends on nothing
        else (the operation's parameters and the spec's enums do not change), and clients send
        the same query strings again and again (``?userId=...`` on every item, an image's size)."""
        key = (id(info), raw_query)
        found = self._queries.get(key)
        if found is None:
            found = self._tidied_by_parts(info, raw_query)
            if found is None:
                pairs, problem = _tidy_query(_parse_query(raw_query), info)
                found = (_encode_query(pairs) if pairs else b"", problem)
            if len(raw_query) <= _QUERY_CACHE_CHARS:
                queries = self._queries
                if len(queries) >= _QUERY_CACHE_MAX:
                    del queries[next(iter(queries))]  # the oldest
                queries[key] = found
        return found

    def _tidied_by_parts(self, info: RouteInfo, raw_query: bytes) -> tuple[bytes, str | None] | None:
        """:meth:`_tidied` of a query string not seen whole before, put together from its
        ``key=value`` parts, each tidied once per route (an Items page differs from the last one
        by its ``startIndex`` alone: the other nine parts are known). The same answer as tidying
        the whole: the parts are tidied in order, the first problem wins; only the count of a
        list's values spans parts, and a list over its bound is tidied whole. None for a fully
        URL-encoded query string (decoded whole first)."""
        query = raw_query.decode("latin-1")
        if "=" not in query and "%3d" in query.lower():
            return None
        parts = self._parts
        route = id(info)
        encoded: list[str] = []
        problem: str | None = None
        counts: dict[str, int] | None = None
        for part in query.split("&"):
            if not part:
                continue
            key = (route, part)
            hit = parts.get(key)
            if hit is None:
                hit = _plain_int_part(info, part)
            if hit is None:
                pairs, part_problem = _tidy_query(parse_qsl(part, keep_blank_values=True), info)
                listed = tuple(name for name, _value in pairs
                               if (found := info.query.get(name.lower())) is not None and found[1].startswith("array:"))
                hit = (_encode_query(pairs).decode("latin-1") if pairs else "", part_problem, listed)
                if len(part) <= _PART_CACHE_CHARS:
                    if len(parts) >= _PART_CACHE_MAX:
                        del parts[next(iter(parts))]  # the oldest
                    parts[key] = hit
            text, part_problem, listed = hit
            if text:
                encoded.append(text)
            if part_problem and problem is None:
                problem = part_problem
            if listed:
                if counts is None:
                    counts = {}
                for name in listed:
                    counts[name] = n = counts.get(name, 0) + 1
                    if n > limits.MAX_LIST_ITEMS:
                        return None  # the bound spans parts: tidied whole
        return "&".join(encoded).encode("latin-1"), problem

    def _match(self, path: str) -> RouteMatch | None:
        found = self._matches.get(path, _NO_MATCH)
        if found is _NO_MATCH:
            found = self.index.match(path)
            if len(path) <= _MATCH_CACHE_PATH_CHARS:
                if len(self._matches) >= _MATCH_CACHE_MAX:
                    self._matches.clear()
                self._matches[path] = found
        return found  # type: ignore[return-value]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if kind == "http" and not self.startup.ready:
            message = self.startup.failed or self.startup.message
            await _send_plain_problem(
                send, 503, "Service Unavailable", message,
                [(b"retry-after", str(self.startup.retry_after).encode()), (b"message", message.encode())])
            return
        new_scope, info = self.rewrite(scope)
        if info is not None and info.json_body and kind == "http":
            receive = _json_body_receiver(receive, info, scope)
        token = camel_case_requested.set(wants_camel_case(accept_header(scope)))
        try:
            await self.app(new_scope, receive, json_charset_sender(send) if kind == "http" else send)
        finally:
            camel_case_requested.reset(token)

    def rewrite(self, scope: Scope) -> tuple[Scope, RouteInfo | None]:
        """The scope Litestar sees (a copy): the path without ``/emby`` or ``/mediabrowser``, a
        legacy alias rewritten, matched case-insensitively and spelled as its route; the query
        tidied; a problem with a parameter left under ``limits.SCOPE_KEY`` for the guard. With the
        route's RouteInfo (None: no route of this path and method). What ``__call__`` passes on,
        and what the Items lane (server/http/items_lane.py) answers from."""
        kind = scope["type"]
        path: str = scope["path"]
        low = path.lower()
        for prefix in _PREFIXES:
            if low.startswith(prefix):
                path = path[len(prefix) - 1 :]
                break

        raw_query: bytes = scope.get("query_string", b"")
        # A legacy path's rewrite may move userId into the query; any other path's query is
        # parsed only when its tidied form is not kept already (below)
        legacy = path[:7].lower() == "/users/"
        pairs: list[tuple[str, str]] | None = None
        if legacy:
            pairs = _parse_query(raw_query)
            path, pairs = legacy_routes.rewrite(path, pairs, scope.get("method"))
        query_string: bytes | None = None

        new_scope = dict(scope)
        new_scope.pop(limits.SCOPE_KEY, None)
        info: RouteInfo | None = None
        if kind == "websocket":
            # Jellyfin takes a socket on any path; ours lives at /socket.
            path = self.websocket_path
        else:
            match = self._match(path)
            if match is not None:
                method = scope["method"].upper()
                info = self.routes.get((match.template, method))
                if info is None and method == "HEAD":
                    info = self.routes.get((match.template, "GET"))
                if info is not None:
                    values = dict(match.path_params)
                    problem: str | None = None
                    for name, pkind in info.path_kinds.items():
                        if name not in values:
                            continue
                        if pkind == "uuid":
                            values[name] = normalize_guid(values[name]) or values[name]
                        elif pkind in ("int32", "int64"):
                            bad = limits.check_int(name, pkind, unquote(values[name]))
                            if bad:
                                # Route it anyway: the guard answers 401 (no token) or 400.
                                problem = problem or bad
                                values[name] = "0"
                        else:
                            cap = limits.name_limit(info.op.operation_id if info.op else "", name)
                            if cap is not None and len(unquote(values[name])) > cap:
                                problem = problem or f"{name} may be at most {cap} characters long."
                    concrete = self._internal.get(match.template) or internal_path(match.template)
                    for name, value in values.items():
                        concrete = concrete.replace("{" + name + "}", value, 1)
                    path = concrete
                    if pairs is None and raw_query:
                        query_string, query_problem = self._tidied(info, raw_query)
                        problem = problem or query_problem
                    elif pairs:
                        pairs, query_problem = _tidy_query(pairs, info)
                        problem = problem or query_problem
                    if problem:
                        new_scope[limits.SCOPE_KEY] = problem
        new_scope["path"] = path
        new_scope["raw_path"] = path.encode("utf-8")
        if query_string is None:
            if pairs is None:
                pairs = _parse_query(raw_query)
            query_string = _encode_query(pairs) if pairs else b""
        new_scope["query_string"] = query_string
        return new_scope, info


def accept_header(scope: Scope) -> str:
    """The request's first ``Accept`` header (what the casing is chosen by), or ""."""
    for name, value in scope.get("headers", ()):
        if name == b"accept":
            return str(value.decode("latin-1"))
    return ""


_PLAIN = re.compile(r"[A-Za-z0-9_.~-]*")  # what quote_plus leaves as it is


def _encode_query(pairs: list[tuple[str, str]]) -> bytes:
    """``urlencode(pairs)``, byte for byte, without quoting what needs none (most keys and values:
    names, numbers, ids, enum members)."""
    plain = _PLAIN.fullmatch
    return "&".join(
        (key if plain(key) else quote_plus(key)) + "=" + (value if plain(value) else quote_plus(value))
        for key, value in pairs).encode("latin-1")


def json_charset_sender(send: Send) -> Send:
    """``send`` labelling a plain ``application/json`` reply ``charset=utf-8`` (every reply this
    layer passes on, and the Items lane's)."""
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = message.get("headers", ())
            changed: list[tuple[bytes, bytes]] | None = None
            for i, (name, value) in enumerate(headers):
                if value == b"application/json" and name.lower() == b"content-type":
                    if changed is None:
                        changed = list(headers)
                    changed[i] = (name, b"application/json; charset=utf-8")
            if changed is not None:
                message = {**message, "headers": changed}
        await send(message)

    return wrapped


def _json_body_receiver(receive: Receive, info: RouteInfo, scope: Scope) -> Receive:
    """Bound a JSON body (size, depth), check its enum members and integers, and rename its
    properties to the schema's spelling. Problems are raised when the handler reads the body,
    that is after the guard has checked the caller."""
    content_type = b""
    length: int | None = None
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            content_type = value.lower()
        elif name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                length = None
    if content_type and b"json" not in content_type:
        return receive  # e.g. text/plain or image uploads on operations that also take JSON
    op_id = info.op.operation_id if info.op else ""
    cap = limits.body_limit(op_id)
    done = False

    async def wrapped() -> Message:
        nonlocal done
        if done:
            return await receive()
        if length is not None and length > cap:
            raise PayloadTooLargeError(f"The request body may be at most {cap} bytes.")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                raise PayloadTooLargeError(f"The request body may be at most {cap} bytes.")
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        done = True
        raw = b"".join(chunks)
        if limits.json_too_deep(raw):
            raise BadRequestError(f"The request body nests deeper than {limits.MAX_JSON_DEPTH} levels.")
        try:
            data = msgspec.json.decode(raw) if raw.strip() else None
        except (msgspec.DecodeError, RecursionError):
            data = None
        if data is not None:
            if info.body_struct is not None:
                if isinstance(data, dict):
                    data = canonical_keys(data, info.body_struct)
                elif isinstance(data, list):
                    data = [canonical_keys(x, info.body_struct) for x in data]
            data = limits.validate_body(data, info.body_struct)
            limits.check_body_names(op_id, data)
            raw = msgspec.json.encode(data)
        return {"type": "http.request", "body": raw, "more_body": False}

    return wrapped
