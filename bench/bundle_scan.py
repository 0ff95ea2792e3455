"""A scan with worker processes by the tray bundle, side by side for several bundles: the CPU of
the whole process tree and what each child of the tray executable costs.

Each run starts a bundle's tray program (``reelroom``, Qt's offscreen platform, a fresh data
folder) with ``REELROOM_SCAN_PROCESSES=1``, goes through the wizard, adds a movie library of
``--files`` copies of an ffmpeg-made 1 s mkv and waits until every movie has its probed run time,
then for the probe workers to end, and stops the tray. This process is a subreaper, so the
orphaned resource tracker is waited for here and the tree's CPU (RUSAGE_CHILDREN) counts every
process. The children of the tray executable are sampled from /proc every 50 ms (their last CPU
and peak RSS); ``--ld`` adds glibc's record of the libraries each loaded (LD_DEBUG=libs, one file
a process: how many, how many of them libQt6*). Runs alternate A B B A ...

    python bench/bundle_scan.py --binary this=dist/reelroom/reelroom \\
        --binary main=/tmp/main/dist/reelroom/reelroom --runs 4 --files 300
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _server import free_port  # noqa: E402
from items_query import AUTH, sign_in  # noqa: E402

from tests.mediagen import make_video  # noqa: E402


def kind(argv: list[str]) -> str:
    if argv[1:2] == ["--multiprocessing-fork"]:
        return "worker"
    if "-c" in argv:
        return "tracker"
    if argv[1:2] in (["--reelroom-reader"], ["--reelroom-migrate"]):
        return argv[1].removeprefix("--reelroom-")
    return "tray"


def sample(pid: str, names: tuple[str, ...]) -> tuple[list[str], float, float] | None:
    proc = Path("/proc") / pid
    try:
        argv = [a.decode() for a in (proc / "cmdline").read_bytes().split(b"\0")[:-1]]
        if not argv or argv[0] not in names:
            return None
        fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        hwm = next(int(line.split()[1]) for line in (proc / "status").read_text().splitlines()
                   if line.startswith("VmHWM"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return argv, cpu, hwm / 1024


def one_run(tray_exe: str, library: Path, files: int, ld: bool) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bundle-scan-"))
    names = (tray_exe, os.path.realpath(tray_exe))
    port = free_port()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8",
           "XDG_RUNTIME_DIR": str(work), "REELROOM_SCAN_PROCESSES": "1"}
    if ld:
        env.update(LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(work / "ld"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tray = subprocess.Popen([tray_exe, "--data-dir", str(work / "data"), "--port", str(port), "--host", "127.0.0.1"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: dict[int, tuple[list[str], float, float]] = {}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for proc in Path("/proc").iterdir():
                if proc.name.isdigit() and (found := sample(proc.name, names)) is not None:
                    seen[int(proc.name)] = found
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    while True:
        try:
            if httpx.get(f"{url}/System/Ping", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    token, _user = sign_in(url)  # (the wizard, then its tasks settled)
    with httpx.Client(base_url=url, headers={"Authorization": AUTH.format(n=0) + f', Token="{token}"'},
                      timeout=60) as c:
        c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(library)]})
        scan_start = time.monotonic()
        c.post("/Library/VirtualFolders", params={"name": "Movies", "collectionType": "movies",
                                                  "paths": str(library), "refreshLibrary": "true"})
        while True:
            items = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie",
                                            "limit": files}).json()["Items"]
            if len(items) == files and all(i.get("RunTimeTicks") for i in items):
                break
            time.sleep(0.3)
        scanned = time.monotonic()
    while any(kind(argv) == "worker" and Path(f"/proc/{pid}").exists() for pid, (argv, _, _) in list(seen.items())):
        time.sleep(0.2)
    time.sleep(1)
    stop.set()
    watcher.join()
    tray.send_signal(signal.SIGTERM)
    tray.wait(60)
    while True:  # the orphans (the resource tracker) are this subreaper's
        try:
            os.wait()
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out: dict[str, Any] = {"tree_cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
                           "start_s": round(scan_start - started, 2), "scan_s": round(scanned - scan_start, 2),
                           "children": {}}
    for pid, (argv, cpu, hwm) in sorted(seen.items()):
        if kind(argv) == "tray" and pid != tray.pid:
            continue  # a fork of the tray before its exec (a subprocess)
        entry = out["children"].setdefault(kind(argv), {"cpu_s": [], "peak_mib": []})
        entry["cpu_s"].append(round(cpu, 2))
        entry["peak_mib"].append(round(hwm, 1))
        if ld:
            record = work / f"ld.{pid}"
            lines = record.read_text(errors="replace").splitlines() if record.exists() else []
            libs = {line.split("file=")[1].split()[0] for line in lines if "file=" in line}
            entry.setdefault("libs", []).append(len(libs))
            entry.setdefault("qt_libs", []).append(sum("libQt6" in lib for lib in libs))
    shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", action="append", required=True, metavar="NAME=PATH",
                        help="a bundle's tray program (dist/reelroom/reelroom); give two or more")
    parser.add_argument("--files", type=int, default=300, help="movies in the library (48+ for worker processes)")
    parser.add_argument("--runs", type=int, default=4, help="runs of each bundle, alternating A B B A ...")
    parser.add_argument("--ld", action="store_true", help="count the libraries each process loads (LD_DEBUG)")
    args = parser.parse_args()
    bundles = dict(b.split("=", 1) for b in args.binary)
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: the tracker's CPU is counted too
    folder = Path(tempfile.mkdtemp(prefix="bundle-scan-lib-"))
    try:
        made = make_video(folder / "made.mkv", seconds=1, width=160, height=120)
        library = folder / "Movies"
        for n in range(args.files):
            (library / f"Movie {n} (2020)").mkdir(parents=True)
            shutil.copy(made, library / f"Movie {n} (2020)" / f"Movie {n} (2020).mkv")
        names = list(bundles)
        order = [names[(r + (r // 2 if len(names) == 2 else 0)) % len(names)] for r in range(args.runs * len(names))]
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for name in order:
            load = " ".join(open("/proc/loadavg").read().split()[:3])
            result = one_run(bundles[name], library, args.files, args.ld)
            results[name].append(result)
            print(f"{name} (load {load}) {json.dumps(result)}", flush=True)
        for name in names:
            cpu = [r["tree_cpu_s"] for r in results[name]]
            kids = [sum(c for child in ("worker", "tracker") for c in r["children"].get(child, {}).get("cpu_s", []))
                    for r in results[name]]
            print(f"{name}: tree CPU median {statistics.median(cpu):.2f} s ({min(cpu):.2f}-{max(cpu):.2f}), "
                  f"its workers' and tracker's {statistics.median(kids):.2f} s ({min(kids):.2f}-{max(kids):.2f})")
            for child in ("worker", "tracker"):
                cpus = [c for r in results[name] for c in r["children"].get(child, {}).get("cpu_s", [])]
                peaks = [p for r in results[name] for p in r["children"].get(child, {}).get("peak_mib", [])]
                if cpus:
                    print(f"  {child}: CPU {min(cpus):.2f}-{max(cpus):.2f} s, peak {min(peaks):.1f}-{max(peaks):.1f} MiB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
