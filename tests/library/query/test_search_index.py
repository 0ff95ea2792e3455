"""The full-text name index: kept in step with items by triggers, repaired at start-up, and
used by searchTerm (terms under three characters fall back to LIKE). The search rules are
checked on SQLite (FTS5) and, when REELROOM_TEST_DATABASE_URL names a PostgreSQL server, on
PostgreSQL (pg_trgm) as well: both must give the same answers."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import delete, event, insert, update

from server.db import migrate
from server.db.database import Database, sqlite_url
from server.db.tables import Item
from server.library.catalog import search_index
from server.library.catalog.query import ItemQuery, run_query
from tests.conftest import ON_POSTGRES, create_test_database, drop_test_database

needs_postgres = pytest.mark.skipif(not ON_POSTGRES, reason="REELROOM_TEST_DATABASE_URL does not name a "
                                                            "PostgreSQL server")


@pytest.fixture
def db(tmp_path: Path):
    database = Database(sqlite_url(tmp_path / "search.db"))
    migrate.upgrade(database.engine, database.url)
    assert search_index.ensure(database.engine)
    yield database
    database.close()


@pytest.fixture
def pg_db():
    url = create_test_database()
    database = Database(url)
    migrate.upgrade(database.engine, database.url)
    search_index.ensure(database.engine)
    yield database
    database.close()
    drop_test_database(url)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=needs_postgres)])
def any_db(request):
    return request.getfixturevalue("db" if request.param == "sqlite" else "pg_db")


def add(db: Database, item_id: str, name: str, original_title: str | None = None) -> None:
    db.write_sync(lambda s: s.add(Item(id=item_id, type="Movie", media_type="Video", name=name,
                                       sort_name=name.lower(), original_title=original_title, library_id="lib")))


def search(db: Database, term: str) -> list[str]:
    return [r.name for r in db.read_sync(lambda s: run_query(s, ItemQuery(recursive=True, search_term=term))[0])]


def test_index_follows_inserts_renames_and_deletes(any_db: Database) -> None:
    db = any_db
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


@needs_postgres
def test_postgres_searches_use_the_trigram_index(pg_db: Database) -> None:
    rows = [{"id": f"{n:032x}", "type": "Movie", "media_type": "Video", "name": f"Film number {n}",
             "sort_name": f"film number {n}", "library_id": "lib", "date_created": datetime.now(UTC)}
            for n in range(20_000)]
    pg_db.write_sync(lambda s: s.execute(insert(Item), rows))
    add(pg_db, "f" * 32, "Blade Runner", original_title="Bladerunner")
    assert search(pg_db, "runner") == ["Blade Runner"]
    assert search(pg_db, "NUMBER 1999") == ["Film number 1999", "Film number 19990", "Film number 19991",
                                            "Film number 19992", "Film number 19993", "Film number 19994",
                                            "Film number 19995", "Film number 19996", "Film number 19997",
                                            "Film number 19998", "Film number 19999"]
    # the query engine's own statement is answered from the trigram indexes
    seen: list[tuple[str, object]] = []

    def capture(conn, cursor, statement, parameters, context, executemany):
        if "LIKE" in statement and "lower(items.name)" in statement:
            seen.append((statement, parameters))

    event.listen(pg_db.engine, "before_cursor_execute", capture)
    try:
        assert search(pg_db, "runner") == ["Blade Runner"]
    finally:
        event.remove(pg_db.engine, "before_cursor_execute", capture)
    assert seen, "the search did not use lower(name) LIKE"
    statement, parameters = seen[0]
    with pg_db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM ANALYZE items")  # what autovacuum does after a scan's inserts
        plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + statement, parameters))
    assert "ix_items_name_trgm" in plan and "ix_items_original_title_trgm" in plan, plan
