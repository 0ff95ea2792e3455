"""One item's BaseItemDto for GET /Items/{id}, encoded in two parts (ItemService.item_reply).

The first part is the item's fragment as ``dto.build_fragments`` makes it (the encoded DTO
without UserData and without its closing brace); the second is the rest (``,"UserData":{...}}``,
or ``}`` without user data). ItemService keeps the first while the library's content is
unchanged and the second while nothing at all was written, so the parts are made apart.

The lookups are ``dto._gather``'s for one row, with those that cost the most per request when
SQLAlchemy builds or runs them (people, extras counts, whether the item has versions: 0.2-0.5 ms
each, for a statement SQLite answers in a few microseconds) read on the DB-API cursor instead
(``query.driver_rows``), with the same columns and order. ``tests/library/browse/test_item_kept.py`` checks the whole reply
against ``ItemService.item`` (``build_dtos``) for every kind of item, in both casings.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from server.library.catalog import dto as d
from server.library.catalog.query import ItemRow, driver_rows
from server.trickplay.service import info_for as trickplay_info_for
from server.wire import models as w
from server.wire.casing import encode_wire

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_PEOPLE = ("SELECT ip.item_id, ip.kind, ip.role, p.id, p.name, p.image_tag FROM item_people AS ip "
           "JOIN people AS p ON p.id = ip.person_id WHERE ip.item_id IN ")
_EXTRAS = ("SELECT owner_id, SUM(CASE WHEN extra_type = 'Trailer' THEN 1 ELSE 0 END), "
           "SUM(CASE WHEN extra_type IS NOT NULL AND extra_type != 'Trailer' "
           "AND extra_type NOT IN ('ThemeSong', 'ThemeVideo') THEN 1 ELSE 0 END) "
           "FROM items WHERE extra_type IS NOT NULL AND owner_id IN ")


def people_of(s: Session, item_id: str) -> dict[str, list[w.BaseItemPerson]]:
    """``dto.people_of`` for one item."""
    found = driver_rows(s, _PEOPLE, [item_id], " ORDER BY ip.item_id, ip.sort_order")
    if found is None:
        return d.people_of(s, [item_id])
    out: dict[str, list[w.BaseItemPerson]] = defaultdict(list)
    for owner, kind, role, person_id, name, image_tag in found:
        out[owner].append(w.BaseItemPerson(Name=name, Id=person_id, Role=role or "", Type=kind,
                                           PrimaryImageTag=image_tag))
    return out


def extras_counts(s: Session, item_id: str) -> dict[str, tuple[int, int]]:
    """``dto.extras_counts`` for one item."""
    found = driver_rows(s, _EXTRAS, [item_id], " GROUP BY owner_id")
    if found is None:
        return d.extras_counts(s, [item_id])
    return {owner: (t or 0, sp or 0) for owner, t, sp in found}


def versions_of(s: Session, item_id: str) -> dict[str, list[Any]]:
    """``dto.versions_of`` for one item: whether it owns rows at all read on the DB-API cursor
    (the owner_id index alone), the rows only when it does."""
    found = driver_rows(s, "SELECT owner_id FROM items WHERE owner_id IN ", [item_id], " GROUP BY owner_id")
    if found is None or found:
        return d.versions_of(s, [item_id])
    return defaultdict(list)


def _gather(s: Session, row: ItemRow, opts: d.DtoOptions) -> Any:
    """``dto._gather`` for one row (the same lookups under the same conditions)."""
    item_ids = [row.id]
    has = opts.has
    want_user_data = bool(opts.enable_user_data and opts.user_id)
    uds = d.user_data_rows(s, opts.user_id, item_ids) if want_user_data and opts.user_id else {}
    counts = d.folder_counts(s, [row], opts.user_id, want_children=has("ChildCount"),
                             want_recursive=has("RecursiveItemCount"), want_played=want_user_data) \
        if row.is_folder else {}
    cast = people_of(s, row.id) if has("People") else {}
    media = [row.id] if row.media_type in ("Video", "Audio") and not row.is_folder else []
    versions = versions_of(s, row.id) if (has("MediaSources") or has("MediaSourceCount")) and media else {}
    extras = extras_counts(s, row.id) if (has("LocalTrailerCount") or has("SpecialFeatureCount")) else {}
    parents = d.parent_rows(s, [row]) if opts.enable_images or row.type == "Season" else {}
    ctypes = d.collection_types(s, [row])
    tiles = trickplay_info_for(s, media) if has("Trickplay") and media else {}
    return d._Batch(uds, counts, cast, versions, extras, parents, ctypes, tiles, want_user_data)


def item_parts(s: Session, row: ItemRow, opts: d.DtoOptions, server_id: str, camel: bool) -> tuple[bytes, bytes]:
    """The item's fragment and the rest of its encoded DTO (see the module's docstring)."""
    b = _gather(s, row, opts)
    counts = b.counts.get(row.id)
    dto = d._build_one(row, opts, server_id, None, counts, b.cast, b.versions, b.extras, b.parents, b.ctypes, False)
    if row.id in b.tiles:
        dto.Trickplay = b.tiles[row.id]
    return encode_wire(dto, camel)[:-1], _user_data_part(row, b.uds.get(row.id), counts, b.want_user_data, camel)


def user_data_part(s: Session, row: ItemRow, opts: d.DtoOptions, camel: bool) -> bytes:
    """The second part alone: the user's data of the item read afresh (and, for series,
    seasons and albums, their played counts)."""
    want = bool(opts.enable_user_data and opts.user_id)
    if not want or not opts.user_id:
        return b"}"
    uds = d.user_data_rows(s, opts.user_id, [row.id])
    counts = d.folder_counts(s, [row], opts.user_id, want_children=opts.has("ChildCount"),
                             want_recursive=opts.has("RecursiveItemCount"), want_played=True).get(row.id) \
        if row.is_folder else None
    return _user_data_part(row, uds.get(row.id), counts, want, camel)


def _user_data_part(row: ItemRow, ud: Any, counts: d.FolderCounts | None, want: bool, camel: bool) -> bytes:
    if not want:
        return b"}"
    return b"".join((b',"userData":' if camel else b',"UserData":',
                     encode_wire(d._user_data_dto(row, ud, counts), camel), b"}"))


__all__ = ["extras_counts", "item_parts", "people_of", "user_data_part", "versions_of"]
