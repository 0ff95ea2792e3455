"""The activity log: sign-ins, failures, users and keys created or deleted, server start; and
the logs clients upload (ClientLog/Document), kept as files beside the server's own logs."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, insert, select

from server.db.database import Database
from server.db.handles import activity_log
from server.db.schema import utcnow
from server.errors import ForbiddenError, PayloadTooLargeError
from server.events.hub import EventHub

if TYPE_CHECKING:
    from sqlalchemy.engine import Row

    from server.db.database import CoreSession

CLIENT_LOG_LIMIT = 1024 * 1024


class ActivityLog:
    """``ctx.activity``. ``log_dir``: where uploaded client logs are written;
    ``client_logs_allowed``: the server's AllowClientLogUpload, read at each upload."""

    def __init__(self, db: Database, events: EventHub, log_dir: Path | None = None,
                 client_logs_allowed: Callable[[], bool] = lambda: True) -> None:
        self.db = db
        self.events = events
        self.log_dir = log_dir
        self.client_logs_allowed = client_logs_allowed

    async def add(self, name: str, type_: str, *, user_id: str | None = None, overview: str | None = None,
                  short_overview: str | None = None, item_id: str | None = None,
                  severity: str = "Information") -> None:
        # on the table, not an ORM object (server/db/handles.py): the start adds one; the date is the
        # model's default, made here
        entry = insert(activity_log).values(
            name=name, type=type_, user_id=user_id, overview=overview, short_overview=short_overview,
            item_id=item_id, severity=severity, date=utcnow())
        await self.db.write(lambda s: s.execute(entry))
        self.events.changed("ActivityLogEntry")

    async def query(self, start_index: int, limit: int | None, min_date: datetime | None,
                    has_user_id: bool | None) -> tuple[list[Row[Any]], int]:
        """A page of entries, newest first (rows: the columns as attributes), and how many match."""

        def read(s: CoreSession) -> tuple[list[Row[Any]], int]:
            c = activity_log.c
            q = select(activity_log)
            if min_date is not None:
                q = q.where(c.date >= min_date)
            if has_user_id is True:
                q = q.where(c.user_id.is_not(None))
            elif has_user_id is False:
                q = q.where(c.user_id.is_(None))
            total = s.execute(select(func.count()).select_from(q.subquery())).scalar_one()
            q = q.order_by(c.date.desc(), c.id.desc()).offset(start_index)
            if limit is not None:
                q = q.limit(limit)
            return list(s.execute(q).all()), total

        return await self.db.read(read)

    async def prune(self, before: datetime) -> int:
        def write(s: CoreSession) -> int:
            return s.connection().execute(delete(activity_log).where(activity_log.c.date < before)).rowcount

        return await self.db.write(write)

    async def save_client_log(self, client: str | None, version: str | None, device_id: str,
                              body: AsyncIterable[bytes], declared_length: int | None = None) -> str:
        """Store an uploaded client log (at most CLIENT_LOG_LIMIT bytes, counted as they arrive)
        under a name made from the client, its version, the time and the device (only
        ``[A-Za-z0-9._-]``, so always a plain file name in the log folder); returns the name."""
        if not self.client_logs_allowed() or self.log_dir is None:
            raise ForbiddenError("Client log upload is disabled on this server.")
        if declared_length is not None and declared_length > CLIENT_LOG_LIMIT:
            raise PayloadTooLargeError(f"Client logs may be at most {CLIENT_LOG_LIMIT} bytes.")
        chunks, size = [], 0
        async for chunk in body:
            size += len(chunk)
            if size > CLIENT_LOG_LIMIT:
                raise PayloadTooLargeError(f"Client logs may be at most {CLIENT_LOG_LIMIT} bytes.")
            chunks.append(chunk)
        name = client_log_name(client, version, device_id, datetime.now(UTC))
        await asyncio.to_thread((self.log_dir / name).write_bytes, b"".join(chunks))
        return name


def client_log_name(client: str | None, version: str | None, device_id: str, when: datetime) -> str:
    safe_client = re.sub(r"[^A-Za-z0-9._-]", "_", client or "client")[:40]
    safe_version = re.sub(r"[^A-Za-z0-9._-]", "_", version or "0")[:20]
    safe_device = re.sub(r"[^A-Za-z0-9._-]", "_", device_id or "device")[:8]
    return f"upload_{safe_client}_{safe_version}_{when:%Y%m%d%H%M%S}_{safe_device}.log"
