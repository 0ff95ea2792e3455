"""ScheduledTasks: list, inspect, start, stop, and change triggers."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation
from server.context import ServerContext
from server.wire import models as w


@operation("GetTasks")
async def get_tasks(ctx: ServerContext, isHidden: bool | None = None, isEnabled: bool | None = None) -> list[w.TaskInfo]:
    return ctx.tasks.infos(isHidden, isEnabled)


@operation("GetTask")
async def get_task(ctx: ServerContext, taskId: str) -> w.TaskInfo:
    return ctx.tasks.info(ctx.tasks.find(taskId))


@operation("StartTask")
async def start_task(ctx: ServerContext, taskId: str) -> None:
    ctx.tasks.start(ctx.tasks.find(taskId).id)


@operation("StopTask")
async def stop_task(ctx: ServerContext, taskId: str) -> None:
    ctx.tasks.cancel(ctx.tasks.find(taskId).id)


@operation("UpdateTask")
async def update_task(ctx: ServerContext, taskId: str, data: JSONBody[list[w.TaskTriggerInfo]]) -> None:
    await ctx.tasks.update_triggers(ctx.tasks.find(taskId).id, data)
