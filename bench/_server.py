"""What the benchmarks share: a free loopback port and a real reelroom-server in its own process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: Path, *args: str, root: Path = ROOT,
                 env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``app.server_main`` from the checkout ``root`` on 127.0.0.1 (LAN services off) and
    wait for /System/Info/Public; returns the process and its base URL. ``env``: more environment
    (e.g. REELROOM_READERS)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.server_main", "--data-dir", str(data_dir), "--port",
                             str(port), "--host", "127.0.0.1", "--no-lan", *args], cwd=root,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **(env or {}), "PYTHONPATH": str(root)})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/System/Info/Public", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("reelroom-server did not start")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- a process as Linux's /proc shows it (the benches' CPU, RSS and child figures) -------------

def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far: work per request whatever the machine's load
    (wall time grows with the load; this hardly does). NaN once the process is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def thread_cpu_seconds(pid: int, tid: int | None = None) -> float:
    """User + system CPU time of one thread of a process (its main thread by default: the server's
    event loop runs there), NaN once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/task/{tid or pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def rss_mib(pid: int) -> float:
    """Resident memory of a process in MiB (NaN once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``: the server's reader processes, ffmpeg."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(entry, "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                    found.append(int(entry.name))
            except (OSError, IndexError):
                pass
    return found
