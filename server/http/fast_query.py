"""A handler's query and path parameters parsed in one pass, instead of through Litestar's kwargs
and signature models.

Litestar turns a request into a handler's arguments in two steps: its kwargs model extracts every
declared parameter from the parsed query (one extractor per kind, a default dict, a copy per
parameter), then the handler's signature model (a msgspec struct of *all* its parameters) converts
and validates the lot. GET /Items declares some 80 parameters, so a page paid for 80 fields while
a client sends ten; it was about a sixth of the event loop's work per page.

:func:`compile_parser` makes, once per route, a table from the handler's declared parameters: query
key -> (argument name, converter, list or not). A request's query string (already tidied by
:class:`~server.http.wire_middleware.WireMiddleware`: keys in the spec's spelling, booleans
``true``/``false``, arrays one value per key) is split once; each known key is converted with a
plain function; parameters not given are left to the handler's own defaults.

Only the success path is handled here. Whatever the table does not know how to take exactly as
Litestar would (a value that is not a plain integer, boolean or decimal number, a type such as
a datetime or an enum, a missing required parameter, a path parameter of another type) makes the
parser answer ``None``, and the request goes through Litestar's models as before, which raise the
same 400 ProblemDetails as ever. ``tests/http/test_fast_query.py`` compares both paths' arguments
for every route the table serves.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_plus

from litestar.types import Empty

# What a plain value of each kind looks like when Litestar (msgspec, lax) would read it as the
# same number; anything else is left to Litestar.
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})").fullmatch
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,15})?").fullmatch


class FastKwargs(dict[str, Any]):
    """Arguments the parser made: the handler's signature model passes them on as they are."""

    __slots__ = ()


class _Refused(Exception):
    """A value the table does not take: Litestar's models parse the request instead."""


def _as_str(value: str) -> str:
    return value


def _as_bool(value: str) -> bool:
    if value == "true":
        return True
    if value == "false":
        return False
    raise _Refused


def _as_int(value: str) -> int:
    if _INT(value) is None:
        raise _Refused
    return int(value)


def _as_float(value: str) -> float:
    if _FLOAT(value) is None:
        raise _Refused
    return float(value)


_CONVERTERS: dict[Any, Callable[[str], Any]] = {str: _as_str, bool: _as_bool, int: _as_int, float: _as_float}


def _bare(annotation: Any) -> Any:
    """``T`` of ``Annotated[T, ...]``, of ``T | None`` and of ``Optional[T]``."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _bare(args[0])
    return annotation


def _converter(annotation: Any) -> tuple[Callable[[str], Any], bool] | None:
    """(converter, is a list) for a supported annotation, else None."""
    bare = _bare(annotation)
    if typing.get_origin(bare) is list:
        (item,) = typing.get_args(bare) or (None,)
        conv = _CONVERTERS.get(_bare(item))
        return (conv, True) if conv is not None else None
    conv = _CONVERTERS.get(bare)
    return (conv, False) if conv is not None else None


# key -> (argument name, converter or None (refuse when given), is a list)
Table = dict[str, tuple[str, Callable[[str], Any] | None, bool]]


class QueryParser:
    """The compiled parser of one handler (see the module's docstring)."""

    __slots__ = ("path", "query", "required", "wants_request")

    def __init__(self, query: Table, path: dict[str, tuple[str, type]], required: frozenset[str],
                 wants_request: bool) -> None:
        self.query = query
        self.path = path  # path key -> (argument name, its type)
        self.required = required  # query keys without a default
        self.wants_request = wants_request

    def parse(self, query_string: bytes, path_params: dict[str, Any], request: Any) -> FastKwargs | None:
        """The handler's keyword arguments (those given; the handler's defaults stand for the rest),
        or None when Litestar must parse this request."""
        out = FastKwargs()
        table = self.query
        try:
            if query_string:
                for part in query_string.decode("latin-1").split("&"):
                    if not part:
                        continue
                    key, sep, value = part.partition("=")
                    if "%" in key or "+" in key:
                        key = unquote_plus(key)  # as parse_qsl: UTF-8, errors replaced
                    hit = table.get(key)
                    if hit is None:
                        continue
                    if "%" in value or "+" in value:
                        value = unquote_plus(value)
                    name, conv, many = hit
                    if conv is None:
                        return None
                    if many:
                        found = out.get(name)
                        if found is None:
                            out[name] = [conv(value)]
                        else:
                            found.append(conv(value))
                    else:
                        out[name] = conv(value)  # a repeated key counts by its last value, as in Litestar
        except _Refused:
            return None
        for key in self.required:
            if table[key][0] not in out:
                return None
        for key, (name, kind) in self.path.items():
            given = path_params.get(key)
            if type(given) is not kind:
                return None
            out[name] = given
        if self.wants_request:
            out["request"] = request
        return out


def compile_parser(model: Any, hints: dict[str, Any], defaults: dict[str, Any]) -> QueryParser | None:
    """The parser of a handler from its Litestar kwargs model (``model``: which parameters come
    from the query, the path, the request), the type hints of the function Litestar calls and its
    parameters' defaults (a parameter not given keeps it, so Litestar's must be the same); None
    when the handler takes anything else (a body, headers, cookies, dependencies, other reserved
    arguments), which stays with Litestar."""
    if (model.expected_form_data or model.expected_msgpack_data or model.expected_data_dto
            or model.expected_header_params or model.expected_cookie_params or model.dependency_batches
            or not set(model.expected_reserved_kwargs) <= {"request"}):
        return None
    query: Table = {}
    required: set[str] = set()
    for param in model.expected_query_params:
        if param.field_name not in hints:
            return None
        conv = _converter(hints[param.field_name])
        if conv is not None and conv[1] != param.is_sequence:
            return None
        query[param.field_alias] = (param.field_name, conv[0] if conv else None, param.is_sequence)
        if param.is_required:
            required.add(param.field_alias)
        elif param.field_name not in defaults or (param.default is not Empty
                                                   and param.default != defaults[param.field_name]):
            return None
    path: dict[str, tuple[str, type]] = {}
    for param in model.expected_path_params:
        kind = _bare(hints.get(param.field_name))
        if kind not in (str, int, float):
            return None
        path[param.field_alias] = (param.field_name, kind)
    return QueryParser(query, path, frozenset(required), "request" in model.expected_reserved_kwargs)
