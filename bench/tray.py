"""Start-to-tray-visible time and idle memory of the desktop app, with the server inside.

    /work/venv/bin/python bench/tray.py [--runs 3] [--idle 10]
    python bench/tray.py --breakdown [--library /tmp/pages-lib/100000] [--baseline /work/main] [--tracemalloc]
    python bench/tray.py --log-viewer [--baseline /work/main] [--runs 3] [--idle 5] [--log-lines 60000]

Each run launches the real app (``app.desktop_main.build_desktop``: single instance, ServerHost on
127.0.0.1 with an ephemeral port, tray) in a fresh Python process, under Xvfb with trayer as the
tray host. It prints:
- tray visible: from process launch until the tray icon is embedded in the tray (it has a geometry);
- server running: from process launch until the hosted server answers (state "running");
- idle RSS: resident memory of the app process after ``--idle`` seconds of doing nothing.
Without Xvfb it falls back to Qt's offscreen platform (no tray: the status window stands in) and
says so.

``--breakdown`` starts the app once per tree (this one, and ``--baseline DIR``'s), on an empty data
folder and on a copy of ``--library``, lets it idle, then has the app itself print where its
resident memory is: anonymous and file-backed (``/proc/self/smaps_rollup``), the largest mappings
by file (Qt's and PySide's libraries, Python extensions, the database and the fragment store),
SQLite's own heap (``sqlite3_memory_used``), the modules loaded (with the heavy packages named),
whether the ORM classes and the windows were made, and with ``--tracemalloc`` the Python heap by
file (tracing from the start costs time and memory of its own: compare its figures with each
other, not with the plain RSS).

``--log-viewer`` starts the app (this tree, then ``--baseline DIR``'s, in turn) on a data folder whose
server log already has ``--log-lines`` lines (the viewer keeps 50,000), and reads its RSS idle, with
the log viewer open and filled, ``--idle`` seconds after closing it, and open again (filled again).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def child(data_dir: Path) -> int:
    """Runs inside the measured process: build the desktop app, report milestones on stdout."""
    start = time.monotonic()
    if os.environ.get("REELROOM_BENCH_TREE"):  # --breakdown --baseline: the other tree's app
        sys.path.insert(0, os.environ["REELROOM_BENCH_TREE"])
    from app import desktop_main
    from app.desktop_main import build_desktop, parse_args
    from server.memory import pause_collector

    pause_collector()  # as desktop_main.main does

    def host_factory(data_dir: Path, port: int | None, host: str) -> Any:
        # As the app does, except that zeroconf stays off: a benchmark must not advertise on the network.
        return desktop_main._server_host_factory(data_dir, port, host, enable_zeroconf=False)

    args = parse_args(["--data-dir", str(data_dir), "--port", "0", "--host", "127.0.0.1"])
    desktop = build_desktop(args, [], host_factory, update_manifest_url=None, login_item=None)
    assert desktop is not None, "another instance holds this data folder"
    controller = desktop.controller
    app = desktop.app
    reported: set[str] = set()

    def report(name: str) -> None:
        if name not in reported:
            reported.add(name)
            print(f"{name} {time.monotonic() - start:.4f}", flush=True)

    while len(reported) < 2:
        app.processEvents()
        tray = controller.tray
        if tray is None:
            if controller.status_window.isVisible():
                report("VISIBLE")
        elif tray.isVisible() and tray.geometry().width() > 0:
            report("VISIBLE")
        if controller.display_state in ("running", "error"):
            report("RUNNING" if controller.display_state == "running" else "ERROR")
        time.sleep(0.002)
    # Idle: the event loop runs (timers, the socket reader, the replies to the tray's first requests:
    # the API key, /System/Info/Public, /Items/Counts), as in the app; nothing else happens. (Until
    # stop 29 the GUI thread blocked on stdin here, so whether the tray had made its requests by then
    # depended on which milestone came last.)
    command = _idle_until_line(app).strip()
    while command:
        if command == "breakdown":
            print(json.dumps(breakdown(controller)), flush=True)
        elif command == "logs-open":
            print(f"LOGS {_open_log_viewer(app, controller)}", flush=True)
        elif command == "logs-close":
            controller.log_viewer.close()
            app.processEvents()
            print("CLOSED", flush=True)
        command = _idle_until_line(app).strip()
    controller.quit()
    deadline = time.monotonic() + 20
    while desktop.controller.host.state != "stopped" and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    desktop.instance.release()
    return 0


def _open_log_viewer(app: Any, controller: Any) -> int:
    """Open the log viewer (Logs… in the menu) and wait until it holds what it will; its entries."""
    while controller.client is None:
        app.processEvents()
        time.sleep(0.01)
    controller.show_logs()
    viewer = controller.log_viewer
    count, same_since = -1, time.monotonic()
    while time.monotonic() - same_since < 1.5:  # until no line came for 1.5 s (polls every 2 s)
        app.processEvents()
        time.sleep(0.01)
        if len(viewer._entries) != count:
            count, same_since = len(viewer._entries), time.monotonic()
    return count


def _idle_until_line(app: Any) -> str:
    """Run the Qt event loop until a line comes on stdin; returns the line."""
    import selectors

    with selectors.DefaultSelector() as sel:
        sel.register(sys.stdin, selectors.EVENT_READ)
        while not sel.select(0.02):
            app.processEvents()
    return sys.stdin.readline()


HEAVY = ("sqlmodel", "pydantic", "pydantic_core", "server.db.tables", "sqlalchemy.orm", "PIL", "av", "alembic",
         "mutagen", "numpy", "server.metadata", "server.catalog.resolver", "server.images", "PySide6.QtSvg",
         "PySide6.QtNetwork", "ui.wizard", "ui.status_window", "ui.logs", "ui.libraries", "ui.settings",
         "ui.address_dialog", "segno")


def _sqlite_memory_used() -> int | None:
    """SQLite's own heap (page caches, prepared statements) in the library Python's sqlite3 uses."""
    import ctypes
    import sqlite3

    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        if "libsqlite3" in path:
            lib = ctypes.CDLL(path)
            lib.sqlite3_memory_used.restype = ctypes.c_int64
            return int(lib.sqlite3_memory_used())
    del sqlite3
    return None


def breakdown(controller: Any) -> dict[str, Any]:
    """Where this process's resident memory is, as the app idles (see --breakdown)."""
    import gc
    import tracemalloc

    rollup = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
        key, value = line.split(":", 1)
        rollup[key] = int(value.split()[0]) / 1024
    by_file: dict[str, float] = {}
    name = "[anon]"
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and not head[0].endswith(":"):
            name = head[5] if len(head) >= 6 else "[anon]"
            if "site-packages/" in name:
                name = "site-packages/" + name.split("site-packages/", 1)[1]
        elif head and head[0] == "Rss:":
            by_file[name] = by_file.get(name, 0.0) + int(head[1]) / 1024
    groups: dict[str, float] = {}
    for path, mib in by_file.items():
        if "PySide6/Qt/lib" in path or "/libQt6" in path:
            group = "Qt libraries"
        elif "PySide6" in path or "shiboken6" in path:
            group = "PySide6/shiboken bindings"
        elif path.startswith("site-packages/"):
            group = "other site-packages (.so)"
        elif path.startswith("/usr/lib") or path.startswith("/lib"):
            group = "system libraries"
        elif path in ("[anon]", "[heap]"):
            group = "anonymous (Python heap, malloc, Qt, SQLite)"
        else:
            group = "other files (db, store, fonts, ...)"
        groups[group] = groups.get(group, 0.0) + mib
    modules = sorted(sys.modules)
    result: dict[str, Any] = {
        "rss": rollup.get("Rss"), "anon": rollup.get("Anonymous"),
        "file": (rollup.get("Rss") or 0) - (rollup.get("Anonymous") or 0),
        "groups": dict(sorted(groups.items(), key=lambda kv: -kv[1])),
        "top_mappings": dict(sorted(by_file.items(), key=lambda kv: -kv[1])[:25]),
        "sqlite_heap_mib": (lambda n: None if n is None else n / 2**20)(_sqlite_memory_used()),
        "modules": len(modules),
        "heavy_loaded": [m for m in HEAVY if m in sys.modules],
        "gc_objects": len(gc.get_objects()),
        "windows_made": {name: getattr(controller, name, None) is not None for name in
                         ("wizard", "libraries_window", "log_viewer", "settings_dialog", "address_dialog")},
        "status_window_made": getattr(controller, "_status_window", controller.__dict__.get("status_window"))
                              is not None,
    }
    if tracemalloc.is_tracing():
        snap = tracemalloc.take_snapshot()
        stats = snap.statistics("filename")
        result["tracemalloc_total_mib"] = sum(s.size for s in stats) / 2**20
        top = {}
        for stat in stats[:30]:
            fname = stat.traceback[0].filename
            for cut in ("site-packages/", "/lib/python3.11/"):
                if cut in fname:
                    fname = fname.split(cut, 1)[1]
            fname = fname.replace(str(REPO) + "/", "")
            top[fname] = stat.size / 2**20
        result["tracemalloc_top"] = top
    return result


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def one_run(idle: float, env: dict[str, str]) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory(prefix="reelroom-bench-") as tmp:
        launched = time.monotonic()
        proc = subprocess.Popen([sys.executable, __file__, "--child", tmp], cwd=REPO, env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None and proc.stdin is not None
        seen: dict[str, float] = {}
        while len(seen) < 2:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the app exited early (status {proc.wait()})")
            name, _ = line.split()
            seen[name] = time.monotonic() - launched
        if "ERROR" in seen:
            raise RuntimeError("the hosted server reported an error")
        # Let the post-start work (first scan task, socket subscription) settle, then sample memory.
        samples = []
        end = time.monotonic() + idle
        while time.monotonic() < end:
            time.sleep(0.5)
            samples.append(rss_mib(proc.pid))
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(30)
        return seen["VISIBLE"], seen["RUNNING"], samples[-1]


def breakdown_run(tree: Path, data_dir: Path, idle: float, env: dict[str, str], trace: bool) -> dict[str, Any]:
    env = dict(env, PYTHONPATH=str(tree), REELROOM_BENCH_TREE=str(tree))
    if trace:
        env["PYTHONTRACEMALLOC"] = "1"
    with started_child(tree, data_dir, env) as ask:
        time.sleep(idle)
        rss = rss_mib(ask.pid)
        result = json.loads(ask("breakdown"))
        result["rss_outside"] = rss
    return result


class _Asker:
    """A started child app: ``ask(command)`` sends one command line and returns its answer line."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc, self.pid = proc, proc.pid

    def __call__(self, command: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline()


@contextlib.contextmanager
def started_child(tree: Path, data_dir: Path | str, env: dict[str, str]) -> Iterator[_Asker]:
    """This bench's ``--child`` app run from ``tree`` on ``data_dir``, once its window is up and its
    server running (its two milestone lines); on leaving, an empty line ends it (killed if it has
    not ended in 30 s, or on an error)."""
    proc = subprocess.Popen([sys.executable, __file__, "--child", str(data_dir)], cwd=tree, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        for _ in range(2):
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the app exited early (status {proc.wait()})")
            if line.startswith("ERROR"):
                raise RuntimeError("the hosted server reported an error")
        yield _Asker(proc)
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def print_breakdown(columns: list[tuple[str, dict[str, Any]]]) -> None:
    width = 22
    print(f"{'':52s}" + "".join(f"{label[:width]:>{width + 2}s}" for label, _ in columns))

    def row(label: str, values: list[Any]) -> None:
        cells = "".join(f"{'-' if v is None else (f'{v:.1f}' if isinstance(v, float) else str(v)):>{width + 2}s}"
                        for v in values)
        print(f"{label[:52]:52s}{cells}")

    row("RSS read from outside [MiB]", [c.get("rss_outside") for _, c in columns])
    row("RSS (smaps_rollup) [MiB]", [c.get("rss") for _, c in columns])
    row("  anonymous [MiB]", [c.get("anon") for _, c in columns])
    row("  file-backed [MiB]", [c.get("file") for _, c in columns])
    groups = sorted({g for _, c in columns for g in c["groups"]}, key=lambda g: -max(c["groups"].get(g, 0) for _, c in columns))
    for group in groups:
        row(f"  {group} [MiB]", [c["groups"].get(group) for _, c in columns])
    row("SQLite heap (sqlite3_memory_used) [MiB]", [c.get("sqlite_heap_mib") for _, c in columns])
    row("modules loaded", [c.get("modules") for _, c in columns])
    row("gc-tracked objects", [c.get("gc_objects") for _, c in columns])
    if any("tracemalloc_total_mib" in c for _, c in columns):
        row("Python heap (tracemalloc) [MiB]", [c.get("tracemalloc_total_mib") for _, c in columns])
    print("mappings by file (largest, MiB):")
    files = sorted({f for _, c in columns for f in c["top_mappings"]},
                   key=lambda f: -max(c["top_mappings"].get(f, 0) for _, c in columns))[:20]
    for f in files:
        row(f"  {f[-50:]}", [c["top_mappings"].get(f) for _, c in columns])
    if any("tracemalloc_top" in c for _, c in columns):
        print("Python heap by file (tracemalloc, largest, MiB):")
        files = sorted({f for _, c in columns for f in c.get("tracemalloc_top", {})},
                       key=lambda f: -max(c.get("tracemalloc_top", {}).get(f, 0) for _, c in columns))[:25]
        for f in files:
            row(f"  {f[-50:]}", [c.get("tracemalloc_top", {}).get(f) for _, c in columns])
    for label, c in columns:
        print(f"{label}: heavy modules loaded: {', '.join(c['heavy_loaded']) or 'none'}; windows made: "
              f"{', '.join(k for k, v in c['windows_made'].items() if v) or 'none'}"
              f"{'; status window made' if c.get('status_window_made') else ''}")


def log_viewer_run(tree: Path, lines: int, idle: float, env: dict[str, str]) -> dict[str, float]:
    """RSS of the app idle, with the log viewer open on a log of ``lines`` lines, after closing it, and
    open again (MiB), with the viewer's entries each time it was open."""
    env = dict(env, PYTHONPATH=str(tree), REELROOM_BENCH_TREE=str(tree))
    with tempfile.TemporaryDirectory(prefix="reelroom-bench-logs-") as tmp:
        (Path(tmp) / "log").mkdir()
        with (Path(tmp) / "log" / "reelroom.log").open("w", encoding="utf-8") as f:
            for n in range(lines):
                f.write(f"2026-11-22 10:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d} [{'INF' if n % 4 else 'DBG'}] "
                        f"reelroom.server: request {n} answered in {n % 97} ms for client bench-{n % 13}\n")
        with started_child(tree, tmp, env) as ask:
            time.sleep(idle)
            result = {"idle": rss_mib(ask.pid)}
            result["entries"] = float(ask("logs-open").split()[1])
            result["open"] = rss_mib(ask.pid)
            ask("logs-close")
            time.sleep(idle)
            result["closed"] = rss_mib(ask.pid)
            result["entries again"] = float(ask("logs-open").split()[1])
            result["open again"] = rss_mib(ask.pid)
        return result


def run_log_viewer(args: argparse.Namespace, env: dict[str, str]) -> None:
    trees = [("this", REPO)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _ in trees}
    for _ in range(args.runs):
        for label, tree in trees:
            runs[label].append(log_viewer_run(tree, args.log_lines, args.idle, env))
    print(f"log viewer on a log of {args.log_lines} lines, {args.runs} runs, idle {args.idle:.0f} s, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'':34s}" + "".join(f"{label:>30s}" for label, _ in trees))
    for key in ("idle", "entries", "open", "closed", "entries again", "open again"):
        cells = ""
        for label, _ in trees:
            values = [r[key] for r in runs[label]]
            cells += f"{statistics.median(values):12.1f} ({', '.join(f'{v:.1f}' for v in values)})".rjust(30)
        print(f"{key + ('' if key.startswith('entries') else ' RSS [MiB]'):34s}{cells}")


def run_breakdown(args: argparse.Namespace, env: dict[str, str]) -> None:
    trees = [("this", REPO)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    columns: list[tuple[str, dict[str, Any]]] = []
    for size_label, library in [("empty", None)] + ([("library", args.library)] if args.library else []):
        for label, tree in trees:
            with tempfile.TemporaryDirectory(prefix="reelroom-bench-") as tmp:
                if library is not None:
                    shutil.copytree(library, tmp, dirs_exist_ok=True)
                columns.append((f"{label} {size_label}", breakdown_run(tree, Path(tmp), args.idle, env,
                                                                       args.tracemalloc)))
    print_breakdown(columns)


def main() -> int:
    parser = argparse.ArgumentParser(description="Tray app start-up time and idle RSS")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds idle before reading RSS")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--breakdown", action="store_true", help="where the idle app's memory is (see above)")
    parser.add_argument("--library", type=Path, help="with --breakdown: a kept library, copied for the run")
    parser.add_argument("--baseline", type=Path, help="with --breakdown: a checkout to measure side by side")
    parser.add_argument("--tracemalloc", action="store_true", help="with --breakdown: the Python heap by file")
    parser.add_argument("--log-viewer", action="store_true", help="RSS with the log viewer open and closed")
    parser.add_argument("--log-lines", type=int, default=60_000, help="with --log-viewer: lines in the server's log")
    args = parser.parse_args()
    if args.child:
        return child(args.child)

    from bench.xvfb_session import XvfbSession

    env = dict(os.environ, PYTHONPATH=str(REPO))
    results = []
    if args.log_viewer or args.breakdown:
        run = run_log_viewer if args.log_viewer else run_breakdown
        if XvfbSession.available():
            with XvfbSession() as display:
                env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb")
                run(args, env)
        else:
            env["QT_QPA_PLATFORM"] = "offscreen"
            run(args, env)
        if not args.log_viewer:
            print(f"load average {os.getloadavg()[0]:.1f}, idle {args.idle:.0f} s")
        return 0
    if XvfbSession.available():
        with XvfbSession() as display:
            env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb")
            mode = f"Xvfb {display} + trayer (a real system tray)"
            for _ in range(args.runs):
                results.append(one_run(args.idle, env))
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
        mode = "offscreen (NO tray: Xvfb missing; 'visible' is the status window)"
        for _ in range(args.runs):
            results.append(one_run(args.idle, env))

    print(f"Reelroom tray app, {args.runs} runs, {mode}")
    print(f"python {sys.version.split()[0]}, fresh data folder per run, server on 127.0.0.1 (ephemeral port), "
          "UDP discovery on 127.0.0.1, zeroconf off")
    for label, index, unit in (("launch -> tray icon visible", 0, "s"), ("launch -> server running", 1, "s"),
                               (f"idle RSS after {args.idle:.0f} s", 2, "MiB")):
        values = [r[index] for r in results]
        print(f"  {label:30s} median {statistics.median(values):7.2f} {unit}   "
              f"(min {min(values):.2f}, max {max(values):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
