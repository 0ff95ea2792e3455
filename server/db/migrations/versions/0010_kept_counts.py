"""kept counts: items per value / year / rating, library and type, kept by triggers
(server/library/catalog/facets.py) for the by-name and filter lists

The triggers and the refill are spelled out here as they were when this revision was written
(a copy of facets.py's, frozen): a migration must not import application code, which changes
after it. A later change to the triggers comes with a migration of its own (facets.ensure only
recreates missing ones); tests/db/test_migrations.py checks that head's triggers are facets'.

Revision ID: 0010_kept_counts
Revises: 0009_artwork
"""
from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.engine import Connection

revision = '0010_kept_counts'
down_revision = '0009_artwork'
branch_labels = None
depends_on = None


def upgrade() -> None:
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
    create_triggers(conn)
    refill(conn)


def downgrade() -> None:
    drop_triggers(op.get_bind())
    op.drop_index('ix_item_field_counts_type', table_name='item_field_counts')
    op.drop_table('item_field_counts')
    op.drop_index('ix_item_value_counts_type', table_name='item_value_counts')
    op.drop_table('item_value_counts')


# ---------------------------------------------------------------- the triggers, as of this revision

ARTIST_KINDS = "('Artist', 'AlbumArtist')"
_VC = "item_value_counts (kind, clean_value, value, library_id, item_type, item_count)"
_VC_UPSERT = ("ON CONFLICT (kind, clean_value, value, library_id, item_type) "
              "DO UPDATE SET item_count = item_value_counts.item_count + excluded.item_count")
_FC = "item_field_counts (facet, value, library_id, item_type, item_count)"
_FC_UPSERT = ("ON CONFLICT (facet, value, library_id, item_type) "
              "DO UPDATE SET item_count = item_field_counts.item_count + excluded.item_count")


def _value_row(r: str, sign: int, extra: str = "") -> str:
    """One item_values row ``r`` (NEW or OLD) counted (+1) or uncounted (-1) for its item."""
    return (f"INSERT INTO {_VC} SELECT {r}.kind, {r}.clean_value, {r}.value, coalesce(i.library_id, ''), i.type, "
            f"{sign} FROM items i WHERE i.id = {r}.item_id AND i.owner_id IS NULL{extra} {_VC_UPSERT}")


def _any_artist_row(r: str, sign: int, when: str) -> str:
    return (f"INSERT INTO {_VC} SELECT 'AnyArtist', {r}.clean_value, '', coalesce(i.library_id, ''), i.type, {sign} "
            f"FROM items i WHERE i.id = {r}.item_id AND i.owner_id IS NULL AND {r}.kind IN {ARTIST_KINDS} "
            f"AND (SELECT count(*) FROM item_values o WHERE o.item_id = {r}.item_id AND o.clean_value = "
            f"{r}.clean_value AND o.kind IN {ARTIST_KINDS}) {when} {_VC_UPSERT}")


def _item_values(r: str, sign: int, cond: str) -> list[str]:
    """Every value of item ``r`` (NEW or OLD), with its library and type."""
    return [
        f"INSERT INTO {_VC} SELECT v.kind, v.clean_value, v.value, coalesce({r}.library_id, ''), {r}.type, {sign} "
        f"FROM item_values v WHERE v.item_id = {r}.id AND {r}.owner_id IS NULL AND {cond} {_VC_UPSERT}",
        f"INSERT INTO {_VC} SELECT 'AnyArtist', v.clean_value, '', coalesce({r}.library_id, ''), {r}.type, {sign} "
        f"FROM item_values v WHERE v.item_id = {r}.id AND {r}.owner_id IS NULL AND v.kind IN {ARTIST_KINDS} "
        f"AND {cond} GROUP BY v.clean_value {_VC_UPSERT}",
    ]


def _item_fields(r: str, sign: int, cond: str) -> list[str]:
    return [
        f"INSERT INTO {_FC} SELECT 'Year', CAST({r}.production_year AS TEXT), coalesce({r}.library_id, ''), "
        f"{r}.type, {sign} WHERE {r}.production_year IS NOT NULL AND {r}.owner_id IS NULL AND {cond} {_FC_UPSERT}",
        f"INSERT INTO {_FC} SELECT 'OfficialRating', {r}.official_rating, coalesce({r}.library_id, ''), "
        f"{r}.type, {sign} WHERE {r}.official_rating IS NOT NULL AND {r}.official_rating <> '' "
        f"AND {r}.owner_id IS NULL AND {cond} {_FC_UPSERT}",
    ]


