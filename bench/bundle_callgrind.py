"""Instructions of the tray program (or the headless server) from launch to its first 200, under
valgrind's callgrind, for the source tree and PyInstaller bundles side by side.

``bench/startup_callgrind.py`` counts the server's start in process; this counts the programs a
user launches: the bundle's bootloader and its re-execution (``--trace-children=yes``), the
run-time hooks, the tray's QApplication (under Xvfb) and its hosted server, up to the first 200
on /System/Info/Public, where callgrind dumps (``callgrind_control -d``) and the program is
killed. A restart on a copy of ``--library`` or an empty data folder, started once before without
valgrind, for 3 s past its first 200 (a source tree's dataclass code is then saved).
Each process's instructions are reported, with and without argon2's (the dummy password hash,
queued at ready, which under valgrind can run before the 200's reply). A forked child's file
starts from its parent's counts (callgrind copies them at the fork): read the main process's.

    python bench/bundle_callgrind.py --binary this=dist/reelroom/reelroom-server \\
        --binary main=/tmp/main/dist/reelroom/reelroom-server --compare --library /tmp/pages-lib/100000

Slow: two to four minutes a start under callgrind on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /System/Info/Public HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        head = s.recv(64)
    return int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0


def totals(out_dir: Path) -> dict[str, tuple[int, int]]:
    """Per output file (``cg.<pid>.<n>``, ``.1`` the part dumped at the first 200): its command, its
    instructions and those of argon2's library in it (the dummy password hash, queued at ready: on
    a normal start it runs after the first 200, under valgrind it can run before the reply)."""
    found = {}
    for path in sorted(out_dir.glob("cg.*")):
        text = path.read_text(errors="replace")
        cmd = re.search(r"^cmd: (.*)$", text, re.M)
        summary = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if not summary or not int(summary.group(1)):
            continue  # the part after the dump, cut short by SIGKILL
        shown = subprocess.run(["callgrind_annotate", "--threshold=100", str(path)], capture_output=True,
                               text=True).stdout
        argon2 = sum(int(m.group(1).replace(",", "")) for m in re.finditer(r"^\s*([\d,]+) .*_argon2", shown, re.M))
        found[f"{path.name} {cmd.group(1)[:80] if cmd else '?'}"] = (int(summary.group(1)), argon2)
    return found


def run(label: str, command: list[str], data: Path, env: dict[str, str], out_dir: Path) -> dict[str, tuple[int, int]]:
    out_dir.mkdir(parents=True)
    port = free_port()
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--trace-children=yes", "--dump-instr=no",
                             f"--callgrind-out-file={out_dir}/cg.%p.%n", *command, "--data-dir", str(data),
                             "--port", str(port), "--host", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT,
                            start_new_session=True)
    t0 = time.monotonic()
    try:
        while True:
            try:
                if status(port) == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None:
                raise RuntimeError(f"{label}: exited during start-up")
            if time.monotonic() - t0 > 900:
                raise RuntimeError(f"{label}: no 200 within 900 s")
            time.sleep(0.2)
        subprocess.run(["callgrind_control", "-d", "first200", str(proc.pid)], check=False, capture_output=True,
                       timeout=300)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return totals(out_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", action="append", default=[], help="LABEL=path to a bundle's reelroom-server")
    parser.add_argument("--compare", action="store_true", help="also the source tree (python -m ...)")
    parser.add_argument("--program", choices=("tray", "server"), default="tray")
    parser.add_argument("--library", type=Path, default=None, help="a kept library (copied), else empty")
    parser.add_argument("--keep", type=Path, default=None, help="keep the callgrind files here")
    args = parser.parse_args()

    trees: list[tuple[str, list[str]]] = []
    module = "app.desktop_main" if args.program == "tray" else "app.server_main"
    if args.compare:
        trees.append(("source", [sys.executable, "-m", module]))
    for given in args.binary:
        label, _, path = given.rpartition("=")
        binary = Path(path).resolve()
        trees.append((label or str(binary), [str(binary.parent / "reelroom") if args.program == "tray"
                                             else str(binary)]))
    work = Path(tempfile.mkdtemp(prefix="reelroom-bundle-cg-"))
    keep = args.keep or work
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the source tree's bytecode and dataclass code kept, as a user's
    xvfb = None
    if args.program == "tray":
        from xvfb_session import XvfbSession

        xvfb = XvfbSession()
        env.update(DISPLAY=xvfb.__enter__(), QT_QPA_PLATFORM="xcb")
    try:
        print(f"load average {os.getloadavg()[0]:.1f}")
        for label, command in trees:
            data = work / f"data-{label}"
            if args.library is not None:
                shutil.copytree(args.library, data)
            # A restart: started once without valgrind.
            port = free_port()
            first = subprocess.Popen([*command, "--data-dir", str(data), "--port", str(port), "--host",
                                      "127.0.0.1"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if status(port) == 200:
                        break
                except OSError:
                    time.sleep(0.2)
            time.sleep(3)  # past settle(): a source tree then has its dataclass code (server/code_cache.py)
            first.send_signal(signal.SIGTERM)
            first.wait(60)
            found = run(label, command, data, env, keep / label)
            shutil.rmtree(data, ignore_errors=True)
            print(f"{label}: load average {os.getloadavg()[0]:.1f}")
            for name, (count, argon2) in found.items():
                print(f"  {count / 1e9:7.3f} G, {(count - argon2) / 1e9:7.3f} G less argon2  {name}")
    finally:
        if xvfb is not None:
            xvfb.__exit__(None, None, None)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
