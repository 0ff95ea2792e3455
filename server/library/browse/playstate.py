"""Played / unplayed (Playstate's MarkPlayedItem and MarkUnplayedItem).

Marking a folder (series, season, album, collection, playlist, library) marks every playable
item under it, in SQL; the reply is the item's own user data, as the DTO builder computes it
(a series is played when all its episodes are). Every change is published to the user's
sockets as ``UserDataChanged``. Rows of ``user_data`` are updated or created, never deleted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import and_, case, false, insert, select, update

from server.db.handles import items, user_data
from server.db.schema import collection_items, playlist_entries
from server.errors import NotFoundError
from server.library.catalog.dto import build_dtos
from server.library.catalog.query import get_row
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database
    from server.events.hub import EventHub
    from server.library.catalog.items import ItemService
    from server.library.catalog.query import ItemRow



def playable_descendants(s: Session, row: ItemRow) -> list[str]:
    """Ids of the playable (non-folder) items a folder stands for; [row.id] for a media item."""
    if not row.is_folder:
        return [row.id]
    c = items.c
    base = select(c.id).where(c.is_folder == false(), c.owner_id.is_(None))
    match row.type:
        case "Series":
            q = base.where(c.series_id == row.id, c.type == "Episode")
        case "Season":
            q = base.where(c.season_id == row.id, c.type == "Episode")
        case "MusicAlbum":
            q = base.where(c.album_id == row.id)
        case "CollectionFolder":
            q = base.where(c.library_id == row.id)
        case "BoxSet":
            members = select(collection_items.c.item_id).where(collection_items.c.collection_id == row.id)
            q = base.where(c.id.in_(members))
        case "Playlist":
            members = select(playlist_entries.c.item_id).where(playlist_entries.c.playlist_id == row.id)
            q = base.where(c.id.in_(members))
        case _:
            q = base.where(c.parent_id == row.id)
    return [r[0] for r in s.execute(q).all()]


def set_played(s: Session, user_id: str, item_ids: list[str], played: bool, when: datetime | None,
               count_play: bool = True) -> None:
    """Played: play count + 1 (or at least 1 when ``count_play`` is off, as Jellyfin does for
    a mark without a date), position reset, last played date set. Unplayed: all cleared."""
    if not item_ids:
        return
    existing = {r[0] for r in s.execute(select(user_data.c.item_id).where(
        user_data.c.user_id == user_id, user_data.c.item_id.in_(item_ids))).all()}
    where = and_(user_data.c.user_id == user_id, user_data.c.item_id.in_(list(existing)))
    if played:
        s.execute(update(user_data).where(where).values(
            played=True, play_count=(user_data.c.play_count + 1) if count_play else
            case((user_data.c.play_count < 1, 1), else_=user_data.c.play_count),
            last_played_date=when, playback_position_ticks=0))
    else:
        s.execute(update(user_data).where(where).values(played=False, play_count=0, playback_position_ticks=0,
                                                        last_played_date=None))
    new = [i for i in item_ids if i not in existing]
    if new and played:
        s.execute(insert(user_data), [{
            "user_id": user_id, "item_id": i, "played": True, "play_count": 1, "is_favorite": False,
            "playback_position_ticks": 0, "last_played_date": when} for i in new])


class PlayStateService:
    def __init__(self, db: Database, events: EventHub, items: ItemService) -> None:
        self.db = db
        self.events = events
        self.items = items

    async def mark(self, user_id: str, item_id: str, played: bool,
                   date_played: datetime | None = None) -> w.UserItemDataDto:
        """Mark an item (and, for a folder, everything under it) played or unplayed."""
        viewer = await self.items.viewer(None, user_id)  # 404 for an unknown user
        row = await self.items.row(item_id, viewer)  # 404 for an unknown or hidden item
        when = date_played or datetime.now(UTC)
        when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)

        def write(s: Session) -> None:
            targets = playable_descendants(s, row)
            if row.id not in targets:
                targets.append(row.id)
            set_played(s, user_id, targets, played, when, count_play=date_played is not None)

        await self.db.write_user_data((user_id,), write)  # only this user's rows
        opts = self.items.options(viewer, [])

        def read(s: Session) -> w.UserItemDataDto:
            fresh = get_row(s, row.id)
            if fresh is None:
                raise NotFoundError(f"Item {row.id} not found.")
            return build_dtos(s, [fresh], opts, self.items.server_id)[0].UserData

        data = await self.db.read(read)
        self.events.publish("UserDataChanged", w.UserDataChangeInfo(UserId=user_id, UserDataList=[data]),
                                user_id=user_id)
        return data
