"""Kept aggregates for the by-name lists and the filter lists.

``item_value_counts`` holds, per value (genre, studio, tag, artist, album artist), spelling,
library and item type, how many items carry it; ``item_field_counts`` the same for production
years and official ratings. Owned rows (versions, extras: ``owner_id`` set) are not counted, as
no list shows them. ``AnyArtist`` rows count the items that have a name as artist *or* album
artist once (the MusicArtist list's ChildCount).

Triggers on ``items`` and ``item_values`` keep them (SQLite triggers; PL/pgSQL trigger
functions on PostgreSQL), so every writer (the scanner's store, deletions, metadata editing and
Identify, version merges) keeps them right without knowing about them, and a list such as
/Artists at 100k tracks is an indexed page over a few thousand rows instead of a GROUP BY over
every item. The triggers are order-independent: a value counts when both its ``item_values``
row and its item row exist, whichever is written first; an item's delete subtracts its values
before they go (BEFORE DELETE, so an ON DELETE CASCADE finds nothing left to subtract).

Rows whose count drops to 0 stay until ``ensure`` (start-up) purges them; readers filter on
``item_count > 0``. Migration 0010_kept_counts creates and fills the tables; ``ensure`` runs at
start-up as well and recreates missing triggers (a batch migration that rebuilds ``items``
drops them) and refills the tables when it had to.

Lists use the tables when the scope is one they can answer: libraries (the user's
EnabledFolders, a CollectionFolder parent), item types, no parental rules and no other item
filter (``simple_scope``); anything else takes the grouped query over the items themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Engine, case, false, func, select, tuple_
from sqlalchemy.engine import Connection

from server.db.handles import item_field_counts as field_counts
from server.db.handles import item_value_counts as value_counts
from server.db.handles import items
from server.library.catalog.query import ItemQuery

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger("reelroom.library")

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


TRIGGER_NAMES = tuple(t[0] for t in _triggers("IS NOT"))


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


def _present_triggers(conn: Connection) -> set[str]:
    if conn.dialect.name == "postgresql":
        return {r[0] for r in conn.exec_driver_sql(
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname = ANY(%(names)s)",
            {"names": list(TRIGGER_NAMES)}).all()}
    return {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'trigger'").all()}


def ensure(engine: Engine) -> None:
    """Start-up: recreate missing triggers (and then refill), purge rows counted down to 0."""
    with engine.begin() as conn:
        if set(TRIGGER_NAMES) - _present_triggers(conn):
            log.info("Rebuilding the kept list counts (their triggers were missing)")
            create_triggers(conn)
            refill(conn)
        conn.exec_driver_sql("DELETE FROM item_value_counts WHERE item_count <= 0")
        conn.exec_driver_sql("DELETE FROM item_field_counts WHERE item_count <= 0")


# ---------------------------------------------------------------- reading


@dataclass(frozen=True)
class Scope:
    """What a simple scope comes down to: libraries (None = all), the types to count (None =
    all but ``exclude``), types left out, and whether private playlists may be counted."""

    libraries: tuple[str, ...] | None
    exclude_libraries: tuple[str, ...]
    include: tuple[str, ...] | None
    exclude: tuple[str, ...]
    hide_playlists: bool  # a user's view: other users' private playlists must not count


def simple_scope(s: Session, q: Any, structural: tuple[str, ...], root_id: str) -> Scope | None:
    """The kept-count scope equivalent to ItemQuery ``q``'s conditions, or None when ``q`` has
    conditions the counts cannot answer (parental rules, any item filter, a parent that is not
    a library)."""
    if q.parental is not None and q.parental.active:
        return None
    if not q.recursive:
        return None
    bare = replace(q, user_id=None, allowed_library_ids=None, parental=None, exclude_library_ids=set(),
                   parent_id=None, recursive=False, include_types=[], exclude_types=[], start_index=0, limit=None,
                   enable_total_record_count=True, sort_by=[], sort_order=[], stable_order=True)
    if bare != ItemQuery():
        return None
    libraries = None if q.allowed_library_ids is None else tuple(sorted(q.allowed_library_ids))
    exclude_types = list(q.exclude_types)
    if q.parent_id is not None and q.parent_id != root_id:
        row = s.execute(select(items.c.type).where(items.c.id == q.parent_id)).first()
        if row is None or row.type != "CollectionFolder":
            return None
        libraries = (q.parent_id,) if libraries is None or q.parent_id in libraries else ()
        exclude_types.append("CollectionFolder")
    include = tuple(t for t in q.include_types if t) or None
    if include is None and not q.include_structural:
        exclude_types.extend(structural)
    return Scope(libraries=libraries, exclude_libraries=tuple(sorted(q.exclude_library_ids)), include=include,
                 exclude=tuple(sorted(set(exclude_types))), hide_playlists=q.user_id is not None)


def scope_conditions(table: Any, sc: Scope) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = [table.c.item_count > 0]
    if sc.libraries is not None:
        conds.append(table.c.library_id.in_(sc.libraries) if sc.libraries else false())
    if sc.exclude_libraries:
        conds.append(table.c.library_id.not_in(sc.exclude_libraries))
    if sc.include is not None:
        conds.append(table.c.item_type.in_(sc.include))
    if sc.exclude:
        conds.append(table.c.item_type.not_in(sc.exclude))
    return conds


def counts_playlists(s: Session, table: Any, sc: Scope) -> bool:
    """Whether the scope would count Playlist rows (only when a playlist carries values or a
    year, e.g. edited by hand): their visibility is per user, so such lists take the exact
    path."""
    if not sc.hide_playlists or (sc.include is not None and "Playlist" not in sc.include) or "Playlist" in sc.exclude:
        return False
    # on the DB-API cursor (no parameters): SQLite answers from ix_item_value_counts_type in a few
    # microseconds, SQLAlchemy's execution of the statement cost ~0.2 ms (three times a search)
    cursor = s.connection().connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(_PLAYLIST_PROBE.format(table=table.name))
        return cursor.fetchone() is not None
    finally:
        cursor.close()


_PLAYLIST_PROBE = "SELECT 1 FROM {table} WHERE item_type = 'Playlist' AND item_count > 0 LIMIT 1"


@lru_cache(maxsize=64)  # immutable expressions, shared by every list's statement
def count_sum(table: Any, type_name: str | None = None) -> ColumnElement[Any]:
    if type_name is None:
        return func.coalesce(func.sum(table.c.item_count), 0)
    return func.coalesce(func.sum(case((table.c.item_type == type_name, table.c.item_count), else_=0)), 0)


#: ``filter_values``' hidden items of a partly hidden scope: (per (kind, clean value, spelling,
#: library, item type) of Genre and Tag rows, per (facet, value, library, item type) of years and
#: ratings) how many items carrying it the viewer's rules hide, as the kept counts count them
HiddenCounts = tuple[dict[tuple[str, str, str, str, str], int], dict[tuple[str, str, str, str], int]]


def filter_values(s: Session, q: ItemQuery,
                  profile: dict[tuple[str, str], tuple[int, int]] | None = None,
                  hidden: Callable[[], HiddenCounts | None] | None = None) -> dict[str, list[Any]] | None:
    """GET /Items/Filters' genres, tags, official ratings and years from the kept counts (the
    same answer as ``query.filter_values``), or None when the scope is not a simple one. With
    parental rules, ``profile`` (``by_name.parental_profile``: per (library, item type), how many
    items and how many hidden) lets the kept counts answer when every pair in scope is wholly
    hidden (left out) or wholly shown; when one is partly hidden, ``hidden`` (``by_name.
    filter_hidden``: the hidden items per kept row, kept per rules and content generation) gives
    the kept counts less the hidden items (a value, spelling or year is listed while an item in
    scope is left); None without them."""
    from server.library.catalog.query import ROOT_FOLDER_ID, STRUCTURAL_TYPES

    hidden_pairs: list[tuple[str, str]] = []
    less: HiddenCounts | None = None
    if q.parental is not None and q.parental.active:
        if profile is None:
            return None
        sc = simple_scope(s, replace(q, parental=None), STRUCTURAL_TYPES, ROOT_FOLDER_ID)
        if sc is None:
            return None
        scope = sc

        def in_scope(library: str, item_type: str) -> bool:
            return ((scope.libraries is None or library in scope.libraries)
                    and library not in scope.exclude_libraries
                    and (scope.include is None or item_type in scope.include) and item_type not in scope.exclude)

        if any(0 < n_hidden < n and in_scope(*pair) for pair, (n, n_hidden) in profile.items()):
            less = hidden() if hidden is not None else None
            if less is None:
                return None
        hidden_pairs = sorted(pair for pair, (n, n_hidden) in profile.items() if n_hidden and n_hidden == n)
    else:
        sc = simple_scope(s, q, STRUCTURAL_TYPES, ROOT_FOLDER_ID)
    if sc is None or counts_playlists(s, value_counts, sc) or counts_playlists(s, field_counts, sc):
        return None
    out: dict[str, list[Any]] = {"Genre": [], "Tag": []}
    vc, fc = value_counts, field_counts
    vconds, fconds = scope_conditions(vc, sc), scope_conditions(fc, sc)
    if hidden_pairs:
        vconds.append(tuple_(vc.c.library_id, vc.c.item_type).not_in(hidden_pairs))
        fconds.append(tuple_(fc.c.library_id, fc.c.item_type).not_in(hidden_pairs))
    if less is not None:
        return _filters_less_hidden(s, vconds, fconds, less)
    for kind, value in s.execute(select(vc.c.kind, func.min(vc.c.value)).where(
            vc.c.kind.in_(("Genre", "Tag")), *vconds)
            .group_by(vc.c.kind, vc.c.clean_value).order_by(vc.c.kind, vc.c.clean_value)).all():
        if value:
            out[kind].append(value)
    found: dict[str, set[str]] = {"Year": set(), "OfficialRating": set()}
    for facet, value in s.execute(select(fc.c.facet, fc.c.value).where(*fconds)
                                  .group_by(fc.c.facet, fc.c.value)).all():
        found[facet].add(value)
    out["OfficialRating"] = sorted(found["OfficialRating"])
    out["Year"] = sorted(int(y) for y in found["Year"])
    return out


def _filters_less_hidden(s: Session, vconds: list[Any], fconds: list[Any], less: HiddenCounts) -> dict[str, list[Any]]:
    """``filter_values`` in a partly hidden scope: the kept rows in scope (a few hundred), each
    less the items the rules hide (``less``); a row with an item left keeps its value (the least
    spelling among such rows, as the grouped query's ``min(value)`` over the visible items)."""
    vc, fc = value_counts, field_counts
    hidden_values, hidden_fields = less
    spelled: dict[tuple[str, str], str] = {}
    # in the database's order (its collation: the grouped query's order and min): the first
    # spelling of a value with an item left is its least
    for kind, clean, value, library, item_type, n in s.execute(
            select(vc.c.kind, vc.c.clean_value, vc.c.value, vc.c.library_id, vc.c.item_type, vc.c.item_count)
            .where(vc.c.kind.in_(("Genre", "Tag")), *vconds).order_by(vc.c.kind, vc.c.clean_value, vc.c.value)).all():
        if (kind, clean) not in spelled and int(n) - hidden_values.get((kind, clean, value, library, item_type), 0) > 0:
            spelled[(kind, clean)] = value
    out: dict[str, list[Any]] = {"Genre": [], "Tag": []}
    for (kind, _clean), value in spelled.items():
        if value:
            out[kind].append(value)
    found: dict[str, set[str]] = {"Year": set(), "OfficialRating": set()}
    for facet, value, library, item_type, n in s.execute(
            select(fc.c.facet, fc.c.value, fc.c.library_id, fc.c.item_type, fc.c.item_count).where(*fconds)).all():
        if int(n) - hidden_fields.get((facet, value, library, item_type), 0) > 0:
            found[facet].add(value)
    out["OfficialRating"] = sorted(found["OfficialRating"])
    out["Year"] = sorted(int(y) for y in found["Year"])
    return out
