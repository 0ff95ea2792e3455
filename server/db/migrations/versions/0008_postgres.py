"""postgres: 64-bit ticks and sizes, trigram search indexes (PostgreSQL only)

SQLite's INTEGER is already 64-bit, so there this migration changes nothing. PostgreSQL's
INTEGER is 32-bit: a run time over 214 s in ticks, or a file over 2 GiB, did not fit.

The trigram indexes are spelled out here as they were when this revision was written (a frozen
copy of search_index.py's): a migration must not import application code, which changes after
it. tests/db/test_migrations.py checks that head has the indexes search_index makes.

Revision ID: 0008_postgres
Revises: 0007_merge
"""
from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op
from sqlalchemy.engine import Connection

revision = "0008_postgres"
down_revision = "0007_merge"
branch_labels = None
depends_on = None

log = logging.getLogger("reelroom.library")

POSTGRES_INDEXES = {
    "ix_items_name_trgm": "CREATE INDEX IF NOT EXISTS ix_items_name_trgm ON items USING gin (lower(name) gin_trgm_ops)",
    "ix_items_original_title_trgm": "CREATE INDEX IF NOT EXISTS ix_items_original_title_trgm "
                                    "ON items USING gin (lower(original_title) gin_trgm_ops)",
}

BIG_COLUMNS = (("items", "run_time_ticks"), ("items", "size"), ("items", "file_size"),
               ("media_probes", "size"), ("user_data", "playback_position_ticks"))


def _create_trigram_indexes(conn: Connection) -> None:
    """pg_trgm and the trigram indexes; nothing changed when the extension cannot be created
    here (searches then scan item names)."""
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            for statement in POSTGRES_INDEXES.values():
                conn.exec_driver_sql(statement)
    except Exception as exc:  # noqa: BLE001  (no rights, or contrib not installed)
        log.warning("pg_trgm is not available (%s); searches scan item names",
                    str(getattr(exc, "orig", exc)).strip().splitlines()[0])


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    for table, column in BIG_COLUMNS:
        op.alter_column(table, column, type_=sa.BigInteger(), existing_type=sa.Integer())
    _create_trigram_indexes(conn)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    for name in POSTGRES_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
    for table, column in BIG_COLUMNS:
        op.alter_column(table, column, type_=sa.Integer(), existing_type=sa.BigInteger())
