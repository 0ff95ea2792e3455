"""The one way the server starts ffmpeg (and any other helper process): no orphans, ever.

Whatever happens to the server, even ``kill -9``, the children it started die with it:

- **Linux**: every child asks the kernel for ``SIGKILL`` when its parent goes away
  (``prctl(PR_SET_PDEATHSIG)``, called in the child between fork and exec through ctypes).
  The kernel sends it when the *thread* that forked the child ends, so blocking spawns are
  made on one long-lived spawner thread, and asyncio spawns on the event loop's thread, which
  lives as long as the server.
- **Windows**: every child is put in one Job Object with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``;
  the job's only handle belongs to the server, so when the server's process ends, however it
  ends, Windows closes the handle and kills every process in the job.
- **macOS** (and any other POSIX system): a watchdog pipe. The child runs under a tiny
  ``/bin/sh`` wrapper whose stdin is a pipe the server holds open and never writes; when the
  server dies the pipe closes, the wrapper's watchdog reads end-of-file and kills the child.
  Such children lead their own process group, so ``kill`` ends the wrapper and ffmpeg together.

Processes that should also survive a crash of the server only as a record (HLS transcodes,
recordings) write a pid file (``record_pid``); at start-up ``end_recorded`` ends the ones that
are still ffmpeg processes of ours and clears the records.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

log = logging.getLogger("reelroom.spawn")

PR_SET_PDEATHSIG = 1

#: "pdeathsig" (Linux), "job" (Windows) or "watchdog" (macOS and other POSIX systems).
MODE = "pdeathsig" if sys.platform.startswith("linux") else "job" if sys.platform == "win32" else "watchdog"

# Runs the command in the background; a watchdog reads the server's pipe (the wrapper's stdin,
# moved to fd 3) and kills the command when it closes; SIGTERM/SIGINT are passed on; exits with
# the command's status. POSIX sh, so it also runs (and is tested) on Linux.
WATCHDOG_SCRIPT = "\n".join((
    'exec 3<&0',
    '"$@" </dev/null 3<&- & c=$!',
    """trap 'kill -TERM "$c" 2>/dev/null' TERM""",
    """trap 'kill -INT "$c" 2>/dev/null' INT""",
    '{ while read -r _; do :; done <&3; kill -9 "$c" 2>/dev/null; } >/dev/null 2>&1 & w=$!',
    'exec 3<&-',
    'while :; do wait "$c"; s=$?; kill -0 "$c" 2>/dev/null || break; done',
    'kill "$w" 2>/dev/null',
    'exit "$s"',
))

_libc: Any = None
_prctl: Callable[..., int] | None = None
_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def _load_prctl() -> Callable[..., int] | None:
    """Resolved once in the parent: the child must not load libraries between fork and exec."""
    global _libc, _prctl
    if _prctl is None and MODE == "pdeathsig":
        try:  # glibc's soname first: find_library runs ``ldconfig -p`` in a child process
            _libc = ctypes.CDLL("libc.so.6", use_errno=True)
        except OSError:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = _libc.prctl
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        prctl.restype = ctypes.c_int
        _prctl = prctl
    return _prctl


def _preexec(nice: int) -> Callable[[], None] | None:
    """The function the child runs between fork and exec (POSIX)."""
    prctl = _load_prctl() if MODE == "pdeathsig" else None
    parent = os.getpid()
    if prctl is None and not nice:
        return None

    def child() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the server died before the request took effect
                os.kill(os.getpid(), signal.SIGKILL)
        if nice:
            with contextlib.suppress(OSError):
                os.nice(nice)

    return child


def _spawner_thread() -> ThreadPoolExecutor:
    """The long-lived thread blocking spawns fork from (PR_SET_PDEATHSIG follows the thread)."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reelroom-spawner")
        return _spawner


def _wrap(args: Sequence[str]) -> list[str]:
    return ["/bin/sh", "-c", WATCHDOG_SCRIPT, "reelroom-watchdog", *map(os.fspath, args)]


