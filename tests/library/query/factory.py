"""A small factory of library rows written straight into a live server's database, for
query-engine tests that need exact control over the data (no media files involved)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from server.db.tables import Item, ItemPerson, ItemValue, Library, Person, UserData
from server.library.catalog import ids
from server.library.catalog.sorting import sort_name
from tests.conftest import LiveServer

BASE_TIME = datetime(2024, 1, 1, tzinfo=UTC)
_VALUE_COLUMNS = (("genres", "Genre", "genres_json"), ("studios", "Studio", "studios_json"),
                  ("tags", "Tag", "tags_json"), ("artists", "Artist", "artists_json"),
                  ("album_artists", "AlbumArtist", "album_artists_json"))


def video_streams(subtitles: bool = False, width: int = 1920) -> list[dict]:
    streams = [{"Index": 0, "Type": "Video", "Codec": "h264", "Width": width, "Height": width * 9 // 16},
               {"Index": 1, "Type": "Audio", "Codec": "aac", "Language": "eng", "Channels": 2, "IsDefault": True}]
    if subtitles:
        streams.append({"Index": 2, "Type": "Subtitle", "Codec": "subrip", "Language": "eng", "IsForced": True})
    return streams


class Factory:
    def __init__(self, live: LiveServer) -> None:
        self.live = live
        self.db = live.ctx.db
        self.counter = 0

    def library(self, name: str, collection_type: str | None) -> str:
        lib_id = ids.library_id_for_name(name)

        def write(s) -> None:
            s.add(Library(id=lib_id, name=name, collection_type=collection_type))
            s.add(Item(id=lib_id, type="CollectionFolder", is_folder=True, library_id=lib_id, name=name,
                       sort_name=sort_name(name), path=f"/virtual/{name}"))

        self.db.write_sync(write)
        return lib_id

    def item(self, library_id: str, type: str, name: str, *, parent_id: str | None = None,
             people: list[tuple[str, str]] = (), **fields: Any) -> str:
        """Insert one item; list fields (genres, studios, tags, artists, album_artists) also go
        to item_values; ``people`` is [(name, kind)]; returns the id."""
        self.counter += 1
        path = fields.pop("path", f"/virtual/{library_id}/{type}/{name}-{self.counter}")
        item_id = fields.pop("id", None) or ids.item_id_for_path(path)
        media_type = {"Movie": "Video", "Episode": "Video", "Video": "Video", "Trailer": "Video",
                      "MusicVideo": "Video", "Audio": "Audio", "AudioBook": "Audio", "Book": "Book",
                      "Photo": "Photo"}.get(type, "Unknown")
        is_folder = type in ("Series", "Season", "MusicAlbum", "MusicArtist", "Folder", "BoxSet")
        values = []
        for key, kind, column in _VALUE_COLUMNS:
            entries = fields.pop(key, [])
            fields[column] = json.dumps(entries)
            values.extend(ItemValue(item_id=item_id, kind=kind, clean_value=v.lower(), value=v) for v in entries)
        for key in ("media_streams", "images", "provider_ids"):
            if key in fields:
                fields[f"{key}_json"] = json.dumps(fields.pop(key))
        row = Item(id=item_id, type=type, media_type=fields.pop("media_type", media_type), is_folder=is_folder,
                   library_id=library_id, parent_id=parent_id or library_id, path=path, name=name,
                   sort_name=fields.pop("sort_name", sort_name(name)),
                   date_created=fields.pop("date_created", BASE_TIME + timedelta(minutes=self.counter)), **fields)

        def write(s) -> None:
            s.add(row)
            s.flush()
            for value in values:
                s.add(value)
            for order, (person, kind) in enumerate(people):
                pid = ids.by_name_id("Person", person)
                if s.get(Person, pid) is None:
                    s.add(Person(id=pid, name=person, sort_name=person.lower()))
                    s.flush()
                s.add(ItemPerson(item_id=item_id, person_id=pid, kind=kind, sort_order=order))

        self.db.write_sync(write)
        return item_id

    def user_data(self, user_id: str, item_id: str, **fields: Any) -> None:
        def write(s) -> None:
            record = s.get(UserData, (user_id, item_id)) or UserData(user_id=user_id, item_id=item_id)
            for key, value in fields.items():
                setattr(record, key, value)
            s.add(record)

        self.db.write_sync(write)
