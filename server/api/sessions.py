"""Session: the live sessions list, capabilities, sign-out, and auth provider lists."""

from __future__ import annotations

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.guid import parse_guid
from server.wire import models as w


@operation("GetSessions")
async def get_sessions(ctx: ServerContext, auth: AuthInfo | None, controllableByUserId: str | None = None,
                       deviceId: str | None = None, activeWithinSeconds: int | None = None) -> list[w.SessionInfoDto]:
    auth = require_user(auth)
    user_filter = None
    if controllableByUserId:
        user_filter = parse_guid(controllableByUserId, "controllableByUserId")
    elif not auth.is_admin:
        user_filter = auth.user_id
    sessions = ctx.sessions.list(device_id=deviceId, active_within_seconds=activeWithinSeconds)
    if user_filter is not None:
        controller = await ctx.users.find(user_filter)
        if controller is None or not controller.policy.EnableRemoteControlOfOtherUsers:
            sessions = [s for s in sessions if s.user_id == user_filter]
    return ctx.sessions.dtos(sessions)


@operation("PostCapabilities")
async def post_capabilities(ctx: ServerContext, auth: AuthInfo | None, id: str | None = None,
                            playableMediaTypes: list[str] | None = None, supportedCommands: list[str] | None = None,
                            supportsMediaControl: bool = False, supportsPersistentIdentifier: bool = True) -> None:
    auth = require_user(auth)
    session = (ctx.sessions.by_id(id) if id else None) or ctx.sessions.by_device(auth.device_id)
    if session is not None:
        session.capabilities = w.ClientCapabilitiesDto(
            PlayableMediaTypes=playableMediaTypes or [], SupportedCommands=supportedCommands or [],
            SupportsMediaControl=supportsMediaControl, SupportsPersistentIdentifier=supportsPersistentIdentifier)


@operation("PostFullCapabilities")
async def post_full_capabilities(ctx: ServerContext, auth: AuthInfo | None, data: w.ClientCapabilitiesDto,
                                 id: str | None = None) -> None:
    auth = require_user(auth)
    session = (ctx.sessions.by_id(id) if id else None) or ctx.sessions.by_device(auth.device_id)
    if session is not None:
        session.capabilities = data


@operation("ReportSessionEnded")
async def report_session_ended(ctx: ServerContext, auth: AuthInfo | None) -> None:
    auth = require_user(auth)
    if not auth.is_api_key:
        await ctx.tokens.revoke(auth.token)
    ctx.sessions.end(auth.device_id)


@operation("GetAuthProviders")
async def get_auth_providers() -> list[w.NameIdPair]:
    return [w.NameIdPair(Name="Default", Id="Jellyfin.Server.Implementations.Users.DefaultAuthenticationProvider")]


@operation("GetPasswordResetProviders")
async def get_password_reset_providers() -> list[w.NameIdPair]:
    return [w.NameIdPair(Name="Default", Id="Jellyfin.Server.Implementations.Users.DefaultPasswordResetProvider")]
