"""merge_scanned_fields: a rescan refreshes what the file says but keeps what the user decided."""

from __future__ import annotations

import json

import pytest

from server.db.tables import Item
from server.library.scan.merge import merge_scanned_fields, people_locked, protected_fields


def existing(**fields) -> Item:
    base = {"id": "a" * 32, "type": "Movie", "path": "/m/Fight Club (1999)/fc.mkv", "name": "Fight Club",
            "sort_name": "fight club", "overview": "From TMDb.", "production_year": 1999,
            "genres_json": json.dumps(["Drama"]), "provider_ids_json": json.dumps({"Tmdb": "550"}),
            "size": 100, "file_mtime": 1.0}
    return Item(**{**base, **fields})


SCAN = {"name": "fight club", "sort_name": "fight club", "overview": None, "production_year": 2000,
        "genres_json": "[]", "provider_ids_json": "{}", "size": 250, "file_mtime": 2.0, "container": "mkv",
        "run_time_ticks": 42}


def test_new_item_takes_every_scanned_field():
    row = merge_scanned_fields(None, {"id": "b" * 32, "type": "Movie", **SCAN})
    assert (row.name, row.size, row.production_year, row.is_locked) == ("fight club", 250, 2000, False)


def test_unlocked_item_takes_the_scan():
    row = merge_scanned_fields(existing(), dict(SCAN))
    assert (row.name, row.overview, row.production_year) == ("fight club", None, 2000)
    assert row.size == 250 and row.container == "mkv"


def test_locked_item_keeps_its_metadata_but_gets_new_technical_fields():
    row = merge_scanned_fields(existing(is_locked=True), dict(SCAN))
    assert (row.name, row.overview, row.production_year) == ("Fight Club", "From TMDb.", 1999)
    assert json.loads(row.genres_json) == ["Drama"]
    assert json.loads(row.provider_ids_json) == {"Tmdb": "550"}
    assert (row.size, row.file_mtime, row.container, row.run_time_ticks) == (250, 2.0, "mkv", 42)
    assert row.is_locked


def test_locked_fields_protect_only_those_fields():
    row = existing(locked_fields_json=json.dumps(["Name", "Genres", "Runtime"]), run_time_ticks=7)
    merged = merge_scanned_fields(row, dict(SCAN))
    assert merged.name == "Fight Club" and json.loads(merged.genres_json) == ["Drama"]
    assert merged.run_time_ticks == 7
    assert merged.overview is None and merged.production_year == 2000
    assert {"name", "sort_name", "genres_json", "run_time_ticks"} <= protected_fields(row)
    assert not people_locked(row)
    assert people_locked(existing(locked_fields_json='["Cast"]')) and people_locked(existing(is_locked=True))


def test_scan_cannot_unlock_or_change_identity():
    row = merge_scanned_fields(existing(is_locked=True, locked_fields_json='["Name"]'),
                               {"is_locked": False, "locked_fields_json": "[]", "id": "c" * 32})
    assert row.is_locked and row.locked_fields_json == '["Name"]' and row.id == "a" * 32


def test_downloaded_images_survive_and_local_art_fills_the_gaps():
    downloaded = [{"Type": "Primary", "Path": "/data/metadata/items/aa/x/primary-1.jpg", "Tag": "t1",
                   "Provider": "TheMovieDb", "Index": 0},
                  {"Type": "Backdrop", "Path": "/data/metadata/items/aa/x/backdrop-1.jpg", "Tag": "t2",
                   "Provider": "TheMovieDb", "Index": 0},
                  {"Type": "Logo", "Path": "/m/old-logo.png", "Tag": "t3", "Index": 0}]
    scanned = [{"Type": "Primary", "Path": "/m/poster.jpg", "Tag": "s1", "Index": 0},
               {"Type": "Backdrop", "Path": "/m/fanart.jpg", "Tag": "s2", "Index": 0},
               {"Type": "Thumb", "Path": "/m/landscape.jpg", "Tag": "s3", "Index": 0}]
    row = merge_scanned_fields(existing(images_json=json.dumps(downloaded)), {"images_json": json.dumps(scanned)})
    images = [(i["Type"], i["Path"], i["Index"]) for i in json.loads(row.images_json)]
    assert images == [("Primary", "/data/metadata/items/aa/x/primary-1.jpg", 0),
                      ("Backdrop", "/data/metadata/items/aa/x/backdrop-1.jpg", 0),
                      ("Backdrop", "/m/fanart.jpg", 1),
                      ("Thumb", "/m/landscape.jpg", 0)]  # the vanished local logo is gone


def test_unknown_columns_are_rejected():
    with pytest.raises(ValueError, match="not Item columns"):
        merge_scanned_fields(existing(), {"titel": "x"})
