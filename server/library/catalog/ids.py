"""The one place item ids are derived. Every domain (scanner, query, images, metadata) uses
these, so an id computed anywhere matches the row the scanner stored.

- Items on disk: from the library id and the path, so ids survive rescans and restarts.
- Items by name (Person, Genre, MusicGenre, Studio, MusicArtist, Year): from the kind and the
  name, case-folded, as Jellyfin does, so ``/Genres/Action`` and an item's GenreItems agree.
"""

from __future__ import annotations

from functools import lru_cache

from server.guid import guid_from_text

BY_NAME_KINDS = ("Person", "Genre", "MusicGenre", "Studio", "MusicArtist", "Year")


def item_id_for_path(path: str) -> str:
    """Id of the item stored for a file or folder path (a library's folders included)."""
    return guid_from_text("item", path)


def library_id_for_name(name: str) -> str:
    """Id of a virtual folder (CollectionFolder), derived from its name."""
    return guid_from_text("library", name.strip().casefold())


@lru_cache(maxsize=4096)
def by_name_id(kind: str, name: str) -> str:
    """Id of a by-name item (kind is one of BY_NAME_KINDS). Kept for the last 4,096 names (a
    list of tracks names each artist twice, ArtistItems and AlbumArtists: the hash cost ~4 us
    a name, ~2 ms an InstantMix of 200 tracks; the entries take ~0.6 MB)."""
    if kind == "Person":  # the people table predates this module: keep its ids
        return guid_from_text("Person", name)
    return guid_from_text(kind, name.strip().casefold())
