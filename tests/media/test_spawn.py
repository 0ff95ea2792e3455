"""server/media/spawn.py: children die with the server (PR_SET_PDEATHSIG on Linux, the watchdog
pipe used on macOS, tested here through its POSIX sh wrapper), pid records ended at start-up,
and the Windows Job Object's limits structure laid out as Windows expects."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from server.media import spawn

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc (Linux)")


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _wait_gone(pid: int, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(x) for x in (task / "children").read_text().split()]
    return found


def test_a_child_dies_when_its_parent_is_killed():
    script = textwrap.dedent("""
        import sys, threading, time
        from server.media import spawn
        def later():
            proc = spawn.popen(["sleep", "300"])
            print(proc.pid, flush=True)
        threading.Thread(target=later).start()  # spawns go through the long-lived spawner thread
        time.sleep(300)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[2])
    try:
        child = int(parent.stdout.readline())
        time.sleep(0.3)  # the spawning thread has ended by now: the child must still live
        assert _alive(child)
        parent.kill()
        parent.wait()
        assert _wait_gone(child), "the child outlived its parent"
    finally:
        parent.kill()


async def test_async_spawn_and_kill_end_the_process_group():
    proc = await spawn.exec_async("sleep", "300", start_new_session=True)
    assert _alive(proc.pid)
    spawn.kill(proc)
    await proc.wait()
    spawn.kill(proc)  # already gone: no error


def test_run_kills_the_child_on_timeout():
    with pytest.raises(subprocess.TimeoutExpired):
        spawn.run(["sleep", "30"], timeout=0.3)
    done = spawn.run(["sh", "-c", "echo out; echo err >&2; exit 3"], text=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")


def test_watchdog_wrapper_passes_output_and_status():
    proc = spawn.popen(["sh", "-c", "echo hello; exit 7"], mode="watchdog", stdout=subprocess.PIPE)
    out, _ = proc.communicate(timeout=10)
    assert out == b"hello\n" and proc.returncode == 7


def test_watchdog_kills_the_child_when_the_servers_pipe_closes():
    proc = spawn.popen(["sleep", "300"], mode="watchdog")
    deadline = time.monotonic() + 5
    while not (kids := [k for k in _children(proc.pid) if "sleep" in Path(f"/proc/{k}/cmdline").read_text()]):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child = kids[0]
    spawn.release_watchdog(proc)  # what the server's death does to the pipe
    assert _wait_gone(child)
    assert proc.wait(5) != 0


def test_watchdog_passes_sigterm_on_and_kill_ends_the_group():
    proc = spawn.popen(["sleep", "300"], mode="watchdog")
    time.sleep(0.2)
    child = [k for k in _children(proc.pid) if "sleep" in Path(f"/proc/{k}/cmdline").read_text()][0]
    proc.terminate()
    assert _wait_gone(child)
    proc.wait(5)
    proc = spawn.popen(["sleep", "300"], mode="watchdog")
    time.sleep(0.2)
    child = [k for k in _children(proc.pid) if "sleep" in Path(f"/proc/{k}/cmdline").read_text()][0]
    spawn.kill(proc)
    assert _wait_gone(child)
    proc.wait(5)


def test_end_recorded_kills_only_our_ffmpeg(tmp_path):
    fake = tmp_path / "bin" / "ffmpeg"
    fake.parent.mkdir()
    fake.symlink_to("/bin/sleep")
    ours = subprocess.Popen([str(fake), "300"], start_new_session=True)
    other = subprocess.Popen(["sleep", "300"])
    records = tmp_path / "transcodes"
    try:
        spawn.record_pid(records, ours.pid, str(tmp_path))
        spawn.record_pid(records, other.pid, str(tmp_path))  # not an ffmpeg: left alone
        (records / "ffmpeg-1.pid").write_text('{"pid": 1, "start": null, "marker": ""}')  # never pid 1
        (records / "ffmpeg-junk.pid").write_text("not json")
        assert spawn.end_recorded(records) == 1
        ours.wait(5)
        assert _alive(other.pid)
        assert list(records.glob("*.pid")) == []
    finally:
        ours.kill()
        other.kill()
        ours.wait()
        other.wait()


def test_a_reused_pid_is_not_killed(tmp_path):
    fake = tmp_path / "ffmpeg"
    fake.symlink_to("/bin/sleep")
    proc = subprocess.Popen([str(fake), "300"])
    try:
        record = spawn.record_pid(tmp_path / "t", proc.pid, "")
        record.write_text(record.read_text().replace('"start": "', '"start": "1'))  # another start time
        assert spawn.end_recorded(tmp_path / "t") == 0
        assert _alive(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def test_windows_job_limits_have_the_windows_layout():
    info = spawn.kill_on_close_limits()
    assert info.BasicLimitInformation.LimitFlags == spawn.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE == 0x2000
    if ctypes.sizeof(ctypes.c_void_p) == 8:  # JOBOBJECT_EXTENDED_LIMIT_INFORMATION on 64-bit Windows
        assert ctypes.sizeof(spawn.JOBOBJECT_BASIC_LIMIT_INFORMATION) == 64
        assert ctypes.sizeof(spawn.IO_COUNTERS) == 48
        assert ctypes.sizeof(info) == 144
        assert spawn.JOBOBJECT_EXTENDED_LIMIT_INFORMATION.IoInfo.offset == 64
    spawn._assign_to_job(os.getpid(), None)  # a no-op off Windows


def test_every_ffmpeg_spawn_goes_through_the_helper():
    root = Path(__file__).resolve().parents[2] / "server"
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "spawn.py":
            continue
        text = path.read_text()
        for needle in ("create_subprocess_exec(", "subprocess.Popen(", "subprocess.run(", "os.spawn", "os.system("):
            if needle in text:
                offenders.append(f"{path.relative_to(root)}: {needle}")
    assert offenders == []


async def test_async_watchdog_wrapper_passes_output_and_status():
    proc = await spawn.exec_async("sh", "-c", "echo hi; exit 4", mode="watchdog", stdout=subprocess.PIPE)
    out, _ = await proc.communicate()
    assert out == b"hi\n" and proc.returncode == 4
