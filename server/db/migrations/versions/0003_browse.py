"""browse: playlists (entries, shares) and collection members

Revision ID: 0003_browse
Revises: 0002
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0003_browse"
down_revision = "0002"
branch_labels = None
depends_on = None

_S = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "playlists",
        sa.Column("id", _S(length=32), nullable=False),
        sa.Column("owner_user_id", _S(), nullable=True),
        sa.Column("is_public", sa.Boolean(), nullable=False),
        sa.Column("media_type", _S(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_playlists_owner_user_id", "playlists", ["owner_user_id"])
    op.create_table(
        "playlist_entries",
        sa.Column("id", _S(length=32), nullable=False),
        sa.Column("playlist_id", _S(), nullable=False),
        sa.Column("item_id", _S(), nullable=False),
        sa.Column("sort_order", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["playlist_id"], ["playlists.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_playlist_entries_playlist_order", "playlist_entries", ["playlist_id", "sort_order"])
    op.create_index("ix_playlist_entries_item_id", "playlist_entries", ["item_id"])
    op.create_table(
        "playlist_users",
        sa.Column("playlist_id", _S(), nullable=False),
        sa.Column("user_id", _S(), nullable=False),
        sa.Column("can_edit", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["playlist_id"], ["playlists.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("playlist_id", "user_id"),
    )
    op.create_table(
        "collection_items",
        sa.Column("collection_id", _S(length=32), nullable=False),
        sa.Column("item_id", _S(length=32), nullable=False),
        sa.Column("sort_order", sa.Integer(), nullable=False),
        sa.Column("date_added", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("collection_id", "item_id"),
    )
    op.create_index("ix_collection_items_collection_order", "collection_items", ["collection_id", "sort_order"])
    op.create_index("ix_collection_items_item_id", "collection_items", ["item_id"])


def downgrade() -> None:
    op.drop_table("collection_items")
    op.drop_table("playlist_users")
    op.drop_table("playlist_entries")
    op.drop_table("playlists")
