"""Browsing built on the item store and the query engine (``ctx.browse``).

Each part is a small service over the database and ``ItemService`` (the query engine and the DTO
builder): play state (played / unplayed), TV (seasons, episodes, Next Up, upcoming),
playlists, collections (BoxSets), related items (similar, instant mixes, recommendations,
suggestions, theme media) and editing (the metadata editor, content type, deletion). The server
context builds each with its own dependencies (``server/context.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from server.library.browse.boxsets import CollectionService
from server.library.browse.editing import EditingService
from server.library.browse.playlists import PlaylistService
from server.library.browse.playstate import PlayStateService
from server.library.browse.related import RelatedService
from server.library.browse.tv import TvService


@dataclass(frozen=True)
class Browse:
    playstate: PlayStateService
    tv: TvService
    playlists: PlaylistService
    collections: CollectionService
    related: RelatedService
    editing: EditingService
