"""Start `reelroom-server` and print two figures: seconds from process start to the first 200 on
/System/Ping (first start with an empty data folder, then a warm restart), and the idle RSS.

    python bench/startup.py [--runs 3]
    python bench/startup.py --binary dist/reelroom/reelroom-server   # a PyInstaller build
    python bench/startup.py --binary dist/reelroom/reelroom-server --compare   # bundle vs source
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_and_ping(data_dir: Path, command: list[str]) -> tuple[float, subprocess.Popen, int]:
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen([*command, "--data-dir", str(data_dir), "--port", str(port), "--host", "127.0.0.1",
                             "--no-lan"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    url = f"http://127.0.0.1:{port}/System/Ping"
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return time.perf_counter() - t0, proc, port
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError("the server exited during start-up")
        if time.perf_counter() - t0 > 60:
            raise RuntimeError("no 200 within 60 s")
        time.sleep(0.01)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--command", default=f"{sys.executable} -m app.server_main",
                        help="how to start the server (e.g. a bundled binary)")
    parser.add_argument("--binary", type=Path, default=None,
                        help="a built reelroom-server executable (e.g. dist/reelroom/reelroom-server)")
    parser.add_argument("--compare", action="store_true", help="with --binary: also measure the source run")
    args = parser.parse_args()
    if args.binary is not None:
        if args.compare:
            measure("source", args.command.split(), args.runs)
        measure(f"binary {args.binary}", [str(args.binary.resolve())], args.runs)
    else:
        measure("source", args.command.split(), args.runs)
    print(f"cpus: {os.cpu_count()}")


def measure(label: str, command: list[str], runs: int) -> None:
    print(f"== {label}")
    cold, warm, rss = [], [], []
    for _ in range(runs):
        data = Path(tempfile.mkdtemp(prefix="reelroom-bench-"))
        try:
            seconds, proc, _port = start_and_ping(data, command)
            cold.append(seconds)
            stop(proc)
            seconds, proc, _port = start_and_ping(data, command)
            warm.append(seconds)
            time.sleep(3)  # let start-up work settle
            rss.append(rss_mib(proc.pid))
            stop(proc)
        finally:
            shutil.rmtree(data, ignore_errors=True)
    print(f"start to first 200 on /System/Ping, empty data folder: median {statistics.median(cold):.2f} s "
          f"(runs: {', '.join(f'{x:.2f}' for x in cold)})")
    print(f"start to first 200 on /System/Ping, warm restart:      median {statistics.median(warm):.2f} s "
          f"(runs: {', '.join(f'{x:.2f}' for x in warm)})")
    print(f"idle RSS after start-up: median {statistics.median(rss):.0f} MiB")


if __name__ == "__main__":
    main()
