"""Frozen-app behaviour and the icon generator, checked without building anything."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_icons_from_one_source(tmp_path):
    spec = importlib.util.spec_from_file_location("make_icons", ROOT / "installer" / "make_icons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from PIL import Image

    written = {p.name for p in module.make_icons(tmp_path)}
    assert {"reelroom.ico", "reelroom.icns", "reelroom-16.png", "reelroom-512.png"} <= written
    with Image.open(tmp_path / "reelroom.ico") as ico:
        assert (256, 256) in ico.info["sizes"] and (16, 16) in ico.info["sizes"]
    with Image.open(tmp_path / "reelroom.icns") as icns:
        assert icns.size == (1024, 1024)


def test_frozen_ffmpeg_is_preferred(monkeypatch, tmp_path):
    from server.media import ffmpeg

    binary = tmp_path / "ffmpeg" / "ffmpeg"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert ffmpeg.frozen_ffmpeg() == binary
    # each place is a function looked at in order (imageio-ffmpeg is imported only when needed)
    source, locate = ffmpeg._candidates(None)[0]
    assert (source, locate()) == ("bundled", str(binary))
    source, locate = ffmpeg._candidates("/x/ffmpeg")[0]
    assert (source, locate()) == ("configured", "/x/ffmpeg")


def test_check_ffmpeg_flag():
    out = subprocess.run([sys.executable, "-m", "app.server_main", "--check-ffmpeg"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    facts = dict(line.split(": ", 1) for line in out.stdout.splitlines())
    assert Path(facts["ffmpeg"]).is_file() and facts["source"] in ("path", "bundled")
    assert facts["version"]


def test_frozen_version_comes_from_the_bundled_file(monkeypatch, tmp_path):
    import tomllib

    from server.version import reelroom_version

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    sys.path.insert(0, str(ROOT / "installer"))
    try:
        import inputs
    finally:
        sys.path.remove(str(ROOT / "installer"))
    assert inputs.version() == pyproject
    inputs.write_version_file(tmp_path / "VERSION")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert reelroom_version() == pyproject
    (tmp_path / "VERSION").write_text("9.9.9\n")
    assert reelroom_version() == "9.9.9"


def test_which_processes_of_the_tray_executable_skip_qt(monkeypatch):
    """app/server_children.py server_only, which installer/rthook_plain_import.py asks before
    PyInstaller's PySide6 hook loads Qt: true for the server's own children and for the argv forms
    multiprocessing builds for a frozen app's children (taken from multiprocessing itself: a spawn
    worker's command line; the command lines its resource tracker and fork server start with);
    false for the tray, whatever a user gives it."""
    import multiprocessing.forkserver
    import multiprocessing.resource_tracker
    import multiprocessing.spawn
    import multiprocessing.util
    import os

    from app.server_children import server_only

    exe = "/opt/reelroom/reelroom"
    assert server_only([exe, "--reelroom-reader"]) and server_only([exe, "--reelroom-migrate"])
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", exe)
    worker = multiprocessing.spawn.get_command_line(tracker_fd=5, pipe_handle=7)  # POSIX spawn, frozen
    windows_worker = multiprocessing.spawn.get_command_line(parent_pid=42, pipe_handle=7)  # Windows spawn, frozen
    assert worker[:2] == [exe, "--multiprocessing-fork"] and multiprocessing.spawn.is_forking(worker)
    assert server_only(worker) and server_only(windows_worker)

    started: list[list[str]] = []

    def spawnv_passfds(path, args, passfds):  # records the command line instead of starting it
        started.append(list(args))
        return 2**22 + 1  # not a pid of ours

    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds", spawnv_passfds)
    tracker = multiprocessing.resource_tracker.ResourceTracker()
    tracker.ensure_running()
    os.close(tracker._fd)  # type: ignore[attr-defined]
    monkeypatch.setattr(multiprocessing.resource_tracker, "ensure_running", lambda: None)
    server = multiprocessing.forkserver.ForkServer()
    server.ensure_running()
    os.close(server._forkserver_alive_fd)  # type: ignore[attr-defined]
    tracker_argv, forkserver_argv = started
    assert "multiprocessing.resource_tracker" in tracker_argv[tracker_argv.index("-c") + 1]
    assert server_only(tracker_argv) and server_only(forkserver_argv)
    with_flags = [exe, "-OO", *tracker_argv[1:]]  # a flag this interpreter does not have: not its tracker
    assert "-OO" not in tracker_argv and not server_only(with_flags)

    for tray in ([exe], [exe, "--data-dir", "/data", "--port", "8096"], [exe, "--help"], [exe, "-c"],
                 [exe, "--port", "1", "--multiprocessing-fork"], [exe, "-c", "print(1)"],
                 [exe, "--reelroom-readers"], [exe, "--data-dir", "--reelroom-reader"]):
        assert not server_only(tray), tray
