"""Collections (BoxSets): an ``items`` row of type BoxSet under the "Collections" folder (a
CollectionFolder with collection type "boxsets", created with the first collection) and its
members in ``collection_items``. The query engine lists a BoxSet's members as its children."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import delete, func, insert, select, update

from server.db.database import load_orm_classes
from server.db.handles import collection_entries as members
from server.db.handles import items
from server.errors import BadRequestError, NotFoundError
from server.guid import guid_from_text
from server.library.catalog.query import get_row, get_rows
from server.library.catalog.sorting import sort_name

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database

#: The "Collections" view: a CollectionFolder that no library scan owns.
COLLECTIONS_FOLDER_ID = guid_from_text("folder", "collections")



def ensure_folder(s: Session) -> None:
    from server.db.tables import Item

    if s.get(Item, COLLECTIONS_FOLDER_ID) is None:
        s.add(Item(id=COLLECTIONS_FOLDER_ID, type="CollectionFolder", is_folder=True, name="Collections",
                   sort_name="collections", library_id=COLLECTIONS_FOLDER_ID))
        s.flush()


def _add(s: Session, collection_id: str, item_ids: list[str]) -> None:
    known = get_rows(s, item_ids)
    present = {r[0] for r in s.execute(select(members.c.item_id).where(members.c.collection_id == collection_id))}
    last = s.execute(select(func.max(members.c.sort_order)).where(members.c.collection_id == collection_id)).scalar()
    order = -1 if last is None else last
    rows = []
    for item_id in dict.fromkeys(item_ids):
        if item_id in known and item_id not in present and item_id != collection_id:
            order += 1
            rows.append({"collection_id": collection_id, "item_id": item_id, "sort_order": order,
                         "date_added": datetime.now(UTC)})
    if rows:
        s.execute(insert(members), rows)
    s.execute(update(items).where(items.c.id == collection_id).values(date_modified=datetime.now(UTC)))


class CollectionService:
    def __init__(self, db: Database, on_change: Callable[[], None] = lambda: None) -> None:
        self.db = db
        # called after a collection's members change: its poster is a collage of them (the artwork
        # service remakes it soon)
        self._on_change = on_change

    async def create(self, name: str | None, item_ids: list[str], is_locked: bool | None) -> str:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item

        name = (name or "").strip()
        if not name:
            raise BadRequestError("A collection needs a name.")
        collection_id = uuid.uuid4().hex

        def write(s: Session) -> None:
            ensure_folder(s)
            s.add(Item(id=collection_id, type="BoxSet", media_type="Unknown", is_folder=True, name=name,
                       sort_name=sort_name(name), parent_id=COLLECTIONS_FOLDER_ID, library_id=COLLECTIONS_FOLDER_ID,
                       is_locked=bool(is_locked), date_modified=datetime.now(UTC)))
            s.flush()
            _add(s, collection_id, item_ids)

        await self.db.write(write)
        self._on_change()
        return collection_id

    async def _check(self, collection_id: str) -> None:
        row = await self.db.read(lambda s: get_row(s, collection_id))
        if row is None or row.type != "BoxSet":
            raise NotFoundError("Collection not found.")

    async def add(self, collection_id: str, item_ids: list[str]) -> None:
        await self._check(collection_id)
        await self.db.write(lambda s: _add(s, collection_id, item_ids))
        self._on_change()

    async def remove(self, collection_id: str, item_ids: list[str]) -> None:
        await self._check(collection_id)
        await self.db.write(lambda s: s.execute(delete(members).where(
            members.c.collection_id == collection_id, members.c.item_id.in_(item_ids))))
        self._on_change()

