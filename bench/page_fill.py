"""The first browse after an upgrade: the fragment store empty for the new code, with and without
the page fill (server/library/catalog/page_fill.py), side by side.

On a fresh copy (``cp -a``) of a bench/load.py data folder (``--data``, made by ``bench/load.py
--data DIR --skip-load --cost 0``), for each tree in turn (``--baseline DIR``: another checkout,
e.g. main, first; then this one; ``--rounds`` alternate them):

1. a start in which the load's browsing client asks its listing's first page (what a client did
   before the upgrade: this tree's page fill records the listing), and a clean stop;
2. the fragment store deleted: what a start with another code stamp finds (no fragment of its
   shapes; on main every ``git pull`` or install is that);
3. a start, the client's sign-in, then ``--idle`` seconds left alone (the user comes back a while
   after the upgrade), the server's CPU and peak RSS over them, and when the fill's pass ended (its
   log line);
4. bench/load.py's mixed load for ``--seconds`` (200 browsing clients, 20 streams): requests/s, the
   p99 of each route and of the first 5 s.

    python bench/page_fill.py --data /tmp/load-lib [--baseline /tmp/main-checkout] [--idle 90]
                              [--seconds 10] [--rounds 1] [--streams 20] [--clients 200]

Loopback only. The trees share nothing but the source folder; each run has its own copy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import children, cpu_seconds, start_server, stop_server  # noqa: E402
from items_query import AUTH, FIELDS, pct, sign_in  # noqa: E402
from load import log_time, report, run_load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident set (VmHWM), MiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def niced_cpu(pid: int) -> float:
    """CPU seconds of the process's threads at nice 19 (the fills' threads; the rest run at 0)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[16]) == 19:  # (field 19 of stat: nice; utime and stime are fields 14 and 15)
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def ask(url: str, token: str, path: str) -> int:
    req = urllib.request.Request(url + path, headers={"Authorization": AUTH.format(n=0) + f', Token="{token}"'})
    with urllib.request.urlopen(req, timeout=120) as r:
        r.read()
        return int(r.status)


def one(label: str, root: Path, source: Path, work: Path, args: argparse.Namespace) -> None:
    if work.exists():
        shutil.rmtree(work)
    work.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(source), str(work)], check=True)
    info = json.loads((work / "load-bench.json").read_text())
    shutil.rmtree(work / "cache" / "images", ignore_errors=True)
    log_file = work / "log" / "reelroom.log"

    def query(user_id: str, start: int = 0) -> str:
        return "/Items?" + urllib.parse.urlencode({
            "userId": user_id, "parentId": info["movies"], "recursive": "true", "includeItemTypes": "Movie",
            "sortBy": "SortName", "sortOrder": "Ascending", "startIndex": str(start), "limit": "100",
            "fields": FIELDS, "enableTotalRecordCount": "true"})

    proc, url = start_server(work, root=root)  # 1. before the upgrade: the client's first page
    try:
        token, user_id = sign_in(url)
        ask(url, token, query(user_id))
    finally:
        stop_server(proc)
    for suffix in ("", "-wal", "-shm", "-journal"):  # 2. the new code finds no fragment of its shapes
        with_suffix = work / "cache" / f"fragments.sqlite3{suffix}"
        if with_suffix.exists():
            with_suffix.unlink()
    log_from = log_file.stat().st_size if log_file.exists() else 0
    started = time.time()
    proc, url = start_server(work, root=root)  # 3. the start after the upgrade, left alone
    try:
        ready = time.time() - started
        token, user_id = sign_in(url)
        cpu0 = cpu_seconds(proc.pid)
        time.sleep(args.idle)
        idle_cpu = cpu_seconds(proc.pid) - cpu0
        idle_peak = peak_rss_mib(proc.pid)
        with log_file.open("rb") as f:
            f.seek(log_from)
            lines = f.read().decode("utf-8", "replace").splitlines()
        fills = [(log_time(line), line.split("Page fill:", 1)[1].strip()) for line in lines if "Page fill:" in line]
        fill = "; ".join(f"{text} (done {at - started:.0f} s after the start)" for at, text in fills if at) or "none"
        print(f"  {label:<9} start -> ready {ready:.1f} s; left alone {args.idle:.0f} s: server CPU {idle_cpu:.1f} s, "
              f"peak RSS {idle_peak:.0f} MiB; page fill: {fill}; load average {os.getloadavg()[0]:.1f}")
        cfg = {"token": token, "user_id": user_id, "movie_ids": info["movie_ids"][:5000],
               "imaged_ids": info["imaged_ids"], "movie_count": info["movie_count"],
               "items_query": query(user_id).replace("&startIndex=0", ""), "video_id": info["video_id"],
               "video_size": info["video_size"], "bitrate": args.bitrate, "buffer": args.buffer}
        niced = niced_cpu(proc.pid)
        r = run_load(url, proc.pid, cfg, args)  # 4. the first browse
        print(f"  {label:<9} the fill's CPU during the load: {niced_cpu(proc.pid) - niced:.2f} s (before it "
              f"{niced:.2f} s); readers at the end: {len(children(proc.pid))}")
    finally:
        stop_server(proc)
    report(label, r)
    routes = ", ".join(f"{k} {pct(v, 99):.0f}" for k, v in sorted(r["lat"].items()) if v)
    first = [x for s, v in r["by_second"].items() if s - r["load_start"] < 5 for x in v]
    print(f"  {label:<9} p99 per route (ms): {routes}; all routes' p99 in the first 5 s: "
          f"{pct(first, 99) if first else float('nan'):.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a bench/load.py data folder (copied, never changed)")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout, measured first")
    parser.add_argument("--work", type=Path, default=Path("/tmp/page-fill-bench"), help="where the copies go")
    parser.add_argument("--idle", type=float, default=90.0, help="seconds the restarted server is left alone")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--bitrate", type=float, default=8e6)
    parser.add_argument("--buffer", type=float, default=2.0)
    parser.add_argument("--client-procs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    source = args.data.resolve()
    if not (source / "load-bench.json").exists():
        raise SystemExit(f"{source} is no bench/load.py data folder (make one: bench/load.py --data DIR --skip-load)")
    print(f"cpus: {os.cpu_count()}; fresh copy of {source}, fragment store deleted after a first page was asked; "
          f"left alone {args.idle:.0f} s; then {args.clients} browsing clients + {args.streams} streams for "
          f"{args.seconds} s")
    trees = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
    try:
        for n in range(args.rounds):
            for label, root in trees:
                one(f"{label}#{n + 1}" if args.rounds > 1 else label, root, source, args.work / label, args)
    finally:
        shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
