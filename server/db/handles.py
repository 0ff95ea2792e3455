"""SQLAlchemy Core handles of the tables the query paths use, defined once.

Services write ``select(items.c.id)`` rather than going through the ORM classes on hot paths;
every module takes its handles from here, so a table is renamed in one place.
"""

from __future__ import annotations

from sqlalchemy import Table

from server.db.tables import (
    ActivityLogEntry,
    CollectionEntry,
    Item,
    ItemFieldCount,
    ItemPerson,
    ItemValue,
    ItemValueCount,
    Library,
    LibraryPath,
    LiveTvSeriesTimer,
    LiveTvTimer,
    Person,
    Playlist,
    PlaylistEntry,
    PlaylistShare,
    TaskResult,
    UserData,
)


def _table(model: type) -> Table:
    """The Core table of a SQLModel class (``__table__``, which SQLModel's types do not declare)."""
    table = model.__dict__["__table__"]
    assert isinstance(table, Table)
    return table


items = _table(Item)
user_data = _table(UserData)
item_values = _table(ItemValue)
item_people = _table(ItemPerson)
people = _table(Person)
libraries = _table(Library)
library_paths = _table(LibraryPath)
playlists = _table(Playlist)
playlist_entries = _table(PlaylistEntry)
playlist_shares = _table(PlaylistShare)
collection_entries = _table(CollectionEntry)
item_value_counts = _table(ItemValueCount)  # kept by triggers (server/library/catalog/facets.py)
item_field_counts = _table(ItemFieldCount)
# read and written by the start before its first 200 (ServerContext.initialize): on the tables, so
# SQLAlchemy configures its ORM mappers (~25 ms, every table at once) later, with the first request
# or start-up task that uses the ORM
task_results = _table(TaskResult)
activity_log = _table(ActivityLogEntry)
# read by the recorder and the guide task at start and on every tick of the recorder: on the
# tables first, so a server without Live TV timers never configures the ORM mappers while idle
livetv_timers = _table(LiveTvTimer)
livetv_series_timers = _table(LiveTvSeriesTimer)
