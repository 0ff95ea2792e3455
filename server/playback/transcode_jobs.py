"""ffmpeg HLS transcode jobs: one per play session, restarted on seek, throttled, reaped when idle.

All methods are blocking and thread-safe; the HTTP layer calls them from worker threads.
A job writes ``segN.ts`` (or ``segN.mp4`` plus ``init.mp4``) into its own directory. ffmpeg
runs with ``-hls_flags temp_file``, so a segment appears under its final name only once it
is completely written; each run's own playlist lists the segments it has finished.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path

from server.media import spawn
from server.media.ffmpeg import FfmpegInfo
from server.playback.encoding import (
    INIT_SEGMENT_NAME,
    EncodingOptions,
    EncodingRequest,
    EncodingRequestError,
    HardwareAccelerationType,
    build_hls_command,
    run_playlist_name,
    segment_file_name,
)

log = logging.getLogger(__name__)

_JOB_DIR_PREFIX = "job-"
_CAN_SUSPEND = hasattr(signal, "SIGSTOP") and sys.platform != "win32"


class TranscodeError(Exception):
    """Base class for transcode job failures."""


class TranscodeLimitError(TranscodeError):
    """Too many transcodes are running already (the HTTP layer answers 503)."""


class TranscodeFailedError(TranscodeError):
    """ffmpeg failed and the job cannot produce the segment."""


class TranscodeJobClosedError(TranscodeError):
    """The job was stopped (idle, replaced or shut down); start a new one."""


class SegmentTimeoutError(TranscodeError, TimeoutError):
    """The segment was not ready within the timeout."""


class SegmentNotFoundError(ValueError):
    """The segment index is outside the media (the HTTP layer answers 404)."""


@dataclass(frozen=True)
class TranscodeJobKey:
    """What a job belongs to. Jobs are shared per play session."""

    play_session_id: str
    item_id: str
    media_source_id: str | None = None
    device_id: str | None = None


@dataclass
class FfmpegRun:
    """One ffmpeg process of a job, producing segments from ``start_segment`` on."""

    start_segment: int
    command: list[str]
    process: subprocess.Popen[bytes]
    hardware: HardwareAccelerationType
    next_index: int  # first segment this run has not finished yet
    exit_code: int | None = None
    paused: bool = False
    stopped_by_us: bool = False
    playlist_mtime_ns: int = -1
    pid_record: Path | None = None  # see server/media/spawn.py: ended at the next start if we die

    def forget_pid(self) -> None:
        if self.pid_record is not None:
            self.pid_record.unlink(missing_ok=True)
            self.pid_record = None

    @property
    def alive(self) -> bool:
        return self.exit_code is None

    @property
    def produced_any(self) -> bool:
        return self.next_index > self.start_segment


@dataclass(eq=False)
class TranscodeJob:
    """A play session's HLS output: its directory, log and ffmpeg runs."""

    id: str
    key: TranscodeJobKey
    request: EncodingRequest
    directory: Path
    log_path: Path
    runs: list[FfmpegRun] = field(default_factory=list)
    last_requested: int = 0
    last_activity: float = field(default_factory=time.monotonic)
    software_only: bool = False
    closed: bool = False
    failure: str | None = None
    # The HTTP layer's keys of requests known to be served by this job (server/playback/hls_service.py):
    # a segment request with one of them is served without planning the stream again.
    plan_keys: set[Hashable] = field(default_factory=set)

    @property
    def current_run(self) -> FfmpegRun | None:
        return self.runs[-1] if self.runs else None

    @property
    def is_paused(self) -> bool:
        run = self.current_run
        return bool(run and run.alive and run.paused)

    def segment_path(self, index: int) -> Path:
        return self.directory / segment_file_name(index, self.request.segment_extension)

    @property
    def init_segment_path(self) -> Path:
        return self.directory / INIT_SEGMENT_NAME


