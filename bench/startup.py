"""Start-up time and memory of Reelroom, side by side with a baseline commit.

For each tree (this checkout, and with ``--baseline REF`` that commit, unpacked with ``git archive``
into a temporary folder and run with the same Python) it prints:

- start to first 200 on GET /System/Info/Public (which answers 503 until start-up is done), for a
  first start on an empty data folder, a warm restart on it, and a warm start on a synthetic
  100k-item library (``bench/items_query.py``'s library, built once through SQL); with each, the
  server's CPU time up to that 200 (from /proc: what the wall time would be on an idle machine,
  less the few ms of process creation, and far less noisy on a shared one);
- idle RSS of ``reelroom-server`` a few seconds after start, empty and 100k;
- RSS after browsing: a burst of clients browsing the 100k library (Items pages with Fields,
  the by-name lists, Latest/Resume/Next Up, search, resized posters), then idle again; peak too;
- idle RSS of the tray app with the server inside (``bench/tray.py``'s child, under Xvfb when
  installed): a first start and a restart on an empty data folder, and 100k.

Ratios are this tree / baseline. Python bytecode is compiled first for both trees (``compileall``),
as an installed copy has it; ``PYTHONDONTWRITEBYTECODE`` would otherwise make every run compile.
So are the dataclasses' methods that ``server/code_cache.py`` keeps where a tree has it (one import
of the server's modules with bytecode writing allowed), as any earlier run leaves them.

Each figure is printed with its median and its runs, each time with the fastest run (``min``),
and each ratio for the medians and for the fastest runs. On this machine (a KVM guest) the same start runs at two speeds: the runs fall into two groups
about 1.4x apart (e.g. 0.9 and 1.3 s), in wall time and server CPU alike, with the same work (the
same page faults; every phase of the start, even its first few imports, slower by the same
factor); a fixed pure-Python loop pinned to one CPU, with no other process switched in, shows the
same two speeds, from one process to the next and within one. A median of 5 then says which group
3 runs fell in. The fastest run is the least moved by it; the instruction counts of
``bench/startup_callgrind.py`` not at all.

    python bench/startup.py --baseline 7ee0b87 [--runs 3] [--sizes 0,100000] [--no-tray] [--no-browse]
    python bench/startup.py --baseline main --library /work/tmp/s13/lib/100000   # a kept library, copied
    python bench/startup.py --binary dist/reelroom/reelroom-server [--compare]   # a PyInstaller build
    python bench/startup.py --binary dist/reelroom/reelroom-server --binary main=/tmp/main-dist/reelroom/reelroom-server \
        --compare --library /tmp/pages-lib/100000 --runs 5   # two bundles and the source tree, a kept library

With ``--binary`` (given more than once: several bundles, each ``LABEL=PATH`` or a path) the tray
figures are the tray program's start: launched as the bundle's ``reelroom`` next to its
``reelroom-server`` (the source tree: ``python -m app.desktop_main``) with ``--data-dir`` and
``--port``, under Xvfb when installed, to the first 200 of its server and the CPU of the tray's
process tree to then; a first start, a restart and the library.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import stop_server as stop  # noqa: E402
from items_query import sign_in  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
AUTH = 'MediaBrowser Client="bench", Device="bench", DeviceId="bench-startup-{n}", Version="1.0"'
POSTERS = 300  # movies given a real poster file, for the image part of browsing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_status(pid: int, key: str) -> float:
    """A memory figure of /proc/<pid>/status (VmRSS, VmHWM) in MiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def rss_mib(pid: int) -> float:
    return proc_status(pid, "VmRSS")


def children_cpu_seconds(pid: int) -> float:
    """CPU time of the children the process waited for (a first start's migration child)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) the process has used so far: what start-up costs, whatever the
    machine's load (wall time to the first 200 grows with the load; this hardly does). Children
    it waited for count too (a first start's migration runs in one)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


class Tree:
    """A Reelroom source tree (or a bundled binary) that can be started."""

    def __init__(self, label: str, root: Path | None, binary: Path | None = None) -> None:
        self.label, self.root, self.binary = label, root, binary

    def command(self) -> list[str]:
        if self.binary is not None:
            return [str(self.binary)]
        return [sys.executable, "-m", "app.server_main"]

    def tray_command(self) -> list[str]:
        """The tray program: the bundle's ``reelroom`` next to its ``reelroom-server``."""
        if self.binary is not None:
            return [str(self.binary.parent / "reelroom")]
        return [sys.executable, "-m", "app.desktop_main"]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.root is not None:
            env["PYTHONPATH"] = str(self.root)
        return env


