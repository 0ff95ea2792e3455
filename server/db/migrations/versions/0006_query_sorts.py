"""query: covering indexes for the sort orders clients offer within a library

Revision ID: 0006_query_sorts
Revises: 0005_query_covering
"""
from __future__ import annotations

from alembic import op

revision = "0006_query_sorts"
down_revision = "0005_query_covering"
branch_labels = None
depends_on = None

SORT_COLUMNS = ("date_created", "premiere_date", "production_year", "community_rating", "run_time_ticks")


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        for column in SORT_COLUMNS:
            batch.create_index(f"ix_items_library_sort_{column}", ["library_id", "type", "owner_id", column, "id"],
                               unique=False)


def downgrade() -> None:
    with op.batch_alter_table("items") as batch:
        for column in SORT_COLUMNS:
            batch.drop_index(f"ix_items_library_sort_{column}")
