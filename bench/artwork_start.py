"""Memory and CPU of a start whose artwork run has nothing (or little) to make, on a big library.

Each start gets a fresh copy (``cp -a``) of a kept ``bench/items_query.py`` library (``--keep DIR``
there builds one under DIR/<size>; the original is never written), so the start's artwork run
("Generate Missing Artwork") cannot skip: the copied SQLite file is not the one its last run
recorded. Prints per start the server's RSS at a few moments after start, its peak RSS (VmHWM)
and its CPU (own + children, from /proc) at the last moment. With ``--baseline DIR`` (a checkout
of another commit) both trees take turns, ``--runs`` times each; medians at the end.

    python bench/artwork_start.py --library /work/tmp/s13/lib/100000 [--baseline /tmp/base] [--runs 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._server import ROOT, cpu_seconds, rss_mib, start_server, stop_server  # noqa: E402

MARKS = (3, 5, 10, 20, 30)


def hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def one_start(root: Path, library: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="artwork-start-") as tmp:
        data = Path(tmp) / "lib"
        subprocess.run(["cp", "-a", str(library), str(data)], check=True)
        t0 = time.monotonic()
        proc, _url = start_server(data, root=root)
        out: dict[str, float] = {}
        try:
            for mark in MARKS:
                time.sleep(max(0.0, t0 + mark - time.monotonic()))
                out[f"rss@{mark}s"] = rss_mib(proc.pid)
            out["peak"] = hwm_mib(proc.pid)
            out["cpu"] = cpu_seconds(proc.pid)
        finally:
            stop_server(proc)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, default=None, help="a checkout of another commit")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    trees = [("this", ROOT)] + ([("baseline", args.baseline)] if args.baseline else [])
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _root in trees}
    for _ in range(args.runs):
        for name, root in trees:
            r = one_start(root, args.library)
            results[name].append(r)
            print(f"{name:9s}", " ".join(f"{k} {v:.1f}" for k, v in r.items()), flush=True)
    print(f"\nmedian of {args.runs} starts (RSS in MiB; cpu in s up to {MARKS[-1]} s after start):")
    for name, rows in results.items():
        med = {k: sorted(r[k] for r in rows)[len(rows) // 2] for k in rows[0]}
        print(f"  {name:9s}", " ".join(f"{k} {v:.1f}" for k, v in med.items()))


if __name__ == "__main__":
    main()
