"""A server's end cannot hang: the loop's last tasks and the default executor's calls get a
bounded time (server.runner.run_loop), and nothing starts a scheduled task once the scheduler
stopped (a last scan's listener asking for artwork while the server closes)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest

from server import runner as runner_module
from server.runner import run_loop
from server.tasks.scheduler import TaskScheduler


def test_run_loop_returns_the_coroutines_work_and_ends_cancelled_tasks():
    seen: list[str] = []

    async def background() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def main() -> None:
        asyncio.create_task(background())
        await asyncio.sleep(0)
        seen.append(await asyncio.to_thread(lambda: "from a thread"))

    run_loop(main())
    assert seen == ["from a thread", "cancelled"]


def test_run_loop_leaves_a_stuck_task_and_a_stuck_thread_behind_and_names_them(monkeypatch, caplog):
    monkeypatch.setattr(runner_module, "FINISH_SECONDS", 0.3)
    release = threading.Event()

    async def stubborn() -> None:  # swallows every cancel, as a buggy cleanup would
        while not release.is_set():
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                continue

    async def main() -> None:
        asyncio.create_task(stubborn(), name="stubborn-task")
        asyncio.get_running_loop().run_in_executor(None, release.wait, 30)
        await asyncio.sleep(0.05)

    caplog.set_level(logging.WARNING, logger="reelroom.server")
    t0 = time.monotonic()
    try:
        run_loop(main())
        took = time.monotonic() - t0
    finally:
        release.set()
    assert took < 10, took  # (asyncio.run would wait for ever)
    text = caplog.text
    assert "Task stubborn-task did not end when cancelled" in text and "stubborn" in text
    assert "1 executor call(s) did not finish" in text and "in wait" in text  # threading.Event.wait


def test_run_loop_raises_what_the_coroutine_raised_after_finishing():
    ended: list[bool] = []

    async def background() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            ended.append(True)

    async def main() -> None:
        asyncio.create_task(background())
        await asyncio.sleep(0)
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_loop(main())
    assert ended == [True]


class _Recorded:
    key = "Recorded"
    name = "Recorded"
    description = category = ""
    default_triggers: list = []

    def __init__(self) -> None:
        self.runs = 0

    async def run(self, progress) -> None:
        self.runs += 1


def test_a_stopped_scheduler_starts_no_task(tmp_path):
    from server.db.database import Database
    from server.db.migration_child import create_at_head
    from server.events.hub import EventHub

    create_at_head(tmp_path / "db.sqlite")

    async def main() -> tuple[int, object, object]:
        db = Database(f"sqlite:///{tmp_path / 'db.sqlite'}")
        try:
            scheduler = TaskScheduler(db, EventHub())
            task = _Recorded()
            scheduler.register(task)
            task_id = scheduler.find("Recorded").id
            before = scheduler.start(task_id)
            await before
            await scheduler.stop()
            after = scheduler.start(task_id)
            await asyncio.sleep(0.05)
            return task.runs, before, after
        finally:
            await asyncio.to_thread(db.close)

    runs, before, after = asyncio.run(main())
    assert before is not None and after is None
    assert runs == 1
