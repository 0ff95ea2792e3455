"""scanner: item scan signature and fingerprint, the media probe cache, scan units

Revision ID: 0003_scanner
Revises: 0002
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0003_scanner"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.add_column(sa.Column("scan_signature", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch.add_column(sa.Column("fingerprint", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch.create_index("ix_items_fingerprint", ["fingerprint"], unique=False)
    op.create_table(
        "media_probes",
        sa.Column("item_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("mtime", sa.Float(), nullable=False),
        sa.Column("data_json", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.PrimaryKeyConstraint("item_id"),
    )
    op.create_table(
        "scan_units",
        sa.Column("library_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("path", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("signature", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.ForeignKeyConstraint(["library_id"], ["libraries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("library_id", "path"),
    )


def downgrade() -> None:
    op.drop_table("scan_units")
    op.drop_table("media_probes")
    with op.batch_alter_table("items") as batch:
        batch.drop_index("ix_items_fingerprint")
        batch.drop_column("fingerprint")
        batch.drop_column("scan_signature")
