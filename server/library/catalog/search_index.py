"""A full-text index of item names for searchTerm: SQLite FTS5 (trigram tokenizer), or
PostgreSQL's pg_trgm.

``item_search`` (INTEGER PRIMARY KEY, item_id, name, original_title) mirrors ``items`` through
triggers, and the external-content FTS5 table ``item_search_fts`` indexes it, so a substring
search is an index lookup instead of a scan of every item row (about 200-500 ms at 100k items
with LIKE, ~1 ms with the index). The mirror table has a stable integer rowid of its own, so a
VACUUM renumbering ``items`` cannot desynchronise the index.

Migration 0004_query_search creates it; ``ensure`` runs at start-up as well and recreates the
triggers and refills the index when they are missing or out of step (a batch migration that
rebuilds ``items`` drops its triggers). Terms shorter than three characters fall back to LIKE.

On PostgreSQL (migration 0008_postgres) GIN trigram indexes on ``lower(name)`` and
``lower(original_title)`` serve the very ``lower(..) LIKE '%term%'`` condition that is SQLite's
fallback, so the matching rules (case-insensitive substring, no tokenising, any term length) are
the same on both databases and no mirror table or trigger is needed. Without the pg_trgm
extension (it needs CREATE rights on the database) the same query runs as a scan.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from server.db.dialect import single_pass

log = logging.getLogger("reelroom.library")

POSTGRES_INDEXES = {
    "ix_items_name_trgm": "CREATE INDEX IF NOT EXISTS ix_items_name_trgm ON items USING gin (lower(name) gin_trgm_ops)",
    "ix_items_original_title_trgm": "CREATE INDEX IF NOT EXISTS ix_items_original_title_trgm "
                                    "ON items USING gin (lower(original_title) gin_trgm_ops)",
}

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
_TRIGGER_NAMES = ("item_search_ai", "item_search_ad", "item_search_au", "items_search_ai", "items_search_ad",
                  "items_search_au")

_READY: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def create(conn: Connection) -> None:
    for statement in (*TABLES, *TRIGGERS):
        conn.exec_driver_sql(statement)


def refill(conn: Connection) -> None:
    conn.exec_driver_sql("DELETE FROM item_search")
    conn.exec_driver_sql("INSERT INTO item_search(item_id, name, original_title) "
                         "SELECT id, name, original_title FROM items")
    conn.exec_driver_sql("INSERT INTO item_search_fts(item_search_fts) VALUES ('rebuild')")


def create_postgres(conn: Connection) -> bool:
    """pg_trgm and the trigram indexes (PostgreSQL); False, with nothing changed, when the
    extension cannot be created here."""
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            for statement in POSTGRES_INDEXES.values():
                conn.exec_driver_sql(statement)
    except Exception as exc:  # noqa: BLE001  (no rights, or contrib not installed)
        log.warning("pg_trgm is not available (%s); searches scan item names",
                    str(getattr(exc, "orig", exc)).strip().splitlines()[0])
        return False
    return True


def _ensure_postgres(engine: Engine) -> bool:
    with engine.begin() as conn:
        present = {r[0] for r in conn.exec_driver_sql(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'items' AND indexname = ANY(%(names)s)",
            {"names": list(POSTGRES_INDEXES)}).all()}
        if present != set(POSTGRES_INDEXES):
            return create_postgres(conn)
    return True


def ensure(engine: Engine) -> bool:
    """Make sure the index and its triggers exist and match ``items``; returns whether searches
    may use the FTS5 table (SQLite). On PostgreSQL it makes sure of the trigram indexes, and
    searches always take the LIKE path those indexes serve."""
    if engine.dialect.name == "postgresql":
        _READY[engine] = False
        try:
            _ensure_postgres(engine)
        except Exception:
            log.warning("Could not check the trigram indexes", exc_info=True)
        return False
    if engine.dialect.name != "sqlite":
        _READY[engine] = False
        return False
    try:
        with engine.begin() as conn:
            present = {r[0] for r in conn.exec_driver_sql(
                "SELECT name FROM sqlite_master WHERE type = 'trigger'").all()}
            missing = [t for t in _TRIGGER_NAMES if t not in present]
            create(conn)
            with single_pass(conn):  # (each count reads a whole index or table once)
                items_count = conn.exec_driver_sql("SELECT count(*) FROM items").scalar()
                indexed = conn.exec_driver_sql("SELECT count(*) FROM item_search").scalar()
            if missing or items_count != indexed:
                log.info("Rebuilding the item search index (%s items)", items_count)
                refill(conn)
    except Exception:  # e.g. an SQLite without FTS5 or the trigram tokenizer
        log.warning("Full-text search is not available; searches scan item names", exc_info=True)
        _READY[engine] = False
        return False
    _READY[engine] = True
    return True


def ready(engine: Any) -> bool:
    return _READY.get(engine, False)


# The index is asked for at most this many characters of a term (a phrase of 30 trigrams), so
# a search costs the same whatever the length of its term; the caller checks the whole term
# against the few rows that match the phrase (see ``phrase_is_partial``).
MAX_PHRASE_CHARS = 32


def match_expression(term: str) -> str | None:
    """An FTS5 query matching (the start of) ``term`` as a substring, or None when the index
    cannot answer it (the trigram tokenizer needs three characters)."""
    term = term.strip()
    if len(term) < 3:
        return None
    return '"' + term[:MAX_PHRASE_CHARS].replace('"', '""') + '"'


def phrase_is_partial(term: str) -> bool:
    """Whether :func:`match_expression` used only the start of ``term``."""
    return len(term.strip()) > MAX_PHRASE_CHARS


def matching_ids_sql() -> Any:
    """SQL for the ids of items whose name or original title contains :term."""
    return text("SELECT s.item_id FROM item_search s WHERE s.rowid IN "
                "(SELECT rowid FROM item_search_fts WHERE item_search_fts MATCH :fts_term)")
