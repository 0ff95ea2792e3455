"""Alternate versions: several files of one movie shown as one item with several media sources.

The scanner links versions it finds by name (``owner_id`` = the primary version); an admin can
merge items by hand (MergeVersions) or split them again (DeleteAlternateSources). Hand-made
links are locked (``locked_fields_json`` gets "Versions") so a rescan keeps them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from server.db.database import load_orm_classes
from server.errors import BadRequestError, NotFoundError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database
    from server.db.tables import Item
    from server.events.hub import EventHub
    from server.library.catalog.query import ItemRow

LOCK = "Versions"


def _lock(item: Item, on: bool) -> None:
    fields = set(json.loads(item.locked_fields_json or "[]"))
    fields.add(LOCK) if on else fields.discard(LOCK)
    item.locked_fields_json = json.dumps(sorted(fields))


class VersionService:
    """``ctx.versions``: MergeVersions and DeleteAlternateSources."""

    def __init__(self, db: Database, events: EventHub) -> None:
        self.db = db
        self.events = events

    async def merge(self, ids: list[str]) -> str:
        """Make the first video the primary version and the others its alternate versions."""
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from sqlmodel import select

        from server.db.tables import Item

        def write(s: Session) -> str:
            rows = [s.get(Item, i) for i in ids]
            if any(r is None for r in rows):
                raise NotFoundError("One of the items to merge does not exist.")
            if any(r.is_folder or r.media_type != "Video" for r in rows):
                raise BadRequestError("Only videos can be merged into versions.")
            primary = rows[0]
            primary.owner_id = None
            _lock(primary, True)
            for row in rows[1:]:
                # Versions of a merged item follow it to the new primary.
                for child in s.scalars(select(Item).where(Item.owner_id == row.id, Item.extra_type.is_(None))):
                    child.owner_id = primary.id
                    s.add(child)
                row.owner_id = primary.id
                row.parent_id = primary.parent_id
                _lock(row, True)
                s.add(row)
            s.add(primary)
            return primary.id

        primary = await self.db.write(write)
        self.events.publish("LibraryChanged", {"ItemsUpdated": ids, "ItemsAdded": [], "ItemsRemoved": [],
                                               "FoldersAddedTo": [], "FoldersRemovedFrom": [],
                                               "CollectionFolders": []})
        return primary

    async def split(self, row: ItemRow) -> list[str]:
        """Make every alternate version of the item an item of its own again."""
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from sqlmodel import select

        from server.db.tables import Item

        def write(s: Session) -> list[str]:
            freed = []
            for child in s.scalars(select(Item).where(Item.owner_id == row.id, Item.extra_type.is_(None))):
                child.owner_id = None
                _lock(child, True)
                s.add(child)
                freed.append(child.id)
            return freed

        freed = await self.db.write(write)
        if freed:
            self.events.publish("LibraryChanged", {"ItemsUpdated": [row.id, *freed], "ItemsAdded": [],
                                                   "ItemsRemoved": [], "FoldersAddedTo": [], "FoldersRemovedFrom": [],
                                                   "CollectionFolders": []})
        return freed