def http_status(port: int, path: str) -> int:
    """The status of a plain GET, over a raw socket: polling must cost the measured server's CPU
    nothing (an httpx client per attempt costs milliseconds of CPU on this side)."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        head = s.recv(64)
    return int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0


def start_and_wait(tree: Tree, data_dir: Path, path: str = "/System/Info/Public"):
    """Start the server; returns (seconds to the first 200 on ``path``, process, base URL)."""
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen([*tree.command(), "--data-dir", str(data_dir), "--port", str(port), "--host",
                             "127.0.0.1", "--no-lan"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tree.root or ROOT, env=tree.env())
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if http_status(port, path) == 200:
                elapsed = time.perf_counter() - t0
                proc.cpu_at_200 = cpu_seconds(proc.pid)  # type: ignore[attr-defined]
                proc.child_cpu_at_200 = children_cpu_seconds(proc.pid)  # type: ignore[attr-defined]
                return elapsed, proc, url
        except OSError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"{tree.label}: the server exited during start-up")
        if time.perf_counter() - t0 > 120:
            stop(proc)
            raise RuntimeError(f"{tree.label}: no 200 within 120 s")
        time.sleep(0.01)


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and of its living children (the tray's reader and migration children
    are its own; those it waited for count in its /proc/<pid>/stat already)."""
    total = cpu_seconds(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(tree_cpu_seconds(int(child)) for child in children)


def tray_start(tree: Tree, data_dir: Path, env: dict[str, str]) -> tuple[float, float]:
    """(launch -> first 200 of the tray program's server [s], the tray's process tree CPU to then [s]);
    then the tray is stopped (SIGTERM, as a desktop session's logout)."""
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen([*tree.tray_command(), "--data-dir", str(data_dir), "--port", str(port), "--host",
                             "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tree.root or ROOT, env={**env, **({"PYTHONPATH": str(tree.root)} if tree.root else {})})
    try:
        while True:
            try:
                if http_status(port, "/System/Info/Public") == 200:
                    return time.perf_counter() - t0, tree_cpu_seconds(proc.pid)
            except OSError:
                pass
            if proc.poll() is not None:
                raise RuntimeError(f"{tree.label}: the tray program exited during start-up")
            if time.perf_counter() - t0 > 120:
                raise RuntimeError(f"{tree.label}: no 200 from the tray program within 120 s")
            time.sleep(0.01)
    finally:
        stop(proc)


def idle_rss(pid: int, seconds: float) -> float:
    time.sleep(seconds)
    return rss_mib(pid)


# -- the 100k library --------------------------------------------------------------------------

def build_library(data_dir: Path, size: int, tree: Tree) -> dict:
    """The synthetic library of bench/items_query.py, a user, user data and real posters for a few
    hundred movies."""
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT))
    import items_query  # noqa: PLC0415 - the bench's own library builder
    from PIL import Image

    from server.db.database import Database, sqlite_url

    info = items_query.build(data_dir, size)
    _, proc, url = start_and_wait(tree, data_dir)
    try:
        _token, user_id = sign_in(url)
    finally:
        stop(proc)
    items_query.add_user_data(data_dir, user_id, info["movie_ids"])
    posters = data_dir / "bench-posters"
    posters.mkdir()
    rnd = random.Random(3)
    db = Database(sqlite_url(_database_file(data_dir)))
    chosen = info["movie_ids"][:POSTERS]
    with db.engine.begin() as conn:
        from sqlalchemy import text

        for n, item_id in enumerate(chosen):
            path = posters / f"{n}.jpg"
            Image.new("RGB", (680, 1000), (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256))).save(
                path, quality=85)
            images = [{"Type": "Primary", "Path": str(path), "Tag": f"{n + 1:032x}", "Width": 680, "Height": 1000}]
            conn.execute(text("UPDATE items SET images_json = :j WHERE id = :i"),
                         {"j": json.dumps(images), "i": item_id})
    db.close()
    info["posters"] = chosen
    return info


def kept_library_info(data_dir: Path) -> dict:
    """What bench/items_query.py --keep wrote next to the library (its item count)."""
    return {"items": json.loads((data_dir / "bench-info.json").read_text())["items"]}


def _database_file(data_dir: Path) -> Path:
    from server.paths import ServerPaths

    return ServerPaths(data_dir).database_file


