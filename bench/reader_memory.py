"""The memory of a server with a reader process after browsing, side by side with a baseline checkout.

For each tree (this one, and ``--baseline DIR``) it copies the kept library (``--keep DIR``, from
bench/items_query.py; the fragment store left out, as ``--store warm`` does), starts
``reelroom-server`` with one reader taking every page (REELROOM_READERS=1, _BUSY=0, _LOCAL=0),
makes a pass over every SortName page (the store warm), ``--pages`` random pages anywhere (one
client) and ``--wrk-seconds`` of wrk (32 connections, random pages), waits ``--settle`` seconds
(the owner's trimmer releases SQLite's caches at a quiet look, 10-20 s after), then prints for the owner and
its reader what /proc shows: RSS (anonymous / file-backed), PSS and USS (``smaps_rollup``: a page
shared between processes counts once in the PSS sum, and in each one's RSS), and the reader's RSS
after its first pages (its imports, set-up and first reads) and after the pages.
The targets (issue 13): a reader <= 40 MiB RSS; owner + readers <= 200 MB after browsing.

    python bench/reader_memory.py --keep /tmp/me-lib [--size 100000] [--baseline DIR]
                                  [--pages 300] [--wrk-seconds 10] [--readers 0] [--settle 25]

``--readers 0``: the owner alone (every page its own), for the RSS after browsing without readers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import children, start_server, stop_server  # noqa: E402
from items_query import AUTH, params, sign_in, warm_pass, wrk_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def memory(pid: int) -> dict[str, float]:
    """RSS, its anonymous and file-backed parts (status), PSS and USS (smaps_rollup), in MiB."""
    out: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
        rollup = {}
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
            key, _, value = line.partition(":")
            rollup[key] = int(value.split()[0]) / 1024
        out["Pss"] = rollup.get("Pss", float("nan"))
        out["Uss"] = rollup.get("Private_Clean", 0) + rollup.get("Private_Dirty", 0)
    except (OSError, ValueError, IndexError):
        pass
    return out


def fmt(m: dict[str, float]) -> str:
    if not m:
        return "(gone)"
    return (f"RSS {m.get('VmRSS', float('nan')):.1f} ({m.get('RssAnon', float('nan')):.1f} anon / "
            f"{m.get('RssFile', float('nan')):.1f} file), PSS {m.get('Pss', float('nan')):.1f}, "
            f"USS {m.get('Uss', float('nan')):.1f}, peak {m.get('VmHWM', float('nan')):.1f}")


def run(root: Path, data: Path, info: dict, args: argparse.Namespace) -> dict:
    copy = Path(tempfile.mkdtemp(prefix="reelroom-reader-mem-")) / data.name
    shutil.copytree(data, copy, symlinks=True, ignore=shutil.ignore_patterns("fragments.sqlite3*"))
    env = {"REELROOM_READERS": str(args.readers), "REELROOM_READERS_BUSY": "0", "REELROOM_READERS_LOCAL": "0",
           "REELROOM_READERS_IDLE": "600"}
    proc, url = start_server(copy, root=root, env=env)
    result: dict = {}
    try:
        token, user_id = sign_in(url)
        headers = {"Authorization": AUTH.format(n=1) + f', Token="{token}"'}
        rnd = random.Random(7)
        with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
            c.get("/Items", params=params(info, user_id, rnd, False)).raise_for_status()  # a reader starts
            deadline = time.monotonic() + (60 if args.readers else 0)
            while not children(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            kids = children(proc.pid)
            for _ in range(3):  # the reader's first pages (the store still cold)
                c.get("/Items", params=params(info, user_id, rnd, False)).raise_for_status()
            time.sleep(2)
            result["reader, first pages"] = memory(kids[0]) if kids else {}
            warm_pass(url, token, info, user_id, proc.pid, copy)
            for _ in range(args.pages):
                c.get("/Items", params=params(info, user_id, rnd, False)).raise_for_status()
        result["owner after pages"] = memory(proc.pid)
        result["reader after pages"] = memory(kids[0]) if kids else {}
        if args.wrk_seconds and shutil.which("wrk"):
            w = wrk_run(url, token, info, user_id, 32, args.wrk_seconds, False, proc.pid)
            result["wrk"] = f"{w['rps']:.0f} pages/s, p99 {w['p99']:.0f} ms" if w else "-"
            time.sleep(args.settle)  # the owner's trimmer looks every 10 s (a quiet look releases)
            result["owner after wrk"] = memory(proc.pid)
            result["reader after wrk"] = memory(kids[0]) if kids else {}
        result["readers"] = len(children(proc.pid))
    finally:
        stop_server(proc)
        shutil.rmtree(copy.parent, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="the folder bench/items_query.py --keep built")
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--wrk-seconds", type=int, default=10)
    parser.add_argument("--readers", type=int, default=1, help="REELROOM_READERS (0: the owner alone)")
    parser.add_argument("--settle", type=float, default=25.0, help="seconds idle after wrk before reading")
    args = parser.parse_args()
    data = args.keep / str(args.size)
    info = json.loads((data / "bench-info.json").read_text())
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    results = {}
    for label, root in trees:
        print(f"{label} ({root}):", flush=True)
        results[label] = run(root, data, info, args)
        for key, value in results[label].items():
            if key.startswith("reader") and not args.readers:
                continue
            print(f"  {key:<20} {fmt(value) if isinstance(value, dict) else value}", flush=True)
        print(f"  load {os.getloadavg()[0]:.1f}", flush=True)
    if len(trees) == 2:
        t, b = results["this tree"], results["baseline"]
        for key in ("reader, first pages", "reader after pages", "owner after wrk", "reader after wrk"):
            if t.get(key) and b.get(key):
                print(f"{key:<20} RSS {b[key]['VmRSS']:.1f} -> {t[key]['VmRSS']:.1f} MiB, "
                      f"PSS {b[key]['Pss']:.1f} -> {t[key]['Pss']:.1f} MiB")
        for name, r in (("baseline", b), ("this tree", t)):
            if r.get("owner after wrk") and r.get("reader after wrk"):
                print(f"{name}: owner + reader after wrk: RSS {r['owner after wrk']['VmRSS'] + r['reader after wrk']['VmRSS']:.1f}"
                      f" MiB, PSS {r['owner after wrk']['Pss'] + r['reader after wrk']['Pss']:.1f} MiB")


if __name__ == "__main__":
    main()
