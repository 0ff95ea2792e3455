"""Query-planner statistics for SQLite (``ANALYZE`` with a small ``analysis_limit``).

Without statistics SQLite's planner often picks the low-selectivity type index over
``series_id`` / ``album_id`` (measured at 100k items: a series' episodes 130 ms instead of
4 ms, marking a series played 210 ms instead of 6 ms). The statistics are refreshed once at
start-up and a while after the library changed (debounced; ~20 ms at 100k items with the
limit), on the single writer; the daily "Optimize database" task does the rest. Other databases
keep their own statistics.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from sqlalchemy import text

from server.db.dialect import quick_statistics_statements, single_pass

if TYPE_CHECKING:
    from server.db.database import Database

log = logging.getLogger("reelroom.library")

DEBOUNCE_SECONDS = 10.0


class PlannerStats:
    """``ctx.planner_stats``; the server context feeds it every published event (``on_event``)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.enabled = bool(db.is_sqlite)
        self._handle: asyncio.TimerHandle | None = None
        self._started = False
        self.last_run: float | None = None

    def on_event(self, message_type: str, _data: Any) -> None:
        if not self._started:  # the first event after start-up: refresh soon
            self._started = True
            self.schedule(1.0)
        elif message_type == "LibraryChanged":
            self.schedule()

    def schedule(self, delay: float = DEBOUNCE_SECONDS) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._handle = loop.call_later(delay, lambda: asyncio.ensure_future(self.run()))

    async def run(self) -> None:
        if not self.enabled:
            return

        def analyze(s) -> None:
            # (sampled pages of every index, read once: ~9 MiB left in the writer's page cache at
            # 100k items with its usual size)
            with single_pass(s):
                for statement in quick_statistics_statements(self.db.dialect):
                    s.execute(text(statement))

        t0 = time.perf_counter()
        try:
            await self.db.write(analyze)
        except Exception:  # statistics are an optimisation: never fail anything over them
            log.exception("ANALYZE failed")
            return
        self.last_run = time.time()
        log.debug("Planner statistics refreshed in %.0f ms", (time.perf_counter() - t0) * 1000)