async def browse(url: str, token: str, user_id: str, info: dict, clients: int, rounds: int) -> int:
    """A burst of ``clients`` concurrent clients browsing; returns the number of requests."""
    headers = {"Authorization": AUTH.format(n=1) + f', Token="{token}"'}
    lists = ["/Genres", "/Studios", "/Persons", "/Artists", "/Artists/AlbumArtists", "/MusicGenres", "/Years",
             "/Items/Filters", "/Shows/NextUp", "/UserItems/Resume", "/Items/Latest"]
    count = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits) as c:
        async def worker(k: int) -> None:
            nonlocal count
            rnd = random.Random(k)
            for _ in range(rounds):
                start = rnd.randrange(0, max(1, info["movie_count"] - 100))
                r = await c.get("/Items", params={
                    "userId": user_id, "parentId": info["movies"], "recursive": "true",
                    "includeItemTypes": "Movie", "sortBy": "SortName", "limit": "100", "startIndex": str(start),
                    "fields": "PrimaryImageAspectRatio,MediaSources,Overview", "enableTotalRecordCount": "true"})
                r.raise_for_status()
                path = rnd.choice(lists)
                params = {"userId": user_id, "limit": "100", "recursive": "true"}
                if path == "/Items/Latest":
                    params["parentId"] = info["movies"]
                r = await c.get(path, params=params)
                r.raise_for_status()
                r = await c.get("/Search/Hints", params={"userId": user_id, "searchTerm": rnd.choice(
                    ["star", "night", "river", "king"]), "limit": "20"})
                r.raise_for_status()
                for _ in range(4):
                    item_id = rnd.choice(info["posters"])
                    r = await c.get(f"/Items/{item_id}/Images/Primary", params={
                        "fillWidth": str(rnd.choice([200, 300, 400])), "quality": "90"})
                    r.raise_for_status()
                count += 7

        await asyncio.gather(*(worker(k) for k in range(clients)))
    return count


# -- the tray app ------------------------------------------------------------------------------

def tray_rss(tree: Tree, data_dir: Path, idle: float, env: dict[str, str]) -> tuple[float, float]:
    """(launch -> server running seconds, idle RSS MiB) of the tray app with the server inside."""
    root = tree.root or ROOT
    launched = time.monotonic()
    # This checkout's child for every tree (it runs the tree's app: REELROOM_BENCH_TREE), so both
    # idle alike: with the Qt event loop running, the tray's first requests answered.
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "tray.py"), "--child", str(data_dir)], cwd=root,
                            env={**env, "PYTHONPATH": str(root), "REELROOM_BENCH_TREE": str(root)}, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stdin is not None
    seen: dict[str, float] = {}
    try:
        while len(seen) < 2:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{tree.label}: the tray app exited early (status {proc.wait()})")
            name, _ = line.split()
            seen[name] = time.monotonic() - launched
        if "ERROR" in seen:
            raise RuntimeError(f"{tree.label}: the hosted server reported an error")
        rss = idle_rss(proc.pid, idle)
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return seen["RUNNING"], rss


# -- measuring ---------------------------------------------------------------------------------

