"""Trailers: GET /Items restricted to trailers (the same handler, with the parameters GetTrailers
has: GetItems' without includeItemTypes and indexNumber)."""

from __future__ import annotations

import functools
import inspect

from server.api import items as items_api
from server.api.base import operation
from server.wire.operations import BY_ID

# the handler as written (its parameter groups not yet expanded, see server/api/params.py)
_items = items_api.get_items.declared
_signature = inspect.signature(_items)
_spec = {name for name, *_ in BY_ID["GetTrailers"].params}
_dropped = {name for name, *_ in BY_ID["GetItems"].params} - _spec  # includeItemTypes, indexNumber
_kept = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for name, p in _signature.parameters.items()
         if name not in _dropped]


@functools.wraps(_items)
async def _get_trailers(**kwargs):
    return await _items(**kwargs, includeItemTypes=["Trailer"])


_get_trailers.__signature__ = _signature.replace(parameters=_kept)
_get_trailers.__annotations__ = {k: v for k, v in _items.__annotations__.items() if k in {p.name for p in _kept}
                                 or k == "return"}
_get_trailers.__name__ = _get_trailers.__qualname__ = "get_trailers"
_get_trailers.__module__ = __name__

get_trailers = operation("GetTrailers")(_get_trailers)
