"""Write ``server/db/migrations/head_sqlite.sql``: the schema of a new SQLite database at the
migrations' heads, which a first start makes directly (``migration_child.create_at_head``) instead
of running every migration in a child process (~0.6 s of CPU, and over a second of wall time on a
busy machine).

    python -m server.db.head_schema            # after adding a migration: rewrite the file
    python -m server.db.head_schema --check    # exit 1 when the file is not what the migrations make

The file is made from a database that Alembic migrated through every script, exactly as the
migration child does it: every table, index, trigger and view of ``sqlite_master`` in its own
spelling (tables first, then indexes, views and triggers, each in creation order; the tables SQLite
makes itself, ``sqlite_*`` and a virtual table's shadow tables, are left to SQLite), then the
rows the migrations wrote (``alembic_version``) and a full-text index's ``rebuild`` (which writes
its shadow tables as the migration's refill did). Its ``-- heads:`` line names the revisions it is at:
a start uses it only while they are the scripts' heads, so a new migration without a new file
costs a first start its child again, never a wrong schema. ``tests/db/test_head_schema.py``
compares a database made from it with a migrated one (``sqlite_master``, columns, indexes, foreign
keys, rows, pragmas) and fails while the file is stale.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from pathlib import Path

from server.db.migration_child import HEAD_SCHEMA

ORDER = {"table": 0, "index": 1, "view": 2, "trigger": 3}
HEADER = """\
-- The schema of a new SQLite database at the migrations' heads: what running every migration makes.
-- Written by `python -m server.db.head_schema` (do not edit); a first start makes its database from
-- it while the heads below are the scripts' heads (server/db/migration_child.py, create_at_head).
"""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def render(db_file: Path) -> str:
    """The head schema script of the migrated SQLite database ``db_file``."""
    conn = sqlite3.connect(f"{db_file.resolve().as_uri()}?mode=ro", uri=True)
    try:
        heads = sorted(row[0] for row in conn.execute("SELECT version_num FROM alembic_version"))
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
        virtual = [name for kind, name, sql in rows if kind == "table" and sql.upper().startswith("CREATE VIRTUAL")]

        def made_by_sqlite(name: str) -> bool:
            return name.startswith("sqlite_") or any(name.startswith(v + "_") for v in virtual)

        kept = sorted((r for r in rows if not made_by_sqlite(r[1])), key=lambda r: ORDER[r[0]])  # stable: rowid order
        lines = [HEADER.rstrip("\n"), f"-- heads: {' '.join(heads)}", "BEGIN;"]
        lines += [f"{sql};" for _, _, sql in kept]
        for kind, name, _sql in kept:
            if kind != "table" or name in virtual:
                continue
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({_quote(name)})")]
            values = " || ',' || ".join(f"quote({_quote(c)})" for c in columns)
            for (row,) in conn.execute(f"SELECT {values} FROM {_quote(name)} ORDER BY rowid"):
                lines.append(f"INSERT INTO {_quote(name)} VALUES ({row});")
        for _kind, name, sql in kept:  # a full-text index as the migration left it (its 'rebuild')
            if name in virtual and "USING FTS5" in sql.upper():
                lines.append(f"INSERT INTO {_quote(name)}({_quote(name)}) VALUES ('rebuild');")
        lines.append("COMMIT;")
        return "\n".join(lines) + "\n"
    finally:
        conn.close()


def migrated_database(folder: Path) -> Path:
    """A new SQLite database in ``folder`` brought to the heads by Alembic, as the migration child does."""
    from server.db import migrate
    from server.db.dialect import create_db_engine

    db_file = folder / "migrated.db"
    url = f"sqlite:///{db_file}"
    engine = create_db_engine(url, readers=1)
    try:
        migrate.upgrade(engine, url)
    finally:
        engine.dispose()
    return db_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m server.db.head_schema", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when the file is stale")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reelroom-head-schema-") as folder:
        script = render(migrated_database(Path(folder)))
    current = HEAD_SCHEMA.read_text(encoding="utf-8") if HEAD_SCHEMA.exists() else None
    if args.check:
        if current != script:
            print(f"{HEAD_SCHEMA} is not what the migrations make: run python -m server.db.head_schema", file=sys.stderr)
            return 1
        return 0
    if current != script:
        HEAD_SCHEMA.write_text(script, encoding="utf-8")
        print(f"wrote {HEAD_SCHEMA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
