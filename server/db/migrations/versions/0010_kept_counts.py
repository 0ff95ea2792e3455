"""kept counts: items per value / year / rating, library and type, kept by triggers
(server/library/catalog/facets.py) for the by-name and filter lists

Revision ID: 0010_kept_counts
Revises: 0009_artwork
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0010_kept_counts'
down_revision = '0009_artwork'
branch_labels = None
depends_on = None


def upgrade() -> None:
    from server.library.catalog import facets

    op.create_table('item_value_counts',
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('clean_value', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('value', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('library_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('item_type', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('item_count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('kind', 'clean_value', 'value', 'library_id', 'item_type'),
    )
    op.create_index('ix_item_value_counts_type', 'item_value_counts', ['item_type', 'kind'], unique=False)
    op.create_table('item_field_counts',
    sa.Column('facet', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('value', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('library_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('item_type', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('item_count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('facet', 'value', 'library_id', 'item_type'),
    )
    op.create_index('ix_item_field_counts_type', 'item_field_counts', ['item_type', 'facet'], unique=False)
    conn = op.get_bind()
    facets.create_triggers(conn)
    facets.refill(conn)


def downgrade() -> None:
    from server.library.catalog import facets

    facets.drop_triggers(op.get_bind())
    op.drop_index('ix_item_field_counts_type', table_name='item_field_counts')
    op.drop_table('item_field_counts')
    op.drop_index('ix_item_value_counts_type', table_name='item_value_counts')
    op.drop_table('item_value_counts')
