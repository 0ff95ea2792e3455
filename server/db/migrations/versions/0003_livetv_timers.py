"""livetv: timers, series timers, recordings

Revision ID: 0003_livetv
Revises: 0002
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0003_livetv'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('livetv_series_timers',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('channel_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('program_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('record_any_time', sa.Boolean(), nullable=False),
    sa.Column('record_any_channel', sa.Boolean(), nullable=False),
    sa.Column('record_new_only', sa.Boolean(), nullable=False),
    sa.Column('days_json', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('pre_padding_seconds', sa.Integer(), nullable=False),
    sa.Column('post_padding_seconds', sa.Integer(), nullable=False),
    sa.Column('priority', sa.Integer(), nullable=False),
    sa.Column('keep_up_to', sa.Integer(), nullable=False),
    sa.Column('keep_until', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('date_created', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    )
    op.create_table('livetv_timers',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
    sa.Column('series_timer_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('channel_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('program_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('overview', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('start_date', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('end_date', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('pre_padding_seconds', sa.Integer(), nullable=False),
    sa.Column('post_padding_seconds', sa.Integer(), nullable=False),
    sa.Column('priority', sa.Integer(), nullable=False),
    sa.Column('keep_until', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('recording_path', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('error', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('date_created', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_livetv_timers_series_timer_id', 'livetv_timers', ['series_timer_id'], unique=False)
    op.create_index('ix_livetv_timers_status_start', 'livetv_timers', ['status', 'start_date'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_livetv_timers_status_start', table_name='livetv_timers')
    op.drop_index('ix_livetv_timers_series_timer_id', table_name='livetv_timers')
    op.drop_table('livetv_timers')
    op.drop_table('livetv_series_timers')
