"""Trailers: GET /Items restricted to trailers (the same handler and parameters)."""

from __future__ import annotations

import functools
import inspect
from datetime import datetime  # noqa: F401  (the copied signature's annotations resolve here)

from server.api import items as items_api
from server.api.base import operation
from server.auth.service import AuthInfo  # noqa: F401
from server.context import ServerContext  # noqa: F401
from server.wire import models as w  # noqa: F401

_items = items_api.get_items.fn
_signature = inspect.signature(_items)


@functools.wraps(_items)
async def _get_trailers(*args, **kwargs):
    kwargs["includeItemTypes"] = ["Trailer"]
    return await _items(*args, **kwargs)


_get_trailers.__signature__ = _signature.replace(
    parameters=[p for name, p in _signature.parameters.items() if name != "includeItemTypes"])
_get_trailers.__annotations__ = {k: v for k, v in _items.__annotations__.items() if k != "includeItemTypes"}
_get_trailers.__name__ = _get_trailers.__qualname__ = "get_trailers"
_get_trailers.__module__ = __name__

get_trailers = operation("GetTrailers")(_get_trailers)
