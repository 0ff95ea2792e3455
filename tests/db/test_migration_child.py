"""A due migration runs in a child process (server/db/migration_child.py): an entry point starts
it before importing the server, ``ServerContext.initialize`` waits for it, and Alembic never
loads into the server. A database behind the scripts still gets every migration it lacks; one
that is up to date starts no child; a failing child fails the start with its message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from server.db import migrate, migration_child
from server.db.migration_child import (
    MIGRATE_FLAG,
    URL_ENV,
    MigrationChild,
    MigrationFailed,
    script_heads,
    sqlite_due,
    start_if_due,
)
from server.paths import ServerPaths
from tests.conftest import ON_POSTGRES, start_server, stop_server
from tests.db.schema_helpers import START_SERVER, migrate_to, revisions

ROOT = Path(__file__).resolve().parents[2]


def test_an_empty_data_folder_is_migrated_by_a_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a usable head schema (tests/db/test_head_schema.py: a new database is made from it)."""
    monkeypatch.setattr(migration_child, "HEAD_SCHEMA", tmp_path / "no-head-schema.sql")
    db_file = ServerPaths(tmp_path).database_file
    assert sqlite_due(db_file) is True  # no file yet
    child = start_if_due(tmp_path, None)
    assert child is not None and child.proc.pid != os.getpid()
    child.wait()
    assert child.proc.returncode == 0
    assert revisions(db_file) == script_heads()
    engine = create_engine(f"sqlite:///{db_file}")
    try:
        assert migrate.up_to_date(engine)  # what the server checks after waiting
        assert {"items", "users", "user_data"} <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert sqlite_due(db_file) is False
    assert start_if_due(tmp_path, None) is None  # up to date: no child at all


def test_a_database_behind_the_scripts_gets_the_migrations_it_lacks(tmp_path: Path) -> None:
    """An upgrade of Reelroom: the database is at an older revision; the child brings it to the heads."""
    db_file = ServerPaths(tmp_path).database_file
    url = migrate_to(db_file, "0007_merge")
    assert sqlite_due(db_file) is True
    child = start_if_due(tmp_path, url)
    assert child is not None
    child.wait()
    assert revisions(db_file) == script_heads()


def test_a_failing_migration_says_why_once(tmp_path: Path) -> None:
    db_file = tmp_path / "not-a-database.db"
    db_file.write_bytes(b"this is not SQLite " * 100)
    child = MigrationChild(f"sqlite:///{db_file}")
    with pytest.raises(MigrationFailed, match="(?i)database"):
        child.wait()
    child.wait()  # a restart on the same options checks the database again instead


@pytest.mark.parametrize("entry", ["entry_reelroom.py", "entry_reelroom_server.py"])
def test_the_bundles_entry_points_run_a_migration(tmp_path: Path, entry: str) -> None:
    """In the PyInstaller bundle the child is the executable itself with --reelroom-migrate."""
    db_file = tmp_path / "library.db"
    env = {**os.environ, URL_ENV: f"sqlite:///{db_file}", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(ROOT / "installer" / entry), MIGRATE_FLAG], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert revisions(db_file) == script_heads()


def test_a_start_after_an_upgrade_migrates_without_loading_alembic(tmp_path: Path) -> None:
    """The server of a start with a migration due (its database at an older revision: a first start
    makes its database at the heads without a child, tests/db/test_head_schema.py) is fully
    migrated once it is ready, and never imported Alembic."""
    migrate_to(ServerPaths(tmp_path).database_file, "0007_merge")
    out = subprocess.run([sys.executable, "-c", START_SERVER, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["child"] is True
    assert not [m for m in result["modules"] if m.split(".")[0] in ("alembic", "mako")]
    assert revisions(ServerPaths(tmp_path).database_file) == script_heads()


def test_a_server_that_migrates_in_a_child_serves_a_migrated_database(tmp_path: Path) -> None:
    """ServerContext starts the child itself when no entry point did (and on PostgreSQL, which the
    entry points leave to it); the first request sees every table. On SQLite the database is at an
    older revision (a new one is made from the head schema, tests/db/test_head_schema.py)."""
    if not ON_POSTGRES:
        migrate_to(ServerPaths(tmp_path / "data").database_file, "0007_merge")
    live = start_server(tmp_path / "data", migrate_in_child=True)
    try:
        with live.client() as c:
            r = c.get("/Startup/User")  # reads the users table
            assert r.status_code == 200, r.text
            assert c.get("/System/Info/Public").json()["StartupWizardCompleted"] is False
        engine = live.runner.ctx.db.engine
        assert migrate.up_to_date(engine)
    finally:
        stop_server(live)
    if not ON_POSTGRES:
        assert revisions(ServerPaths(tmp_path / "data").database_file) == script_heads()
