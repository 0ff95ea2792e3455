"""Bring a database to the newest schema with Alembic (run at startup, off the event loop).

Alembic costs a noticeable part of start-up to import, and most starts have nothing to migrate:
``upgrade`` first compares the ``alembic_version`` rows (one query) with the heads of the
migration scripts (read from their ``revision``/``down_revision`` lines) and imports Alembic only
when they differ, or when the scripts cannot be read that simply.
"""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger("reelroom.db")
MIGRATIONS = Path(__file__).parent / "migrations"
VERSION_TABLE = "alembic_version"
_ASSIGNMENT = re.compile(r"^(revision|down_revision)\s*(?::[^=\n]*)?=\s*(.+?)\s*(?:#.*)?$", re.M)


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def script_heads(folder: Path = MIGRATIONS / "versions") -> set[str] | None:
    """The head revisions of the migration scripts, read without Alembic; None when a script does
    not state its ``revision`` and ``down_revision`` as plain literals (Alembic then decides)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    try:
        scripts = sorted(folder.glob("*.py"))
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


def database_heads(engine: Engine) -> set[str] | None:
    """The revisions the database is at (one query); None without a version table."""
    with engine.connect() as conn:
        if not inspect(conn).has_table(VERSION_TABLE):
            return None
        return {row[0] for row in conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}"))}


def up_to_date(engine: Engine) -> bool:
    """True when the database is known to be at the scripts' heads, without importing Alembic."""
    heads = script_heads()
    return heads is not None and database_heads(engine) == heads


def pending(engine: Engine, url: str) -> bool:
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config(url))
    with engine.connect() as conn:
        current = MigrationContext.configure(conn).get_current_heads()
    return set(current) != set(script.get_heads())


def upgrade(engine: Engine, url: str) -> None:
    if up_to_date(engine):
        log.info("Database schema is up to date")
        return
    from alembic import command

    cfg = alembic_config(url)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "heads")  # domains may add parallel branches off the same base
    log.info("Database schema is up to date")
