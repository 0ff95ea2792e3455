"""Instructions per request of a few routes, counted by valgrind's callgrind on a real server.

CPU time on a shared, busy machine moves by 10-20% from one run to the next (other processes evict
the caches, the scheduler moves threads); the number of instructions a request executes does
not. This bench runs a `reelroom-server` per checkout under ``valgrind --tool=callgrind`` (every
thread counted), on a copy of one small library (bench/items_query.py's, with a poster for the
image routes: bench/overhead.py's setup), and for each route sends ``--requests`` requests over
one keep-alive connection between ``callgrind_control -z`` (zero the counters) and ``-d`` (dump
them): the dump's total, divided by the requests, is the route's cost in instructions (Ir); the
lower of two rounds counts (background work only adds). Every route is warmed first (its first
requests compile handlers and fill caches).

Routes: bench/overhead.py's (Ping, Info/Public, Users/Me, UserViews, Items/{id} repeated, an
image cache hit and its 304, the repeated Items page), plus an Items/{id} *miss* (a different
movie each request: the item's DTO is built, its reader-thread hop taken) and a *warm Items
page*: bench/items_query.py's page (100 movies, Fields=PrimaryImageAspectRatio,MediaSources,
Overview, user data) at a new startIndex each request, within the first 700 movies, whose
fragments the warm-up stored: every page's query string is new (no whole-reply hit), every
fragment is found (what a random page of a warm library costs: the HTTP path and the page's read).

    python bench/callgrind_routes.py [--size 2000] [--requests 40] [--baseline DIR [--baseline-env K=V,...]]

The server's environment is this process's: e.g. ``REELROOM_READERS=1 REELROOM_READERS_LOCAL=0
REELROOM_READERS_BUSY=0 REELROOM_READERS_IDLE=3600`` hands every Items page to a reader process
(not traced: the counts are then the owner's alone, its event loop's share of a page).

Slow: a server under callgrind runs some 50 times slower (start-up alone takes a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import free_port  # noqa: E402
from items_query import build, sign_in  # noqa: E402
from overhead import WARM_PAGES, KeepAlive, add_poster, raw_get, routes, warm_page  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Traced:
    def __init__(self, label: str, root: Path, data: Path, out: Path, env: dict[str, str] | None = None) -> None:
        self.label = label
        self.port = free_port()
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/callgrind.out.%p", "--dump-instr=no",
             sys.executable, "-m", "app.server_main", "--data-dir", str(data), "--port", str(self.port),
             "--host", "127.0.0.1", "--no-lan", "--log-level", "WARNING"],
            cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {}), "PYTHONPATH": str(root)})
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 1800  # a start under callgrind on a busy machine: minutes
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/System/Info/Public", timeout=30).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"{label}: reelroom-server did not start under callgrind")

    def control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self.proc.pid)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)

    def dumped_ir(self) -> int:
        """Dump the counters since the last zeroing; their total Ir."""
        before = set(self.out.glob("callgrind.out.*"))
        self.control("-d")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            new = [p for p in set(self.out.glob("callgrind.out.*")) - before if p.stat().st_size]
            for path in new:
                text = path.read_text(errors="replace")
                m = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
                if m:
                    path.unlink()
                    return int(m.group(1))
            time.sleep(0.2)
        raise RuntimeError("no callgrind dump")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def ask(conn: KeepAlive, name: str, raw: bytes, misses: Iterator[str], user_id: str, token: str,
        starts: Iterator[int] | None = None, info: dict | None = None) -> None:
    """One request (``raw``, or for the miss route an Items/{id} of the next movie, for the warm
    page route the page at the next startIndex)."""
    if not raw and starts is not None and info is not None and name.startswith("GET /Items page"):
        raw = warm_page(info, user_id, token, next(starts))
    status, _ = conn.request(raw or raw_get(f"/Items/{next(misses)}?userId={user_id}", token))
    if status not in (200, 304):
        raise RuntimeError(f"{name} answered {status}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--baseline", type=Path, help="another checkout, counted in the same run")
    parser.add_argument("--baseline-env", default="",
                        help="environment of the baseline's server only, KEY=VALUE,...: e.g. --baseline . "
                             "--baseline-env REELROOM_ITEMS_LANE=0 counts this checkout without the Items lane")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    baseline_env = dict(kv.split("=", 1) for kv in args.baseline_env.split(",") if kv)
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        sys.exit("valgrind (with callgrind_control) is needed")
    tmp = Path(tempfile.mkdtemp(prefix="reelroom-callgrind-"))
    results: dict[str, dict[str, float]] = {}
    try:
        print(f"building a library of {args.size} items ...", flush=True)
        info = build(tmp / "library", args.size)
        add_poster(tmp / "library", info)
        checkouts = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
        for label, root in checkouts:
            data = tmp / label
            shutil.copytree(tmp / "library", data)
            t0 = time.monotonic()
            server = Traced(label, root, data, tmp / f"{label}-out", baseline_env if label == "baseline" else None)
            print(f"  {label}: started under callgrind in {time.monotonic() - t0:.0f} s", flush=True)
            try:
                token, user_id = sign_in(server.url, timeout=900)  # (hashing a password under callgrind)
                table = routes(info, token, user_id, server.url)
                misses = iter(info["movie_ids"])
                table.append(("GET /Items/{id} (miss)", b""))
                table.append(("GET /Items page (warm, new)", b""))
                starts = iter(range(1, 100 * (WARM_PAGES - 1)))  # every one a new query string
                conn = KeepAlive(server.port)
                costs: dict[str, float] = {}
                for start in range(0, 100 * WARM_PAGES, 100):  # the warm page route's fragments stored
                    conn.request(warm_page(info, user_id, token, start))
                for name, raw in table:  # warm-up: handlers compiled, caches filled
                    for _ in range(10):
                        ask(conn, name, raw, misses, user_id, token, starts, info)
                time.sleep(10)  # (background work the start and the warm-up began)
                for _round in range(2):  # the lower of two rounds: background work only adds
                    for name, raw in table:
                        server.control("-z")
                        for _ in range(args.requests):
                            ask(conn, name, raw, misses, user_id, token, starts, info)
                        cost = server.dumped_ir() / args.requests
                        costs[name] = min(costs.get(name, cost), cost)
                for name, cost in costs.items():
                    print(f"    {name:<28} {cost / 1000:9.0f} k instructions per request", flush=True)
                conn.close()
                results[label] = costs
            finally:
                server.stop()
        print(f"\ninstructions per request (thousands, callgrind, {args.requests} requests per route, "
              f"every thread of the server); load average {os.getloadavg()[0]:.1f}")
        labels = list(results)
        print(f"  {'route':<28}" + "".join(f"{lab:>12}" for lab in labels) + ("    ratio" if len(labels) == 2 else ""))
        for name in results[labels[0]]:
            line = f"  {name:<28}" + "".join(f"{results[lab][name] / 1000:12.0f}" for lab in labels)
            if len(labels) == 2:
                line += f"  x{results['baseline'][name] / results['this'][name]:.2f} fewer"
            print(line)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
