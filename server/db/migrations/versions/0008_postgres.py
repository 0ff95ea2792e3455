"""postgres: 64-bit ticks and sizes, trigram search indexes (PostgreSQL only)

SQLite's INTEGER is already 64-bit, so there this migration changes nothing. PostgreSQL's
INTEGER is 32-bit: a run time over 214 s in ticks, or a file over 2 GiB, did not fit.

Revision ID: 0008_postgres
Revises: 0007_merge
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from server.library.catalog import search_index

revision = "0008_postgres"
down_revision = "0007_merge"
branch_labels = None
depends_on = None

BIG_COLUMNS = (("items", "run_time_ticks"), ("items", "size"), ("items", "file_size"),
               ("media_probes", "size"), ("user_data", "playback_position_ticks"))


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    for table, column in BIG_COLUMNS:
        op.alter_column(table, column, type_=sa.BigInteger(), existing_type=sa.Integer())
    search_index.create_postgres(conn)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    for name in search_index.POSTGRES_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
    for table, column in BIG_COLUMNS:
        op.alter_column(table, column, type_=sa.Integer(), existing_type=sa.BigInteger())
