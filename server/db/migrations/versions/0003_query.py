"""query: indexes for the item query engine, series status

Revision ID: 0003_query
Revises: 0002
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0003_query"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.add_column(sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch.create_index("ix_items_library_type_owner_sort", ["library_id", "type", "owner_id", "sort_name", "id"],
                           unique=False)
        batch.create_index("ix_items_series_sort_name", ["series_id", "sort_name"], unique=False)
        batch.create_index("ix_items_album_sort_name", ["album_id", "sort_name"], unique=False)
    with op.batch_alter_table("item_people") as batch:
        batch.create_index("ix_item_people_person", ["person_id", "kind"], unique=False)
    with op.batch_alter_table("user_data") as batch:
        batch.create_index("ix_user_data_user_favorite", ["user_id", "is_favorite"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("user_data") as batch:
        batch.drop_index("ix_user_data_user_favorite")
    with op.batch_alter_table("item_people") as batch:
        batch.drop_index("ix_item_people_person")
    with op.batch_alter_table("items") as batch:
        batch.drop_index("ix_items_album_sort_name")
        batch.drop_index("ix_items_series_sort_name")
        batch.drop_index("ix_items_library_type_owner_sort")
        batch.drop_column("status")