def _prepare(args: Sequence[str], kwargs: dict[str, Any], nice: int, mode: str) -> tuple[list[str], dict[str, Any]]:
    args = [os.fspath(a) for a in args]
    kwargs = dict(kwargs)
    if mode == "job":
        kwargs["creationflags"] = kwargs.get("creationflags", 0) | getattr(subprocess, "CREATE_NO_WINDOW", 0)
        if nice:
            kwargs["creationflags"] |= getattr(subprocess, "BELOW_NORMAL_PRIORITY_CLASS", 0)
        return args, kwargs
    if mode == "watchdog":
        if kwargs.get("stdin") not in (None, subprocess.DEVNULL, asyncio.subprocess.DEVNULL):
            raise ValueError("a watched child cannot take stdin")
        read_end, write_end = os.pipe()  # the watchdog pipe: held open by the server, never written
        kwargs["stdin"] = read_end
        kwargs["_watchdog"] = write_end
        kwargs["start_new_session"] = True  # wrapper and ffmpeg in one group, killed together
        args = _wrap(args)
    preexec = _preexec(nice)
    if preexec is not None:
        kwargs["preexec_fn"] = preexec
    return args, kwargs


def _hold_watchdog(proc: Any, kwargs: dict[str, Any], write_end: int | None) -> None:
    """Keep the watchdog pipe's write end for as long as the process object lives (closing it,
    or the server's death, ends the child)."""
    if write_end is None:
        return
    os.close(kwargs["stdin"])
    proc._reelroom_watchdog = weakref.finalize(proc, os.close, write_end)


def release_watchdog(proc: Any) -> None:
    """Close the watchdog pipe of a watched child: the child is killed (what the server's death does)."""
    finalizer = getattr(proc, "_reelroom_watchdog", None)
    if finalizer is not None:
        finalizer()


def popen(args: Sequence[str], *, nice: int = 0, mode: str | None = None, **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` for a child that dies with the server. ``nice``: a lower priority."""
    mode = mode or MODE
    args, kwargs = _prepare(args, kwargs, nice, mode)
    watchdog = kwargs.pop("_watchdog", None)
    if mode == "pdeathsig" and threading.current_thread().name.startswith("reelroom-spawner"):
        proc = subprocess.Popen(args, **kwargs)
    elif mode == "pdeathsig":
        proc = _spawner_thread().submit(lambda: subprocess.Popen(args, **kwargs)).result()
    else:
        try:
            proc = subprocess.Popen(args, **kwargs)
        except BaseException:
            if watchdog is not None:
                os.close(kwargs["stdin"])
                os.close(watchdog)
            raise
    _hold_watchdog(proc, kwargs, watchdog)
    if mode == "job":
        _assign_to_job(proc.pid, getattr(proc, "_handle", None))
    return proc


def run(args: Sequence[str], *, timeout: float | None = None, nice: int = 0, text: bool = False,
        **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(capture_output=True)`` through ``popen``: the child is killed on timeout."""
    for key in ("encoding", "errors"):
        if key in kwargs:
            text = True
    proc = popen(args, nice=nice, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 stdin=kwargs.pop("stdin", subprocess.DEVNULL), text=text, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        proc.communicate()
        raise
    except BaseException:
        kill(proc)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


async def exec_async(*args: Any, nice: int = 0, mode: str | None = None, **kwargs: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` for a child that dies with the server. It forks on the
    event loop's thread, which lives as long as the server."""
    mode = mode or MODE
    argv, kwargs = _prepare(args, kwargs, nice, mode)
    watchdog = kwargs.pop("_watchdog", None)
    try:
        proc = await asyncio.create_subprocess_exec(*argv, **kwargs)
    except BaseException:
        if watchdog is not None:
            os.close(kwargs["stdin"])
            os.close(watchdog)
        raise
    _hold_watchdog(proc, kwargs, watchdog)
    if mode == "job":
        _assign_to_job(proc.pid, None)
    return proc


def kill(proc: subprocess.Popen[Any] | asyncio.subprocess.Process) -> None:
    """SIGKILL the child, and its whole process group when it leads one (a watched child's
    wrapper, a transcode started in its own session). Never raises for a child already gone."""
    if proc.returncode is not None:
        return
    if sys.platform != "win32":
        with contextlib.suppress(OSError):
            if os.getpgid(proc.pid) == proc.pid:
                os.killpg(proc.pid, signal.SIGKILL)
                return
    with contextlib.suppress(ProcessLookupError, OSError):
        proc.kill()


# -- Windows: one Job Object that kills its processes when the server's handle closes ----------

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JobObjectExtendedLimitInformation = 9
PROCESS_TERMINATE = 0x0001
PROCESS_SET_QUOTA = 0x0100

_DWORD = ctypes.c_uint32
_ULONG_PTR = ctypes.c_size_t


class IO_COUNTERS(ctypes.Structure):  # noqa: N801 (the Windows name)
    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):  # noqa: N801
    _fields_ = [("PerProcessUserTimeLimit", ctypes.c_longlong), ("PerJobUserTimeLimit", ctypes.c_longlong),
                ("LimitFlags", _DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", _DWORD),
                ("Affinity", _ULONG_PTR), ("PriorityClass", _DWORD), ("SchedulingClass", _DWORD)]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):  # noqa: N801
    _fields_ = [("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION), ("IoInfo", IO_COUNTERS),
                ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]


def kill_on_close_limits() -> JOBOBJECT_EXTENDED_LIMIT_INFORMATION:
    info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    return info


_job_handle: int | None = None
_job_lock = threading.Lock()


def _kernel32() -> Any:
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p]
    kernel32.CreateJobObjectW.restype = ctypes.c_void_p
    kernel32.SetInformationJobObject.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, _DWORD]
    kernel32.SetInformationJobObject.restype = ctypes.c_int
    kernel32.AssignProcessToJobObject.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    kernel32.AssignProcessToJobObject.restype = ctypes.c_int
    kernel32.OpenProcess.argtypes = [_DWORD, ctypes.c_int, _DWORD]
    kernel32.OpenProcess.restype = ctypes.c_void_p
    kernel32.CloseHandle.argtypes = [ctypes.c_void_p]
    kernel32.CloseHandle.restype = ctypes.c_int
    return kernel32


