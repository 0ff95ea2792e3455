"""The Alembic migrations build exactly the schema server/db/schema.py declares (so a change to a
table without a migration, or the reverse, fails here), every head is reached, and upgrading an
up-to-date database does nothing. Each test runs on SQLite and, when REELROOM_TEST_DATABASE_URL
names a PostgreSQL server (tests/with_postgres.sh), on PostgreSQL as well."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import BigInteger, create_engine, inspect, text

from server.db import migrate
from server.db.dialect import normalize_url, warn_about_collation
from server.db.schema import metadata
from server.library.catalog import facets, search_index
from tests.conftest import ON_POSTGRES, create_test_database, drop_test_database

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not ON_POSTGRES, reason="REELROOM_TEST_DATABASE_URL does not name a PostgreSQL server"))]


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'schema.db'}"
        return
    url = create_test_database()
    yield url
    drop_test_database(url)


def _upgraded(url):
    engine = create_engine(normalize_url(url))
    migrate.upgrade(engine, url)
    return engine


def _is_search_index(d) -> bool:
    # Built by the migrations outside SQLModel on purpose: SQLite's FTS5 mirror tables and
    # PostgreSQL's trigram expression indexes (server/library/catalog/search_index.py).
    if d[0] == "remove_table" and d[1].name.startswith("item_search"):
        return True
    # and the expression indexes of 0011_lists_fast (episodes in play order, people by lower(name))
    return d[0] == "remove_index" and (d[1].name in search_index.POSTGRES_INDEXES
                                       or d[1].name in ("ix_items_episode_order", "ix_people_lower_name"))


def test_migrations_match_the_tables(database_url):
    engine = _upgraded(database_url)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": False})
        diff = compare_metadata(context, metadata)
    diff = [d for d in diff if not _is_search_index(d)]
    assert diff == [], f"schema drift between schema.py and the migrations: {diff}"
    engine.dispose()


def test_every_head_is_applied_and_a_second_upgrade_is_a_no_op(database_url):
    engine = _upgraded(database_url)
    heads = set(ScriptDirectory.from_config(migrate.alembic_config(database_url)).get_heads())
    with engine.connect() as conn:
        assert set(MigrationContext.configure(conn).get_current_heads()) == heads
    tables = set(inspect(engine).get_table_names())
    assert not migrate.pending(engine, database_url)
    migrate.upgrade(engine, database_url)
    assert set(inspect(engine).get_table_names()) == tables
    engine.dispose()


def test_script_heads_read_without_alembic_are_alembics_heads():
    heads = set(ScriptDirectory.from_config(migrate.alembic_config("sqlite://")).get_heads())
    assert migrate.script_heads() == heads


def test_the_fast_check_knows_when_a_migration_is_due(database_url):
    engine = create_engine(normalize_url(database_url))
    assert not migrate.up_to_date(engine)  # no version table yet
    migrate.upgrade(engine, database_url)
    assert migrate.up_to_date(engine)
    with engine.begin() as conn:  # one revision back: a migration is due again
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0008_postgres'")
    assert not migrate.up_to_date(engine)
    assert migrate.pending(engine, database_url)
    engine.dispose()


def test_scripts_that_do_not_read_plainly_leave_the_decision_to_alembic(tmp_path):
    (tmp_path / "0001_a.py").write_text('revision = "a"\ndown_revision = None\n')
    (tmp_path / "0002_b.py").write_text('revision: str = "b"\ndown_revision = ("a",)  # merge\n')
    assert migrate.script_heads(tmp_path) == {"b"}
    (tmp_path / "0003_c.py").write_text("revision = make_revision()\ndown_revision = 'b'\n")
    assert migrate.script_heads(tmp_path) is None
    (tmp_path / "0003_c.py").write_text("revision = 'c'\n")  # no down_revision line
    assert migrate.script_heads(tmp_path) is None


@pytest.mark.skipif(not ON_POSTGRES, reason="REELROOM_TEST_DATABASE_URL does not name a PostgreSQL server")
def test_postgres_holds_64_bit_ticks_and_has_the_trigram_indexes():
    from datetime import UTC, datetime

    from sqlmodel import Session

    from server.db.tables import Item, Library

    url = create_test_database()
    engine = _upgraded(url)
    try:
        columns = {(t, c["name"]): c["type"] for t in ("items", "user_data", "media_probes")
                   for c in inspect(engine).get_columns(t)}
        for key in (("items", "run_time_ticks"), ("items", "size"), ("items", "file_size"),
                    ("user_data", "playback_position_ticks"), ("media_probes", "size")):
            assert isinstance(columns[key], BigInteger), (key, columns[key])
        three_hours = 3 * 3600 * 10_000_000  # ticks; PostgreSQL's INTEGER stops at 2^31 - 1
        with Session(engine) as s:
            s.add(Library(id="lib", name="Films", collection_type="movies"))
            s.add(Item(id="film", type="Movie", library_id="lib", name="Long", sort_name="long", path="/f.mkv",
                       run_time_ticks=three_hours, size=5 * 2**30, date_created=datetime.now(UTC)))
            s.commit()
            assert s.get(Item, "film").run_time_ticks == three_hours
        with engine.connect() as conn:
            names = {r[0] for r in conn.exec_driver_sql("SELECT indexname FROM pg_indexes WHERE tablename = 'items'")}
        assert set(search_index.POSTGRES_INDEXES) <= names
        assert warn_about_collation(engine) == "C.UTF-8"  # what tests/with_postgres.sh's initdb chose
    finally:
        engine.dispose()
        drop_test_database(url)


def _trigger_definitions(engine) -> dict[str, str]:
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            rows = conn.exec_driver_sql(
                "SELECT t.tgname, pg_get_triggerdef(t.oid) || ' ' || p.prosrc FROM pg_trigger t "
                "JOIN pg_proc p ON p.oid = t.tgfoid WHERE NOT t.tgisinternal").all()
        else:
            rows = conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all()
    return {name: sql for name, sql in rows if name in facets.TRIGGER_NAMES}


def test_head_has_the_kept_count_triggers_the_app_would_make(database_url, tmp_path):
    """0010_kept_counts carries its own frozen copy of the triggers (a migration imports no app
    code): head's triggers are the ones facets.py makes, so start-up never has to rebuild."""
    engine = _upgraded(database_url)
    migrated = _trigger_definitions(engine)
    assert set(migrated) == set(facets.TRIGGER_NAMES)
    with engine.begin() as conn:
        facets.create_triggers(conn)  # what the app spells now, over the migrated ones
    assert _trigger_definitions(engine) == migrated
    engine.dispose()


