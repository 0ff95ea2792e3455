"""ActivityLog and ClientLog."""

from __future__ import annotations

from datetime import datetime

from litestar import Request

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.wire import models as w


@operation("GetLogEntries")
async def get_log_entries(ctx: ServerContext, startIndex: int | None = None, limit: int | None = None,
                          minDate: datetime | None = None, hasUserId: bool | None = None
                          ) -> w.ActivityLogEntryQueryResult:
    rows, total = await ctx.activity.query(max(startIndex or 0, 0), limit, minDate, hasUserId)
    items = [w.ActivityLogEntry(Id=r.id, Name=r.name, Overview=r.overview, ShortOverview=r.short_overview,
                                Type=r.type, ItemId=r.item_id, Date=r.date, UserId=r.user_id or "0" * 32,
                                Severity=r.severity) for r in rows]
    return w.ActivityLogEntryQueryResult(Items=items, TotalRecordCount=total, StartIndex=startIndex or 0)


@operation("LogFile")
async def log_file(ctx: ServerContext, auth: AuthInfo | None, request: Request) -> w.ClientLogDocumentResponseDto:
    auth = require_user(auth)
    name = await ctx.activity.save_client_log(auth.client, auth.version, auth.device_id, request.stream(),
                                              int(request.headers.get("content-length") or 0))
    return w.ClientLogDocumentResponseDto(FileName=name)
