"""Session: the live sessions list, capabilities, sign-out, and auth provider lists."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.guid import parse_guid
from server.wire import models as w
from server.wire.models import ENUMS


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
async def post_full_capabilities(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.ClientCapabilitiesDto],
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


# -- remote control: commands reach the target session's sockets ---------------------------


def _controllable(ctx: ServerContext, auth: AuthInfo | None, session_id: str):
    auth = require_user(auth)
    session = ctx.sessions.by_id(session_id)
    if session is None:
        raise NotFoundError(f"Session {session_id} not found.")
    if not auth.is_admin and session.user_id != auth.user_id:
        user = auth.user
        if user is None or not user.policy.EnableRemoteControlOfOtherUsers:
            raise ForbiddenError("This user may not control other users' sessions.")
    return session


def _deliver(ctx: ServerContext, session, message_type: str, data) -> None:
    if ctx.events.send_to_device(session.device_id, message_type, data) == 0:
        raise BadRequestError(f"Session {session.id} has no open socket to receive commands.")


@operation("SendFullGeneralCommand")
async def send_full_general_command(ctx: ServerContext, auth: AuthInfo | None, sessionId: str,
                                    data: JSONBody[w.GeneralCommand]) -> None:
    session = _controllable(ctx, auth, sessionId)
    if not data.Name:
        raise BadRequestError("A command Name is required.")
    _deliver(ctx, session, "GeneralCommand", w.GeneralCommand(Name=data.Name, ControllingUserId=auth.user_id,
                                                              Arguments=data.Arguments or {}))


@operation("SendGeneralCommand")
async def send_general_command(ctx: ServerContext, auth: AuthInfo | None, sessionId: str, command: str) -> None:
    session = _controllable(ctx, auth, sessionId)
    if command not in ENUMS["GeneralCommandType"]:
        raise BadRequestError(f"Unknown command {command!r}.")
    _deliver(ctx, session, "GeneralCommand", w.GeneralCommand(Name=command, ControllingUserId=auth.user_id,
                                                              Arguments={}))


@operation("SendMessageCommand")
async def send_message_command(ctx: ServerContext, auth: AuthInfo | None, sessionId: str,
                               data: JSONBody[w.MessageCommand]) -> None:
    session = _controllable(ctx, auth, sessionId)
    if not data.Text:
        raise BadRequestError("A message Text is required.")
    args = {"Header": data.Header or "Message from server", "Text": data.Text}
    if data.TimeoutMs:
        args["TimeoutMs"] = str(data.TimeoutMs)
    _deliver(ctx, session, "GeneralCommand", w.GeneralCommand(Name="DisplayMessage", ControllingUserId=auth.user_id,
                                                              Arguments=args))


@operation("Play")
async def play(ctx: ServerContext, auth: AuthInfo | None, sessionId: str, playCommand: str,
               itemIds: list[str], startPositionTicks: int | None = None, mediaSourceId: str | None = None,
               audioStreamIndex: int | None = None, subtitleStreamIndex: int | None = None,
               startIndex: int | None = None) -> None:
    session = _controllable(ctx, auth, sessionId)
    if playCommand not in ENUMS["PlayCommand"]:
        raise BadRequestError(f"Unknown play command {playCommand!r}.")
    _deliver(ctx, session, "Play", w.PlayRequest(
        ItemIds=itemIds, StartPositionTicks=startPositionTicks, PlayCommand=playCommand,
        ControllingUserId=auth.user_id, SubtitleStreamIndex=subtitleStreamIndex, AudioStreamIndex=audioStreamIndex,
        MediaSourceId=mediaSourceId, StartIndex=startIndex))


@operation("SendPlaystateCommand")
async def send_playstate_command(ctx: ServerContext, auth: AuthInfo | None, sessionId: str, command: str,
                                 seekPositionTicks: int | None = None, controllingUserId: str | None = None) -> None:
    session = _controllable(ctx, auth, sessionId)
    if command not in ENUMS["PlaystateCommand"]:
        raise BadRequestError(f"Unknown playstate command {command!r}.")
    _deliver(ctx, session, "Playstate", w.PlaystateRequest(Command=command, SeekPositionTicks=seekPositionTicks,
                                                           ControllingUserId=controllingUserId or auth.user_id))


@operation("SendSystemCommand")
async def send_system_command(ctx: ServerContext, auth: AuthInfo | None, sessionId: str, command: str) -> None:
    session = _controllable(ctx, auth, sessionId)
    if command not in ENUMS["GeneralCommandType"]:
        raise BadRequestError(f"Unknown command {command!r}.")
    _deliver(ctx, session, "GeneralCommand", w.GeneralCommand(Name=command, ControllingUserId=auth.user_id,
                                                              Arguments={}))


@operation("DisplayContent")
async def display_content(ctx: ServerContext, auth: AuthInfo | None, sessionId: str, itemType: str,
                          itemId: str, itemName: str) -> None:
    session = _controllable(ctx, auth, sessionId)
    _deliver(ctx, session, "GeneralCommand", w.GeneralCommand(
        Name="DisplayContent", ControllingUserId=auth.user_id,
        Arguments={"ItemId": itemId, "ItemName": itemName, "ItemType": itemType}))


@operation("AddUserToSession")
async def add_user_to_session(ctx: ServerContext, auth: AuthInfo | None, sessionId: str, userId: str) -> None:
    session = _controllable(ctx, auth, sessionId)
    user = await ctx.users.get(parse_guid(userId, "userId"))
    extra = session.extra.setdefault("additional_users", {})
    extra[user.id] = user.name


@operation("RemoveUserFromSession")
async def remove_user_from_session(ctx: ServerContext, auth: AuthInfo | None, sessionId: str, userId: str) -> None:
    session = _controllable(ctx, auth, sessionId)
    session.extra.setdefault("additional_users", {}).pop(parse_guid(userId, "userId"), None)


@operation("ReportViewing")
async def report_viewing(ctx: ServerContext, auth: AuthInfo | None, itemId: str, sessionId: str | None = None) -> None:
    auth = require_user(auth)
    session = (ctx.sessions.by_id(sessionId) if sessionId else None) or ctx.sessions.by_device(auth.device_id)
    if session is not None:
        session.extra["now_viewing"] = parse_guid(itemId, "itemId")
