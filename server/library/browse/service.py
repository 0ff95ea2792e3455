"""Browsing built on the item store and the query engine (``ctx.browse``).

Each part is a small service over ``ctx.db`` and ``ctx.items`` (the query engine and the DTO
builder): play state (played / unplayed), TV (seasons, episodes, Next Up, upcoming),
playlists, collections (BoxSets), related items (similar, instant mixes, recommendations,
suggestions, theme media) and editing (the metadata editor, content type, deletion).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.library.browse.boxsets import CollectionService
from server.library.browse.editing import EditingService
from server.library.browse.playlists import PlaylistService
from server.library.browse.playstate import PlayStateService
from server.library.browse.related import RelatedService
from server.library.browse.tv import TvService
from server.library.catalog.planner_stats import PlannerStats

if TYPE_CHECKING:
    from server.context import ServerContext


class Browse:
    def __init__(self, ctx: ServerContext) -> None:
        self.playstate = PlayStateService(ctx)
        self.tv = TvService(ctx)
        self.playlists = PlaylistService(ctx)
        self.collections = CollectionService(ctx)
        self.related = RelatedService(ctx)
        self.editing = EditingService(ctx)
        self.planner_stats = PlannerStats(ctx)  # ANALYZE after library changes (SQLite)
