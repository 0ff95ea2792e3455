"""A due migration runs in a child process (server/db/migration_child.py): an entry point starts
it before importing the server, ``ServerContext.initialize`` waits for it, and Alembic never
loads into the server. A database behind the scripts still gets every migration it lacks; one
that is up to date starts no child; a failing child fails the start with its message."""

from __future__ import annotations

import json
import os
import sqlite3
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

ROOT = Path(__file__).resolve().parents[2]


def _revisions(db_file: Path) -> set[str]:
    with sqlite3.connect(db_file) as conn:
        return {row[0] for row in conn.execute("SELECT version_num FROM alembic_version")}


def test_an_empty_data_folder_is_migrated_by_a_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a usable head schema (tests/db/test_head_schema.py: a new database is made from it)."""
    monkeypatch.setattr(migration_child, "HEAD_SCHEMA", tmp_path / "no-head-schema.sql")
    db_file = ServerPaths(tmp_path).database_file
    assert sqlite_due(db_file) is True  # no file yet
    child = start_if_due(tmp_path, None)
    assert child is not None and child.proc.pid != os.getpid()
    child.wait()
    assert child.proc.returncode == 0
    assert _revisions(db_file) == script_heads()
    engine = create_engine(f"sqlite:///{db_file}")
    try:
        assert migrate.up_to_date(engine)  # what the server checks after waiting
        assert {"items", "users", "user_data"} <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert sqlite_due(db_file) is False
    assert start_if_due(tmp_path, None) is None  # up to date: no child at all


def _migrate_to(db_file: Path, revision: str) -> str:
    from alembic import command

    db_file.parent.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{db_file}"
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            cfg = migrate.alembic_config(url)
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    finally:
        engine.dispose()
    assert _revisions(db_file) == {revision}
    return url


def test_a_database_behind_the_scripts_gets_the_migrations_it_lacks(tmp_path: Path) -> None:
    """An upgrade of Reelroom: the database is at an older revision; the child brings it to the heads."""
    db_file = ServerPaths(tmp_path).database_file
    url = _migrate_to(db_file, "0007_merge")
    assert sqlite_due(db_file) is True
    child = start_if_due(tmp_path, url)
    assert child is not None
    child.wait()
    assert _revisions(db_file) == script_heads()


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
    assert _revisions(db_file) == script_heads()


CHILD_SERVER = """
import asyncio, json, sys
from pathlib import Path
from server.db.migration_child import start_if_due
migration = start_if_due(Path(sys.argv[1]), None)  # as app/server_main.py does, before the server's imports
from server.context import ServerContext, ServerOptions

async def main():
    ctx = ServerContext(ServerOptions(data_dir=Path(sys.argv[1]), port=0, enable_lan=False, migrate_in_child=True,
                                      migration=migration))
    await ctx.initialize()
    assert ctx.startup.ready, ctx.startup.failed
    started = sorted(m for m in sys.modules)
    await ctx.close()
    print(json.dumps({"child": migration is not None, "modules": started}))

asyncio.run(main())
"""


def test_a_start_after_an_upgrade_migrates_without_loading_alembic(tmp_path: Path) -> None:
    """The server of a start with a migration due (its database at an older revision: a first start
    makes its database at the heads without a child, tests/db/test_head_schema.py) is fully
    migrated once it is ready, and never imported Alembic."""
    _migrate_to(ServerPaths(tmp_path).database_file, "0007_merge")
    out = subprocess.run([sys.executable, "-c", CHILD_SERVER, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["child"] is True
    assert not [m for m in result["modules"] if m.split(".")[0] in ("alembic", "mako")]
    assert _revisions(ServerPaths(tmp_path).database_file) == script_heads()


def test_a_server_that_migrates_in_a_child_serves_a_migrated_database(tmp_path: Path) -> None:
    """ServerContext starts the child itself when no entry point did (and on PostgreSQL, which the
    entry points leave to it); the first request sees every table. On SQLite the database is at an
    older revision (a new one is made from the head schema, tests/db/test_head_schema.py)."""
    if not ON_POSTGRES:
        _migrate_to(ServerPaths(tmp_path / "data").database_file, "0007_merge")
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
        assert _revisions(ServerPaths(tmp_path / "data").database_file) == script_heads()
