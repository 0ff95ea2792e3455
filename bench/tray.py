"""Start-to-tray-visible time and idle memory of the desktop app, with the server inside.

    /work/venv/bin/python bench/tray.py [--runs 3] [--idle 10]

Each run launches the real app (``app.desktop_main.build_desktop``: single instance, ServerHost on
127.0.0.1 with an ephemeral port, tray) in a fresh Python process, under Xvfb with trayer as the
tray host. It prints:
- tray visible: from process launch until the tray icon is embedded in the tray (it has a geometry);
- server running: from process launch until the hosted server answers (state "running");
- idle RSS: resident memory of the app process after ``--idle`` seconds of doing nothing.
Without Xvfb it falls back to Qt's offscreen platform (no tray: the status window stands in) and
says so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def child(data_dir: Path) -> int:
    """Runs inside the measured process: build the desktop app, report milestones on stdout."""
    start = time.monotonic()
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
    # Idle: the event loop runs (timers, the socket reader), nothing else happens.
    sys.stdin.readline()
    controller.quit()
    deadline = time.monotonic() + 20
    while desktop.controller.host.state != "stopped" and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    desktop.instance.release()
    return 0


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


def main() -> int:
    parser = argparse.ArgumentParser(description="Tray app start-up time and idle RSS")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds idle before reading RSS")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child)

    from bench.xvfb_session import XvfbSession

    env = dict(os.environ, PYTHONPATH=str(REPO))
    results = []
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
