"""ApiKey: keys that act as an administrator (the desktop app uses one)."""

from __future__ import annotations

from server.api.base import operation
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.wire import models as w


@operation("GetKeys")
async def get_keys(ctx: ServerContext) -> w.AuthenticationInfoQueryResult:
    keys = await ctx.tokens.keys()
    items = [w.AuthenticationInfo(Id=k.id, AccessToken=k.access_token, DeviceId=ctx.system_id, AppName=k.name,
                                  AppVersion="", DeviceName=ctx.server_name(), IsActive=True,
                                  DateCreated=k.date_created, DateLastActivity=k.date_last_activity) for k in keys]
    return w.AuthenticationInfoQueryResult(Items=items, TotalRecordCount=len(items), StartIndex=0)


@operation("CreateKey")
async def create_key(ctx: ServerContext, auth: AuthInfo | None, app: str | None = None) -> None:
    if not app or not app.strip():
        raise BadRequestError("The app name (query parameter 'app') is required.")
    await ctx.tokens.create_key(app.strip())
    await ctx.activity.add(f"API key created for {app.strip()}", "ApiKeyCreated",
                           user_id=auth.user_id if auth else None)


@operation("RevokeKey")
async def revoke_key(ctx: ServerContext, key: str) -> None:
    await ctx.tokens.revoke_key(key)
