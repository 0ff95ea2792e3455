"""The home screen's queries: user views, latest media (grouped as Jellyfin does), ancestors."""

from __future__ import annotations

from typing import Any

from sqlalchemy import literal, select
from sqlalchemy.orm import Session

from server.library.query import ItemQuery, get_rows, items, run_query

_LATEST_BATCH = 200
_LATEST_MAX_SCANNED = 4000


def latest_groups(s: Session, q: ItemQuery, limit: int, group: bool) -> list[tuple[Any, int]]:
    """Recently added items, newest first: (row, child count). With ``group``, episodes of one
    series collapse into the series when there are several, and tracks always collapse into
    their album (Jellyfin's Latest rules)."""
    q.sort_by, q.sort_order = ["DateCreated"], ["Descending"]
    q.enable_total_record_count = False
    q.is_folder = False
    groups: dict[str, list[Any]] = {}
    order: list[str] = []
    scanned = 0
    while len(order) < limit and scanned < _LATEST_MAX_SCANNED:
        q.start_index, q.limit = scanned, _LATEST_BATCH
        rows, _ = run_query(s, q)
        for row in rows:
            key = row.id
            if group and row.type == "Episode" and row.series_id:
                key = row.series_id
            elif group and row.type == "Audio" and row.album_id:
                key = row.album_id
            if key not in groups:
                if len(order) >= limit:
                    continue
                groups[key] = []
                order.append(key)
            groups[key].append(row)
        scanned += len(rows)
        if len(rows) < _LATEST_BATCH:
            break
    containers = get_rows(s, [k for k in order if groups[k][0].id != k])
    out: list[tuple[Any, int]] = []
    for key in order:
        members = groups[key]
        first = members[0]
        container = containers.get(key)
        if container is not None and (len(members) > 1 or first.type == "Audio"):
            out.append((container, len(members)))
        else:
            out.append((first, 0))
    return out


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