def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def measure_round(tree: Tree, args: argparse.Namespace, library: Path | None, info: dict | None,
                  tray_env: dict[str, str] | None, out: dict[str, list[float]], browse_too: bool) -> None:
    """One round of every measurement for one tree, appended to ``out``. Rounds alternate between
    the trees, so a change in the machine's load falls on both alike."""

    def add(key: str, value: float) -> None:
        out.setdefault(key, []).append(value)

    data = Path(tempfile.mkdtemp(prefix="reelroom-bench-"))
    try:
        seconds, proc, _ = start_and_wait(tree, data)
        add("start, empty data folder (first start) [s]", seconds)
        add("server CPU to first 200, first start [s]", proc.cpu_at_200)
        add("  of which in a migration child (on another core) [s]", proc.child_cpu_at_200)
        stop(proc)
        seconds, proc, _ = start_and_wait(tree, data)
        add("start, empty data folder (restart) [s]", seconds)
        add("server CPU to first 200, restart [s]", proc.cpu_at_200)
        add("idle RSS server, empty [MiB]", idle_rss(proc.pid, args.idle))
        stop(proc)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    if library is not None and info is not None:
        data = Path(tempfile.mkdtemp(prefix="reelroom-bench-100k-"))
        try:
            shutil.copytree(library, data, dirs_exist_ok=True)
            seconds, proc, url = start_and_wait(tree, data)
            add(f"start, {info['items']} items [s]", seconds)
            add(f"server CPU to first 200, {info['items']} items [s]", proc.cpu_at_200)
            add(f"idle RSS server, {info['items']} items [MiB]", idle_rss(proc.pid, args.idle))
            stop(proc)
            if args.browse and browse_too:
                seconds, proc, url = start_and_wait(tree, data)
                try:
                    token, user_id = sign_in(url)
                    t0 = time.perf_counter()
                    n = asyncio.run(browse(url, token, user_id, info, args.clients, args.rounds))
                    elapsed = time.perf_counter() - t0
                    add("browse burst [requests/s]", n / elapsed)
                    add("peak RSS while browsing [MiB]", proc_status(proc.pid, "VmHWM"))
                    add(f"RSS {args.idle:.0f} s after browsing {info['items']} items [MiB]",
                        idle_rss(proc.pid, args.idle))
                finally:
                    stop(proc)
            if tray_env is not None and args.binary:
                seconds, cpu = tray_start(tree, data, tray_env)
                add(f"tray program: start to first 200, {info['items']} items [s]", seconds)
                add(f"tray program CPU to first 200, {info['items']} items [s]", cpu)
            elif tray_env is not None:
                running, rss = tray_rss(tree, data, args.idle, tray_env)
                add(f"tray app: launch -> server running, {info['items']} items [s]", running)
                add(f"idle RSS tray + server, {info['items']} items [MiB]", rss)
        finally:
            shutil.rmtree(data, ignore_errors=True)
    if tray_env is not None and args.binary:
        data = Path(tempfile.mkdtemp(prefix="reelroom-bench-tray-"))
        try:
            for when in ("first start", "restart"):
                seconds, cpu = tray_start(tree, data, tray_env)
                add(f"tray program: start to first 200, {when} [s]", seconds)
                add(f"tray program CPU to first 200, {when} [s]", cpu)
        finally:
            shutil.rmtree(data, ignore_errors=True)
    elif tray_env is not None:
        data = Path(tempfile.mkdtemp(prefix="reelroom-bench-tray-"))
        try:
            running, rss = tray_rss(tree, data, args.idle, tray_env)
            add("tray app: launch -> server running, empty, first start [s]", running)
            add("idle RSS tray + server, empty, first start [MiB]", rss)
            running, rss = tray_rss(tree, data, args.idle, tray_env)
            add("tray app: launch -> server running, empty, restart [s]", running)
            add("idle RSS tray + server, empty, restart [MiB]", rss)
        finally:
            shutil.rmtree(data, ignore_errors=True)


def summarize(out: dict[str, list[float]]) -> dict:
    return ({key: med(values) for key, values in out.items()} | {f"{key} runs": values for key, values in out.items()}
            | {f"{key} min": min(values) for key, values in out.items() if values and key.endswith("[s]")})


