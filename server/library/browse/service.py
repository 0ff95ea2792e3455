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

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # each part's module is imported by its factory, on first use
    from server.library.browse.boxsets import CollectionService
    from server.library.browse.editing import EditingService
    from server.library.browse.playlists import PlaylistService
    from server.library.browse.playstate import PlayStateService
    from server.library.browse.related import RelatedService
    from server.library.browse.tv import TvService


class Browse:
    """The browsing parts, each made once by its factory on first use (``functools.cached_property``
    keeps it)."""

    def __init__(
        self,
        *,
        playstate: Callable[[], PlayStateService],
        tv: Callable[[], TvService],
        playlists: Callable[[], PlaylistService],
        collections: Callable[[], CollectionService],
        related: Callable[[], RelatedService],
        editing: Callable[[], EditingService],
    ) -> None:
        self._make_playstate = playstate
        self._make_tv = tv
        self._make_playlists = playlists
        self._make_collections = collections
        self._make_related = related
        self._make_editing = editing

    @functools.cached_property
    def playstate(self) -> PlayStateService:
        return self._make_playstate()

    @functools.cached_property
    def tv(self) -> TvService:
        return self._make_tv()

    @functools.cached_property
    def playlists(self) -> PlaylistService:
        return self._make_playlists()

    @functools.cached_property
    def collections(self) -> CollectionService:
        return self._make_collections()

    @functools.cached_property
    def related(self) -> RelatedService:
        return self._make_related()

    @functools.cached_property
    def editing(self) -> EditingService:
        return self._make_editing()
