"""query: full-text index of item names (SQLite FTS5 trigram; see server/library/catalog/search_index.py)

Revision ID: 0004_query_search
Revises: 0003_query
"""
from __future__ import annotations

from alembic import op

from server.library.catalog import search_index

revision = "0004_query_search"
down_revision = "0003_query"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return  # other databases search with LIKE
    try:
        search_index.create(conn)
        search_index.refill(conn)
    except Exception:  # noqa: BLE001  (an SQLite without FTS5: searches fall back to LIKE)
        for statement in search_index.DROP:
            try:
                conn.exec_driver_sql(statement)
            except Exception:  # noqa: BLE001
                pass


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return
    for statement in search_index.DROP:
        conn.exec_driver_sql(statement)
