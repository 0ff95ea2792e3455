"""``dto.row_columns``: the item columns a DTO is built from for a Fields set, so that a reader
of many rows for one reply (InstantMix's playable test) reads only those
(``query.narrow_select``; the other fields of its ``ItemRow``s are None). For every ItemFields
value alone, several together, and every kind of item the library holds (each column filled),
the DTOs and the encoded fragments built from the narrow rows equal those built from the whole
rows, on a real SQLite file."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from server.db.schema import metadata
from server.db.tables import Item
from server.library.catalog.dto import (
    _ROW_FIELD_COLUMNS,
    _ROW_FREE_FIELDS,
    build_dtos,
    build_fragments,
    options_from,
    row_columns,
)
from server.library.catalog.query import ItemRow, driver_rows, get_rows, narrow_select
from server.wire.casing import encode_wire
from server.wire.models import ENUMS

WHEN = datetime(2020, 5, 17, 20, 30, tzinfo=UTC)
IMAGES = json.dumps([{"Type": "Primary", "Tag": "p1", "Width": 600, "Height": 900, "BlurHash": "LEHV6n"},
                     {"Type": "Backdrop", "Tag": "b1"}, {"Type": "Thumb", "Tag": "t1"}])
STREAMS = json.dumps([{"Index": 0, "Type": "Video", "Codec": "h264", "Width": 1920, "Height": 1080},
                      {"Index": 1, "Type": "Subtitle", "Codec": "subrip", "Language": "eng"}])


def _id(n: int) -> str:
    return f"{n:032x}"


def _full(n: int, type: str, media_type: str | None, is_folder: bool, **more) -> Item:
    """An item with every column set (so a column a build reads, and the narrow read left out,
    would show)."""
    values = dict(
        id=_id(n), type=type, media_type=media_type, is_folder=is_folder, library_id=_id(1),
        parent_id=more.pop("parent_id", _id(1)), path=f"/media/{type}/{n}", name=f"{type} {n}",
        sort_name=f"sort {n}", forced_sort_name=f"forced {n}", original_title=f"original {n}",
        overview=f"overview {n}", tagline=f"tagline {n}", official_rating="PG-13", community_rating=7.5,
        critic_rating=81.0, production_year=2001, premiere_date=WHEN, end_date=WHEN, date_created=WHEN,
        date_modified=WHEN, run_time_ticks=None if is_folder else 3_600_000_000, size=123456, container="mkv",
        bitrate=4_000_000, width=1920, height=1080, video_type="VideoFile", extra_type=None, owner_id=None,
        index_number=3, index_number_end=4, parent_index_number=1, genres_json=json.dumps(["Drama", "Rock"]),
        studios_json=json.dumps(["Studio A"]), tags_json=json.dumps(["tag"]),
        artists_json=json.dumps(["Band", "Guest"]), album_artists_json=json.dumps(["Band"]),
        provider_ids_json=json.dumps({"Imdb": "tt0000001", "Tmdb": "11"}), media_streams_json=STREAMS,
        chapters_json=json.dumps([{"StartPositionTicks": 0, "Name": "Start"}]), images_json=IMAGES,
        lyrics_path=f"/media/{n}.lrc", file_size=99, file_mtime=1.5, is_locked=True,
        locked_fields_json=json.dumps(["Overview", "~name"]), is_virtual=False, status="Continuing",
        scan_signature="sig", fingerprint="fp")
    values.update(more)
    return Item(**values)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    engine = create_engine(f"sqlite:///{tmp_path_factory.mktemp('rowcols') / 'rows.db'}")
    metadata.create_all(engine)
    with Session(engine) as s:
        s.add(_full(1, "CollectionFolder", None, True, parent_id=None))
        s.add(_full(2, "Series", None, True))
        s.add(_full(3, "Season", None, True, parent_id=_id(2), series_id=_id(2)))
        s.add(_full(4, "Episode", "Video", False, parent_id=_id(3), series_id=_id(2), series_name="Series 2",
                    season_id=_id(3), season_name="Season 3"))
        s.add(_full(5, "Movie", "Video", False))
        s.add(_full(6, "MusicAlbum", None, True, album="Album 6"))
        s.add(_full(7, "Audio", "Audio", False, parent_id=_id(6), album_id=_id(6), album="Album 6"))
        s.add(_full(8, "MusicArtist", None, True))
        s.add(_full(9, "Folder", None, True))
        s.add(_full(10, "TvChannel", "Video", False, original_title="7.1"))
        s.add(_full(11, "Trailer", "Video", False, extra_type="Trailer", owner_id=_id(5), is_virtual=True))
        s.add(_full(12, "Audio", "Audio", False, parent_id=_id(6), album_id=_id(6), images_json="[]",
                    artists_json="[]", lyrics_path=None))
        s.commit()
    yield engine
    engine.dispose()


ALL = [_id(n) for n in range(1, 13)]


def _rows(s: Session, columns: tuple[str, ...] | None) -> list[ItemRow]:
    found = driver_rows(s, narrow_select(columns) + " WHERE id IN ", ALL)
    assert found is not None
    by_id = {r.id: r for r in map(ItemRow.from_db, found)}
    return [by_id[i] for i in ALL]


FIELD_SETS = [[f] for f in ENUMS["ItemFields"]] + [
    ["PrimaryImageAspectRatio"], [],
    ["PrimaryImageAspectRatio", "Overview", "Genres", "DateCreated", "SortName", "Etag", "CanDelete"],
    ["ItemCounts", "PrimaryImageAspectRatio", "CanDelete", "MediaSourceCount", "Overview", "Path", "People"],
]


@pytest.mark.parametrize("fields", FIELD_SETS, ids=lambda f: ",".join(f) or "none")
def test_narrow_rows_build_the_same_dtos_and_fragments(engine, fields):
    opts = options_from(fields, user_id=None, can_delete=True)
    columns = row_columns(opts)
    if columns is None:
        assert {"MediaSources", "MediaStreams"} & set(fields), fields  # only these need the whole row
        return
    assert len(columns) < len(ItemRow._fields)
    with Session(engine) as s:
        whole = list(get_rows(s, ALL).values())
        whole.sort(key=lambda r: ALL.index(r.id))
        narrow = _rows(s, columns)
        assert [r.id for r in narrow] == ALL
        assert all(r.fingerprint is None for r in narrow)  # the narrow read left columns out
        for camel in (False, True):
            full_dtos = [encode_wire(d, camel) for d in build_dtos(s, whole, opts, "server")]
            narrow_dtos = [encode_wire(d, camel) for d in build_dtos(s, narrow, opts, "server")]
            assert narrow_dtos == full_dtos
            assert build_fragments(s, narrow, opts, "server", None, camel) == \
                build_fragments(s, whole, opts, "server", None, camel)


def test_every_item_field_is_classified():
    known = set(_ROW_FIELD_COLUMNS) | _ROW_FREE_FIELDS
    assert set(ENUMS["ItemFields"]) <= known | {"LockedFields"}
    # a field not known here reads the whole row (never a DTO missing a column)
    assert row_columns(options_from(["NotAField"])) is None


def test_narrow_select_keeps_the_column_order_and_refuses_unknown_columns():
    sql = narrow_select(("id", "name"))
    assert sql.startswith('SELECT "id", NULL, NULL') and sql.endswith(" FROM items")
    assert sql.count("NULL") == len(ItemRow._fields) - 2
    with pytest.raises(ValueError):
        narrow_select(("id", "no_such_column"))
