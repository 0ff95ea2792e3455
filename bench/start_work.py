"""CPU a server spends right after start on a big, unchanged library (the start's scheduled tasks).

Starts ``reelroom-server`` on a kept ``bench/items_query.py`` library (``--keep DIR`` there builds
one under DIR/<size>), idle (no requests), and prints the server's CPU (its own and its children's,
from /proc) at a few moments up to ``--seconds`` after start, then the start-up tasks' last results
(name, status, wall seconds). With ``--baseline DIR`` (a checkout of another commit) both trees
take turns on the same data folder, ``--runs`` times each. Before measuring, each tree starts once and
waits for its start's tasks to end (not counted), so that what a complete run remembers is there.

    python bench/start_work.py --data /tmp/lib/100000 [--baseline /tmp/base] [--runs 2] [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._server import ROOT, children, start_server, stop_server  # noqa: E402

AUTH = 'MediaBrowser Client="bench", Device="bench", DeviceId="bench-start", Version="1.0"'
MARKS = (2, 5, 10, 20, 30, 60)


def total_cpu(pid: int) -> float:
    """utime + stime + the waited-for children's (a migration child) + the live children's."""
    def own(p: int, with_waited: bool) -> float:
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            return sum(int(x) for x in f[11:15 if with_waited else 13]) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0
    return own(pid, True) + sum(own(c, False) for c in children(pid))


def tasks(url: str) -> list[str]:
    with httpx.Client(base_url=url, headers={"Authorization": AUTH}, timeout=30) as c:
        r = c.post("/Users/AuthenticateByName", json={"Username": "bench", "Pw": "bench"})
        if r.status_code != 200:
            return [f"(sign-in failed: {r.status_code})"]
        headers = {"Authorization": AUTH + f', Token="{r.json()["AccessToken"]}"'}
        out = []
        for t in c.get("/ScheduledTasks", headers=headers).json():
            last = t.get("LastExecutionResult") or {}
            if not last.get("StartTimeUtc"):
                continue
            start = datetime.fromisoformat(last["StartTimeUtc"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(last["EndTimeUtc"].replace("Z", "+00:00"))
            out.append(f"{t['Key']} {last.get('Status')} {(end - start).total_seconds():.2f} s")
        return out


def warm_up(root: Path, data: Path, timeout: float = 300) -> None:
    """Start, wait until the start's tasks are done, stop."""
    proc, url = start_server(data, root=root)
    try:
        with httpx.Client(base_url=url, headers={"Authorization": AUTH}, timeout=30) as c:
            r = c.post("/Users/AuthenticateByName", json={"Username": "bench", "Pw": "bench"})
            r.raise_for_status()
            headers = {"Authorization": AUTH + f', Token="{r.json()["AccessToken"]}"'}
            deadline = time.monotonic() + timeout
            time.sleep(1)
            while time.monotonic() < deadline:
                if all(t.get("State") == "Idle" for t in c.get("/ScheduledTasks", headers=headers).json()):
                    break
                time.sleep(0.5)
    finally:
        stop_server(proc)


def one(root: Path, data: Path, seconds: float) -> tuple[list[float], list[str]]:
    t0 = time.monotonic()
    proc, url = start_server(data, root=root)
    marks = [m for m in MARKS if m < seconds] + [seconds]
    cpu: list[float] = []
    for m in marks:
        time.sleep(max(0.0, t0 + m - time.monotonic()))
        cpu.append(total_cpu(proc.pid))
    done = tasks(url)
    stop_server(proc)
    return cpu, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a kept bench/items_query.py library")
    parser.add_argument("--baseline", type=Path, default=None, help="a checkout to compare with")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    trees = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
    marks = [m for m in MARKS if m < args.seconds] + [args.seconds]
    print(f"server CPU (s, with children) at {', '.join(f'{m:g}' for m in marks)} s after start, idle, "
          f"on {args.data}; load average {os.getloadavg()[0]:.1f}")
    for _label, root in trees:  # warm-up: a first start of a tree records what its runs saw
        warm_up(root, args.data)
    results: dict[str, list[list[float]]] = {label: [] for label, _root in trees}
    for run in range(args.runs):
        for label, root in trees:
            cpu, done = one(root, args.data, args.seconds)
            results[label].append(cpu)
            print(f"  {label:<8} run {run + 1}: " + "  ".join(f"{c:6.2f}" for c in cpu)
                  + f"   load {os.getloadavg()[0]:.1f}   tasks: {'; '.join(done)}", flush=True)
    if args.baseline:
        b = min(r[-1] for r in results["baseline"])
        t = min(r[-1] for r in results["this"])
        print(f"CPU of the first {args.seconds:g} s (best run): baseline {b:.2f} s, this {t:.2f} s, "
              f"this/baseline {t / b:.2f}")


if __name__ == "__main__":
    main()
