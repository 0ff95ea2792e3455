"""query: narrow covering indexes for scope checks, facets and value listings

Revision ID: 0005_query_covering
Revises: 0004_query_search
"""
from __future__ import annotations

from alembic import op

revision = "0005_query_covering"
down_revision = "0004_query_search"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.create_index("ix_items_scope", ["id", "library_id", "type", "owner_id", "is_folder", "media_type",
                                              "production_year", "official_rating"], unique=False)
        batch.create_index("ix_items_library_facets", ["library_id", "type", "owner_id", "official_rating",
                                                       "production_year"], unique=False)
    with op.batch_alter_table("item_values") as batch:
        batch.create_index("ix_item_values_listing", ["kind", "clean_value", "item_id", "value"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("item_values") as batch:
        batch.drop_index("ix_item_values_listing")
    with op.batch_alter_table("items") as batch:
        batch.drop_index("ix_items_library_facets")
        batch.drop_index("ix_items_scope")
