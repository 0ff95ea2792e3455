"""lists: episodes of a series in play order (Next Up's per-series lookup), playlist entries
in order with their item ids (a playlist's pages without reading the entry rows) and people in
the /Persons order (``lower(name)``: a page walks the index and stops, instead of sorting every
person)

``ix_items_episode_order`` is an expression index: the very ``coalesce(parent_index_number, 1)``
/ ``coalesce(index_number, 0)`` play order of ``server/library/browse/tv.py`` after the series,
type and owner, for rows of a series only. Next Up seeks to the episode after the last played
one and walks forward in index order to the first unplayed one, instead of reading and sorting
every episode row of each watched series. SQLModel cannot declare it (nor
``ix_people_lower_name``), so it is created here
(same statement on SQLite and PostgreSQL) and left out of the schema comparison of
tests/db/test_migrations.py.

Revision ID: 0011_lists_fast
Revises: 0010_kept_counts
"""
from __future__ import annotations

from alembic import op

revision = '0011_lists_fast'
down_revision = '0010_kept_counts'
branch_labels = None
depends_on = None

EPISODE_ORDER_INDEX = "ix_items_episode_order"
PEOPLE_ORDER_INDEX = "ix_people_lower_name"


def upgrade() -> None:
    op.execute(f"CREATE INDEX IF NOT EXISTS {EPISODE_ORDER_INDEX} ON items (series_id, type, owner_id, "
               "coalesce(parent_index_number, 1), coalesce(index_number, 0), sort_name, id, is_virtual) "
               "WHERE series_id IS NOT NULL")
    op.execute(f"CREATE INDEX IF NOT EXISTS {PEOPLE_ORDER_INDEX} ON people (lower(name))")
    op.drop_index('ix_playlist_entries_playlist_order', table_name='playlist_entries')
    op.create_index('ix_playlist_entries_listing', 'playlist_entries', ['playlist_id', 'sort_order', 'id', 'item_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_playlist_entries_listing', table_name='playlist_entries')
    op.create_index('ix_playlist_entries_playlist_order', 'playlist_entries', ['playlist_id', 'sort_order'],
                    unique=False)
    op.execute(f"DROP INDEX IF EXISTS {PEOPLE_ORDER_INDEX}")
    op.execute(f"DROP INDEX IF EXISTS {EPISODE_ORDER_INDEX}")
