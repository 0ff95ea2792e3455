"""ActivityLog and ClientLog."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Request

from server.api.base import operation, require_user
from server.api.params import Paging
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


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
async def log_file(ctx: ServerContext, auth: AuthInfo | None, request: Request[Any, Any, Any]) -> w.ClientLogDocumentResponseDto:
    auth = require_user(auth)
    name = await ctx.activity.save_client_log(auth.client, auth.version, auth.device_id, request.stream(),
                                              int(request.headers.get("content-length") or 0))
    return w.ClientLogDocumentResponseDto(FileName=name)
