"""SQLAlchemy Core handles of the tables the query paths use, defined once.

Services write ``select(items.c.id)`` rather than going through the ORM classes on hot paths;
every module takes its handles from here (or from ``server/db/schema.py``, where the tables are
defined), so a table is renamed in one place. Neither imports SQLModel, pydantic or the ORM
classes of ``server/db/tables.py`` (which map these same ``Table`` objects).
"""

from __future__ import annotations

from server.db.schema import (
    activity_log,
    collection_items,
    item_field_counts,
    item_people,
    item_value_counts,
    item_values,
    items,
    libraries,
    library_paths,
    livetv_series_timers,
    livetv_timers,
    people,
    playlist_entries,
    playlist_users,
    playlists,
    task_results,
    user_data,
)

playlist_shares = playlist_users
collection_entries = collection_items
# (item_value_counts: kept by triggers, server/library/catalog/facets.py)
# task_results and activity_log are read and written by the start before its first 200
# (ServerContext.initialize), and the Live TV timers by the recorder and the guide task at start
# and on every tick of the recorder: on the tables, so a server that uses no ORM class never
# imports them (nor SQLModel and pydantic) nor configures SQLAlchemy's mappers while idle

__all__ = ["activity_log", "collection_entries", "item_field_counts", "item_people", "item_value_counts",
           "item_values", "items", "libraries", "library_paths", "livetv_series_timers", "livetv_timers", "people",
           "playlist_entries", "playlist_shares", "playlists", "task_results", "user_data"]
