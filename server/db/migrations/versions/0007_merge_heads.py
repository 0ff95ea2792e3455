"""merge the domain branches into one head, so that later migrations form one line

Revision ID: 0007_merge
Revises: 0003_browse, 0003_livetv, 0003_scanner, 0003_trickplay, 0006_query_sorts
"""
from __future__ import annotations

revision = '0007_merge'
down_revision = ('0003_browse', '0003_livetv', '0003_scanner', '0003_trickplay', '0006_query_sorts')
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
