"""Live TV recording: timers, series timers and the recorder that runs them.

- A timer (``livetv_timers``) records one tuner channel from ``start - pre padding`` to
  ``end + post padding``. When it is due, the recorder starts ffmpeg copying the channel's stream
  into a MPEG-TS file under the recording folder (LiveTvOptions.RecordingPath, else
  ``<data>/recordings``). A timer that has started recording is also a recording.
- A series timer (``livetv_series_timers``) makes timers for the guide's programmes with its
  title (on its channel unless RecordAnyChannel, on its days, only new airings if asked). It is
  applied when it is created and after every guide refresh.
- Nothing blocks the event loop: ffmpeg runs as an asyncio subprocess, database work goes
  through the single writer.
- On shutdown running recordings are stopped and marked Error ("the server stopped"); the file
  so far is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement
from sqlalchemy import select as core_select

from server.db.database import Database, load_orm_classes
from server.db.handles import livetv_series_timers, livetv_timers
from server.errors import BadRequestError, NotFoundError, ServiceUnavailableError
from server.livetv.guide import Program
from server.livetv.items import delete_recording_row, probe_recording, upsert_recording
from server.livetv.live import feed_server
from server.media import spawn
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.tables import LiveTvSeriesTimer, LiveTvTimer

log = logging.getLogger("reelroom.livetv")

ACTIVE = ("New", "InProgress")
RECORDED = ("InProgress", "Completed", "Error", "Cancelled")
TICKS_PER_SECOND = 10_000_000
FOLLOW_CHUNK = 1024 * 1024  # a recording in progress is read this much at a time
FOLLOW_POLL_SECONDS = 0.5
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _any(s: Session, query: Any) -> bool:
    """Whether ``query`` (on a Core table) finds a row. The recorder and the guide task read timers
    at start and on every tick; asking the table first means a server with no timers (no Live TV)
    never reaches the ORM while it idles, so SQLAlchemy does not configure its mappers (~1.3 MiB,
    ~17 ms, every table at once) until a request or task that uses the ORM."""
    return s.execute(query.limit(1)).first() is not None


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _safe_name(text: str) -> str:
    cleaned = re.sub(r'[<>:"/\\|?*\x00-\x1f]', "", text).strip().rstrip(".")
    return cleaned[:120] or "Recording"


class RecordingService:
    def __init__(self, db: Database, livetv, data_dir: Path, ffmpeg_path: Callable[[], str], events,
                 live_streams=None) -> None:
        self.db = db
        self.livetv = livetv  # LiveTvService: options, channels, guide
        self.data_dir = data_dir
        self.ffmpeg_path = ffmpeg_path
        self.events = events
        self._procs: dict[str, asyncio.subprocess.Process] = {}
        self._loop_task: asyncio.Task | None = None
        self._wake = asyncio.Event()
        # The recorder sleeps until its next timer is due (a new or changed timer wakes it); a timer
        # waiting for a free tuner is tried again every poll_seconds, and idle_seconds caps any
        # sleep so a change of the wall clock is seen within that long. An idle server with no
        # timers reads the timers table once a minute, not every two seconds.
        self.poll_seconds = 2.0
        self.idle_seconds = 60.0
        self.live_streams = live_streams  # LiveStreamManager: a recording shares the channel's tuner stream
        self._live: dict[str, tuple[str, object]] = {}  # timer id -> (LiveStreamId, its feed_server)
        self._busy: dict[str, str] = {}  # timer id -> why no tuner was free

    # -- folders ----------------------------------------------------------------------

    def recording_dir(self) -> Path:
        configured = (self.livetv.options().RecordingPath or "").strip()
        return Path(configured) if configured else self.data_dir / "recordings"

    # -- timers -----------------------------------------------------------------------

    async def create_timer(self, dto: w.TimerInfoDto, series_timer_id: str | None = None) -> LiveTvTimer:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvTimer

        program = self.livetv.guide.by_id.get(dto.ProgramId or "") if dto.ProgramId else None
        channel_id = dto.ChannelId or (program.channel_id if program else None)
        start = _aware(dto.StartDate) or (program.start if program else None)
        end = _aware(dto.EndDate) or (program.end if program else None)
        if not channel_id:
            raise BadRequestError("A timer needs a ChannelId or a ProgramId from the guide.")
        if start is None or end is None or end <= start:
            raise BadRequestError("A timer needs a StartDate before its EndDate.")
        if not any(ch.id == channel_id for ch in await self.livetv.channels()):
            raise NotFoundError(f"No channel {channel_id}.")
        options = self.livetv.options()
        timer = LiveTvTimer(
            id=uuid.uuid4().hex, series_timer_id=series_timer_id, channel_id=channel_id,
            program_id=program.id if program else dto.ProgramId, name=dto.Name or (program.name if program else "Recording"),
            overview=dto.Overview or (program.overview if program else None), start_date=start, end_date=end,
            pre_padding_seconds=max(0, dto.PrePaddingSeconds if dto.PrePaddingSeconds is not None
                                    else options.PrePaddingSeconds or 0),
            post_padding_seconds=max(0, dto.PostPaddingSeconds if dto.PostPaddingSeconds is not None
                                     else options.PostPaddingSeconds or 0),
            priority=dto.Priority or 0, keep_until=dto.KeepUntil or "UntilDeleted")

        def write(s: Session) -> LiveTvTimer:
            s.add(timer)
            s.flush()
            s.refresh(timer)
            return timer

        saved = await self.db.write(write)
        self._wake.set()
        self.events.publish("TimerCreated", {"Id": saved.id, "ProgramId": saved.program_id})
        return saved

    async def update_timer(self, timer_id: str, dto: w.TimerInfoDto) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvTimer

        def write(s: Session) -> None:
            timer = s.get(LiveTvTimer, timer_id)
            if timer is None or timer.status not in ACTIVE:
                raise NotFoundError(f"No timer {timer_id}.")
            if dto.PrePaddingSeconds is not None:
                timer.pre_padding_seconds = max(0, dto.PrePaddingSeconds)
            if dto.PostPaddingSeconds is not None:
                timer.post_padding_seconds = max(0, dto.PostPaddingSeconds)
            if dto.Priority is not None:
                timer.priority = dto.Priority
            if timer.status == "New":
                start, end = _aware(dto.StartDate) or _aware(timer.start_date), _aware(dto.EndDate) or _aware(
                    timer.end_date)
                if end <= start:
                    raise BadRequestError("StartDate must be before EndDate.")
                timer.start_date, timer.end_date = start, end
            s.add(timer)

        await self.db.write(write)
        self._wake.set()

    async def cancel_timer(self, timer_id: str) -> None:
        timer = await self.get_timer(timer_id)
        if timer.status not in ACTIVE:
            raise NotFoundError(f"No timer {timer_id}.")
        proc = self._procs.get(timer_id)
        await self._set_status(timer_id, "Cancelled")
        if proc is not None and proc.returncode is None:
            proc.terminate()  # ffmpeg finishes the file it has written
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
        self.events.publish("TimerCancelled", {"Id": timer_id})

    async def get_timer(self, timer_id: str) -> LiveTvTimer:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvTimer

        timer = await self.db.read(lambda s: s.get(LiveTvTimer, timer_id))
        if timer is None:
            raise NotFoundError(f"No timer {timer_id}.")
        return timer

    async def timers(self, channel_id: str | None = None, series_timer_id: str | None = None,
                     is_active: bool | None = None, is_scheduled: bool | None = None) -> list[LiveTvTimer]:
        def read(s: Session) -> list[LiveTvTimer]:
            t = livetv_timers.c
            where: list[ColumnElement[bool]] = [t.status.in_(ACTIVE)]
            if channel_id:
                where.append(t.channel_id == channel_id)
            if series_timer_id:
                where.append(t.series_timer_id == series_timer_id)
            if is_active is not None:
                where.append((t.status == "InProgress") == is_active)
            if is_scheduled is not None:
                where.append((t.status == "New") == is_scheduled)
            if not _any(s, core_select(t.id).where(*where)):
                return []
            from server.db.tables import LiveTvTimer  # (the ORM only when there are timers)

            return list(s.scalars(core_select(LiveTvTimer).where(*where).order_by(t.start_date)))

        return await self.db.read(read)

    # -- series timers ----------------------------------------------------------------

    async def create_series_timer(self, dto: w.SeriesTimerInfoDto) -> LiveTvSeriesTimer:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvSeriesTimer

        program = self.livetv.guide.by_id.get(dto.ProgramId or "") if dto.ProgramId else None
        name = dto.Name or (program.name if program else None)
        if not name:
            raise BadRequestError("A series timer needs a Name or a ProgramId from the guide.")
        channel_id = dto.ChannelId or (program.channel_id if program else None)
        if not channel_id and not dto.RecordAnyChannel:
            raise BadRequestError("A series timer needs a ChannelId unless RecordAnyChannel is set.")
        options = self.livetv.options()
        days = [d for d in (dto.Days or []) if d in DAYS or d == "Sunday"]
        series = LiveTvSeriesTimer(
            id=uuid.uuid4().hex, name=name, channel_id=channel_id, program_id=program.id if program else None,
            record_any_time=dto.RecordAnyTime if dto.RecordAnyTime is not None else True,
            record_any_channel=bool(dto.RecordAnyChannel), record_new_only=bool(dto.RecordNewOnly),
            days_json=json.dumps(days),
            pre_padding_seconds=max(0, dto.PrePaddingSeconds if dto.PrePaddingSeconds is not None
                                    else options.PrePaddingSeconds or 0),
            post_padding_seconds=max(0, dto.PostPaddingSeconds if dto.PostPaddingSeconds is not None
                                     else options.PostPaddingSeconds or 0),
            priority=dto.Priority or 0, keep_up_to=dto.KeepUpTo or 0, keep_until=dto.KeepUntil or "UntilDeleted")

        def write(s: Session) -> LiveTvSeriesTimer:
            s.add(series)
            s.flush()
            s.refresh(series)
            return series

        saved = await self.db.write(write)
        await self.apply_series_timers()
        self.events.publish("SeriesTimerCreated", {"Id": saved.id})
        return saved

    async def update_series_timer(self, timer_id: str, dto: w.SeriesTimerInfoDto) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvSeriesTimer

        def write(s: Session) -> None:
            series = s.get(LiveTvSeriesTimer, timer_id)
            if series is None:
                raise NotFoundError(f"No series timer {timer_id}.")
            for attr, value in (("record_any_time", dto.RecordAnyTime), ("record_any_channel", dto.RecordAnyChannel),
                                ("record_new_only", dto.RecordNewOnly), ("priority", dto.Priority),
                                ("keep_up_to", dto.KeepUpTo), ("keep_until", dto.KeepUntil)):
                if value is not None:
                    setattr(series, attr, value)
            if dto.PrePaddingSeconds is not None:
                series.pre_padding_seconds = max(0, dto.PrePaddingSeconds)
            if dto.PostPaddingSeconds is not None:
                series.post_padding_seconds = max(0, dto.PostPaddingSeconds)
            if dto.Days is not None:
                series.days_json = json.dumps([d for d in dto.Days if d in DAYS])
            s.add(series)

        await self.db.write(write)
        await self.apply_series_timers()

    async def cancel_series_timer(self, timer_id: str) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvSeriesTimer

        await self.get_series_timer(timer_id)
        for timer in await self.timers(series_timer_id=timer_id):
            if timer.status == "New":
                await self._set_status(timer.id, "Cancelled")
            elif timer.status == "InProgress":  # its episode being recorded now stops too
                await self.cancel_timer(timer.id)

        def write(s: Session) -> None:
            series = s.get(LiveTvSeriesTimer, timer_id)
            if series is not None:
                s.delete(series)

        await self.db.write(write)
        self.events.publish("SeriesTimerCancelled", {"Id": timer_id})

    async def get_series_timer(self, timer_id: str) -> LiveTvSeriesTimer:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvSeriesTimer

        series = await self.db.read(lambda s: s.get(LiveTvSeriesTimer, timer_id))
        if series is None:
            raise NotFoundError(f"No series timer {timer_id}.")
        return series

    async def series_timers(self) -> list[LiveTvSeriesTimer]:
        def read(s: Session) -> list[LiveTvSeriesTimer]:
            if not _any(s, core_select(livetv_series_timers.c.id)):
                return []
            from server.db.tables import LiveTvSeriesTimer  # (the ORM only when there are series timers)

            return list(s.scalars(core_select(LiveTvSeriesTimer).order_by(LiveTvSeriesTimer.name)))

        return await self.db.read(read)

    def matches(self, series: LiveTvSeriesTimer, program: Program) -> bool:
        if program.name.casefold() != series.name.casefold():
            return False
        if not series.record_any_channel and program.channel_id != series.channel_id:
            return False
        days = json.loads(series.days_json or "[]")
        if days and DAYS[program.start.weekday()] not in days:
            return False
        return not (series.record_new_only and program.is_repeat)

    async def apply_series_timers(self) -> int:
        """Make timers for upcoming guide programmes that a series timer wants; returns how many."""
        now = datetime.now(UTC)
        all_series = await self.series_timers()
        if not all_series:
            return 0
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from sqlmodel import select

        from server.db.tables import LiveTvTimer

        existing = await self.db.read(lambda s: set(s.scalars(
            select(LiveTvTimer.program_id).where(LiveTvTimer.program_id.is_not(None)))))
        made = 0
        for series in all_series:
            for program in self.livetv.guide.programs:
                if program.end <= now or program.id in existing or not self.matches(series, program):
                    continue
                await self.create_timer(w.TimerInfoDto(
                    ProgramId=program.id, PrePaddingSeconds=series.pre_padding_seconds,
                    PostPaddingSeconds=series.post_padding_seconds, Priority=series.priority,
                    KeepUntil=series.keep_until), series_timer_id=series.id)
                existing.add(program.id)
                made += 1
        return made

    # -- recordings ---------------------------------------------------------------------

    async def recordings(self, channel_id: str | None = None, is_in_progress: bool | None = None,
                         series_timer_id: str | None = None) -> list[LiveTvTimer]:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from sqlmodel import select

        from server.db.tables import LiveTvTimer

        def read(s: Session) -> list[LiveTvTimer]:
            query = select(LiveTvTimer).where(LiveTvTimer.recording_path.is_not(None),
                                              LiveTvTimer.status.in_(RECORDED))
            if channel_id:
                query = query.where(LiveTvTimer.channel_id == channel_id)
            if series_timer_id:
                query = query.where(LiveTvTimer.series_timer_id == series_timer_id)
            if is_in_progress is not None:
                query = query.where((LiveTvTimer.status == "InProgress") == is_in_progress)
            return list(s.scalars(query.order_by(LiveTvTimer.start_date.desc())))

        return await self.db.read(read)

    async def recording(self, recording_id: str) -> LiveTvTimer:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvTimer

        timer = await self.db.read(lambda s: s.get(LiveTvTimer, recording_id))
        if timer is None or not timer.recording_path:
            raise NotFoundError(f"No recording {recording_id}.")
        return timer

    async def delete_recording(self, recording_id: str) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvTimer

        timer = await self.recording(recording_id)
        proc = self._procs.get(recording_id)
        if proc is not None and proc.returncode is None:
            proc.terminate()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 10)
        path = Path(timer.recording_path)
        await asyncio.to_thread(path.unlink, True)

        def write(s: Session) -> None:
            row = s.get(LiveTvTimer, recording_id)
            if row is not None:
                s.delete(row)
            delete_recording_row(s, recording_id)

        await self.db.write(write)
        self.events.publish("RecordingDeleted", {"Id": recording_id})

    def is_recording(self, timer_id: str) -> bool:
        proc = self._procs.get(timer_id)
        return proc is not None and proc.returncode is None

    async def follow(self, recording_id: str) -> AsyncIterator[bytes]:
        """A recording's file as it is written (GetLiveRecordingFile): its bytes so far, then
        what the recorder adds, until the recording has ended and the end is read. The file is
        the one the recorder wrote (its path from the timer, never from a request). Returns the
        iterator once the file is known to exist (404 before)."""
        recording = await self.recording(recording_id)
        path = Path(recording.recording_path or "")
        if not await asyncio.to_thread(path.is_file):
            raise NotFoundError(f"Recording {recording_id} has no file yet.")

        async def chunks() -> AsyncIterator[bytes]:
            f = await asyncio.to_thread(path.open, "rb")
            try:
                while True:
                    chunk = await asyncio.to_thread(f.read, FOLLOW_CHUNK)
                    if chunk:
                        yield chunk
                    elif self.is_recording(recording_id):
                        await asyncio.sleep(FOLLOW_POLL_SECONDS)  # the file is still growing
                    else:
                        return
            finally:
                f.close()

        return chunks()

    # -- the recorder ---------------------------------------------------------------------

    def start(self) -> None:
        if self._loop_task is None:
            self._loop_task = asyncio.create_task(self._run(), name="livetv-recorder")

    async def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None
        for timer_id, proc in list(self._procs.items()):
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    spawn.kill(proc)
                await self._set_status(timer_id, "Error", "The server stopped during the recording.")
        self._procs.clear()

    async def _run(self) -> None:
        # Recordings that a previous run left in progress did not finish.
        for timer in await self.timers(is_active=True):
            await self._set_status(timer.id, "Error", "The server stopped during the recording.")
        while True:
            self._wake.clear()  # before reading, so a timer written during the tick wakes the next wait
            wait = self.poll_seconds
            try:
                wait = await self._tick()
            except Exception:
                log.exception("The recorder failed to check its timers")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def _tick(self) -> float:
        """Starts what is due and fails what passed; returns the seconds until the next check."""
        now = datetime.now(UTC)
        wait = self.idle_seconds
        for timer in await self.timers(is_scheduled=True):
            start_date, end_date = _aware(timer.start_date), _aware(timer.end_date)
            if start_date is None or end_date is None:  # the API never stores one without both
                continue
            start = start_date - timedelta(seconds=timer.pre_padding_seconds)
            end = end_date + timedelta(seconds=timer.post_padding_seconds)
            if end <= now:
                busy = self._busy.pop(timer.id, None)
                await self._set_status(timer.id, "Error", f"No tuner was free to record: {busy}" if busy
                                       else "The timer's time passed before it could record.")
            elif start <= now:
                if timer.id not in self._procs:
                    await self._begin(timer, (end - now).total_seconds())
                if timer.id not in self._procs:  # no tuner was free: try again soon
                    wait = min(wait, self.poll_seconds)
            else:
                wait = min(wait, (start - now).total_seconds())
        return max(0.05, wait)

    async def _begin(self, timer: LiveTvTimer, seconds: float) -> None:
        channel = next((c for c in await self.livetv.channels() if c.id == timer.channel_id), None)
        if channel is None:
            await self._set_status(timer.id, "Error", "The channel is no longer offered by any tuner.")
            return
        folder = self.recording_dir()
        await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
        stamp = _aware(timer.start_date).strftime("%Y_%m_%d_%H_%M_%S")
        path = folder / f"{_safe_name(timer.name)} {stamp}.ts"
        try:
            ffmpeg = await asyncio.to_thread(self.ffmpeg_path)
        except Exception as exc:  # FfmpegNotFoundError and friends
            await self._set_status(timer.id, "Error", f"No ffmpeg to record with: {exc}")
            return
        # The recording reads the channel's shared tuner stream (server/livetv/live.py), so it
        # takes a tuner slot like a viewer and shares it with anyone watching the channel.
        live_id = stream = None
        if self.live_streams is not None:
            try:
                live_id, stream = await self.live_streams.open(channel)
            except ServiceUnavailableError as exc:
                self._busy[timer.id] = exc.detail  # tried again on the next tick while the timer lasts
                log.warning("Recording %r waits for a tuner: %s", timer.name, exc.detail)
                return
            self._busy.pop(timer.id, None)
        source = ["-i", channel.url]
        if stream is not None:
            feeder, feed_url = await feed_server(stream, from_start=True)
            source = ["-f", "mpegts", "-i", feed_url]
        args = [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *source,
                "-map", "0", "-c", "copy", "-t", f"{max(seconds, 1):.3f}", "-f", "mpegts", str(path)]
        try:
            proc = await spawn.exec_async(*args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                                          stderr=asyncio.subprocess.PIPE)
        except OSError as exc:
            if live_id is not None:
                feeder.close()
                await self.live_streams.close(live_id)
            await self._set_status(timer.id, "Error", f"ffmpeg could not start: {exc}")
            return
        if stream is not None:
            self._live[timer.id] = (live_id, feeder)
        self._procs[timer.id] = proc
        await self._set_status(timer.id, "InProgress", path=str(path))
        await self._store_item(timer.id)
        log.info("Recording %r from %s into %s", timer.name, channel.name, path)
        self.events.publish("RecordingStarted", {"Id": timer.id})
        asyncio.create_task(self._finish(timer.id, proc, path), name=f"recording-{timer.id}")

    async def _finish(self, timer_id: str, proc: asyncio.subprocess.Process, path: Path) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvTimer

        stderr = await proc.stderr.read()
        await proc.wait()
        self._procs.pop(timer_id, None)
        live = self._live.pop(timer_id, None)
        if live is not None:
            live[1].close()
            await self.live_streams.close(live[0])  # the tuner is free unless someone watches
        current = await self.db.read(lambda s: s.get(LiveTvTimer, timer_id))
        if current is None or current.status != "InProgress":
            if current is not None and current.status == "Cancelled" and path.exists():
                await self._store_item(timer_id, probe=True)  # what was recorded stays playable
            return  # cancelled or deleted meanwhile
        size = path.stat().st_size if path.exists() else 0
        if proc.returncode == 0 and size > 0:
            await self._set_status(timer_id, "Completed")
            await self._store_item(timer_id, probe=True)
            log.info("Recording %s finished (%d bytes)", path.name, size)
        else:
            reason = (stderr or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or ["no data"]
            await self._set_status(timer_id, "Error", f"ffmpeg exited with {proc.returncode}: {reason[0]}")
            log.warning("Recording %s failed: %s", path.name, reason[0])
        self.events.publish("RecordingEnded", {"Id": timer_id})

    async def _store_item(self, timer_id: str, probe: bool = False) -> None:
        """The recording's item row (server/livetv/items.py); probed when the file is complete."""
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvTimer

        timer = await self.db.read(lambda s: s.get(LiveTvTimer, timer_id))
        if timer is None or not timer.recording_path:
            return
        facts = await asyncio.to_thread(probe_recording, timer.recording_path) if probe else None
        program = self.livetv.guide.by_id.get(timer.program_id or "")
        folder = str(self.recording_dir())
        await self.db.write(lambda s: upsert_recording(s, timer, folder, program, facts))

    async def _set_status(self, timer_id: str, status: str, error: str | None = None, path: str | None = None) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import LiveTvTimer

        def write(s: Session) -> None:
            timer = s.get(LiveTvTimer, timer_id)
            if timer is None:
                return
            timer.status = status
            if error is not None:
                timer.error = error
            if path is not None:
                timer.recording_path = path
            s.add(timer)

        await self.db.write(write)
