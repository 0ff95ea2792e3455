"""Bring a database to the newest schema with Alembic (run at startup, off the event loop).

Alembic costs a noticeable part of start-up to import, and most starts have nothing to migrate:
``upgrade`` first compares the ``alembic_version`` rows (one query) with the heads of the
migration scripts (read from their ``revision``/``down_revision`` lines) and imports Alembic only
when they differ, or when the scripts cannot be read that simply.

When a migration is due, the entry points run it in a child process
(``server/db/migration_child.py``), which runs :func:`main` here.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

from server.db.migration_child import MIGRATIONS, URL_ENV, script_heads

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["MIGRATIONS", "alembic_config", "database_heads", "main", "pending", "script_heads", "up_to_date", "upgrade"]

log = logging.getLogger("reelroom.db")
VERSION_TABLE = "alembic_version"


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


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



def main() -> int:
    """The child of ``server/db/migration_child.py``: migrate the database named in ``URL_ENV``."""
    url = os.environ.get(URL_ENV)
    if not url:
        print(f"{URL_ENV} is not set", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    # Alembic imports Mako, whose error pages import Pygments to colour template source (42 modules,
    # some 40 ms of a first start); Mako falls back to plain text when it is missing. This process
    # only migrates, and renders no template.
    sys.modules.setdefault("mako.ext.pygmentplugin", None)  # type: ignore[arg-type]
    from server.db.dialect import create_db_engine

    engine = create_db_engine(url, readers=1)
    try:
        upgrade(engine, url)
    except Exception as exc:
        log.exception("Database migration failed")
        print(f"Database migration failed: {exc}", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