def _triggers(distinct: str) -> list[tuple[str, str, str, str, list[str]]]:
    """(name, timing, event, table, statements); ``distinct`` is the dialect's IS DISTINCT FROM."""
    def changed(*cols: str) -> str:
        return "(" + " OR ".join(f"OLD.{c} {distinct} NEW.{c}" for c in cols) + ")"

    scope_changed = changed("library_id", "type", "owner_id")
    fields_changed = changed("library_id", "type", "owner_id", "production_year", "official_rating")
    same_artist_pair = (f"(OLD.item_id = NEW.item_id AND OLD.clean_value = NEW.clean_value "
                        f"AND OLD.kind IN {ARTIST_KINDS} AND NEW.kind IN {ARTIST_KINDS})")
    # BEFORE triggers on item_values: a row-level AFTER trigger of PostgreSQL runs at the end
    # of the statement and would see every row of a multi-row INSERT/DELETE at once, and the
    # AnyArtist rule ("the item's first/last row of this name") needs the state row by row.
    return [
        ("item_value_counts_bi", "BEFORE", "INSERT", "item_values",
         [_value_row("NEW", 1), _any_artist_row("NEW", 1, "= 0")]),
        ("item_value_counts_bd", "BEFORE", "DELETE", "item_values",
         [_value_row("OLD", -1), _any_artist_row("OLD", -1, "= 1")]),
        ("item_value_counts_bu", "BEFORE", "UPDATE", "item_values",
         [_value_row("OLD", -1), _any_artist_row("OLD", -1, f"= 1 AND NOT {same_artist_pair}"),
          _value_row("NEW", 1), _any_artist_row("NEW", 1, f"= 0 AND NOT {same_artist_pair}")]),
        ("items_counts_ai", "AFTER", "INSERT", "items",
         [*_item_values("NEW", 1, "1 = 1"), *_item_fields("NEW", 1, "1 = 1")]),
        ("items_counts_bd", "BEFORE", "DELETE", "items",
         [*_item_values("OLD", -1, "1 = 1"), *_item_fields("OLD", -1, "1 = 1")]),
        ("items_counts_au", "AFTER", "UPDATE OF library_id, type, owner_id, production_year, official_rating", "items",
         [*_item_values("OLD", -1, scope_changed), *_item_values("NEW", 1, scope_changed),
          *_item_fields("OLD", -1, fields_changed), *_item_fields("NEW", 1, fields_changed)]),
    ]


def create_triggers(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        for name, timing, event, table, statements in _triggers("IS DISTINCT FROM"):
            result = ("OLD" if "DELETE" in event else "NEW") if timing == "BEFORE" else "NULL"
            body = ";\n  ".join(statements)
            conn.exec_driver_sql(f"CREATE OR REPLACE FUNCTION {name}_fn() RETURNS trigger LANGUAGE plpgsql AS $$\n"
                                 f"BEGIN\n  {body};\n  RETURN {result};\nEND $$")
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name} ON {table}")
            conn.exec_driver_sql(f"CREATE TRIGGER {name} {timing} {event} ON {table} FOR EACH ROW "
                                 f"EXECUTE FUNCTION {name}_fn()")
        return
    for name, timing, event, table, statements in _triggers("IS NOT"):
        conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
        conn.exec_driver_sql(f"CREATE TRIGGER {name} {timing} {event} ON {table} BEGIN\n  "
                             + ";\n  ".join(statements) + ";\nEND")


def drop_triggers(conn: Connection) -> None:
    postgres = conn.dialect.name == "postgresql"
    for name, _timing, _event, table, _statements in _triggers("IS NOT"):
        conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if postgres else ""))
        if postgres:
            conn.exec_driver_sql(f"DROP FUNCTION IF EXISTS {name}_fn()")


def refill(conn: Connection) -> None:
    """Recompute both tables from ``items`` and ``item_values``."""
    conn.exec_driver_sql("DELETE FROM item_value_counts")
    conn.exec_driver_sql("DELETE FROM item_field_counts")
    conn.exec_driver_sql(
        f"INSERT INTO {_VC} SELECT v.kind, v.clean_value, v.value, coalesce(i.library_id, ''), i.type, count(*) "
        "FROM item_values v JOIN items i ON i.id = v.item_id WHERE i.owner_id IS NULL "
        "GROUP BY v.kind, v.clean_value, v.value, coalesce(i.library_id, ''), i.type")
    conn.exec_driver_sql(
        f"INSERT INTO {_VC} SELECT 'AnyArtist', v.clean_value, '', coalesce(i.library_id, ''), i.type, "
        f"count(DISTINCT v.item_id) FROM item_values v JOIN items i ON i.id = v.item_id "
        f"WHERE i.owner_id IS NULL AND v.kind IN {ARTIST_KINDS} "
        "GROUP BY v.clean_value, coalesce(i.library_id, ''), i.type")
    conn.exec_driver_sql(
        f"INSERT INTO {_FC} SELECT 'Year', CAST(production_year AS TEXT), coalesce(library_id, ''), type, count(*) "
        "FROM items WHERE owner_id IS NULL AND production_year IS NOT NULL "
        "GROUP BY production_year, coalesce(library_id, ''), type")
    conn.exec_driver_sql(
        f"INSERT INTO {_FC} SELECT 'OfficialRating', official_rating, coalesce(library_id, ''), type, count(*) "
        "FROM items WHERE owner_id IS NULL AND official_rating IS NOT NULL AND official_rating <> '' "
        "GROUP BY official_rating, coalesce(library_id, ''), type")
