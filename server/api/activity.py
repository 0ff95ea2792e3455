"""ActivityLog and ClientLog."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime

from litestar import Request

from server.api.base import operation, require_user
from server.api.params import Paging
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import ForbiddenError, PayloadTooLargeError
from server.wire import models as w

CLIENT_LOG_LIMIT = 1024 * 1024


@operation("GetLogEntries")
async def get_log_entries(ctx: ServerContext, page: Paging, minDate: datetime | None = None,
                          hasUserId: bool | None = None) -> w.ActivityLogEntryQueryResult:
    start, limit = page.clamped()
    rows, total = await ctx.activity.query(start, limit, minDate, hasUserId)
    items = [w.ActivityLogEntry(Id=r.id, Name=r.name, Overview=r.overview, ShortOverview=r.short_overview,
                                Type=r.type, ItemId=r.item_id, Date=r.date, UserId=r.user_id or "0" * 32,
                                Severity=r.severity) for r in rows]
    return w.ActivityLogEntryQueryResult(Items=items, TotalRecordCount=total, StartIndex=page.startIndex or 0)


@operation("LogFile")
async def log_file(ctx: ServerContext, auth: AuthInfo | None, request: Request) -> w.ClientLogDocumentResponseDto:
    auth = require_user(auth)
    if not ctx.config.server().AllowClientLogUpload:
        raise ForbiddenError("Client log upload is disabled on this server.")
    length = int(request.headers.get("content-length") or 0)
    if length > CLIENT_LOG_LIMIT:
        raise PayloadTooLargeError(f"Client logs may be at most {CLIENT_LOG_LIMIT} bytes.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > CLIENT_LOG_LIMIT:
            raise PayloadTooLargeError(f"Client logs may be at most {CLIENT_LOG_LIMIT} bytes.")
        chunks.append(chunk)
    client = re.sub(r"[^A-Za-z0-9._-]", "_", auth.client or "client")[:40]
    version = re.sub(r"[^A-Za-z0-9._-]", "_", auth.version or "0")[:20]
    name = f"upload_{client}_{version}_{datetime.now(UTC):%Y%m%d%H%M%S}_{auth.device_id[:8]}.log"
    await asyncio.to_thread((ctx.paths.log_dir / name).write_bytes, b"".join(chunks))
    return w.ClientLogDocumentResponseDto(FileName=name)