def test_head_has_the_search_index_the_app_would_make(database_url):
    """0004_query_search and 0008_postgres carry frozen copies of the search index's DDL (a
    migration imports no app code): head's search triggers (SQLite) and trigram indexes
    (PostgreSQL) are the ones search_index.py makes, so start-up never has to rebuild them."""
    engine = _upgraded(database_url)
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            names = {r[0] for r in conn.exec_driver_sql(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'items'").all()}
            if "ix_items_name_trgm" in names:  # (pg_trgm may be unavailable: then neither makes them)
                assert set(search_index.POSTGRES_INDEXES) <= names
                defs = {r[0]: r[1] for r in conn.exec_driver_sql(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'items'").all()}
                for name, statement in search_index.POSTGRES_INDEXES.items():
                    assert "gin_trgm_ops" in defs[name] and name in statement
        else:
            migrated = {name: sql for name, sql in conn.exec_driver_sql(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%search%'").all()}
            if migrated:  # (an SQLite without FTS5 gets no index from either)
                wanted = {}
                for statement in search_index.TRIGGERS:
                    name = statement.split()[5]
                    wanted[name] = statement.replace("IF NOT EXISTS ", "")
                assert migrated == wanted
                tables = {r[0]: r[1] for r in conn.exec_driver_sql(
                    "SELECT name, sql FROM sqlite_master WHERE name IN ('item_search', 'item_search_fts')").all()}
                assert {n: t.replace("IF NOT EXISTS ", "") for n, t in tables.items()} == {
                    name: statement.replace("IF NOT EXISTS ", "")
                    for name, statement in zip(("item_search", "item_search_fts"), search_index.TABLES, strict=True)}
    engine.dispose()


def test_migrations_import_no_application_code():
    """A migration is a fixed step: code it imports from the app changes later and would change
    what an old revision does. Nothing from server/ may be imported outside server/db/migrations
    (frozen copies live in the revision itself, as 0004, 0008 and 0010 do)."""
    import ast
    from pathlib import Path

    folder = Path(migrate.__file__).parent / "migrations" / "versions"
    offenders = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.name}: {n}" for n in names
                          if n.split(".")[0] in ("server", "app") and not n.startswith("server.db.migrations")]
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
                offenders.append(f"{path.name}: __import__")
    assert offenders == []


def test_search_rated_runs_on_an_existing_database_and_keeps_its_data(database_url):
    """0013_search_rated on a database at 0012_search_cover holding a library, a user and their
    play state: the rows are all kept, the wider search cover replaces the old one, and a
    downgrade gives the old index back (rows kept again)."""
    from alembic import command

    engine = create_engine(normalize_url(database_url))
    cfg = migrate.alembic_config(database_url)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0012_search_cover")
    now = "2026-01-02 03:04:05"
    columns = ("id", "type", "is_folder", "name", "sort_name", "date_created", "is_locked", "is_virtual",
               "official_rating", "series_id", "library_id")
    items_sql = text(
        f"INSERT INTO items (media_type, genres_json, studios_json, tags_json, artists_json, album_artists_json, "
        f"provider_ids_json, media_streams_json, chapters_json, images_json, locked_fields_json, {', '.join(columns)}) "
        f"VALUES ('Video', '[]', '[]', '[]', '[]', '[]', '{{}}', '[]', '[]', '[]', '[]', "
        f"{', '.join(':' + c for c in columns)})")
    wanted_items = [("s" * 32, "Series", True, "Show", "show", now, False, False, "TV-MA", None, "lib"),
                    ("e" * 32, "Episode", False, "Pilot", "pilot", now, False, False, None, "s" * 32, "lib"),
                    ("m" * 32, "Movie", False, "Film", "film", now, False, False, "PG-13", None, "lib")]
    with engine.begin() as conn:
        conn.execute(items_sql, [dict(zip(columns, row, strict=True)) for row in wanted_items])
        conn.execute(text("INSERT INTO users (id, name, policy_json, configuration_json, date_created, "
                          "invalid_login_attempts) VALUES (:id, :name, '{}', '{}', :at, 0)"),
                     {"id": "u" * 32, "name": "viewer", "at": now})
        conn.execute(text("INSERT INTO user_data (user_id, item_id, played, play_count, is_favorite, "
                          "playback_position_ticks) VALUES (:user, :item, :played, 3, :favourite, 1234)"),
                     {"user": "u" * 32, "item": "e" * 32, "played": True, "favourite": True})

    def snapshot():
        with engine.connect() as conn:
            found_items = conn.exec_driver_sql(
                "SELECT id, type, name, official_rating, series_id, library_id FROM items ORDER BY id").all()
            found_data = conn.exec_driver_sql(
                "SELECT user_id, item_id, played, play_count, is_favorite, playback_position_ticks FROM user_data").all()
            users = conn.exec_driver_sql("SELECT id, name FROM users").all()
        return [tuple(r) for r in found_items], [tuple(r) for r in found_data], [tuple(r) for r in users]

    def index_columns():
        return {i["name"]: i["column_names"] for i in inspect(engine).get_indexes("items")
                if i["name"] in ("ix_items_search", "ix_items_search_rated")}

    before = snapshot()
    assert before[0] == sorted((r[0], r[1], r[3], r[8], r[9], r[10]) for r in wanted_items)
    assert [(u, i, bool(p), n, bool(f), t) for u, i, p, n, f, t in before[1]] == [
        ("u" * 32, "e" * 32, True, 3, True, 1234)]
    assert before[2] == [("u" * 32, "viewer")]
    assert index_columns() == {"ix_items_search": ["id", "type", "owner_id", "sort_name", "name"]}

    migrate.upgrade(engine, database_url)  # as a start does: 0012 -> head
    assert snapshot() == before
    assert index_columns() == {"ix_items_search_rated": ["id", "type", "owner_id", "sort_name", "name",
                                                         "official_rating", "series_id", "library_id"]}

    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0012_search_cover")
    assert snapshot() == before
    assert index_columns() == {"ix_items_search": ["id", "type", "owner_id", "sort_name", "name"]}
    engine.dispose()
