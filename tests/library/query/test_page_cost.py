"""What one Items page costs the database: with SQLite's sampled statistics (nearly every
row's owner_id is NULL, so each owner_id value looks like it matches a thousand rows), no
statement of a page with MediaSources may read the whole items table. It did: the alternate
versions lookup scanned 100k rows for every page (100+ ms)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import event, insert, text

from server.db import migrate
from server.db.database import Database, sqlite_url
from server.db.dialect import quick_statistics_statements
from server.db.tables import Item
from server.library.catalog.dto import build_dtos, options_from
from server.library.catalog.query import get_rows
from tests.conftest import sqlite_only

MOVIES = 3000
WITH_VERSIONS = 25  # more than one chunk of the versions lookup


def row(item_id: str, **kw) -> dict:
    base = {c: None for c in Item.__table__.columns.keys()}
    base.update(id=item_id, type="Movie", media_type="Video", is_folder=False, name=item_id, sort_name=item_id,
                library_id="lib", genres_json="[]", studios_json="[]", tags_json="[]", artists_json="[]",
                album_artists_json="[]", provider_ids_json="{}", media_streams_json="[]", chapters_json="[]",
                images_json="[]", is_locked=False, locked_fields_json="[]", is_virtual=False,
                path=f"/m/{item_id}.mkv", date_created=datetime(2024, 1, 1, tzinfo=UTC))
    base.update(kw)
    return base


@pytest.fixture
def db(tmp_path: Path):
    database = Database(sqlite_url(tmp_path / "page.db"))
    migrate.upgrade(database.engine, database.url)
    rows = [row(f"{i:032x}") for i in range(MOVIES)]
    for i in range(WITH_VERSIONS):
        owner = f"{i:032x}"
        rows.append(row(f"{i:016x}{'a' * 16}", owner_id=owner, path=f"/m/{owner}.alt.mkv"))
        rows.append(row(f"{i:016x}{'b' * 16}", type="Trailer", owner_id=owner, extra_type="Trailer"))
    with database.engine.begin() as conn:
        conn.execute(insert(Item.__table__), rows)
        for statement in quick_statistics_statements("sqlite"):
            conn.execute(text(statement))
    yield database
    database.close()


@sqlite_only
def test_a_page_with_media_sources_reads_no_whole_table(db: Database) -> None:
    page = [f"{i:032x}" for i in range(100)]  # the 25 with versions and 75 without
    plans: list[str] = []

    def explain(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            found = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters).all()
            plans.extend(r[-1] for r in found)

    def read(s):
        found = get_rows(s, page)
        rows = [found[i] for i in page]
        event.listen(db.engine, "before_cursor_execute", explain)
        try:
            return build_dtos(s, rows, options_from(["MediaSources", "MediaSourceCount"]), "server")
        finally:
            event.remove(db.engine, "before_cursor_execute", explain)

    dtos = {d.Id: d for d in db.read_sync(read)}
    assert len(dtos) == 100
    for i in range(100):
        dto = dtos[f"{i:032x}"]
        expected = 2 if i < WITH_VERSIONS else 1
        assert dto.MediaSourceCount == expected and len(dto.MediaSources) == expected
        if i < WITH_VERSIONS:
            assert dto.MediaSources[1].Path == f"/m/{i:032x}.alt.mkv"
    assert plans, "no statement was seen"
    scans = [p for p in plans if p.startswith("SCAN items") or p == "SCAN items"]
    assert not scans, plans
