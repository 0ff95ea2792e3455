"""Signing in: check the credentials, issue a device token, record the activity."""

from __future__ import annotations

from server.auth.header import ClientIdentity
from server.context import ServerContext
from server.errors import BadRequestError, UnauthorizedError
from server.users.service import UserRecord, user_dto
from server.wire import models as w


async def authentication_result(ctx: ServerContext, user: UserRecord, identity: ClientIdentity,
                                remote: str) -> w.AuthenticationResult:
    token = await ctx.tokens.issue(user, identity)
    auth = await ctx.tokens.authenticate(ClientIdentity(token, identity.client, identity.device,
                                                        identity.device_id, identity.version))
    assert auth is not None
    session = ctx.sessions.touch(auth, remote)
    dto = session.to_dto(ctx.system_id, False)
    return w.AuthenticationResult(User=user_dto(user, ctx.system_id), SessionInfo=dto, AccessToken=token,
                                  ServerId=ctx.system_id)


async def sign_in_by_name(ctx: ServerContext, name: str | None, password: str | None, identity: ClientIdentity,
                          remote: str) -> w.AuthenticationResult:
    if not name:
        raise BadRequestError("A user name is required.")
    if not identity.device_id:
        identity = ClientIdentity(identity.token, identity.client or "Unknown", identity.device or "Unknown",
                                  f"anon-{remote}", identity.version)
    try:
        user = await ctx.users.verify_login(name, password or "")
    except UnauthorizedError:
        await ctx.activity.add(f"{name} failed to sign in from {identity.client or 'an unknown client'}",
                               "AuthenticationFailed", short_overview=f"IP address: {remote}", severity="Error")
        raise
    result = await authentication_result(ctx, user, identity, remote)
    await ctx.activity.add(f"{user.name} signed in from {identity.client or 'an unknown client'}",
                           "AuthenticationSucceeded", user_id=user.id, short_overview=f"IP address: {remote}")
    return result
