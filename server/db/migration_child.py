"""Database migrations in a child process, started as early as the entry points can.

A first start (or the first start after an upgrade) has to migrate the database before it answers
anything. Run in the server, that imported Alembic, Mako and the migration scripts, which kept
some 11-13 MiB resident until the next start, and ran after the server's own imports, one after
the other on one core. Run in a child, Alembic never loads into the server, and the entry points
(``app/server_main.py``, the tray's ``app/server_host.py``) start that child before they import the
server: the migration runs on the other core while the server imports and builds its app.
``ServerContext.initialize`` then waits for it (``wait``) before it serves.

This module is imported before everything else, so it uses the standard library only (plus
``server/media/spawn.py``, which starts every child so that it dies with the server): whether a
migration is due is read with the ``sqlite3`` module and the scripts' ``revision`` /
``down_revision`` lines (``script_heads``); ``server/db/migrate.py`` checks the same with
SQLAlchemy, for PostgreSQL and for anything this could not tell. The child is ``python -m
server.db.migrate`` (or the frozen executable with ``MIGRATE_FLAG``); the database URL travels in
its environment (``URL_ENV``), not on its command line, where any local user could read a password.

A brand-new SQLite database needs no child at all: ``create_at_head`` makes it from
``migrations/head_sqlite.sql``, the schema every migration together makes (written by
``server/db/head_schema.py``, stamped with the heads it is at; ``tests/db/test_head_schema.py``
checks it equals the migrations' result table by table, index by index, trigger by trigger). It
is used only while its heads are the scripts' heads; otherwise a new database migrates in a child.
"""

from __future__ import annotations

import ast
import logging
import os
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger("reelroom.db")

MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATE_FLAG = "--reelroom-migrate"  # the frozen executable's way to run server.db.migrate.main
URL_ENV = "REELROOM_MIGRATE_URL"
HEAD_SCHEMA = MIGRATIONS / "head_sqlite.sql"  # a new SQLite database at the heads (server/db/head_schema.py)
HEADS_LINE = re.compile(r"^-- heads: (.+)$", re.M)
_ASSIGNMENT = re.compile(r"^(revision|down_revision)\s*(?::[^=\n]*)?=\s*(.+?)\s*(?:#.*)?$", re.M)


class MigrationFailed(RuntimeError):
    pass


#: script_heads' answers by folder, with the scripts' names, sizes and times they were read at
_HEADS: dict[Path, tuple[tuple[tuple[str, int, int], ...], set[str] | None]] = {}


def script_heads(folder: Path = MIGRATIONS / "versions") -> set[str] | None:
    """The head revisions of the migration scripts, read without Alembic; None when a script does
    not state its ``revision`` and ``down_revision`` as plain literals (Alembic then decides).
    A start asks 3-4 times (the entry point, ``create_at_head``, ``up_to_date``): the scripts are
    read again only when one of them was added, removed or changed (names, sizes, times)."""
    try:
        scripts = sorted(folder.glob("*.py"))
        stamp = tuple((s.name, (st := s.stat()).st_size, st.st_mtime_ns) for s in scripts)
    except OSError:
        return None
    known = _HEADS.get(folder)
    if known is not None and known[0] == stamp:
        return set(known[1]) if known[1] is not None else None
    heads = _read_heads(scripts)
    _HEADS[folder] = (stamp, heads)
    return set(heads) if heads is not None else None


def _read_heads(scripts: list[Path]) -> set[str] | None:
    revisions: set[str] = set()
    parents: set[str] = set()
    try:
        for script in scripts:
            if script.name.startswith("__"):
                continue
            found: dict[str, object] = {}
            for name, value in _ASSIGNMENT.findall(script.read_text(encoding="utf-8")):
                if name in found:
                    return None
                found[name] = ast.literal_eval(value)
            revision, down = found.get("revision"), found.get("down_revision", ...)
            if not isinstance(revision, str) or down is ...:
                return None
            downs = (down,) if isinstance(down, str) else (() if down is None else down)
            if not isinstance(downs, tuple) or not all(isinstance(d, str) for d in downs):
                return None
            revisions.add(revision)
            parents.update(downs)
    except (OSError, ValueError, SyntaxError):
        return None
    heads = revisions - parents
    return heads or None


def sqlite_due(path: Path) -> bool | None:
    """Whether the SQLite database at ``path`` needs a migration: True for a missing file or one
    behind the scripts, False when it is at their heads, None when that cannot be told here."""
    heads = script_heads()
    if heads is None:
        return None
    if not path.exists():
        return True
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'").fetchone() is None:
                return True
            return {row[0] for row in conn.execute("SELECT version_num FROM alembic_version")} != heads
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def head_schema(path: Path | None = None) -> tuple[set[str], str] | None:
    """The head schema's heads and its SQL script; None when it is missing or names no heads."""
    try:
        script = (path or HEAD_SCHEMA).read_text(encoding="utf-8")
    except OSError:
        return None
    found = HEADS_LINE.search(script)
    return (set(found.group(1).split()), script) if found else None


