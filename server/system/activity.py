"""The activity log: sign-ins, failures, users and keys created or deleted, server start."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, func, select

from server.db.database import Database
from server.db.tables import ActivityLogEntry
from server.events.hub import EventHub


class ActivityLog:
    def __init__(self, db: Database, events: EventHub) -> None:
        self.db = db
        self.events = events

    async def add(self, name: str, type_: str, *, user_id: str | None = None, overview: str | None = None,
                  short_overview: str | None = None, item_id: str | None = None,
                  severity: str = "Information") -> None:
        entry = ActivityLogEntry(name=name, type=type_, user_id=user_id, overview=overview,
                                 short_overview=short_overview, item_id=item_id, severity=severity)
        await self.db.write(lambda s: s.add(entry))
        self.events.publish("ActivityLogEntry", None, admins_only=True)

    async def query(self, start_index: int, limit: int | None, min_date: datetime | None,
                    has_user_id: bool | None) -> tuple[list[ActivityLogEntry], int]:
        def read(s: Session) -> tuple[list[ActivityLogEntry], int]:
            q = select(ActivityLogEntry)
            if min_date is not None:
                q = q.where(ActivityLogEntry.date >= min_date)
            if has_user_id is True:
                q = q.where(col(ActivityLogEntry.user_id).is_not(None))
            elif has_user_id is False:
                q = q.where(col(ActivityLogEntry.user_id).is_(None))
            total = s.exec(select(func.count()).select_from(q.subquery())).one()
            q = q.order_by(col(ActivityLogEntry.date).desc(), col(ActivityLogEntry.id).desc()).offset(start_index)
            if limit is not None:
                q = q.limit(limit)
            return list(s.exec(q)), total

        return await self.db.read(read)

    async def prune(self, before: datetime) -> int:
        def write(s: Session) -> int:
            rows = list(s.exec(select(ActivityLogEntry).where(ActivityLogEntry.date < before)))
            for r in rows:
                s.delete(r)
            return len(rows)

        return await self.db.write(write)
