"""query: full-text index of item names (SQLite FTS5 trigram; see server/library/catalog/search_index.py)

The tables, triggers and refill are spelled out here as they were when this revision was
written (a frozen copy of search_index.py's): a migration must not import application code,
which changes after it. ``search_index.ensure`` recreates missing triggers at start-up;
tests/db/test_migrations.py checks that head's search triggers are the ones search_index makes.

Revision ID: 0004_query_search
Revises: 0003_query
"""
from __future__ import annotations

from alembic import op
from sqlalchemy.engine import Connection

revision = "0004_query_search"
down_revision = "0003_query"
branch_labels = None
depends_on = None

TABLES = (
    "CREATE TABLE IF NOT EXISTS item_search (rowid INTEGER PRIMARY KEY, item_id TEXT NOT NULL UNIQUE, "
    "name TEXT, original_title TEXT)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS item_search_fts USING fts5(name, original_title, content='item_search', "
    "content_rowid='rowid', tokenize='trigram')",
)
TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS item_search_ai AFTER INSERT ON item_search BEGIN "
    "INSERT INTO item_search_fts(rowid, name, original_title) VALUES (new.rowid, new.name, new.original_title); END",
    "CREATE TRIGGER IF NOT EXISTS item_search_ad AFTER DELETE ON item_search BEGIN "
    "INSERT INTO item_search_fts(item_search_fts, rowid, name, original_title) "
    "VALUES ('delete', old.rowid, old.name, old.original_title); END",
    "CREATE TRIGGER IF NOT EXISTS item_search_au AFTER UPDATE ON item_search BEGIN "
    "INSERT INTO item_search_fts(item_search_fts, rowid, name, original_title) "
    "VALUES ('delete', old.rowid, old.name, old.original_title); "
    "INSERT INTO item_search_fts(rowid, name, original_title) VALUES (new.rowid, new.name, new.original_title); END",
    "CREATE TRIGGER IF NOT EXISTS items_search_ai AFTER INSERT ON items BEGIN "
    "INSERT OR REPLACE INTO item_search(item_id, name, original_title) "
    "VALUES (new.id, new.name, new.original_title); END",
    "CREATE TRIGGER IF NOT EXISTS items_search_ad AFTER DELETE ON items BEGIN "
    "DELETE FROM item_search WHERE item_id = old.id; END",
    "CREATE TRIGGER IF NOT EXISTS items_search_au AFTER UPDATE OF id, name, original_title ON items "
    "WHEN new.name IS NOT old.name OR new.original_title IS NOT old.original_title OR new.id IS NOT old.id BEGIN "
    "DELETE FROM item_search WHERE item_id = old.id; "
    "INSERT OR REPLACE INTO item_search(item_id, name, original_title) "
    "VALUES (new.id, new.name, new.original_title); END",
)
DROP = (
    "DROP TRIGGER IF EXISTS items_search_au", "DROP TRIGGER IF EXISTS items_search_ad",
    "DROP TRIGGER IF EXISTS items_search_ai", "DROP TRIGGER IF EXISTS item_search_au",
    "DROP TRIGGER IF EXISTS item_search_ad", "DROP TRIGGER IF EXISTS item_search_ai",
    "DROP TABLE IF EXISTS item_search_fts", "DROP TABLE IF EXISTS item_search",
)


def _create(conn: Connection) -> None:
    for statement in (*TABLES, *TRIGGERS):
        conn.exec_driver_sql(statement)


def _refill(conn: Connection) -> None:
    conn.exec_driver_sql("DELETE FROM item_search")
    conn.exec_driver_sql("INSERT INTO item_search(item_id, name, original_title) "
                         "SELECT id, name, original_title FROM items")
    conn.exec_driver_sql("INSERT INTO item_search_fts(item_search_fts) VALUES ('rebuild')")


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return  # other databases search with LIKE
    try:
        _create(conn)
        _refill(conn)
    except Exception:  # noqa: BLE001  (an SQLite without FTS5: searches fall back to LIKE)
        for statement in DROP:
            try:
                conn.exec_driver_sql(statement)
            except Exception:  # noqa: BLE001
                pass


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        return
    for statement in DROP:
        conn.exec_driver_sql(statement)