def create_at_head(db_file: Path) -> bool:
    """Make the SQLite database ``db_file``, which does not exist yet, at the scripts' heads from
    the head schema: a few milliseconds, no Alembic and no child (a first start). The file is made
    aside and linked into place, so no other process ever sees half of it and none made meanwhile
    is replaced. False (and nothing made) when the head schema is missing or not at the scripts'
    heads, the file exists, or SQLite fails: the caller then migrates as before."""
    if db_file.exists():  # (first: a restart reads no script)
        return False
    heads, snapshot = script_heads(), head_schema()
    if heads is None or snapshot is None or snapshot[0] != heads or db_file.exists():
        return False
    db_file.parent.mkdir(parents=True, exist_ok=True)
    made = db_file.with_name(f".{db_file.name}.{os.getpid()}.new")
    leftovers = (made, made.with_name(made.name + "-wal"), made.with_name(made.name + "-shm"))
    try:
        _unlink(leftovers)  # a crashed attempt's, by a process that had the same id
        conn = sqlite3.connect(made, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # as the server's engine leaves a migrated file
            conn.executescript(snapshot[1])  # BEGIN ... COMMIT: all of it or nothing
        finally:
            conn.close()
        os.link(made, db_file)  # fails if the database appeared meanwhile: that one stays
        return True
    except (OSError, sqlite3.Error) as exc:
        log.info("Could not make the database from the head schema (%s); migrating instead", exc)
        return False
    finally:
        _unlink(leftovers)


def _unlink(paths: tuple[Path, ...]) -> None:
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass


def child_command() -> list[str]:
    """How to run ``server.db.migrate.main`` in a child: this interpreter with that module, or the
    frozen executable with its flag (the installer's entry points hand it over)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, MIGRATE_FLAG]
    return [sys.executable, "-m", "server.db.migrate"]


class MigrationChild:
    """A migration running in a child process. ``wait`` (blocking; any thread) returns once it
    succeeded, else raises MigrationFailed with its last error lines, once: a later start on the
    same options (a restart) checks the database again instead of repeating an old failure."""

    def __init__(self, url: str) -> None:
        from server.media import spawn

        env = {**os.environ, URL_ENV: url}
        if not getattr(sys, "frozen", False):
            # the child imports this very tree, whatever the current folder and sys.path
            root = str(Path(__file__).resolve().parents[2])
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        self._spawn = spawn
        self.proc: subprocess.Popen[Any] = spawn.popen(
            child_command(), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, errors="replace")
        self._lock = threading.Lock()
        self._error: str | None = None
        self._done = False

    def wait(self) -> None:
        with self._lock:
            if not self._done:
                try:
                    _, err = self.proc.communicate()
                except BaseException:
                    self._spawn.kill(self.proc)
                    self.proc.communicate()
                    raise
                if self.proc.returncode != 0:
                    lines = [line for line in (err or "").strip().splitlines() if line.strip()]
                    self._error = "; ".join(lines[-3:]) or f"the migration process ended with status {self.proc.returncode}"
                self._done = True
            error, self._error = self._error, None
        if error is not None:
            raise MigrationFailed(error)

    def stop(self) -> None:
        """End the child if it still runs (the server stopped before it finished)."""
        if self.proc.poll() is None:
            self._spawn.kill(self.proc)


def start_if_due(data_dir: Path, database_url: str | None) -> MigrationChild | None:
    """Start the migration of a SQLite data folder's database now when one is due (an entry point,
    before it imports the server); None when none is, or when that cannot be told without
    SQLAlchemy (PostgreSQL: ``ServerContext`` checks and starts the child itself). A database that
    does not exist yet is made at the heads here (``create_at_head``), without a child."""
    if database_url and not database_url.startswith("sqlite"):
        return None
    if database_url:
        path = database_url.split(":///", 1)[1] if ":///" in database_url else ""
        if not path or path.startswith(":memory:") or "?" in path:
            return None
        db_file = Path(path)
    else:
        from server.paths import ServerPaths

        db_file = ServerPaths(data_dir).database_file
    if create_at_head(db_file):
        log.info("Created the database at the newest schema")
        return None
    if sqlite_due(db_file) is not True:
        return None
    db_file.parent.mkdir(parents=True, exist_ok=True)
    log.info("Migrating the database in a child process")
    return MigrationChild(database_url or f"sqlite:///{db_file}")
