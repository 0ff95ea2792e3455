"""SQLAlchemy Core handles of the tables the query paths use, defined once.

Services write ``select(items.c.id)`` rather than going through the ORM classes on hot paths;
every module takes its handles from here, so a table is renamed in one place.
"""

from __future__ import annotations

from server.db.tables import (
    CollectionEntry,
    Item,
    ItemPerson,
    ItemValue,
    Library,
    Person,
    Playlist,
    PlaylistEntry,
    PlaylistShare,
    UserData,
)

items = Item.__table__
user_data = UserData.__table__
item_values = ItemValue.__table__
item_people = ItemPerson.__table__
people = Person.__table__
libraries = Library.__table__
playlists = Playlist.__table__
playlist_entries = PlaylistEntry.__table__
playlist_shares = PlaylistShare.__table__
collection_entries = CollectionEntry.__table__
