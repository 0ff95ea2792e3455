"""artwork: generated images of by-name items (genres, music genres, artists without a row)

Revision ID: 0009_artwork
Revises: 0008_postgres
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0009_artwork'
down_revision = '0008_postgres'
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
