"""The scheduler's loop (``server/tasks/scheduler.py``) on a real database: an interval counts from
the last run's end, a task is not started again while nothing is due, and the loop sleeps until the
next due time instead of polling."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from server.db.database import Database
from server.db.migration_child import create_at_head
from server.events.hub import EventHub
from server.tasks.scheduler import TICKS_PER_SECOND, TaskScheduler
from server.wire import models as w


def _every(seconds: float) -> w.TaskTriggerInfo:
    return w.TaskTriggerInfo(Type="IntervalTrigger", IntervalTicks=int(seconds * TICKS_PER_SECOND))


@dataclass
class _Counted:
    triggers: list[w.TaskTriggerInfo]
    key: str = "Counted"
    name: str = "Counted"
    description: str = ""
    category: str = "Test"
    is_hidden: bool = False
    runs: list[float] = field(default_factory=list)

    @property
    def default_triggers(self) -> list[w.TaskTriggerInfo]:
        return self.triggers

    async def run(self, progress) -> None:
        self.runs.append(asyncio.get_running_loop().time())
        await asyncio.sleep(0.05)


def _run(tmp_path, body):
    create_at_head(tmp_path / "db.sqlite")

    async def main():
        db = Database(f"sqlite:///{tmp_path / 'db.sqlite'}")
        scheduler = TaskScheduler(db, EventHub())
        try:
            return await body(scheduler)
        finally:
            await scheduler.stop()
            await asyncio.to_thread(db.close)

    return asyncio.run(main())


def test_an_interval_counts_from_the_last_runs_end_and_a_due_task_runs_once(tmp_path):
    async def body(scheduler: TaskScheduler):
        task = _Counted([_every(0.4)])
        scheduler.register(task)
        # last run ended long ago: due at once, then every 0.4 s after each run's end (the old loop
        # kept the past due time, so it started the task again at every look once it was due)
        state = scheduler.find("Counted")
        past = datetime.now(UTC) - timedelta(hours=2)
        state.last_result = w.TaskResult(StartTimeUtc=past, EndTimeUtc=past, Status="Completed",
                                         Name="Counted", Key="Counted", Id=state.id)
        scheduler.start_background()
        await asyncio.sleep(1.5)
        return task.runs

    runs = _run(tmp_path, body)
    assert 2 <= len(runs) <= 4, runs
    gaps = [b - a for a, b in zip(runs, runs[1:], strict=False)]
    assert all(gap >= 0.44 for gap in gaps), gaps  # 0.05 s run + 0.4 s from its end


def test_the_loop_sleeps_until_the_next_due_time_and_wakes_when_triggers_change(tmp_path):
    async def body(scheduler: TaskScheduler):
        task = _Counted([_every(3600)])
        scheduler.register(task)
        scheduler.start_background()
        loop_task = scheduler._loop_task
        assert loop_task is not None
        await asyncio.sleep(0.3)
        waiting = loop_task.get_stack()  # asleep on the event, no run
        assert task.runs == [] and waiting
        await scheduler.update_triggers(scheduler.find("Counted").id, [_every(0.2)])
        await asyncio.sleep(0.5)
        return task.runs

    runs = _run(tmp_path, body)
    assert len(runs) >= 1  # woken by the change: not after the old 5 s look, nor the 60 s cap


def test_triggers_changed_while_a_task_runs_do_not_start_it_again_until_its_run_ends(tmp_path):
    async def body(scheduler: TaskScheduler):
        task = _Counted([_every(3600)])
        task_run = task.run

        async def slow(progress) -> None:
            await task_run(progress)
            await asyncio.sleep(0.6)

        task.run = slow  # type: ignore[method-assign]
        scheduler.register(task)
        scheduler.start_background()
        state = scheduler.find("Counted")
        scheduler.start(state.id)
        await asyncio.sleep(0.05)
        # due at once (never run) while it runs: the loop must not look again and again
        await scheduler.update_triggers(state.id, [_every(0.0001)])
        looks = 0
        start = scheduler.start

        def counted(task_id, trigger=None):
            nonlocal looks
            looks += 1
            return start(task_id, trigger)

        scheduler.start = counted  # type: ignore[method-assign]
        await asyncio.sleep(0.4)
        return looks

    assert _run(tmp_path, body) == 0


def test_a_list_sent_after_a_tasks_end_shows_it_idle(tmp_path):
    """ScheduledTaskEnded went out before the run had saved its result; a ScheduledTasksInfo list
    sent meanwhile (a subscription's timer firing then) showed the task still Running after its end,
    and a client (the tray) took that for a new run and announced its end twice. And a start asked
    as soon as the end is heard must start a new run, not return the one that is saving."""
    import json

    from server.events.hub import SocketClient, Subscription, envelope

    async def body(scheduler: TaskScheduler):
        hub = scheduler.events
        hub.bind_loop(asyncio.get_running_loop())
        client = SocketClient(user_id=None, device_id="test", is_admin=True)
        hub.connect(client)

        async def send_list() -> None:
            client.send(envelope("ScheduledTasksInfo", scheduler.infos()))

        client.subscriptions["ScheduledTasksInfo"] = Subscription(send_list, 0.0, 0.5)
        # a list due while the run saves its result, as a subscription's period timer may be
        scheduler.add_listener(lambda key, status, value: status != "Running" and hub.changed("ScheduledTasksInfo"))
        task = _Counted([])
        scheduler.register(task)
        await asyncio.sleep(0.05)
        task_id = scheduler.find("Counted").id
        run = scheduler.start(task_id)
        assert run is not None
        messages = []
        while not messages or messages[-1]["MessageType"] != "ScheduledTaskEnded":
            messages.append(json.loads(await asyncio.wait_for(client.queue.get(), 10)))
        # a client that starts the task again as soon as it hears of the end gets a new run
        again = scheduler.start(task_id)
        assert again is not None and again is not run
        await again
        await asyncio.sleep(0.2)  # the lists the end asked for
        while not client.queue.empty():
            messages.append(json.loads(client.queue.get_nowait()))
        hub.disconnect(client)
        assert len(task.runs) == 2
        return messages

    messages = _run(tmp_path, body)
    kinds = [m["MessageType"] for m in messages]
    assert kinds.count("ScheduledTaskEnded") == 2, kinds
    # between the first run's end and the second's start, and after the second's end: Idle
    first_end = kinds.index("ScheduledTaskEnded")
    last_end = len(kinds) - 1 - kinds[::-1].index("ScheduledTaskEnded")
    after_end = messages[last_end + 1:]
    states = [t["State"] for m in after_end if m["MessageType"] == "ScheduledTasksInfo"
              for t in m["Data"] if t["Key"] == "Counted"]
    assert states and set(states) == {"Idle"}, (kinds, states)
    assert first_end < last_end
    running = [t["State"] for m in messages[:kinds.index("ScheduledTaskEnded")]
               if m["MessageType"] == "ScheduledTasksInfo" for t in m["Data"] if t["Key"] == "Counted"]
    assert "Running" in running, (kinds, running)  # (the lists did show the run while it ran)
