"""The scanner's write API: upsert scanned items, their values and people, move the user's
work from a renamed file's old id to its new one, and remove vanished items.

Everything runs inside ``Database.write_sync`` (the single writer), in batches. Rescans go
through ``merge.merge_scanned_fields`` so locked items and fields stay as the user left them;
``item_values`` always mirror the stored row's JSON lists. ``user_data`` is never deleted.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import delete, insert, select, text, update

from server.db.database import Database
from server.db.handles import item_values, items
from server.library.catalog import ids
from server.library.catalog.sorting import sort_name
from server.library.scan.merge import merge_scanned_fields, people_locked

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.tables import Item

if TYPE_CHECKING:  # the NFO reader loads with the first scan (resolve.py), not at start
    from server.library.scan.nfo import NfoPerson

log = logging.getLogger("reelroom.scanner")

BATCH = 500
_VALUE_COLUMNS = (("genres_json", "Genre"), ("studios_json", "Studio"), ("tags_json", "Tag"),
                  ("artists_json", "Artist"), ("album_artists_json", "AlbumArtist"))
_ITEM_COLUMNS = frozenset(items.c.keys())  # (= Item's fields: each maps its column)

T = TypeVar("T")


@dataclass(slots=True)
class Upsert:
    id: str
    fields: dict[str, Any]
    people: list[NfoPerson] | None


def chunks(values: list[T], size: int = BATCH) -> Iterable[list[T]]:
    for i in range(0, len(values), size):
        yield values[i:i + size]


def _values_of(row: Item | dict[str, Any]) -> list[dict[str, Any]]:
    get = row.get if isinstance(row, dict) else (lambda key: getattr(row, key))
    item_id = get("id")
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for column, kind in _VALUE_COLUMNS:
        text = get(column)
        if not text or text == "[]":
            continue
        try:
            values = json.loads(text)
        except ValueError:
            continue
        for value in values:
            if isinstance(value, str) and value.strip():
                key = (kind, value.strip().lower())
                out.setdefault(key, {"item_id": item_id, "kind": kind, "clean_value": key[1], "value": value.strip()})
    return list(out.values())


def _write_people(s: Session, item_id: str, people: list[NfoPerson]) -> None:
    from sqlmodel import col

    from server.db.tables import ItemPerson, Person

    s.execute(delete(ItemPerson).where(col(ItemPerson.item_id) == item_id))
    seen: set[tuple[str, str]] = set()
    for order, person in enumerate(people):
        name = person.name.strip()
        if not name:
            continue
        pid = ids.by_name_id("Person", name)
        if s.get(Person, pid) is None:
            existing = s.execute(select(Person).where(col(Person.name) == name)).scalar_one_or_none()
            if existing is not None:
                pid = existing.id
            else:
                s.add(Person(id=pid, name=name, sort_name=sort_name(name)))
                s.flush()
        if (pid, person.kind) in seen:
            continue
        seen.add((pid, person.kind))
        s.add(ItemPerson(item_id=item_id, person_id=pid, kind=person.kind, role=person.role,
                         sort_order=person.order if person.order is not None else order))


def write_upserts(db: Database, upserts: list[Upsert]) -> None:
    for batch in chunks(upserts):
        db.write_sync(_write_batch, batch)


def _defaults() -> dict[str, Any]:
    """Every column's default (factories called once: a batch shares them)."""
    from server.db.tables import Item

    return {name: info.get_default(call_default_factory=True) for name, info in Item.model_fields.items()}


def _write_batch(s: Session, batch: list[Upsert]) -> None:
    from sqlmodel import col

    from server.db.tables import Item, ItemValue

    wanted = [u.id for u in batch]
    existing = {row.id: row for row in s.execute(select(Item).where(col(Item.id).in_(wanted))).scalars()}
    rows: list[Item] = []  # merged existing rows (ORM)
    new_rows: list[dict[str, Any]] = []  # brand-new rows (one bulk INSERT)
    values: list[dict[str, Any]] = []
    people: list[tuple[str, list[NfoPerson]]] = []
    defaults = _defaults()
    for u in batch:
        fields = {k: v for k, v in u.fields.items() if k in _ITEM_COLUMNS}
        fields["id"] = u.id
        old = existing.get(u.id)
        if old is None:
            row_data = {**defaults, **fields}
            new_rows.append(row_data)
            values += _values_of(row_data)
            if u.people is not None:
                people.append((u.id, u.people))
            continue
        row = merge_scanned_fields(old, fields)
        s.add(row)
        rows.append(row)
        values += _values_of(row)
        if u.people is not None and not people_locked(row):
            people.append((u.id, u.people))
    if new_rows:
        s.execute(insert(items), new_rows)
    s.flush()
    s.execute(delete(ItemValue).where(col(ItemValue.item_id).in_(wanted)))
    if values:
        s.execute(insert(item_values), values)
    for item_id, persons in people:
        _write_people(s, item_id, persons)