def unpack(ref: str, into: Path) -> Path:
    """The tree of commit ``ref`` (git archive), without touching the repository's worktrees."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref], check=True,
                             capture_output=True).stdout
    into.mkdir(parents=True, exist_ok=True)
    tar_path = into / "tree.tar"
    tar_path.write_bytes(archive)
    tree = into / "tree"
    tree.mkdir()
    with tarfile.open(tar_path) as tar:
        tar.extractall(tree, filter="data")
    tar_path.unlink()
    return tree


def compile_tree(root: Path) -> None:
    for sub in ("server", "app", "ui", "bench"):
        if (root / sub).is_dir():
            compileall.compile_dir(str(root / sub), quiet=1, workers=1)
    keep_dataclass_code(root)


def keep_dataclass_code(root: Path) -> None:
    """The server's modules imported once with bytecode writing allowed: where the tree has
    server/code_cache.py, its dataclasses' compiled methods are kept as a run before would have
    (a tree without it only reads the bytecode compiled above)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", "import app.server_main, server.app, server.context, server.runner"],
                   cwd=root, env={**env, "PYTHONPATH": str(root)}, check=True, timeout=300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", default=None, help="a commit (e.g. 7ee0b87) or a checkout's folder to measure side by side")
    parser.add_argument("--this", default=None,
                        help="measure this commit (unpacked like the baseline) instead of the working tree")
    parser.add_argument("--sizes", default="0,100000", help="library sizes: 0 = empty only")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds idle before reading RSS")
    parser.add_argument("--no-tray", dest="tray", action="store_false")
    parser.add_argument("--no-browse", dest="browse", action="store_false")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=40, help="browsing rounds per client")
    parser.add_argument("--binary", action="append", default=[],
                        help="a built reelroom-server executable (e.g. dist/reelroom/reelroom-server), or "
                             "LABEL=PATH; more than once: several bundles side by side")
    parser.add_argument("--compare", action="store_true", help="with --binary: also measure the source tree")
    parser.add_argument("--library", type=Path, default=None,
                        help="a kept bench library (bench/items_query.py --keep DIR: DIR/<size>) instead of building "
                             "one; copied for each start, never written; no browsing burst")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="reelroom-startup-bench-"))
    try:
        trees: list[Tree] = []
        if args.binary:
            if args.compare:
                trees.append(Tree("source", ROOT))
            for given in args.binary:
                label, _, path = given.rpartition("=")
                binary = Path(path).resolve()
                print(f"bundle {label or binary}: {binary}")
                trees.append(Tree(f"bundle {label or binary}", None, binary))
        elif args.this:
            trees.append(Tree(f"this {args.this}", unpack(args.this, work / "this")))
        else:
            trees.append(Tree("this tree", ROOT))
        if args.baseline and Path(args.baseline).is_dir():  # a checkout (git worktree add DIR main)
            trees.append(Tree(f"baseline {args.baseline}", Path(args.baseline).resolve()))
        elif args.baseline:
            trees.append(Tree(f"baseline {args.baseline}", unpack(args.baseline, work / "baseline")))
        for tree in trees:
            if tree.root is not None:
                compile_tree(tree.root)
        size = max((int(x) for x in args.sizes.split(",")), default=0)
        library = info = None
        if args.library is not None:  # a kept library: copied for each start, never written
            library, info = args.library.resolve(), kept_library_info(args.library)
            args.browse = False
            print(f"kept library {library}: {info['items']} items (no browsing: its posters are not known)")
        elif size:
            library = work / "library"
            library.mkdir()
            t0 = time.perf_counter()
            info = build_library(library, size, trees[-1] if args.baseline else trees[0])
            print(f"synthetic library: {info['items']} items, built in {time.perf_counter() - t0:.0f} s")
        tray_env = None
        xvfb = None
        if args.tray:
            from bench_xvfb import XvfbSession  # type: ignore[import-not-found]

            tray_env = dict(os.environ)
            if XvfbSession.available():
                xvfb = XvfbSession()
                tray_env.update(DISPLAY=xvfb.__enter__(), QT_QPA_PLATFORM="xcb")
                print("tray: Xvfb + trayer")
            else:
                tray_env["QT_QPA_PLATFORM"] = "offscreen"
                print("tray: Qt offscreen (no Xvfb)")
        try:
            raw: list[dict[str, list[float]]] = [{} for _ in trees]
            for n in range(args.runs):
                for tree, out in zip(trees, raw, strict=True):
                    measure_round(tree, args, library, info, tray_env, out, browse_too=n == 0)
            results = [(tree, summarize(out)) for tree, out in zip(trees, raw, strict=True)]
        finally:
            if xvfb is not None:
                xvfb.__exit__(None, None, None)
        report(results, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(results: list[tuple[Tree, dict]], args: argparse.Namespace) -> None:
    print(f"cpus: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}, "
          f"{args.runs} runs each (medians), idle {args.idle:.0f} s before RSS")
    keys = [k for k in results[0][1] if not k.endswith((" runs", " min"))]
    labels = [tree.label for tree, _ in results]
    print(f"{'':58s}" + "".join(f"{label[:22]:>24s}" for label in labels) + ("   ratio" if len(results) > 1 else ""))
    for key in keys:
        values = [r.get(key, float("nan")) for _, r in results]
        line = f"{key:58s}" + "".join(f"{v:24.2f}" for v in values)
        if len(values) > 1 and values[-1]:
            line += f"   {values[0] / values[-1]:.2f}"
        print(line)
        fastest = [r.get(f"{key} min", float("nan")) for _, r in results]
        for (tree, r), low in zip(results, fastest, strict=True):
            runs = r.get(f"{key} runs")
            if runs and len(runs) > 1:
                print(f"    {tree.label[:22]:22s} runs: {', '.join(f'{x:.2f}' for x in runs)}"
                      + (f"   min {low:.2f}" if low == low else ""))  # (NaN: a figure whose fastest run means nothing)
        if len(fastest) > 1 and fastest[-1] and fastest[0] == fastest[0] and len(results[0][1].get(f"{key} runs") or ()) > 1:
            print(f"    {'ratio of the fastest runs':44s}{fastest[0] / fastest[-1]:.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "bench"))
    import xvfb_session as bench_xvfb  # noqa: E402

    sys.modules["bench_xvfb"] = bench_xvfb
    main()
