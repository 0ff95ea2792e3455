"""DisplayPreferences: per-user, per-client view settings."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation, require_user
from server.api.users import _target_user_id
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.users import display_preferences as prefs
from server.wire import models as w


@operation("GetDisplayPreferences")
async def get_display_preferences(ctx: ServerContext, auth: AuthInfo | None, displayPreferencesId: str,
                                  userId: str | None = None, client: str | None = None) -> w.DisplayPreferencesDto:
    target = await _target_user_id(ctx, require_user(auth), userId)
    return await prefs.get_preferences(ctx.db, target, displayPreferencesId, client or "emby")


@operation("UpdateDisplayPreferences")
async def update_display_preferences(ctx: ServerContext, auth: AuthInfo | None, displayPreferencesId: str,
                                     data: JSONBody[w.DisplayPreferencesDto], userId: str | None = None,
                                     client: str | None = None) -> None:
    target = await _target_user_id(ctx, require_user(auth), userId)
    await prefs.save_preferences(ctx.db, target, displayPreferencesId, client or "emby", data)
