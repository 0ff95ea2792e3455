"""Signing in: check the credentials, issue a device token, record the activity."""

from __future__ import annotations

from server.auth.header import ClientIdentity
from server.context import ServerContext
from server.errors import BadRequestError, UnauthorizedError
from server.users.service import AccountLockedError, UserRecord, user_dto
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


def _is_loopback(remote: str) -> bool:
    return remote in ("127.0.0.1", "::1", "localhost") or remote.startswith("127.") or remote == "::ffff:127.0.0.1"


async def _desktop_caller(ctx: ServerContext, identity: ClientIdentity, remote: str) -> bool:
    """The tray (or another local admin tool) signing in on this machine with an API key: never
    rate-limited nor locked out, so a stranger's failed guesses cannot lock the owner out."""
    if not identity.token or not _is_loopback(remote):
        return False
    auth = await ctx.tokens.authenticate(identity)
    return auth is not None and auth.is_api_key


async def sign_in_by_name(ctx: ServerContext, name: str | None, password: str | None, identity: ClientIdentity,
                          remote: str) -> w.AuthenticationResult:
    if not name:
        raise BadRequestError("A user name is required.")
    trusted = await _desktop_caller(ctx, identity, remote)
    if not trusted:
        ctx.signin_throttle.admit(remote, name)
    if not identity.device_id:
        identity = ClientIdentity(identity.token, identity.client or "Unknown", identity.device or "Unknown",
                                  f"anon-{remote}", identity.version)
    client = identity.client or "an unknown client"
    try:
        user = await ctx.users.verify_login(name, password or "", exempt_from_lockout=trusted)
    except AccountLockedError as exc:
        if not trusted and exc.newly:  # refusals while locked cost no password work
            ctx.signin_throttle.failed(remote, name)
        if exc.newly:
            await ctx.activity.add(f"{exc.user.name} failed to sign in from {client}", "AuthenticationFailed",
                                   user_id=exc.user.id, short_overview=f"IP address: {remote}", severity="Error")
            await ctx.activity.add(
                f"User {exc.user.name} has been locked out for {max(1, round(exc.seconds / 60))} minutes",
                "UserLockedOut", user_id=exc.user.id,
                short_overview=f"After {exc.user.policy.InvalidLoginAttemptCount} failed sign-in attempts; "
                               f"last from IP address {remote}", severity="Warning")
        raise
    except UnauthorizedError:
        if not trusted:
            ctx.signin_throttle.failed(remote, name)
        await ctx.activity.add(f"{name} failed to sign in from {client}",
                               "AuthenticationFailed", short_overview=f"IP address: {remote}", severity="Error")
        raise
    ctx.signin_throttle.succeeded(remote, name)
    result = await authentication_result(ctx, user, identity, remote)
    await ctx.activity.add(f"{user.name} signed in from {client}",
                           "AuthenticationSucceeded", user_id=user.id, short_overview=f"IP address: {remote}")
    return result
