"""The home screen's queries: user views, latest media (grouped as Jellyfin does), ancestors."""

from __future__ import annotations

from sqlalchemy import literal, select
from sqlalchemy.orm import Session

from server.db.handles import items
from server.library.catalog.query import ItemQuery, ItemRow, compile_query, get_rows

_LATEST_BATCH = 500
_LATEST_MAX_SCANNED = 4000


def latest_groups(s: Session, q: ItemQuery, limit: int, group: bool) -> list[tuple[ItemRow, int]]:
    """Recently added items, newest first: (row, child count). With ``group``, episodes of one
    series collapse into the series when there are several, and tracks always collapse into
    their album (Jellyfin's Latest rules). Grouping reads narrow columns only; full rows are
    read for the entries shown."""
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
        page, _ = compile_query(s, q, columns)
        rows = s.execute(page).all()
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
