"""Playstate: marking items played and unplayed (server/library/browse/playstate.py)."""

from __future__ import annotations

from datetime import datetime

from server.api.base import operation
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, ForbiddenError
from server.guid import parse_guid
from server.wire import models as w


def _user_for(auth: AuthInfo | None, userId: str | None) -> str:
    if userId:
        target = parse_guid(userId, "userId")
        if auth is not None and auth.user is not None and target != auth.user_id and not auth.is_admin:
            raise ForbiddenError("Only an administrator may change another user's data.")
        return target
    if auth is None or auth.user_id is None:
        raise BadRequestError("userId is required when calling with an API key.")
    return auth.user_id


@operation("MarkPlayedItem")
async def mark_played_item(ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None,
                           datePlayed: datetime | None = None) -> w.UserItemDataDto:
    return await ctx.browse.playstate.mark(_user_for(auth, userId), itemId, True, datePlayed)


@operation("MarkUnplayedItem")
async def mark_unplayed_item(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                             userId: str | None = None) -> w.UserItemDataDto:
    return await ctx.browse.playstate.mark(_user_for(auth, userId), itemId, False)
