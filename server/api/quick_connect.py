"""QuickConnect: initiate on the new device, authorize from a signed-in one, then sign in."""

from __future__ import annotations

from typing import Any

from litestar import Request

from server.api.base import operation, require_user
from server.api.users import _identity, _target_user_id
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.wire import models as w


@operation("GetQuickConnectEnabled")
async def get_quick_connect_enabled(ctx: ServerContext) -> bool:
    return ctx.quick_connect.enabled


@operation("InitiateQuickConnect")
async def initiate_quick_connect(ctx: ServerContext, request: Request[Any, Any, Any]) -> w.QuickConnectResult:
    ident = _identity(request)
    if not ident.device_id:
        raise BadRequestError("The authorization header must name the DeviceId.")
    return ctx.quick_connect.initiate(ident.device_id, ident.device or "", ident.client or "", ident.version or "")


@operation("GetQuickConnectState")
async def get_quick_connect_state(ctx: ServerContext, secret: str) -> w.QuickConnectResult:
    return ctx.quick_connect.state(secret)


@operation("AuthorizeQuickConnect")
async def authorize_quick_connect(ctx: ServerContext, auth: AuthInfo | None, code: str,
                                  userId: str | None = None) -> bool:
    auth = require_user(auth)
    target = await _target_user_id(ctx, auth, userId)
    return ctx.quick_connect.authorize(code, target)
