"""Startup: the first-run wizard. Open to anyone until it completes, then admin-only
(the guard reads the FirstTimeSetupOrElevated scope)."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation
from server.context import ServerContext
from server.system import startup
from server.wire import models as w


@operation("GetStartupConfiguration")
async def get_startup_configuration(ctx: ServerContext) -> w.StartupConfigurationDto:
    return startup.get_startup_configuration(ctx.config)


@operation("UpdateInitialConfiguration")
async def update_initial_configuration(ctx: ServerContext, data: JSONBody[w.StartupConfigurationDto]) -> None:
    startup.update_startup_configuration(ctx.config, data)


@operation("GetFirstUser")
async def get_first_user(ctx: ServerContext) -> w.StartupUserDto:
    return await startup.get_startup_user(ctx.users)


@operation("GetFirstUser_2")
async def get_first_user_2(ctx: ServerContext) -> w.StartupUserDto:
    return await startup.get_startup_user(ctx.users)


@operation("UpdateStartupUser")
async def update_startup_user(ctx: ServerContext, data: JSONBody[w.StartupUserDto]) -> None:
    await startup.update_startup_user(ctx.users, data)


@operation("SetRemoteAccess")
async def set_remote_access(ctx: ServerContext, data: JSONBody[w.StartupRemoteAccessDto]) -> None:
    startup.set_remote_access(ctx.config, data)


@operation("CompleteWizard")
async def complete_wizard(ctx: ServerContext) -> None:
    startup.complete(ctx.config)
