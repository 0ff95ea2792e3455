"""What the migration-child, head-schema and start-up import tests share: a SQLite database left
at an older revision (an upgrade of Reelroom), and a script that starts a server the way
app/server_main.py does and prints whether a migration child ran and which modules it loaded."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def revisions(db_file: Path) -> set[str]:
    with sqlite3.connect(db_file) as conn:
        return {row[0] for row in conn.execute("SELECT version_num FROM alembic_version")}


def migrate_to(db_file: Path, revision: str) -> str:
    """Run the migrations up to ``revision`` on a new SQLite file; its URL."""
    from alembic import command
    from sqlalchemy import create_engine

    from server.db import migrate

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
    assert revisions(db_file) == {revision}
    return url


#: ``python -c START_SERVER <data dir>``: prints {"child": a migration child ran, "modules": loaded}
START_SERVER = """
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
