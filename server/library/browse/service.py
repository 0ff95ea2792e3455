"""Browsing built on the item store and the query engine (``ctx.browse``).

Each part is a small service over the database and ``ItemService`` (the query engine and the DTO
builder): play state (played / unplayed), TV (seasons, episodes, Next Up, upcoming),
playlists, collections (BoxSets), related items (similar, instant mixes, recommendations,
suggestions, theme media) and editing (the metadata editor, content type, deletion). The server
context gives a factory for each, which builds it with its own dependencies (``server/context.py``);
a part is built, and its module imported, the first time a handler asks for it, so a start imports
none of them (``tests/system/test_lazy_services.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # each part's module is imported by its factory, on first use
    from server.library.browse.boxsets import CollectionService
    from server.library.browse.editing import EditingService
    from server.library.browse.playlists import PlaylistService
    from server.library.browse.playstate import PlayStateService
    from server.library.browse.related import RelatedService
    from server.library.browse.tv import TvService

T = TypeVar("T")


class _Part(Generic[T]):
    """A part of ``Browse``: made by its factory on first read, then kept in the instance's
    ``__dict__`` (which later reads find first, as with ``functools.cached_property``). Made
    under a lock, so two first reads at once (a handler run in a thread) make it once."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, browse: Browse, owner: type | None = None) -> T:
        with browse._lock:
            part: T | None = browse.__dict__.get(self.name)
            if part is None:
                part = browse.__dict__[self.name] = browse._factories[self.name]()
        return part


class Browse:
    """The browsing parts, each built once, on first use, by the factory of its name."""

    playstate: _Part[PlayStateService] = _Part()
    tv: _Part[TvService] = _Part()
    playlists: _Part[PlaylistService] = _Part()
    collections: _Part[CollectionService] = _Part()
    related: _Part[RelatedService] = _Part()
    editing: _Part[EditingService] = _Part()

    def __init__(self, **factories: Callable[[], Any]) -> None:
        unknown = set(factories) ^ {name for name, value in vars(Browse).items() if isinstance(value, _Part)}
        if unknown:
            raise TypeError(f"Browse needs exactly one factory per part, not {sorted(unknown)}")
        self._factories = factories
        self._lock = threading.Lock()
