"""Bring a database to the newest schema with Alembic (run at startup, off the event loop)."""

from __future__ import annotations

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

log = logging.getLogger("reelroom.db")
MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def pending(engine: Engine, url: str) -> bool:
    script = ScriptDirectory.from_config(alembic_config(url))
    with engine.connect() as conn:
        current = MigrationContext.configure(conn).get_current_heads()
    return set(current) != set(script.get_heads())


def upgrade(engine: Engine, url: str) -> None:
    cfg = alembic_config(url)
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "heads")  # domains may add parallel branches off the same base
    log.info("Database schema is up to date")
