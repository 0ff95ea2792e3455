"""HLS transcode jobs against real ffmpeg on tiny generated clips."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import av
import pytest

from server.media.ffmpeg import FfmpegInfo, find_ffmpeg
from server.playback.encoding import (
    TICKS_PER_SECOND,
    AudioOutput,
    EncodingOptions,
    EncodingRequest,
    EncodingRequestError,
    HardwareAccelerationType,
    VideoOutput,
)
from server.playback.transcode_jobs import (
    SegmentNotFoundError,
    TranscodeFailedError,
    TranscodeJob,
    TranscodeJobClosedError,
    TranscodeJobKey,
    TranscodeJobManager,
    TranscodeLimitError,
)
from tests.mediagen import make_video

CLIP_SECONDS = 12
FPS = 24
ENCODE = VideoOutput(copy=False, codec="h264", preset="ultrafast", max_width=320)
AAC = AudioOutput(copy=False, codec="aac", bitrate=96_000, channels=2)


@pytest.fixture(scope="module")
def ffmpeg() -> FfmpegInfo:
    return find_ffmpeg(None)


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_video(tmp_path_factory.mktemp("media") / "clip.mp4", seconds=CLIP_SECONDS, fps=FPS)


def _ffmpeg_pids_mentioning(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (Linux /proc scan)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry.name))
    return found


@pytest.fixture()
def make_manager(ffmpeg: FfmpegInfo, tmp_path: Path) -> Iterator[Callable[..., TranscodeJobManager]]:
    """Managers under tmp_path; at teardown every ffmpeg they started must be gone."""
    managers: list[TranscodeJobManager] = []
    seen_jobs: list[TranscodeJob] = []

    def factory(**kwargs: object) -> TranscodeJobManager:
        defaults: dict[str, object] = {"poll_interval": 0.05, "idle_timeout": 30.0}
        defaults.update(kwargs)
        manager = TranscodeJobManager(ffmpeg, tmp_path / f"transcodes{len(managers)}", **defaults)  # type: ignore[arg-type]
        original_start = manager.start_job

        def tracked_start(*args: object, **kw: object) -> TranscodeJob:
            job = original_start(*args, **kw)  # type: ignore[arg-type]
            seen_jobs.append(job)
            return job

        manager.start_job = tracked_start  # type: ignore[method-assign]
        managers.append(manager)
        return manager

    yield factory
    for manager in managers:
        manager.kill_all()
    for job in seen_jobs:
        for run in job.runs:
            assert run.process.poll() is not None, f"ffmpeg pid {run.process.pid} still running"
    if sys.platform.startswith("linux"):
        assert _ffmpeg_pids_mentioning(str(tmp_path)) == []


def _request(clip: Path, **kwargs: object) -> EncodingRequest:
    values: dict[str, object] = {"input_path": clip, "runtime_ticks": CLIP_SECONDS * TICKS_PER_SECOND}
    values.update(kwargs)
    return EncodingRequest(**values)  # type: ignore[arg-type]


def _key(session: str = "session-1", item: str = "item-1") -> TranscodeJobKey:
    return TranscodeJobKey(play_session_id=session, item_id=item, media_source_id=item)


def _video_frames(path: Path) -> list[av.VideoFrame]:
    with av.open(str(path)) as container:
        return list(container.decode(video=0))


# --- command line -------------------------------------------------------------------------------


def test_transcode_command_forces_keyframes_at_segment_boundaries(
    make_manager: Callable[..., TranscodeJobManager], clip: Path
) -> None:
    manager = make_manager(throttle_ahead_segments=None)
    job = manager.start_job(_key(), _request(clip, video=ENCODE, audio=AAC, start_ticks=13 * TICKS_PER_SECOND))
    cmd = job.runs[0].command
    assert "expr:gte(t,n_forced*6)" in cmd
    assert cmd[cmd.index("-hls_time") + 1] == "6"
    assert cmd[cmd.index("-hls_playlist_type") + 1] == "event"
    assert cmd[cmd.index("-start_number") + 1] == "2"
    assert cmd.index("-ss") < cmd.index("-i") and cmd[cmd.index("-ss") + 1] == "12"
    assert cmd[cmd.index("-output_ts_offset") + 1] == "12"
    assert cmd[cmd.index("-hls_segment_filename") + 1].endswith("seg%d.ts")
    assert cmd[cmd.index("-c:v") + 1] == "libx264"


# --- remux and transcode ------------------------------------------------------------------------


def test_remux_segments_decode_and_add_up(make_manager: Callable[..., TranscodeJobManager], clip: Path) -> None:
    manager = make_manager()
    request = _request(clip)
    job = manager.start_job(_key(), request)
    assert "copy" == job.runs[0].command[job.runs[0].command.index("-c:v") + 1]
    assert request.segment_count == 2
    frames = []
    audio_seconds = 0.0
    for index in range(request.segment_count):
        path = manager.wait_for_segment(job, index, timeout=30)
        frames += _video_frames(path)
        with av.open(str(path)) as container:
            audio_seconds += sum(f.samples / f.sample_rate for f in container.decode(audio=0))
    assert len(frames) == CLIP_SECONDS * FPS
    times = [f.time for f in frames]
    assert all(b > a for a, b in zip(times, times[1:], strict=False))
    assert times[-1] - times[0] == pytest.approx(CLIP_SECONDS - 1 / FPS, abs=0.01)
    assert audio_seconds == pytest.approx(CLIP_SECONDS, abs=0.1)


def test_transcode_segments_start_with_keyframes(
    make_manager: Callable[..., TranscodeJobManager], clip: Path
) -> None:
    manager = make_manager()
    request = _request(clip, video=ENCODE, audio=AAC, segment_seconds=4)
    job = manager.start_job(_key(), request)
    first_times = []
    for index in range(3):
        frames = _video_frames(manager.wait_for_segment(job, index, timeout=30))
        assert frames[0].key_frame, f"segment {index} does not start with a keyframe"
        assert len(frames) == 4 * FPS
        assert (frames[0].width, frames[0].height) == (320, 240)
        first_times.append(frames[0].time)
    assert first_times[1] - first_times[0] == pytest.approx(4.0, abs=0.01)
    assert first_times[2] - first_times[1] == pytest.approx(4.0, abs=0.01)


def test_fmp4_transcode_has_init_segment(make_manager: Callable[..., TranscodeJobManager], clip: Path,
                                         tmp_path: Path) -> None:
    manager = make_manager()
    job = manager.start_job(_key(), _request(clip, video=ENCODE, audio=AAC, segment_container="mp4"))
    segment = manager.wait_for_segment(job, 0, timeout=30)
    init = manager.wait_for_init_segment(job, timeout=30)
    assert segment.suffix == ".mp4" and init.name == "init.mp4"
    joined = tmp_path / "joined.mp4"
    joined.write_bytes(init.read_bytes() + segment.read_bytes())
    frames = _video_frames(joined)
    assert frames[0].key_frame
    assert len(frames) == 6 * FPS


def test_audio_only_job(make_manager: Callable[..., TranscodeJobManager], clip: Path) -> None:
    manager = make_manager()
    job = manager.start_job(_key(), _request(clip, audio_only=True, audio=AAC))
    path = manager.wait_for_segment(job, 0, timeout=30)
    with av.open(str(path)) as container:
        assert [s.type for s in container.streams] == ["audio"]
        assert sum(f.samples for f in container.decode(audio=0)) > 0


# --- seeking ------------------------------------------------------------------------------------


def test_seek_far_ahead_restarts_ffmpeg_at_that_segment(
    make_manager: Callable[..., TranscodeJobManager], clip: Path
) -> None:
    manager = make_manager(seek_gap_seconds=2, throttle_ahead_segments=None)
    reference = manager.start_job(_key("reference"), _request(clip, video=ENCODE, audio=AAC, segment_seconds=2))
    origin = _video_frames(manager.wait_for_segment(reference, 0, timeout=30))[0].time
    manager.stop_job(reference)

    job = manager.start_job(_key(), _request(clip, video=ENCODE, audio=AAC, segment_seconds=2, read_rate=2))
    manager.wait_for_segment(job, 0, timeout=30)
    assert not job.segment_path(4).exists()
    path = manager.wait_for_segment(job, 4, timeout=30)
    assert len(job.runs) == 2
    first_run, second_run = job.runs
    assert first_run.process.poll() is not None and first_run.stopped_by_us
    assert second_run.start_segment == 4
    assert second_run.command[second_run.command.index("-ss") + 1] == "8"
    frames = _video_frames(path)
    assert frames[0].key_frame
    assert frames[0].time - origin == pytest.approx(8.0, abs=1.5 / FPS)
    assert not job.segment_path(2).exists()


def test_segment_past_end_is_not_found(make_manager: Callable[..., TranscodeJobManager], clip: Path) -> None:
    manager = make_manager()
    job = manager.start_job(_key(), _request(clip))
    with pytest.raises(SegmentNotFoundError):
        manager.wait_for_segment(job, 2, timeout=5)
    with pytest.raises(SegmentNotFoundError):
        manager.wait_for_segment(job, -1, timeout=5)


def test_bad_request_is_rejected(make_manager: Callable[..., TranscodeJobManager], tmp_path: Path,
                                 clip: Path) -> None:
    manager = make_manager()
    with pytest.raises(EncodingRequestError):
        manager.start_job(_key(), _request(tmp_path / "absent.mkv"))
    with pytest.raises(EncodingRequestError):
        manager.start_job(_key(), _request(clip, segment_container="avi"))
    assert manager.jobs == []


def test_unreadable_input_fails_with_ffmpeg_reason(
    make_manager: Callable[..., TranscodeJobManager], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.mkv"
    broken.write_bytes(b"this is not a video file" * 100)
    manager = make_manager()
    job = manager.start_job(_key(), _request(broken))
    with pytest.raises(TranscodeFailedError, match="Invalid data"):
        manager.wait_for_segment(job, 0, timeout=30)
    assert job.runs[0].exit_code not in (None, 0)
    retried = manager.start_job(_key(), _request(broken))
    assert retried is not job and job.closed


# --- throttling, idle, limits -------------------------------------------------------------------


def _wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process state from /proc")
def test_throttle_pauses_ffmpeg_and_resumes_when_player_catches_up(
    make_manager: Callable[..., TranscodeJobManager], clip: Path
) -> None:
    manager = make_manager(throttle_ahead_segments=1, seek_gap_seconds=60)
    job = manager.start_job(_key(), _request(clip, video=ENCODE, audio=AAC, segment_seconds=2, read_rate=8))
    manager.wait_for_segment(job, 0, timeout=30)
    assert _wait_until(lambda: job.is_paused, 10), "ffmpeg was never paused"
    pid = job.runs[0].process.pid

    def state() -> str:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]

    # SIGSTOP lands asynchronously: the process may still show running for a moment.
    assert _wait_until(lambda: state() in ("T", "t"), 5), state()
    produced = sorted(p.name for p in job.directory.glob("seg*.ts"))
    time.sleep(0.5)
    assert sorted(p.name for p in job.directory.glob("seg*.ts")) == produced
    last = manager.wait_for_segment(job, 5, timeout=30)
    assert last.exists()
    assert len(job.runs) == 1, "catching up must resume, not restart"


def test_idle_job_is_killed_and_cleaned(make_manager: Callable[..., TranscodeJobManager], clip: Path) -> None:
    manager = make_manager(idle_timeout=0.6)
    idle = manager.start_job(_key("idle"), _request(clip, video=ENCODE, audio=AAC, read_rate=1))
    kept = manager.start_job(_key("kept"), _request(clip, video=ENCODE, audio=AAC, read_rate=1))
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        manager.ping(kept)
        time.sleep(0.1)
    assert idle.closed and not idle.directory.exists()
    assert idle.runs[0].process.poll() is not None
    assert manager.get_job("idle") is None
    with pytest.raises(TranscodeJobClosedError):
        manager.wait_for_segment(idle, 0, timeout=1)
    assert not kept.closed and kept.directory.exists()
    assert manager.get_job("kept") is kept


def test_concurrency_limit(make_manager: Callable[..., TranscodeJobManager], clip: Path) -> None:
    manager = make_manager(max_concurrent=1)
    first = manager.start_job(_key("a"), _request(clip, read_rate=1))
    assert manager.start_job(_key("a"), _request(clip, read_rate=1)) is first
    with pytest.raises(TranscodeLimitError):
        manager.start_job(_key("b"), _request(clip, read_rate=1))
    replaced = manager.start_job(_key("a", item="item-2"), _request(clip, read_rate=1))
    assert first.closed and replaced is not first
    manager.stop_session("a")
    other = manager.start_job(_key("b"), _request(clip, read_rate=1))
    assert manager.jobs == [other]


# --- hardware fallback and shutdown -------------------------------------------------------------


def test_failed_hardware_encode_falls_back_to_software(
    ffmpeg: FfmpegInfo, make_manager: Callable[..., TranscodeJobManager], clip: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    if not ffmpeg.has_encoder("h264_vaapi"):
        pytest.skip("this ffmpeg has no h264_vaapi")
    options = EncodingOptions(
        hardware_acceleration=HardwareAccelerationType.VAAPI, vaapi_device="/dev/dri/no-such-render-node"
    )
    manager = make_manager(options=options)
    with caplog.at_level(logging.WARNING):
        job = manager.start_job(_key(), _request(clip, video=ENCODE, audio=AAC))
        path = manager.wait_for_segment(job, 0, timeout=30)
    assert _video_frames(path)[0].key_frame
    hardware_run, software_run = job.runs
    assert hardware_run.hardware == HardwareAccelerationType.VAAPI and hardware_run.exit_code not in (None, 0)
    assert "h264_vaapi" in hardware_run.command
    assert software_run.hardware == HardwareAccelerationType.NONE and "libx264" in software_run.command
    assert "retrying in software" in caplog.text
    assert "no-such-render-node" in caplog.text
    assert "no-such-render-node" in job.log_path.read_text()


def test_kill_all_leaves_no_ffmpeg(make_manager: Callable[..., TranscodeJobManager], clip: Path) -> None:
    manager = make_manager(throttle_ahead_segments=None)
    jobs = [manager.start_job(_key(f"s{i}"), _request(clip, video=ENCODE, audio=AAC, read_rate=1)) for i in range(2)]
    assert all(job.runs[0].process.poll() is None for job in jobs)
    if sys.platform.startswith("linux"):
        # Right after spawn a child may not have exec'd ffmpeg yet: wait until both have.
        deadline = time.monotonic() + 10
        while len(_ffmpeg_pids_mentioning(str(manager.transcode_root))) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(_ffmpeg_pids_mentioning(str(manager.transcode_root))) == 2
    manager.kill_all()
    assert all(job.runs[0].process.poll() is not None for job in jobs)
    assert all(not job.directory.exists() for job in jobs)
    if sys.platform.startswith("linux"):
        assert _ffmpeg_pids_mentioning(str(manager.transcode_root)) == []


def test_stale_job_dirs_are_removed(make_manager: Callable[..., TranscodeJobManager]) -> None:
    manager = make_manager()
    stale = manager.transcode_root / "job-0123456789abcdef0123456789abcdef"
    stale.mkdir(parents=True)
    (stale / "seg0.ts").write_bytes(b"old")
    keep = manager.transcode_root / "not-a-job"
    keep.mkdir()
    assert manager.remove_stale_job_dirs() == 1
    assert not stale.exists() and keep.exists()


def test_old_segments_are_deleted_and_a_seek_back_restarts(
    make_manager: Callable[..., TranscodeJobManager], clip: Path
) -> None:
    manager = make_manager(keep_segments_behind=1, throttle_ahead_segments=None)
    job = manager.start_job(_key(), _request(clip, video=ENCODE, audio=AAC, segment_seconds=2))
    manager.wait_for_segment(job, 4, timeout=30)
    deadline = time.monotonic() + 5
    while job.segment_path(0).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(job.segment_path(i).exists() for i in range(3))  # more than one behind segment 4
    path = manager.wait_for_segment(job, 0, timeout=30)  # the player seeks back: ffmpeg restarts there
    assert path.exists() and job.runs[-1].start_segment == 0 and len(job.runs) == 2
    assert _video_frames(path)[0].key_frame
