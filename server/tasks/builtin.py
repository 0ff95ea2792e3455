"""The server's own maintenance tasks: clean logs, clean the transcode cache, optimise the
database. Each takes what it works on; the server context registers them, and the other domains'
tasks (the library scan, the guide, ...) the same way."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text

from server.db.dialect import optimize_statements
from server.tasks.scheduler import Progress, daily, interval, startup
from server.wire import models as w

if TYPE_CHECKING:
    from server.db.database import Database
    from server.system.activity import ActivityLog


@dataclass
class CleanLogsTask:
    log_dir: Path
    activity: ActivityLog
    server_config: Callable[[], w.ServerConfiguration]  # LogFileRetentionDays, ActivityLogRetentionDays
    key: str = "CleanLogFiles"
    name: str = "Clean log directory"
    description: str = "Deletes log files older than the configured retention."
    category: str = "Maintenance"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [interval(24)])

    async def run(self, progress: Progress) -> None:
        days = self.server_config().LogFileRetentionDays or 3
        cutoff = time.time() - days * 86400

        def clean() -> None:
            for f in self.log_dir.glob("*"):
                if f.is_file() and f.name != "reelroom.log" and f.stat().st_mtime < cutoff:
                    f.unlink(missing_ok=True)

        await asyncio.to_thread(clean)
        retention = self.server_config().ActivityLogRetentionDays or 30
        await self.activity.prune(datetime.now(UTC) - timedelta(days=retention))
        progress(100)


@dataclass
class CleanTranscodeTask:
    transcode_dir: Path
    key: str = "DeleteTranscodeFiles"
    name: str = "Clean transcode directory"
    description: str = "Deletes transcode files more than one day old."
    category: str = "Maintenance"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [startup(), interval(24)])

    async def run(self, progress: Progress) -> None:
        cutoff = time.time() - 86400
        root = self.transcode_dir

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
    db: Database
    key: str = "OptimizeDatabaseTask"
    name: str = "Optimize database"
    description: str = "Compacts the database and refreshes its query statistics."
    category: str = "Maintenance"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [daily(3)])

    async def run(self, progress: Progress) -> None:
        db = self.db

        def optimize(session) -> None:
            for statement in optimize_statements(db.dialect):
                session.execute(text(statement))

        await db.write(optimize)
        progress(100)
