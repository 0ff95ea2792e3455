"""Scheduled tasks: registered jobs with triggers, progress, cancellation and a kept last result.

A task is an object with ``key``, ``name``, ``description``, ``category``, ``default_triggers``
and ``async run(progress)`` where ``progress(percent)`` reports 0–100 and the task checks
``progress.cancelled`` to stop early. Triggers follow the spec's TaskTriggerInfo: Daily
(TimeOfDayTicks), Weekly (DayOfWeek + TimeOfDayTicks), Interval (IntervalTicks) and Startup.

A task's next times are planned when the scheduler starts, when its triggers change and when a run
ends (an interval counts from the last run's end, as in Jellyfin); a running task has none. The
loop sleeps until the nearest one, at most ``MAX_SLEEP_SECONDS``, instead of looking every few
seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

import msgspec
from sqlalchemy import insert, select, update

from server.db.database import Database
from server.db.handles import task_results
from server.errors import BadRequestError, NotFoundError
from server.events.hub import EventHub
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger("reelroom.tasks")
TICKS_PER_SECOND = 10_000_000
# the wall clock, which daily and weekly triggers follow, moves without the loop's clock when the
# machine sleeps or its time is set: the loop looks at it at least this often
MAX_SLEEP_SECONDS = 60.0
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class Progress:
    def __init__(self, report: Callable[[float], None], trigger: str | None = None) -> None:
        self._report = report
        self.cancelled = False
        #: "StartupTrigger" for the run a start makes (a task may do less then), else None
        self.trigger = trigger

    def __call__(self, percent: float) -> None:
        self._report(max(0.0, min(100.0, percent)))


class ScheduledTask(Protocol):
    key: str
    name: str
    description: str
    category: str
    default_triggers: list[w.TaskTriggerInfo]
    is_hidden: bool

    async def run(self, progress: Progress) -> None: ...


def daily(hour: int) -> w.TaskTriggerInfo:
    return w.TaskTriggerInfo(Type="DailyTrigger", TimeOfDayTicks=hour * 3600 * TICKS_PER_SECOND)


def interval(hours: float) -> w.TaskTriggerInfo:
    return w.TaskTriggerInfo(Type="IntervalTrigger", IntervalTicks=int(hours * 3600 * TICKS_PER_SECOND))


def startup() -> w.TaskTriggerInfo:
    return w.TaskTriggerInfo(Type="StartupTrigger")


def next_fire(trigger: w.TaskTriggerInfo, now: datetime, last_end: datetime | None) -> datetime | None:
    """When a trigger fires next (local time of day for daily and weekly triggers)."""
    kind = trigger.Type
    if kind == "IntervalTrigger" and trigger.IntervalTicks:
        step = timedelta(seconds=trigger.IntervalTicks / TICKS_PER_SECOND)
        return (last_end or now) + step
    if kind in ("DailyTrigger", "WeeklyTrigger") and trigger.TimeOfDayTicks is not None:
        local = now.astimezone()
        at = timedelta(seconds=trigger.TimeOfDayTicks / TICKS_PER_SECOND)
        candidate = local.replace(hour=0, minute=0, second=0, microsecond=0) + at
        while candidate <= local or (kind == "WeeklyTrigger" and trigger.DayOfWeek
                                     and _DAYS[candidate.weekday()] != trigger.DayOfWeek):
            candidate += timedelta(days=1)
        return candidate.astimezone(UTC)
    return None


def validate_trigger(trigger: w.TaskTriggerInfo) -> None:
    if trigger.Type not in ("DailyTrigger", "WeeklyTrigger", "IntervalTrigger", "StartupTrigger"):
        raise BadRequestError(f"Unknown trigger type {trigger.Type!r}.")
    if trigger.Type == "IntervalTrigger" and not (trigger.IntervalTicks and trigger.IntervalTicks > 0):
        raise BadRequestError("An interval trigger needs a positive IntervalTicks.")
    if trigger.Type in ("DailyTrigger", "WeeklyTrigger") and trigger.TimeOfDayTicks is None:
        raise BadRequestError("A daily or weekly trigger needs TimeOfDayTicks.")
    if trigger.Type == "WeeklyTrigger" and trigger.DayOfWeek not in _DAYS:
        raise BadRequestError("A weekly trigger needs a DayOfWeek.")


@dataclass
class _TaskState:
    task: ScheduledTask
    id: str
    triggers: list[w.TaskTriggerInfo]
    last_result: w.TaskResult | None = None
    running: asyncio.Task | None = None
    progress_value: float | None = None
    progress: Progress | None = None
    next_due: dict[int, datetime] = field(default_factory=dict)


class TaskScheduler:
    def __init__(self, db: Database, events: EventHub) -> None:
        self.db = db
        self.events = events
        self._tasks: dict[str, _TaskState] = {}
        self._loop_task: asyncio.Task | None = None
        self._replanned: asyncio.Event | None = None  # wakes the loop (made on the loop, at start)
        self._listeners: list[Callable[[str, str, float | None], None]] = []
        self.stopped = False  # the server is closing: no task starts any more

    def register(self, task: ScheduledTask) -> None:
        task_id = uuid.uuid5(uuid.NAMESPACE_URL, "reelroom-task:" + task.key).hex
        self._tasks[task_id] = _TaskState(task=task, id=task_id, triggers=list(task.default_triggers))

    def add_listener(self, fn: Callable[[str, str, float | None], None]) -> None:
        """fn(task_key, state, progress) on every progress change or completion."""
        self._listeners.append(fn)

    async def load(self) -> None:
        t = task_results.c  # on the table, not the ORM class (server/db/handles.py)
        rows = await self.db.read(lambda s: {r.task_key: r for r in s.execute(
            select(t.task_key, t.last_result_json, t.triggers_json))})
        for state in self._tasks.values():
            row = rows.get(state.task.key)
            if row is None:
                continue
            if row.last_result_json:
                state.last_result = msgspec.json.decode(row.last_result_json, type=w.TaskResult)
            if row.triggers_json:
                state.triggers = msgspec.json.decode(row.triggers_json, type=list[w.TaskTriggerInfo])

    def start_background(self) -> None:
        now = datetime.now(UTC)
        self._replanned = asyncio.Event()
        for state in self._tasks.values():
            self._plan(state, now)
            if any(t.Type == "StartupTrigger" for t in state.triggers):
                self.start(state.id, trigger="StartupTrigger")
        self._loop_task = asyncio.create_task(self._loop(), name="task-scheduler")

    async def stop(self) -> None:
        self.stopped = True
        if self._loop_task:
            self._loop_task.cancel()
        for state in self._tasks.values():
            if state.running and not state.running.done():
                if state.progress:
                    state.progress.cancelled = True
                state.running.cancel()

    def _plan(self, state: _TaskState, now: datetime) -> None:
        last_end = state.last_result.EndTimeUtc if state.last_result else None
        state.next_due = {}
        for i, trig in enumerate(state.triggers):
            due = next_fire(trig, now, last_end)
            if due is not None:
                state.next_due[i] = due
        if self._replanned is not None:
            self._replanned.set()

    async def _loop(self) -> None:
        replanned = self._replanned
        assert replanned is not None
        while True:
            now = datetime.now(UTC)
            # (a running task is left alone: its triggers may be changed while it runs, and it is
            # planned again when its run ends)
            idle = [s for s in self._tasks.values() if s.running is None or s.running.done()]
            for state in idle:
                if any(due <= now for due in state.next_due.values()):
                    self.start(state.id)  # planned again when the run ends
            nearest = min((due for s in idle for due in s.next_due.values()), default=None)
            wait = MAX_SLEEP_SECONDS if nearest is None else (nearest - now).total_seconds()
            replanned.clear()
            try:
                await asyncio.wait_for(replanned.wait(), min(max(wait, 0.01), MAX_SLEEP_SECONDS))
            except TimeoutError:
                pass

    # -- queries -------------------------------------------------------------------------

    def find(self, task_id_or_key: str) -> _TaskState:
        state = self._tasks.get(task_id_or_key)
        if state is None:
            state = next((s for s in self._tasks.values() if s.task.key == task_id_or_key), None)
        if state is None:
            raise NotFoundError(f"Task {task_id_or_key} not found.")
        return state

    def info(self, state: _TaskState) -> w.TaskInfo:
        running = state.running is not None and not state.running.done()
        return w.TaskInfo(
            Name=state.task.name, State="Running" if running else "Idle",
            CurrentProgressPercentage=state.progress_value if running else None, Id=state.id,
            LastExecutionResult=state.last_result, Triggers=state.triggers, Description=state.task.description,
            Category=state.task.category, IsHidden=state.task.is_hidden, Key=state.task.key)

    def infos(self, is_hidden: bool | None = None, is_enabled: bool | None = None) -> list[w.TaskInfo]:
        out = [self.info(s) for s in self._tasks.values()]
        if is_hidden is not None:
            out = [t for t in out if bool(t.IsHidden) == is_hidden]
        if is_enabled is not None:
            out = [t for t in out if bool(t.Triggers) == is_enabled]
        return sorted(out, key=lambda t: (t.Category or "", t.Name or ""))

    def is_running(self, key: str) -> bool:
        state = self.find(key)
        return state.running is not None and not state.running.done()

    # -- control -------------------------------------------------------------------------

    def start(self, task_id: str, trigger: str | None = None) -> asyncio.Task | None:
        """Run a task now (the one already running, if it is). None once the scheduler stopped:
        a close cancels the runs under way, and nothing it does (a last scan's listeners, a
        debounced artwork run) may start another that nobody would wait for."""
        state = self.find(task_id)
        if state.running is not None and not state.running.done():
            return state.running
        if self.stopped:
            log.info("Task %s not started: the server is closing", state.task.name)
            return None

        def report(value: float) -> None:
            state.progress_value = value
            self._notify(state, "Running", value)

        state.progress = Progress(report, trigger)
        state.progress_value = 0.0
        state.next_due = {}  # no trigger fires while it runs; planned again at its end (_execute)
        state.running = asyncio.create_task(self._execute(state, state.progress), name=f"task-{state.task.key}")
        state.running.add_done_callback(self._ended)
        self._notify(state, "Running", 0.0)
        return state.running

    def _ended(self, _run: asyncio.Task[None]) -> None:
        """A run is done: the loop looks at the task's next times (planned at the run's end), and
        the sockets subscribed to the tasks get the list that shows it idle, with its result."""
        if self._replanned is not None:
            self._replanned.set()
        self.events.changed("ScheduledTasksInfo")

    def cancel(self, task_id: str) -> None:
        state = self.find(task_id)
        if state.running is not None and not state.running.done():
            if state.progress:
                state.progress.cancelled = True
            state.running.cancel()

    async def update_triggers(self, task_id: str, triggers: list[w.TaskTriggerInfo]) -> None:
        state = self.find(task_id)
        for trig in triggers:
            validate_trigger(trig)
        state.triggers = list(triggers)
        self._plan(state, datetime.now(UTC))
        await self._save(state)

    async def _execute(self, state: _TaskState, progress: Progress) -> None:
        start = datetime.now(UTC)
        t0 = time.monotonic()
        status, error = "Completed", None
        log.info("Task %s started", state.task.name)
        try:
            await state.task.run(progress)
            if progress.cancelled:
                status = "Cancelled"
        except asyncio.CancelledError:
            status = "Cancelled"
        except Exception as exc:  # a failing task is recorded, never fatal
            log.exception("Task %s failed", state.task.name)
            status, error = "Failed", f"{type(exc).__name__}: {exc}"
        end = datetime.now(UTC)
        state.last_result = w.TaskResult(
            StartTimeUtc=start, EndTimeUtc=end, Status=status, Name=state.task.name, Key=state.task.key,
            Id=state.id, ErrorMessage=error, LongErrorMessage=error)
        state.progress_value = None
        self._plan(state, end)
        log.info("Task %s %s in %.1f s", state.task.name, status.lower(), time.monotonic() - t0)
        try:
            await self._save(state)
        finally:
            # the run's last step, no await after it: a ScheduledTasksInfo list sent after this
            # ScheduledTaskEnded finds the run done (Idle), and a start asked then starts a new run
            # (sent before the save, a list in between showed the task Running after its end, which
            # a client such as the tray took for a new run)
            self._notify(state, status, None)

    async def _save(self, state: _TaskState) -> None:
        result_json = msgspec.json.encode(state.last_result).decode() if state.last_result else None
        triggers_json = msgspec.json.encode(state.triggers).decode()

        def write(s: Session) -> None:
            # on the table, not the ORM class (server/db/handles.py): the start-up tasks' ends
            # leave SQLAlchemy's mappers unconfigured
            t, key = task_results.c, state.task.key
            values = {"last_result_json": result_json, "triggers_json": triggers_json}
            if s.execute(select(t.task_key).where(t.task_key == key)).first() is None:
                s.execute(insert(task_results).values(task_key=key, **values))
            else:
                s.execute(update(task_results).where(t.task_key == key).values(values))

        try:
            await self.db.write(write)
        except Exception:
            log.exception("Could not save the result of task %s", state.task.name)

    def _notify(self, state: _TaskState, status: str, value: float | None) -> None:
        for fn in list(self._listeners):
            try:
                fn(state.task.key, status, value)
            except Exception:
                log.exception("Task listener failed")
        if status == "Running":  # the sockets subscribed to the tasks: the start at once, progress once a period
            self.events.changed("ScheduledTasksInfo", force=value == 0.0)
        if status != "Running":
            self.events.publish("ScheduledTaskEnded", state.last_result, admins_only=True)
