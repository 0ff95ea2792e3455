"""The home screen's queries: user views, latest media (grouped as Jellyfin does), ancestors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import literal, select

from server.db.handles import items
from server.library.catalog.query import CountCache, Generations, ItemQuery, ItemRow, compile_query, get_rows

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_LATEST_BATCH = 500
_LATEST_MAX_SCANNED = 4000


def latest_groups(s: Session, q: ItemQuery, limit: int, group: bool, counts: CountCache | None = None,
                  generation: Generations = 0) -> list[tuple[ItemRow, int]]:
    """Recently added items, newest first: (row, child count). With ``group``, episodes of one
    series collapse into the series when there are several, and tracks always collapse into
    their album (Jellyfin's Latest rules). Grouping reads narrow columns only; full rows are
    read for the entries shown. With ``counts`` (and ``Database.generations`` read before the
    read's first query) the batches' statement is built once per query shape and content
    generation (``_batch``)."""
    q.sort_by, q.sort_order = ["DateCreated"], ["Descending"]
    q.enable_total_record_count = False
    q.is_folder = False
    q.stable_order = False  # so the date index alone serves the order and the scan stops early
    groups: dict[str, list[tuple[str, str]]] = {}
    order: list[str] = []
    scanned = 0
    columns = [items.c.id, items.c.type, items.c.series_id, items.c.album_id]
    while len(order) < limit and scanned < _LATEST_MAX_SCANNED:
        q.start_index, q.limit = scanned, _LATEST_BATCH
        rows = _batch(s, q, columns, counts, generation)
        for item_id, kind, series_id, album_id in rows:
            key = item_id
            if group and kind == "Episode" and series_id:
                key = series_id
            elif group and kind == "Audio" and album_id:
                key = album_id
            if key not in groups:
                if len(order) >= limit:
                    continue
                groups[key] = []
                order.append(key)
            groups[key].append((item_id, kind))
        scanned += len(rows)
        if len(rows) < _LATEST_BATCH:
            break
    wanted = []
    for key in order:
        first_id, first_kind = groups[key][0]
        use_container = first_id != key and (len(groups[key]) > 1 or first_kind == "Audio")
        wanted.append((key if use_container else first_id, len(groups[key]) if use_container else 0))
    found = get_rows(s, [item_id for item_id, _ in wanted])
    return [(found[item_id], count) for item_id, count in wanted if item_id in found]


def _batch(s: Session, q: ItemQuery, columns: list[Any], counts: CountCache | None,
           generation: Generations) -> Sequence[Sequence[Any]]:
    """One batch of Latest's narrow rows. Building and compiling the select (its conditions, the
    played test's user data alias) cost several times SQLite's walk of the date index, so on
    SQLite it is compiled once per query shape to driver SQL with its parameters bound (as
    query._page_ids does for pages), kept in ``counts`` for the content generation (the
    statement holds no user data, only what its conditions read from the library: resolved
    by-name ids), and each batch adds ``LIMIT ? OFFSET ?``. Not with parental rules (their
    condition lists the library's ratings) or a driver without qmark parameters."""
    conn = s.connection()
    if counts is None or q.parental is not None or conn.dialect.paramstyle != "qmark":
        page, _ = compile_query(s, q, columns)
        return s.execute(page).all()
    start, size = q.start_index, q.limit
    key = "latest:" + counts.ids_key(q)  # ids_key leaves startIndex and limit out
    cached = counts.get_sql(key, generation)
    if cached is None:
        q.start_index, q.limit = 0, None
        try:
            page, _ = compile_query(s, q, columns)
        finally:
            q.start_index, q.limit = start, size
        compiled = page.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
        values = compiled.construct_params()
        names = compiled.positiontup or []
        if any(name not in values for name in names):  # a parameter without a value: build it per batch
            page, _ = compile_query(s, q, columns)
            return s.execute(page).all()
        processors: Any = compiled._bind_processors  # name -> the type's bind processor
        bound = tuple(processors[n](values[n]) if n in processors else values[n] for n in names)
        cached = (compiled.string, bound)
        counts.put_sql(key, generation, cached)
    sql, bound = cached
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql + " LIMIT ? OFFSET ?", (*bound, -1 if size is None else size, start))
        found: Sequence[Sequence[Any]] = cursor.fetchall()
        return found
    finally:
        cursor.close()


def ancestor_ids(s: Session, item_id: str) -> list[str]:
    """Ids from the item's parent up to its library (nearest first), in one recursive query."""
    chain = select(items.c.parent_id.label("id"), literal(1).label("depth")).where(
        items.c.id == item_id).cte("chain", recursive=True)
    parent = items.alias("p")
    chain = chain.union_all(select(parent.c.parent_id, chain.c.depth + 1)
                            .where(parent.c.id == chain.c.id, chain.c.depth < 64))
    rows = s.execute(select(chain.c.id, chain.c.depth).where(chain.c.id.is_not(None))
                     .order_by(chain.c.depth)).all()
    return [r.id for r in rows]