class TranscodeJobManager:
    """Runs ffmpeg HLS jobs under a transcode root; see the module docstring.

    ``throttle_ahead_segments``: pause ffmpeg when it is more than this many segments
    ahead of the last requested one (None: never). ``seek_gap_seconds``: a request this
    far beyond what is produced restarts ffmpeg at the requested segment.
    ``keep_segments_behind``: delete segment files more than this many segments behind the
    last requested one (None: keep them until the job ends); a later request for a deleted
    segment restarts ffmpeg there.
    """

    def __init__(
        self,
        ffmpeg: FfmpegInfo,
        transcode_root: Path,
        *,
        options: EncodingOptions | None = None,
        log_dir: Path | None = None,
        max_concurrent: int | None = None,
        idle_timeout: float = 60.0,
        throttle_ahead_segments: int | None = 30,
        seek_gap_seconds: float = 24.0,
        poll_interval: float = 0.25,
        keep_segments_behind: int | None = None,
    ) -> None:
        self.ffmpeg = ffmpeg
        self.transcode_root = Path(transcode_root)
        self.options = options or EncodingOptions()
        self.log_dir = Path(log_dir) if log_dir else self.transcode_root / "logs"
        self.max_concurrent = max_concurrent
        self.idle_timeout = idle_timeout
        self.throttle_ahead_segments = throttle_ahead_segments
        self.seek_gap_seconds = seek_gap_seconds
        self.poll_interval = poll_interval
        self.keep_segments_behind = keep_segments_behind
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._jobs: dict[str, TranscodeJob] = {}  # by play session id
        self._stop_monitor = threading.Event()
        self._monitor: threading.Thread | None = None

    # --- public API ---------------------------------------------------------------------------

    @property
    def jobs(self) -> list[TranscodeJob]:
        with self._lock:
            return list(self._jobs.values())

    def get_job(self, play_session_id: str) -> TranscodeJob | None:
        with self._lock:
            return self._jobs.get(play_session_id)

    def peek_job(self, play_session_id: str) -> TranscodeJob | None:
        """``get_job`` without the lock, for the event loop (which must not wait for a sweep or
        an ffmpeg start holding it): a single dict read, atomic under the GIL. The job may be
        closing meanwhile; its methods say so (TranscodeJobClosedError)."""
        return self._jobs.get(play_session_id)

    def peek_jobs(self) -> list[TranscodeJob]:
        """``jobs`` without the lock (a snapshot copy, atomic under the GIL)."""
        return list(self._jobs.values())

    def start_job(self, key: TranscodeJobKey, request: EncodingRequest) -> TranscodeJob:
        """The play session's job for this stream, starting ffmpeg if there is none.

        A session's job for another item or other stream settings is stopped first.
        Raises EncodingRequestError, TranscodeLimitError or TranscodeFailedError.
        """
        request.validate()
        with self._lock:
            existing = self._jobs.get(key.play_session_id)
            if existing is not None:
                if existing.key == key and _same_stream(existing.request, request) and existing.failure is None:
                    existing.last_activity = time.monotonic()
                    return existing
                self._stop_job(existing, reason="replaced by a new stream for the same session")
            if self.max_concurrent is not None and len(self._jobs) >= self.max_concurrent:
                raise TranscodeLimitError(
                    f"{len(self._jobs)} transcodes are running; the limit is {self.max_concurrent}"
                )
            job_id = uuid.uuid4().hex
            directory = self.transcode_root / f"{_JOB_DIR_PREFIX}{job_id}"
            directory.mkdir(parents=True, exist_ok=False)
            self.log_dir.mkdir(parents=True, exist_ok=True)
            job = TranscodeJob(
                id=job_id,
                key=key,
                request=request,
                directory=directory,
                log_path=self.log_dir / f"ffmpeg-transcode-{job_id}.log",
                last_requested=request.start_segment,
            )
            self._jobs[key.play_session_id] = job
            try:
                self._start_run(job, request.start_segment)
            except TranscodeFailedError:
                self._stop_job(job, reason="ffmpeg could not be started")
                raise
            self._ensure_monitor()
            return job

    def wait_for_segment(self, job: TranscodeJob, index: int, timeout: float = 30.0) -> Path:
        """Block until segment ``index`` is completely written; return its path.

        Restarts ffmpeg at ``index`` when it lies before the running ffmpeg's start or far
        beyond what it has produced, and resumes a throttled ffmpeg. (Async callers use
        ``poll_segment`` in a loop instead, so no thread is held while ffmpeg works.)
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                path = self.poll_segment(job, index)
                if path is not None:
                    return path
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SegmentTimeoutError(f"segment {index} of job {job.id} not ready after {timeout:g} s")
                self._changed.wait(min(self.poll_interval, remaining))

    def poll_segment(self, job: TranscodeJob, index: int) -> Path | None:
        """One non-blocking step of waiting for segment ``index``: its path when it is ready,
        else None after making sure some ffmpeg run is heading for it."""
        count = job.request.segment_count
        if index < 0 or (count is not None and index >= count):
            raise SegmentNotFoundError(f"segment {index} is outside the media ({count} segments)")
        with self._lock:
            job.last_requested = index
            job.last_activity = time.monotonic()
            if job.closed:
                raise TranscodeJobClosedError(f"transcode job {job.id} was stopped")
            self._refresh(job)
            if job.failure is not None:
                raise TranscodeFailedError(job.failure)
            path = job.segment_path(index)
            if path.exists():
                self._apply_throttle(job)
                return path
            self._drive_towards(job, index)
            return None

    def wait_for_init_segment(self, job: TranscodeJob, timeout: float = 30.0) -> Path:
        """For fMP4 jobs: block until ``init.mp4`` exists and return its path."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                path = self.poll_init_segment(job)
                if path is not None:
                    return path
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SegmentTimeoutError(f"init segment of job {job.id} not ready after {timeout:g} s")
                self._changed.wait(min(self.poll_interval, remaining))

    def poll_init_segment(self, job: TranscodeJob) -> Path | None:
        """One non-blocking step of waiting for ``init.mp4`` (fMP4 jobs only)."""
        if not job.request.is_fmp4:
            raise SegmentNotFoundError("only fMP4 streams have an init segment")
        with self._lock:
            job.last_activity = time.monotonic()
            if job.closed:
                raise TranscodeJobClosedError(f"transcode job {job.id} was stopped")
            self._refresh(job)
            if job.failure is not None:
                raise TranscodeFailedError(job.failure)
            run = job.current_run
            if job.init_segment_path.exists() and run is not None and (run.produced_any or not run.alive):
                return job.init_segment_path
            if run is None or (not run.alive and not job.init_segment_path.exists()):
                self._start_run(job, job.last_requested)
            return None

    def ping(self, job: TranscodeJob) -> None:
        """Keep a job alive (the player is paused but still there)."""
        with self._lock:
            job.last_activity = time.monotonic()

    def ping_session(self, play_session_id: str) -> bool:
        """Ping the job of a play session; False when it has none."""
        with self._lock:
            job = self._jobs.get(play_session_id)
            if job is None:
                return False
            job.last_activity = time.monotonic()
            return True

    def stop_job(self, job: TranscodeJob) -> None:
        """Kill the job's ffmpeg and delete its segments."""
        with self._lock:
            self._stop_job(job, reason="stopped on request")

    def stop_session(self, play_session_id: str) -> bool:
        """Stop the job of a play session; False when it has none."""
        with self._lock:
            job = self._jobs.get(play_session_id)
            if job is None:
                return False
            self._stop_job(job, reason="playback stopped")
            return True

    def stop_matching(self, *, device_id: str | None = None, play_session_id: str | None = None) -> int:
        """Stop the jobs of a device and/or a play session (both given: jobs matching both)."""
        if not device_id and not play_session_id:
            return 0
        with self._lock:
            doomed = [
                job for job in self._jobs.values()
                if (not device_id or job.key.device_id == device_id)
                and (not play_session_id or job.key.play_session_id == play_session_id)
            ]
            for job in doomed:
                self._stop_job(job, reason="encoding stopped by the client")
            return len(doomed)

    def kill_all(self) -> None:
        """Kill every ffmpeg this manager started and delete all job directories."""
        self._stop_monitor.set()
        monitor = self._monitor
        if monitor is not None and monitor is not threading.current_thread():
            monitor.join(timeout=5)
        with self._lock:
            for job in list(self._jobs.values()):
                self._stop_job(job, reason="server shutting down")
            self._monitor = None

    def remove_stale_job_dirs(self) -> int:
        """End the ffmpeg processes an earlier, killed process recorded and delete the job
        directories it left (call once at startup)."""
        spawn.end_recorded(self.transcode_root)
        removed = 0
        if not self.transcode_root.is_dir():
            return 0
        with self._lock:
            live = {job.directory for job in self._jobs.values()}
            for entry in self.transcode_root.iterdir():
                if entry.is_dir() and entry.name.startswith(_JOB_DIR_PREFIX) and entry not in live:
                    shutil.rmtree(entry, ignore_errors=True)
                    removed += 1
        return removed

    # --- internals (call with the lock held) ----------------------------------------------------

    def _start_run(self, job: TranscodeJob, start_segment: int) -> FfmpegRun:
        _remove_partial_files(job.directory)
        # An earlier run from the same segment left its playlist: it must not count as progress.
        (job.directory / run_playlist_name(start_segment)).unlink(missing_ok=True)
        try:
            command, choice = build_hls_command(
                self.ffmpeg,
                job.request,
                self.options,
                output_dir=job.directory,
                start_segment=start_segment,
                allow_hardware=not job.software_only,
            )
        except EncodingRequestError as exc:
            job.failure = str(exc)
            raise TranscodeFailedError(str(exc)) from exc
        hardware = choice.hardware if choice else HardwareAccelerationType.NONE
        try:
            with job.log_path.open("ab") as log_file:
                log_file.write(f"\n# run from segment {start_segment}: {subprocess.list2cmdline(command)}\n".encode())
                log_file.flush()
                process = spawn.popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log_file,
                    cwd=job.directory,
                    **_popen_platform_kwargs(),
                )
        except OSError as exc:
            job.failure = f"could not start ffmpeg: {exc}"
            raise TranscodeFailedError(job.failure) from exc
        run = FfmpegRun(start_segment, command, process, hardware, next_index=start_segment)
        try:
            run.pid_record = spawn.record_pid(self.transcode_root, process.pid, str(job.directory))
        except OSError as exc:
            log.warning("Could not record ffmpeg pid %d: %s", process.pid, exc)
        job.runs.append(run)
        log.info("Transcode job %s: ffmpeg pid %d from segment %d (%s)", job.id, process.pid, start_segment,
                 hardware.value if hardware != HardwareAccelerationType.NONE else "software")
        return run

    def _refresh(self, job: TranscodeJob) -> None:
        """Update the current run's progress and handle its exit."""
        run = job.current_run
        if run is None or job.closed:
            return
        self._advance(job, run)
        if not run.alive:
            return
        code = run.process.poll()
        if code is None:
            return
        run.exit_code = code
        run.forget_pid()
        run.paused = False
        self._advance(job, run)
        if run.stopped_by_us:
            return
        if code == 0:
            log.info("Transcode job %s: ffmpeg finished at segment %d", job.id, run.next_index - 1)
            return
        tail = _log_tail(job.log_path)
        if run.hardware != HardwareAccelerationType.NONE and not run.produced_any and not job.software_only:
            log.warning(
                "Transcode job %s: %s encoding failed before its first segment (exit %d); "
                "retrying in software. ffmpeg said:\n%s",
                job.id, run.hardware.value, code, tail,
            )
            job.software_only = True
            try:
                self._start_run(job, run.start_segment)
            except TranscodeFailedError:
                pass
            return
        job.failure = f"ffmpeg exited with code {code}: {tail}"
        log.error("Transcode job %s: ffmpeg exited with code %d:\n%s", job.id, code, tail)

    def _advance(self, job: TranscodeJob, run: FfmpegRun) -> None:
        playlist = job.directory / run_playlist_name(run.start_segment)
        try:
            mtime_ns = playlist.stat().st_mtime_ns
        except OSError:
            return
        if mtime_ns == run.playlist_mtime_ns:
            return
        run.playlist_mtime_ns = mtime_ns
        try:
            text = playlist.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        finished = sum(1 for line in text.splitlines() if line.startswith("#EXTINF"))
        run.next_index = max(run.next_index, run.start_segment + finished)

    def _drive_towards(self, job: TranscodeJob, index: int) -> None:
        """Make sure some ffmpeg run will produce ``index``: resume, wait, or restart there."""
        run = job.current_run
        gap = max(1, int(self.seek_gap_seconds // job.request.segment_seconds))
        if run is not None and run.alive:
            if index < run.start_segment or index > run.next_index + gap or index < run.next_index - 1:
                log.info("Transcode job %s: seek to segment %d (ffmpeg is at %d); restarting",
                         job.id, index, run.next_index)
                self._kill_run(run)
                self._start_run(job, index)
            elif run.paused:
                self._resume(run)
            return
        finished = run is not None and run.exit_code == 0 and not run.stopped_by_us
        if finished and run is not None and run.start_segment <= index and index >= run.next_index:
            raise SegmentNotFoundError(f"segment {index} is past the end of the media")
        self._start_run(job, index)

    def _apply_throttle(self, job: TranscodeJob) -> None:
        run = job.current_run
        limit = self.throttle_ahead_segments
        if limit is None or run is None or not run.alive:
            return
        ahead = (run.next_index - 1) - job.last_requested
        if not run.paused and ahead > limit:
            if _CAN_SUSPEND:
                os.kill(run.process.pid, signal.SIGSTOP)
                run.paused = True
                log.debug("Transcode job %s: paused %d segments ahead", job.id, ahead)
            else:
                log.debug("Transcode job %s: stopping ffmpeg %d segments ahead", job.id, ahead)
                self._kill_run(run)
        elif run.paused and ahead <= limit // 2:
            self._resume(run)

    def _resume(self, run: FfmpegRun) -> None:
        if run.paused and run.alive and _CAN_SUSPEND:
            os.kill(run.process.pid, signal.SIGCONT)
        run.paused = False

    def _kill_run(self, run: FfmpegRun) -> None:
        if not run.alive:
            return
        run.stopped_by_us = True
        if run.paused and _CAN_SUSPEND:
            try:
                os.kill(run.process.pid, signal.SIGCONT)
            except OSError:
                pass
        _kill_process_group(run.process)
        try:
            run.exit_code = run.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            log.error("ffmpeg pid %d did not exit after SIGKILL", run.process.pid)
            run.exit_code = -9
        run.forget_pid()
        run.paused = False

    def _stop_job(self, job: TranscodeJob, *, reason: str) -> None:
        for run in job.runs:
            self._kill_run(run)
        job.closed = True
        if self._jobs.get(job.key.play_session_id) is job:
            del self._jobs[job.key.play_session_id]
        shutil.rmtree(job.directory, ignore_errors=True)
        log.info("Transcode job %s stopped: %s", job.id, reason)
        self._changed.notify_all()

    def _delete_old_segments(self, job: TranscodeJob) -> None:
        keep = self.keep_segments_behind
        if keep is None:
            return
        below = job.last_requested - keep
        if below <= 0:
            return
        suffix = f".{job.request.segment_extension}"
        for entry in job.directory.glob(f"seg*{suffix}"):
            number = entry.name[3:-len(suffix)]
            if number.isdigit() and int(number) < below:
                entry.unlink(missing_ok=True)

    def _ensure_monitor(self) -> None:
        if self._monitor is not None and self._monitor.is_alive():
            return
        self._stop_monitor.clear()
        self._monitor = threading.Thread(target=self._monitor_loop, name="transcode-monitor", daemon=True)
        self._monitor.start()

    def _monitor_loop(self) -> None:
        while not self._stop_monitor.wait(self.poll_interval):
            with self._lock:
                now = time.monotonic()
                for job in list(self._jobs.values()):
                    try:
                        if now - job.last_activity > self.idle_timeout:
                            self._stop_job(job, reason=f"no request for {self.idle_timeout:g} s")
                            continue
                        self._refresh(job)
                        self._apply_throttle(job)
                        self._delete_old_segments(job)
                    except Exception:  # keep watching the other jobs
                        log.exception("Transcode job %s: monitor step failed", job.id)
                self._changed.notify_all()


def _same_stream(a: EncodingRequest, b: EncodingRequest) -> bool:
    return dataclasses.replace(a, start_ticks=0) == dataclasses.replace(b, start_ticks=0)


def _remove_partial_files(directory: Path) -> None:
    for partial in directory.glob("*.tmp"):
        partial.unlink(missing_ok=True)


def _log_tail(path: Path, max_bytes: int = 4096, max_lines: int = 20) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read()
    except OSError:
        return "(no ffmpeg log)"
    lines = data.decode("utf-8", errors="replace").splitlines()
    return "\n".join(lines[-max_lines:]).strip()


def _popen_platform_kwargs() -> dict[str, object]:
    if sys.platform == "win32":
        return {}  # spawn.popen adds CREATE_NO_WINDOW and the job object
    return {"start_new_session": True}  # its own process group, killed as a whole


def _kill_process_group(process: subprocess.Popen[bytes]) -> None:
    spawn.kill(process)
