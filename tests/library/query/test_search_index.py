"""The full-text name index: kept in step with items by triggers, repaired at start-up, and
used by searchTerm (terms under three characters fall back to LIKE)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import delete, update

from server.db import migrate
from server.db.database import Database, sqlite_url
from server.db.tables import Item
from server.library import search_index
from server.library.query import ItemQuery, run_query


@pytest.fixture
def db(tmp_path: Path):
    database = Database(sqlite_url(tmp_path / "search.db"))
    migrate.upgrade(database.engine, database.url)
    assert search_index.ensure(database.engine)
    yield database
    database.close()


def add(db: Database, item_id: str, name: str, original_title: str | None = None) -> None:
    db.write_sync(lambda s: s.add(Item(id=item_id, type="Movie", media_type="Video", name=name,
                                       sort_name=name.lower(), original_title=original_title, library_id="lib")))


def search(db: Database, term: str) -> list[str]:
    return [r.name for r in db.read_sync(lambda s: run_query(s, ItemQuery(recursive=True, search_term=term))[0])]


def test_index_follows_inserts_renames_and_deletes(db: Database) -> None:
    add(db, "a" * 32, "The Matrix")
    add(db, "b" * 32, "Matrjoschka", original_title="Die Puppe")
    add(db, "c" * 32, "Amélie")
    assert search(db, "matr") == ["Matrjoschka", "The Matrix"]
    assert search(db, "MATRIX") == ["The Matrix"]
    assert search(db, "puppe") == ["Matrjoschka"]  # original titles too
    assert search(db, "mél") == ["Amélie"]
    db.write_sync(lambda s: s.execute(update(Item).where(Item.id == "a" * 32).values(name="Reloaded")))
    assert search(db, "matrix") == []
    assert search(db, "reload") == ["Reloaded"]
    db.write_sync(lambda s: s.execute(delete(Item).where(Item.id == "b" * 32)))
    assert search(db, "matr") == []
    assert search(db, "ré") == []  # two characters: LIKE, still correct
    assert search(db, "re") == ["Reloaded"]


def test_ensure_repairs_dropped_triggers(db: Database) -> None:
    add(db, "a" * 32, "Alien")
    with db.engine.begin() as conn:  # what a batch migration that rebuilds `items` does
        conn.exec_driver_sql("DROP TRIGGER items_search_ai")
    add(db, "b" * 32, "Aliens")
    assert search(db, "alien") == ["Alien"]  # the index missed the insert
    assert search_index.ensure(db.engine)
    assert search(db, "alien") == ["Alien", "Aliens"]
    add(db, "c" * 32, "Alien 3")
    assert search(db, "alien") == ["Alien", "Alien 3", "Aliens"]
