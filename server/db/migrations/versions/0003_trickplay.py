"""trickplay: tile sheet info per item and width

Revision ID: 0003_trickplay
Revises: 0002
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0003_trickplay'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('trickplay_info',
    sa.Column('item_id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('width', sa.Integer(), nullable=False),
    sa.Column('height', sa.Integer(), nullable=False),
    sa.Column('tile_width', sa.Integer(), nullable=False),
    sa.Column('tile_height', sa.Integer(), nullable=False),
    sa.Column('thumbnail_count', sa.Integer(), nullable=False),
    sa.Column('interval', sa.Integer(), nullable=False),
    sa.Column('bandwidth', sa.Integer(), nullable=False),
    sa.Column('signature', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.PrimaryKeyConstraint('item_id', 'width'),
    )


def downgrade() -> None:
    op.drop_table('trickplay_info')
