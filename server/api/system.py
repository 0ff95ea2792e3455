"""System: info, ping, endpoint, logs, restart and shutdown, time, Wake-on-LAN."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from litestar import Request

from server.api.base import operation
from server.context import ServerContext
from server.net.wake import wake_on_lan_info
from server.playback.range_response import RangeFileResponse
from server.system import logfiles
from server.version import JELLYFIN_PRODUCT_NAME
from server.wire import models as w


def _host(request: Request[Any, Any, Any]) -> str | None:
    return request.headers.get("host")


@operation("GetPublicSystemInfo")
async def get_public_system_info(ctx: ServerContext, request: Request[Any, Any, Any]) -> w.PublicSystemInfo:
    return ctx.system_info.public_info(_host(request))


@operation("GetSystemInfo")
async def get_system_info(ctx: ServerContext, request: Request[Any, Any, Any]) -> w.SystemInfo:
    return await asyncio.to_thread(ctx.system_info.system_info, _host(request))


@operation("GetPingSystem")
async def get_ping_system() -> str:
    return JELLYFIN_PRODUCT_NAME


@operation("PostPingSystem")
async def post_ping_system() -> str:
    return JELLYFIN_PRODUCT_NAME


@operation("GetEndpointInfo")
async def get_endpoint_info(ctx: ServerContext, request: Request[Any, Any, Any]) -> w.EndPointInfo:
    client = request.client.host if request.client else ""
    return w.EndPointInfo(IsLocal=ctx.is_local_address(client), IsInNetwork=ctx.is_local_address(client))


@operation("GetServerLogs")
async def get_server_logs(ctx: ServerContext) -> list[w.LogFile]:
    return await asyncio.to_thread(logfiles.list_logs, ctx.paths.log_dir)


@operation("GetLogFile", media_type="text/plain")
async def get_log_file(ctx: ServerContext, name: str | None = None) -> RangeFileResponse:
    """The log as text; a ``Range`` request gets only the bytes asked for (206), which is how the
    desktop log viewer tails a growing log without downloading it again."""
    path = logfiles.log_file_path(ctx.paths.log_dir, name)
    return RangeFileResponse(path, media_type="text/plain; charset=utf-8",
                             headers={"Content-Disposition": f'inline; filename="{path.name}"'})


@operation("RestartApplication")
async def restart_application(ctx: ServerContext) -> None:
    asyncio.get_running_loop().call_later(0.2, ctx.request_restart)


@operation("ShutdownApplication")
async def shutdown_application(ctx: ServerContext) -> None:
    asyncio.get_running_loop().call_later(0.2, ctx.request_shutdown)


@operation("GetWakeOnLanInfo")
async def get_wake_on_lan_info() -> list[w.WakeOnLanInfo]:
    found = await asyncio.to_thread(wake_on_lan_info)
    # Jellyfin writes a PhysicalAddress without separators.
    return [w.WakeOnLanInfo(MacAddress=i.mac_address.replace(":", ""), Port=i.port) for i in found]


@operation("GetUtcTime")
async def get_utc_time() -> w.UtcTimeResponse:
    now = datetime.now(UTC)
    return w.UtcTimeResponse(RequestReceptionTime=now, ResponseTransmissionTime=datetime.now(UTC))
