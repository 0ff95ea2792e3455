"""Devices: the signed-in devices and their custom names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar.params import JSONBody

from server.api.base import operation
from server.context import ServerContext
from server.errors import BadRequestError
from server.guid import parse_guid
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.engine import Row


async def _dto(ctx: ServerContext, d: Row[Any]) -> w.DeviceInfoDto:
    options = await ctx.tokens.device_options(d.device_id)
    user = await ctx.users.find(d.user_id)
    return w.DeviceInfoDto(Name=d.device_name, CustomName=options.custom_name, AccessToken=d.access_token,
                           Id=d.device_id, LastUserName=user.name if user else None, AppName=d.app_name,
                           AppVersion=d.app_version, LastUserId=d.user_id, DateLastActivity=d.date_last_activity,
                           Capabilities=w.ClientCapabilitiesDto(PlayableMediaTypes=[], SupportedCommands=[],
                                                                SupportsMediaControl=False,
                                                                SupportsPersistentIdentifier=True),
                           IconUrl=None)


def _require_id(value: str | None) -> str:
    if not value:
        raise BadRequestError("The device id (query parameter 'id') is required.")
    return value


@operation("GetDevices")
async def get_devices(ctx: ServerContext, userId: str | None = None) -> w.DeviceInfoDtoQueryResult:
    devices = await ctx.tokens.devices(parse_guid(userId, "userId") if userId else None)
    items = [await _dto(ctx, d) for d in devices]
    return w.DeviceInfoDtoQueryResult(Items=items, TotalRecordCount=len(items), StartIndex=0)


@operation("GetDeviceInfo")
async def get_device_info(ctx: ServerContext, id: str | None = None) -> w.DeviceInfoDto:
    return await _dto(ctx, await ctx.tokens.device(_require_id(id)))


@operation("GetDeviceOptions")
async def get_device_options(ctx: ServerContext, id: str | None = None) -> w.DeviceOptionsDto:
    device = await ctx.tokens.device(_require_id(id))
    options = await ctx.tokens.device_options(device.device_id)
    return w.DeviceOptionsDto(Id=device.id, DeviceId=device.device_id, CustomName=options.custom_name)


@operation("UpdateDeviceOptions")
async def update_device_options(ctx: ServerContext, data: JSONBody[w.DeviceOptionsDto], id: str | None = None) -> None:
    await ctx.tokens.set_device_name(_require_id(id), data.CustomName)


@operation("DeleteDevice")
async def delete_device(ctx: ServerContext, id: str | None = None) -> None:
    device_id = _require_id(id)
    await ctx.tokens.delete_device(device_id)
    ctx.sessions.end(device_id)
