"""Signing in: check the credentials, issue a device token, record the activity."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.auth.header import ClientIdentity
from server.errors import BadRequestError, UnauthorizedError
from server.users.service import AccountLockedError, UserRecord, user_dto
from server.wire import models as w

if TYPE_CHECKING:
    from server.auth.service import TokenService
    from server.auth.throttle import SignInThrottle
    from server.sessions.manager import SessionManager
    from server.system.activity import ActivityLog
    from server.users.service import UserService


def _is_loopback(remote: str) -> bool:
    return remote in ("127.0.0.1", "::1", "localhost") or remote.startswith("127.") or remote == "::ffff:127.0.0.1"


class SignInService:
    """``ctx.signin``: AuthenticateByName and the result every way of signing in answers."""

    def __init__(self, users: UserService, tokens: TokenService, sessions: SessionManager, activity: ActivityLog,
                 throttle: SignInThrottle, server_id: str) -> None:
        self.users = users
        self.tokens = tokens
        self.sessions = sessions
        self.activity = activity
        self.throttle = throttle
        self.server_id = server_id

    async def authentication_result(self, user: UserRecord, identity: ClientIdentity,
                                    remote: str) -> w.AuthenticationResult:
        token = await self.tokens.issue(user, identity)
        auth = await self.tokens.authenticate(ClientIdentity(token, identity.client, identity.device,
                                                             identity.device_id, identity.version))
        assert auth is not None
        session = self.sessions.touch(auth, remote)
        dto = session.to_dto(self.server_id, False)
        return w.AuthenticationResult(User=user_dto(user, self.server_id), SessionInfo=dto, AccessToken=token,
                                      ServerId=self.server_id)

    async def _desktop_caller(self, identity: ClientIdentity, remote: str) -> bool:
        """The tray (or another local admin tool) signing in on this machine with an API key: never
        rate-limited nor locked out, so a stranger's failed guesses cannot lock the owner out."""
        if not identity.token or not _is_loopback(remote):
            return False
        auth = await self.tokens.authenticate(identity)
        return auth is not None and auth.is_api_key

    async def sign_in_by_name(self, name: str | None, password: str | None, identity: ClientIdentity,
                              remote: str) -> w.AuthenticationResult:
        if not name:
            raise BadRequestError("A user name is required.")
        trusted = await self._desktop_caller(identity, remote)
        if not trusted:
            self.throttle.admit(remote, name)
        if not identity.device_id:
            identity = ClientIdentity(identity.token, identity.client or "Unknown", identity.device or "Unknown",
                                      f"anon-{remote}", identity.version)
        client = identity.client or "an unknown client"
        try:
            user = await self.users.verify_login(name, password or "", exempt_from_lockout=trusted)
        except AccountLockedError as exc:
            if not trusted and exc.newly:  # refusals while locked cost no password work
                self.throttle.failed(remote, name)
            if exc.newly:
                await self.activity.add(f"{exc.user.name} failed to sign in from {client}", "AuthenticationFailed",
                                        user_id=exc.user.id, short_overview=f"IP address: {remote}", severity="Error")
                await self.activity.add(
                    f"User {exc.user.name} has been locked out for {max(1, round(exc.seconds / 60))} minutes",
                    "UserLockedOut", user_id=exc.user.id,
                    short_overview=f"After {exc.user.policy.InvalidLoginAttemptCount} failed sign-in attempts; "
                                   f"last from IP address {remote}", severity="Warning")
            raise
        except UnauthorizedError:
            if not trusted:
                self.throttle.failed(remote, name)
            await self.activity.add(f"{name} failed to sign in from {client}",
                                    "AuthenticationFailed", short_overview=f"IP address: {remote}", severity="Error")
            raise
        self.throttle.succeeded(remote, name)
        result = await self.authentication_result(user, identity, remote)
        await self.activity.add(f"{user.name} signed in from {client}",
                                "AuthenticationSucceeded", user_id=user.id, short_overview=f"IP address: {remote}")
        return result
