"""artwork: generated images of by-name items (genres, music genres, artists without a row)

Revision ID: 0008_artwork
Revises: 0007_merge
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0008_artwork'
down_revision = '0007_merge'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('byname_artwork',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('images_json', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('key', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    )


def downgrade() -> None:
    op.drop_table('byname_artwork')
