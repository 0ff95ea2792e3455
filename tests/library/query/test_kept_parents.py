"""The parent rows a page's or a mix's items borrow images and names from (``dto.parent_rows``)
are kept per engine for one content generation: asked again, none is read; a rename or a new
image of an album (a content write) is seen on the next call; a read stamped before the kept
rows' generation neither uses nor keeps them; the number kept is bounded. On SQLite and
PostgreSQL (no statement is asserted there)."""

from __future__ import annotations

import pytest

from server.db import migrate
from server.db.database import Database, sqlite_url
from server.db.tables import Item
from server.library.catalog import dto
from server.library.catalog.query import get_rows
from tests.conftest import ON_POSTGRES, create_test_database, drop_test_database


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not ON_POSTGRES, reason="REELROOM_TEST_DATABASE_URL does not name a PostgreSQL server"))])
def db(request, tmp_path):
    url = sqlite_url(tmp_path / "parents.db") if request.param == "sqlite" else create_test_database()
    database = Database(url)
    migrate.upgrade(database.engine, database.url)
    yield database
    database.close()
    if request.param != "sqlite":
        drop_test_database(url)


def _library(db: Database) -> list[str]:
    def write(s):  # type: ignore[no-untyped-def]
        for a in range(6):
            s.add(Item(id=f"{a:032x}", type="MusicAlbum", media_type="Unknown", is_folder=True, name=f"Album {a}",
                       sort_name=f"album {a}", library_id="lib", images_json='[{"Type": "Primary", "Tag": "t0"}]'))
            for t in range(3):
                s.add(Item(id=f"{a * 10 + t + 100:032x}", type="Audio", media_type="Audio", name=f"Track {a}.{t}",
                           sort_name=f"track {a}.{t}", library_id="lib", album_id=f"{a:032x}",
                           parent_id=f"{a:032x}"))

    db.write_sync(write)
    return [f"{a * 10 + t + 100:032x}" for a in range(6) for t in range(3)]


def test_parent_rows_are_kept_for_the_content_generation_and_never_stale(db: Database, monkeypatch) -> None:
    tracks = _library(db)

    def parents(ids: list[str]) -> dict:
        def read(s):  # type: ignore[no-untyped-def]
            rows = get_rows(s, ids)
            return dto.parent_rows(s, [rows[i] for i in ids])
        return db.read_sync(read)

    first = parents(tracks)
    assert sorted(r.name for r in first.values()) == [f"Album {a}" for a in range(6)]
    reads: list[int] = []
    real = dto.driver_rows
    monkeypatch.setattr(dto, "driver_rows", lambda *a, **k: reads.append(1) or real(*a, **k))
    assert parents(tracks) == first
    if db.is_sqlite:  # (PostgreSQL's reads take the select: not counted here)
        assert not reads  # every row kept: nothing read
    # a rename and a new image of album 2 (a content write): seen on the next call
    album = f"{2:032x}"

    def edit(s):  # type: ignore[no-untyped-def]
        item = s.get(Item, album)
        item.name = "Renamed"
        item.images_json = '[{"Type": "Primary", "Tag": "t1"}]'

    db.write_sync(edit)
    after = parents(tracks)
    assert after[album].name == "Renamed" and '"t1"' in (after[album].images_json or "")
    if db.is_sqlite:
        assert reads  # read again after the write
    # a read stamped before the kept rows' generation neither uses nor keeps them
    kept = dto._KEPT_PARENTS[db.engine]
    stamp = kept.stamp
    kept.rows[album] = kept.rows[album]._replace(name="Wrong")  # (what an old read must not see)
    monkeypatch.setattr(db, "content_generation", stamp - 1)
    assert parents(tracks)[album].name == "Renamed"
    assert kept.rows[album].name == "Wrong" and kept.stamp == stamp  # untouched
    monkeypatch.setattr(db, "content_generation", stamp + 1)  # a newer generation drops them
    assert parents(tracks)[album].name == "Renamed" and kept.rows[album].name == "Renamed"


def test_the_kept_parent_rows_are_bounded(db: Database, monkeypatch) -> None:
    tracks = _library(db)
    monkeypatch.setattr(dto._KeptParents, "size", 4)

    def read(s):  # type: ignore[no-untyped-def]
        rows = get_rows(s, tracks)
        return dto.parent_rows(s, [rows[i] for i in tracks])

    assert len(db.read_sync(read)) == 6
    assert len(dto._KEPT_PARENTS[db.engine].rows) == 4


def test_the_kept_parent_rows_are_let_go_when_the_database_is_left_alone(db: Database) -> None:
    tracks = _library(db)

    def read(s):  # type: ignore[no-untyped-def]
        rows = get_rows(s, tracks)
        return dto.parent_rows(s, [rows[i] for i in tracks])

    first = db.read_sync(read)
    assert len(dto._KEPT_PARENTS[db.engine].rows) == 6
    db.release_memory()  # (what memory.MemoryTrimmer calls at a quiet moment)
    assert not dto._KEPT_PARENTS[db.engine].rows
    assert db.read_sync(read) == first
