"""A first start makes its SQLite database from ``server/db/migrations/head_sqlite.sql``
(``migration_child.create_at_head``) instead of running every migration in a child. These tests
prove that database is the one the migrations make (every table, column and type, index, foreign
key, trigger, view, row and pragma), that the file is current (a new migration without a new file
fails here), and that a start falls back to the child whenever the file cannot be trusted."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect

from server.db import head_schema, migrate, migration_child
from server.db.migration_child import HEAD_SCHEMA, create_at_head, script_heads, sqlite_due, start_if_due
from server.paths import ServerPaths
from tests.conftest import sqlite_only, start_server, stop_server
from tests.db.schema_helpers import START_SERVER, revisions

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "stale: run `python -m server.db.head_schema` after adding a migration"


def describe(db_file: Path) -> dict[str, Any]:
    """Everything SQLite says about a database's schema and rows."""
    conn = sqlite3.connect(db_file)
    try:
        master = sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(),
                        key=repr)
        tables: dict[str, Any] = {}
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
            quoted = '"' + name.replace('"', '""') + '"'
            indexes = {}
            for row in conn.execute(f"PRAGMA index_list({quoted})").fetchall():
                index = row[1]
                indexes[index] = (row, conn.execute(f"PRAGMA index_xinfo(\"{index}\")").fetchall())
            tables[name] = {
                "columns": conn.execute(f"PRAGMA table_xinfo({quoted})").fetchall(),
                "foreign_keys": conn.execute(f"PRAGMA foreign_key_list({quoted})").fetchall(),
                "indexes": indexes,
                "rows": sorted(conn.execute(f"SELECT * FROM {quoted}").fetchall(), key=repr),
            }
        pragmas = {p: conn.execute(f"PRAGMA {p}").fetchall() for p in (
            "journal_mode", "user_version", "application_id", "page_size", "auto_vacuum", "encoding")}
        return {"master": master, "tables": tables, "pragmas": pragmas}
    finally:
        conn.close()


def test_the_head_schema_is_at_the_scripts_heads() -> None:
    found = migration_child.head_schema()
    assert found is not None, f"{HEAD_SCHEMA} is missing: run `python -m server.db.head_schema`"
    assert found[0] == script_heads(), REGENERATE


def test_a_database_made_from_the_head_schema_is_the_migrated_one(tmp_path: Path) -> None:
    migrated = head_schema.migrated_database(tmp_path)  # Alembic through every script, as the child does
    made = tmp_path / "data" / "made.db"
    assert create_at_head(made)
    expected, actual = describe(migrated), describe(made)
    assert actual["pragmas"] == expected["pragmas"]
    assert actual["master"] == expected["master"], REGENERATE  # tables, indexes, triggers, views: their SQL
    assert actual["tables"].keys() == expected["tables"].keys()
    for name, table in expected["tables"].items():
        assert actual["tables"][name] == table, f"{name}: {REGENERATE}"
    assert {"items", "users", "user_data", "item_search_fts"} <= actual["tables"].keys()
    assert sum(1 for kind, *_ in actual["master"] if kind == "trigger") >= 10
    # the file is exactly what the generator writes from a migrated database (its --check)
    assert head_schema.render(migrated) == HEAD_SCHEMA.read_text(encoding="utf-8"), REGENERATE


def test_the_server_finds_a_made_database_up_to_date(tmp_path: Path) -> None:
    db_file = ServerPaths(tmp_path).database_file
    assert start_if_due(tmp_path, None) is None  # made here: no child
    assert revisions(db_file) == script_heads()
    assert sqlite_due(db_file) is False
    engine = create_engine(f"sqlite:///{db_file}")
    try:
        assert migrate.up_to_date(engine)  # what ServerContext checks: it starts no migration either
        assert {"items", "users", "user_data"} <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert not [p.name for p in db_file.parent.iterdir() if p.name.endswith(".new")]  # nothing left aside


def test_an_existing_database_is_never_made_again(tmp_path: Path) -> None:
    db_file = tmp_path / "library.db"
    with sqlite3.connect(db_file) as conn:
        conn.execute("CREATE TABLE mine (x)")
        conn.execute("INSERT INTO mine VALUES (1)")
    assert not create_at_head(db_file)
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("SELECT x FROM mine").fetchall() == [(1,)]


def test_a_stale_head_schema_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A head schema at other heads than the scripts' (a migration added, the file not rewritten):
    a new database migrates in a child as before."""
    stale = tmp_path / "head_sqlite.sql"
    stale.write_text(HEAD_SCHEMA.read_text(encoding="utf-8").replace("-- heads: ", "-- heads: 0000_older "),
                     encoding="utf-8")
    monkeypatch.setattr(migration_child, "HEAD_SCHEMA", stale)
    data = tmp_path / "data"
    db_file = ServerPaths(data).database_file
    assert not create_at_head(db_file) and not db_file.exists()
    child = start_if_due(data, None)
    assert child is not None
    child.wait()
    assert revisions(db_file) == script_heads()


def test_a_head_schema_that_fails_leaves_no_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "head_sqlite.sql"
    heads = " ".join(sorted(script_heads() or ()))
    broken.write_text(f"-- heads: {heads}\nBEGIN;\nCREATE TABLE a (x);\nCREATE TABLE a (x);\nCOMMIT;\n", encoding="utf-8")
    monkeypatch.setattr(migration_child, "HEAD_SCHEMA", broken)
    db_file = tmp_path / "data" / "library.db"
    assert not create_at_head(db_file)
    assert sorted(p.name for p in db_file.parent.iterdir()) == []


def test_a_first_start_makes_its_database_without_a_child_or_alembic(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", START_SERVER, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["child"] is False
    assert not [m for m in result["modules"] if m.split(".")[0] in ("alembic", "mako")]
    assert revisions(ServerPaths(tmp_path).database_file) == script_heads()


@sqlite_only
def test_an_in_process_server_makes_a_new_database_from_the_head_schema(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers built in-process (the tests' own) make a new database the same way: no Alembic run."""
    from alembic import command

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("Alembic ran for a new database")

    monkeypatch.setattr(command, "upgrade", refuse)
    live = start_server(tmp_path / "data")
    try:
        with live.client() as c:
            assert c.get("/Startup/User").status_code == 200  # reads the users table
    finally:
        stop_server(live)
    assert revisions(ServerPaths(tmp_path / "data").database_file) == script_heads()