def _job() -> int | None:
    """The server's Job Object (created once; its handle is never closed: the process's end
    closes it, which is what kills the children)."""
    global _job_handle
    with _job_lock:
        if _job_handle is None:
            kernel32 = _kernel32()
            handle = kernel32.CreateJobObjectW(None, None)
            if not handle:
                log.error("CreateJobObject failed (error %s); children may outlive the server",
                          ctypes.get_last_error())  # type: ignore[attr-defined,unused-ignore]  # Windows only
                return None
            info = kill_on_close_limits()
            if not kernel32.SetInformationJobObject(handle, JobObjectExtendedLimitInformation,
                                                    ctypes.byref(info), ctypes.sizeof(info)):
                log.error("SetInformationJobObject failed (error %s)", ctypes.get_last_error())  # type: ignore[attr-defined,unused-ignore]  # Windows only
                kernel32.CloseHandle(handle)
                return None
            _job_handle = handle
        return _job_handle


def _assign_to_job(pid: int, process_handle: Any) -> None:
    if sys.platform != "win32":
        return
    job = _job()
    if job is None:
        return
    kernel32 = _kernel32()
    opened = None
    handle = int(process_handle) if process_handle else None
    if handle is None:
        opened = handle = kernel32.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid)
    try:
        if not handle or not kernel32.AssignProcessToJobObject(job, handle):
            log.warning("Could not put pid %s in the server's job (error %s)", pid,
                        ctypes.get_last_error())  # type: ignore[attr-defined,unused-ignore]  # Windows only
    finally:
        if opened:
            kernel32.CloseHandle(opened)


# -- pid records: ending what an earlier, killed server left behind ---------------------------

def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def record_pid(folder: Path, pid: int, marker: str) -> Path:
    """Remember a running child in ``folder`` (``marker``: text its command line contains, such
    as its output folder). Returns the record, to delete when the child has ended."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"ffmpeg-{pid}.pid"
    path.write_text(json.dumps({"pid": pid, "start": _start_time(pid), "marker": marker}))
    return path


def is_our_ffmpeg(pid: int, start: str | None, marker: str) -> bool:
    """Still the process we recorded: an ffmpeg whose command line holds ``marker``, started at
    the recorded time. Only Linux can tell (/proc); elsewhere nothing is killed on a guess."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if not argv or b"ffmpeg" not in os.path.basename(argv[0]):
        return False
    if start is not None and _start_time(pid) != start:
        return False
    return not marker or any(marker.encode() in a for a in argv)


def end_recorded(folder: Path) -> int:
    """Kill every recorded ffmpeg that is still ours, delete the records; the number killed."""
    killed = 0
    if not folder.is_dir():
        return 0
    for record in folder.glob("ffmpeg-*.pid"):
        try:
            data = json.loads(record.read_text())
            pid = int(data["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            record.unlink(missing_ok=True)
            continue
        if pid > 1 and is_our_ffmpeg(pid, data.get("start"), str(data.get("marker") or "")):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
                log.warning("Ended ffmpeg pid %s left running by an earlier server", pid)
        record.unlink(missing_ok=True)
    return killed