def write_probes(db: Database, probes: list[tuple[str, int, float, str]]) -> None:
    """Cache probe results: (key, size, mtime, data_json)."""
    from sqlmodel import col

    from server.db.tables import MediaProbeCache

    def write(s: Session, batch: list[tuple[str, int, float, str]]) -> None:
        keys = [p[0] for p in batch]
        s.execute(delete(MediaProbeCache).where(col(MediaProbeCache.item_id).in_(keys)))
        s.execute(insert(MediaProbeCache), [{"item_id": k, "size": size, "mtime": mtime, "data_json": data}
                                            for k, size, mtime, data in batch])

    for batch in chunks(probes, 2000):
        db.write_sync(write, batch)


def remove_items(db: Database, item_ids: list[str]) -> None:
    """Delete vanished items (never their user data)."""
    from sqlmodel import col

    from server.db.tables import Item, ItemPerson, ItemValue, MediaProbeCache

    def write(s: Session, batch: list[str]) -> None:
        s.execute(delete(ItemValue).where(col(ItemValue.item_id).in_(batch)))
        s.execute(delete(ItemPerson).where(col(ItemPerson.item_id).in_(batch)))
        s.execute(delete(MediaProbeCache).where(col(MediaProbeCache.item_id).in_(batch)))
        s.execute(delete(Item).where(col(Item.id).in_(batch)))

    for batch in chunks(item_ids):
        db.write_sync(write, batch)


def move_item_identity(db: Database, metadata_dir: str, old_id: str, new_id: str) -> None:
    """A file was renamed or moved: the new item takes over the old one's user data, locks,
    locked people and downloaded images; the old row is deleted afterwards by the caller."""

    from sqlmodel import col

    from server.db.tables import Item, ItemPerson

    def write(s: Session) -> None:
        s.execute(text(
            "UPDATE user_data SET item_id = :new WHERE item_id = :old AND user_id NOT IN "
            "(SELECT user_id FROM user_data WHERE item_id = :new)"), {"old": old_id, "new": new_id})
        old = s.get(Item, old_id)
        if old is None:
            return
        old_dir = os.path.join(metadata_dir, "items", old_id[:2], old_id)
        new_dir = os.path.join(metadata_dir, "items", new_id[:2], new_id)
        images = json.loads(old.images_json or "[]")
        downloaded = [i for i in images if isinstance(i, dict) and i.get("Provider")]
        if downloaded and os.path.isdir(old_dir) and not os.path.exists(new_dir):
            os.makedirs(os.path.dirname(new_dir), exist_ok=True)
            shutil.move(old_dir, new_dir)
            for img in downloaded:
                if str(img.get("Path", "")).startswith(old_dir):
                    img["Path"] = new_dir + img["Path"][len(old_dir):]
        row = s.get(Item, new_id)
        if row is None:
            data = old.model_dump()
            data.update(id=new_id, images_json=json.dumps(downloaded))
            row = Item(**data)
        else:
            row.is_locked = old.is_locked
            row.locked_fields_json = old.locked_fields_json
            row.images_json = json.dumps(downloaded + [i for i in json.loads(row.images_json or "[]")
                                                       if not i.get("Provider")])
        s.add(row)
        s.flush()
        if people_locked(old):
            people = s.execute(select(ItemPerson).where(col(ItemPerson.item_id) == old_id)).scalars().all()
            s.execute(delete(ItemPerson).where(col(ItemPerson.item_id) == new_id))
            for p in people:
                s.add(ItemPerson(item_id=new_id, person_id=p.person_id, kind=p.kind, role=p.role,
                                 sort_order=p.sort_order))
        s.execute(update(Item).where(col(Item.owner_id) == old_id).values(owner_id=new_id))

    db.write_sync(write)


def remove_orphan_artists(db: Database, library_id: str) -> list[str]:
    """Artists of a library left without albums or tracks (after a partial scan)."""
    from sqlmodel import col

    from server.db.tables import Item, ItemPerson, ItemValue

    def write(s: Session) -> list[str]:
        child = items.alias("child")
        orphans = [r[0] for r in s.execute(
            select(col(Item.id)).where(col(Item.library_id) == library_id, col(Item.type) == "MusicArtist",
                                  ~select(child.c.id).where(child.c.parent_id == col(Item.id)).exists()))]
        for batch in chunks(orphans):
            s.execute(delete(ItemValue).where(col(ItemValue.item_id).in_(batch)))
            s.execute(delete(ItemPerson).where(col(ItemPerson.item_id).in_(batch)))
            s.execute(delete(Item).where(col(Item.id).in_(batch)))
        return orphans

    return db.write_sync(write)


def save_unit_signatures(db: Database, library_id: str, signatures: dict[str, str], vanished: list[str]) -> None:
    from sqlmodel import col

    from server.db.tables import ScanUnit

    def write(s: Session) -> None:
        paths = list(signatures) + list(vanished)
        for batch in chunks(paths, 900):
            s.execute(delete(ScanUnit).where(col(ScanUnit.library_id) == library_id, col(ScanUnit.path).in_(batch)))
        rows = [{"library_id": library_id, "path": p, "signature": sig} for p, sig in signatures.items()]
        if rows:
            s.execute(insert(ScanUnit), rows)

    db.write_sync(write)

