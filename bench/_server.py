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
