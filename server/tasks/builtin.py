"""The server's own maintenance tasks: clean logs, clean the transcode cache, optimise the
database. Other domains register theirs (the library scan) the same way."""

from __future__ import annotations

import asyncio
import shutil
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import text

from server.db.dialect import optimize_statements
from server.tasks.scheduler import Progress, daily, interval, startup
from server.wire import models as w

if TYPE_CHECKING:
    from server.context import ServerContext


@dataclass
class CleanLogsTask:
    ctx: ServerContext
    key: str = "CleanLogFiles"
    name: str = "Clean log directory"
    description: str = "Deletes log files older than the configured retention."
    category: str = "Maintenance"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [interval(24)])

    async def run(self, progress: Progress) -> None:
        days = self.ctx.config.server().LogFileRetentionDays or 3
        cutoff = time.time() - days * 86400

        def clean() -> None:
            for f in self.ctx.paths.log_dir.glob("*"):
                if f.is_file() and f.name != "reelroom.log" and f.stat().st_mtime < cutoff:
                    f.unlink(missing_ok=True)

        await asyncio.to_thread(clean)
        retention = self.ctx.config.server().ActivityLogRetentionDays or 30
        await self.ctx.activity.prune(datetime.now(UTC) - timedelta(days=retention))
        progress(100)


@dataclass
class CleanTranscodeTask:
    ctx: ServerContext
    key: str = "DeleteTranscodeFiles"
    name: str = "Clean transcode directory"
    description: str = "Deletes transcode files more than one day old."
    category: str = "Maintenance"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [startup(), interval(24)])

    async def run(self, progress: Progress) -> None:
        cutoff = time.time() - 86400
        root = self.ctx.paths.transcode_dir

        def clean() -> None:
            for entry in root.glob("*"):
                try:
                    if entry.stat().st_mtime >= cutoff:
                        continue
                    if entry.is_dir():
                        shutil.rmtree(entry, ignore_errors=True)
                    else:
                        entry.unlink(missing_ok=True)
                except OSError:
                    continue

        await asyncio.to_thread(clean)
        progress(100)


@dataclass
class OptimizeDatabaseTask:
    ctx: ServerContext
    key: str = "OptimizeDatabaseTask"
    name: str = "Optimize database"
    description: str = "Compacts the database and refreshes its query statistics."
    category: str = "Maintenance"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [daily(3)])

    async def run(self, progress: Progress) -> None:
        db = self.ctx.db

        def optimize(session) -> None:
            for statement in optimize_statements(db.dialect):
                session.exec(text(statement))

        await db.write(optimize)
        progress(100)


@dataclass
class RefreshGuideTask:
    ctx: ServerContext
    key: str = "RefreshGuide"
    name: str = "Refresh Guide"
    description: str = "Reads the TV guide from the listing providers and schedules series recordings."
    category: str = "Live TV"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [startup(), interval(24)])

    async def run(self, progress: Progress) -> None:
        from server.livetv.tuners import GuideRefreshError

        try:
            await self.ctx.livetv.refresh_guide()
        except GuideRefreshError:
            await self.ctx.recordings.apply_series_timers()  # from what the other providers gave
            raise  # the task ends Failed with the reason
        progress(80)
        await self.ctx.recordings.apply_series_timers()
        progress(100)


def register_builtin_tasks(ctx: ServerContext) -> None:
    for task in (CleanLogsTask(ctx), CleanTranscodeTask(ctx), OptimizeDatabaseTask(ctx), RefreshGuideTask(ctx)):
        ctx.tasks.register(task)
