"""Users: listing, sign-in, creation, passwords, policies and configuration."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.params import JSONBody

from server.api.base import operation, require_user
from server.auth.header import identify
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.guid import parse_guid
from server.users.service import user_dto
from server.wire import models as w
from server.wire.body import null_fields


def _identity(request: Request[Any, Any, Any]):
    return identify({k.lower(): v for k, v in request.headers.items()},
                    {k.lower(): v for k, v in request.query_params.items()})


def _remote(request: Request[Any, Any, Any]) -> str:
    return request.client.host if request.client else ""


async def _target_user_id(ctx: ServerContext, auth: AuthInfo, user_id: str | None) -> str:
    """The user a self-service operation acts on: the caller, or (for an admin) any user."""
    if user_id:
        target = parse_guid(user_id, "userId")
        if target != auth.user_id and not auth.is_admin:
            raise ForbiddenError("Only an administrator may change another user.")
        await ctx.users.get(target)
        return target
    if auth.user_id is None:
        raise BadRequestError("userId is required when calling with an API key.")
    return auth.user_id


@operation("GetUsers")
async def get_users(ctx: ServerContext, auth: AuthInfo | None, isHidden: bool | None = None,
                    isDisabled: bool | None = None) -> list[w.UserDto]:
    auth = require_user(auth)
    users = await ctx.users.all()
    if not auth.is_admin:
        users = [u for u in users if u.id == auth.user_id]
    if isHidden is not None:
        users = [u for u in users if bool(u.policy.IsHidden) == isHidden]
    if isDisabled is not None:
        users = [u for u in users if u.is_disabled == isDisabled]
    return [user_dto(u, ctx.system_id) for u in users]


@operation("GetPublicUsers")
async def get_public_users(ctx: ServerContext) -> list[w.UserDto]:
    users = await ctx.users.all()
    return [user_dto(u, ctx.system_id) for u in users if not u.policy.IsHidden and not u.is_disabled]


@operation("GetUserById")
async def get_user_by_id(ctx: ServerContext, auth: AuthInfo | None, userId: str) -> w.UserDto:
    auth = require_user(auth)
    target = parse_guid(userId, "userId")
    user = await ctx.users.get(target)
    if not auth.is_admin and auth.user_id != target and user.policy.IsHidden:
        raise NotFoundError(f"User {userId} not found.")
    return user_dto(user, ctx.system_id)


@operation("GetCurrentUser")
async def get_current_user(ctx: ServerContext, auth: AuthInfo | None) -> w.UserDto:
    auth = require_user(auth)
    if auth.user is None:
        raise BadRequestError("An API key has no user.")
    return user_dto(await ctx.users.get(auth.user.id), ctx.system_id)


@operation("DeleteUser")
async def delete_user(ctx: ServerContext, auth: AuthInfo | None, userId: str) -> None:
    target = parse_guid(userId, "userId")
    user = await ctx.users.delete(target)
    await ctx.tokens.revoke_user(target)
    ctx.sessions.end_user(target)
    await ctx.activity.add(f"User {user.name} has been deleted", "UserDeleted",
                           user_id=auth.user_id if auth else None)
    ctx.events.publish("UserDeleted", target)


@operation("AuthenticateUserByName")
async def authenticate_user_by_name(ctx: ServerContext, request: Request[Any, Any, Any],
                                    data: JSONBody[w.AuthenticateUserByName]) -> w.AuthenticationResult:
    return await ctx.signin.sign_in_by_name(data.Username, data.Pw, _identity(request), _remote(request))


@operation("AuthenticateWithQuickConnect")
async def authenticate_with_quick_connect(ctx: ServerContext, request: Request[Any, Any, Any],
                                          data: JSONBody[w.QuickConnectDto]) -> w.AuthenticationResult:
    user_id = ctx.quick_connect.redeem(data.Secret or "")
    user = await ctx.users.get(user_id)
    return await ctx.signin.authentication_result(user, _identity(request), _remote(request))


@operation("UpdateUser")
async def update_user(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.UserDto], userId: str | None = None) -> None:
    auth = require_user(auth)
    target = await _target_user_id(ctx, auth, userId)
    if data.Name is not None:
        await ctx.users.rename(target, data.Name)
    if data.Configuration is not None:
        await ctx.users.set_configuration(target, data.Configuration)


@operation("UpdateUserConfiguration")
async def update_user_configuration(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.UserConfiguration],
                                    userId: str | None = None) -> None:
    auth = require_user(auth)
    target = await _target_user_id(ctx, auth, userId)
    await ctx.users.set_configuration(target, data)


@operation("UpdateUserPolicy")
async def update_user_policy(ctx: ServerContext, auth: AuthInfo | None, userId: str, data: JSONBody[w.UserPolicy],
                             request: Request[Any, Any, Any]) -> None:
    target = parse_guid(userId, "userId")
    if auth and auth.user_id == target and data.IsAdministrator is False:
        raise ForbiddenError("Administrators cannot remove their own administrator rights.")
    before = await ctx.users.get(target)
    after = await ctx.users.set_policy(target, data, null_fields(await request.body(), w.UserPolicy))
    if after.is_disabled and not before.is_disabled:
        await ctx.tokens.revoke_user(target)
        ctx.sessions.end_user(target)


@operation("UpdateUserPassword")
async def update_user_password(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.UpdateUserPassword],
                               userId: str | None = None) -> None:
    auth = require_user(auth)
    target = await _target_user_id(ctx, auth, userId)
    if data.ResetPassword:
        if not auth.is_admin:
            raise ForbiddenError("Only an administrator may reset a password.")
        await ctx.users.set_password(target, None)
        return
    # As Jellyfin: users prove their current password; so does an admin naming itself by userId.
    if not auth.is_admin or (userId and target == auth.user_id):
        if not await ctx.users.check_password(target, data.CurrentPw or ""):
            await ctx.activity.add("A password change failed: wrong current password", "UserPasswordChangeFailed",
                                   user_id=target, severity="Warning")
            raise ForbiddenError("The current password is not correct.")
    await ctx.users.set_password(target, data.NewPw or None)
    await ctx.tokens.revoke_user(target, except_token=auth.token)
    await ctx.activity.add("Password changed", "UserPasswordChanged", user_id=target)


@operation("CreateUserByName")
async def create_user_by_name(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.CreateUserByName]) -> w.UserDto:
    user = await ctx.users.create(data.Name, data.Password or None)
    await ctx.activity.add(f"User {user.name} has been created", "UserCreated",
                           user_id=auth.user_id if auth else None)
    return user_dto(user, ctx.system_id)


@operation("ForgotPassword")
async def forgot_password(ctx: ServerContext, request: Request[Any, Any, Any], data: JSONBody[w.ForgotPasswordDto]) -> w.ForgotPasswordResult:
    # A home server has no mail: tell the person to ask the administrator, like Jellyfin does
    # for requests from outside the local network.
    return w.ForgotPasswordResult(Action="ContactAdmin")


@operation("ForgotPasswordPin")
async def forgot_password_pin(data: JSONBody[w.ForgotPasswordPinDto]) -> w.PinRedeemResult:
    return w.PinRedeemResult(Success=False, UsersReset=[])
