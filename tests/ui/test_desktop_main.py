from __future__ import annotations

import logging
import os
import subprocess
import sys
import types
import uuid
from pathlib import Path

import pytest

from app.desktop_main import build_desktop, has_display, main, parse_args, run_headless
from app.single_instance import SingleInstance, instance_name
from tests.ui.fake_host import FakeHost
from tests.ui.fake_server import FakeServerThread

REPO = Path(__file__).resolve().parents[2]


def test_has_display() -> None:
    assert not has_display({}, "linux")
    assert has_display({"DISPLAY": ":0"}, "linux")
    assert has_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert has_display({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert has_display({}, "win32") and has_display({}, "darwin")


def test_flags_match_the_server(tmp_path: Path) -> None:
    args = parse_args(["--data-dir", str(tmp_path), "--port", "8200", "--host", "127.0.0.1"])
    assert (args.data_dir, args.port, args.host) == (tmp_path, 8200, "127.0.0.1")
    with pytest.raises(SystemExit):
        parse_args(["--port", "70000"])
    assert parse_args(["--port", "0"]).port == 0


def test_second_instance_signals_the_first(qtbot) -> None:  # noqa: ANN001
    name = f"reelroom-test-{uuid.uuid4().hex[:8]}"
    first = SingleInstance(name)
    assert first.claim() and first.is_primary
    second = SingleInstance(name)
    with qtbot.waitSignal(first.messageReceived, timeout=5000) as message:
        assert second.claim() is False
    assert message.args == ["show"]
    assert not second.is_primary
    first.release()
    third = SingleInstance(name)
    assert third.claim()
    third.release()


def test_second_launch_of_the_app_shows_the_first_and_exits(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    first = SingleInstance(instance_name(tmp_path))
    assert first.claim()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    with qtbot.waitSignal(first.messageReceived, timeout=20_000) as message:
        process = subprocess.Popen([sys.executable, "-m", "app.desktop_main", "--data-dir", str(tmp_path)],
                                   cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    qtbot.waitUntil(lambda: process.poll() is not None, timeout=20_000)
    output = process.stdout.read().decode() if process.stdout else ""
    assert message.args == ["show"]
    assert process.returncode == 0, output
    first.release()


def test_build_desktop_starts_the_server_and_answers_show(
    qtbot, fake_server: FakeServerThread, tmp_path: Path  # noqa: ANN001
) -> None:
    fake_server.state.wizard_completed = True
    hosts: list[FakeHost] = []

    def factory(data_dir: Path, port: int, host: str) -> FakeHost:
        assert (data_dir, port, host) == (tmp_path, 8300, "127.0.0.1")
        hosts.append(FakeHost(fake_server))
        return hosts[-1]

    args = parse_args(["--data-dir", str(tmp_path), "--port", "8300", "--host", "127.0.0.1"])
    desktop = build_desktop(args, [], factory, tray_available=True, login_item=None)
    assert desktop is not None
    controller = desktop.controller
    qtbot.waitUntil(lambda: controller.display_state == "running", timeout=5000)
    assert hosts[0].started == 1
    assert not controller.status_window.isVisible()
    assert build_desktop(args, [], factory) is None  # the second one hands over and stops
    qtbot.waitUntil(controller.status_window.isVisible, timeout=5000)
    with qtbot.waitSignal(controller.quitRequested, timeout=5000):
        controller.quit()
    assert hosts[0].state == "stopped"
    desktop.instance.release()
    qtbot.waitUntil(lambda: desktop.calls.pending == 0, timeout=5000)


def test_no_display_falls_back_to_the_headless_server(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []
    argv = ["--data-dir", str(tmp_path), "--port", "8400"]
    with caplog.at_level(logging.INFO, logger="reelroom.desktop"):
        assert run_headless(argv, lambda args: ran.append(args) or 0) == 0
    assert ran == [argv]
    assert "running Reelroom headless" in caplog.text

    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    fake_server_main = types.ModuleType("app.server_main")
    fake_server_main.main = lambda args: ran.append(args) or 3  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "app.server_main", fake_server_main)
    assert main(argv) == 3
    assert ran[-1] == argv


START_ORDER = r"""
import builtins, json, sys
from app.desktop_main import build_desktop, parse_args

seen = {}

class Host:
    state, error, base_url = "stopped", None, "http://127.0.0.1:9"

    def __init__(self, at_factory):
        self.at_factory = at_factory
        self._listeners = []

    def add_state_listener(self, callback):
        self._listeners.append(callback)

    def _set(self, state):
        self.state = state
        for callback in list(self._listeners):
            callback(state)

    def start(self):
        seen["at_start"] = {"modules": sorted(sys.modules), "import_at_factory": self.at_factory,
                            "qt_namespace": "Qt" in vars(sys.modules["PySide6.QtCore"])}
        self._set("starting")  # and no further: the tray made after it shows that

    def stop(self, timeout=10):
        self._set("stopped")

    def restart(self):
        pass

    def desktop_api_key(self):
        raise RuntimeError("no key here")

def factory(data_dir, port, host):
    return Host(builtins.__import__.__name__)

args = parse_args(["--data-dir", sys.argv[1], "--port", "0", "--host", "127.0.0.1"])
desktop = build_desktop(args, [], factory, tray_available=True, login_item=None, update_manifest_url=None)
seen["after"] = {"modules": sorted(sys.modules), "qt_namespace": "Qt" in vars(sys.modules["PySide6.QtCore"]),
                 "shown": desktop.controller.state_text()}
desktop.controller._on_host_state("stopped")  # the stop square is drawn without Qt's namespace too
seen["stopped"] = {"qt_namespace": "Qt" in vars(sys.modules["PySide6.QtCore"]),
                   "shown": desktop.controller.state_text()}
desktop.instance.release()
print(json.dumps(seen))
"""


def _start_order(tmp_path: Path) -> dict:
    import json

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", START_ORDER, str(tmp_path)], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_before_its_server_starts_the_tray_imports_only_what_its_icon_needs(tmp_path: Path) -> None:
    """Up to the server running, the tray program's work is all on one GIL: the host factory (which
    imports the server) runs past shiboken's import hook (app/pyside_imports.py), and when the
    server's thread starts the tray has imported no HTTP client, socket reader, update check,
    chooser or window module (nor the login item's macOS plist writer); it shows "starting" and
    follows the server."""
    seen = _start_order(tmp_path)
    assert seen["at_start"]["import_at_factory"] == "__import__"  # Python's own, not __feature_import__
    at_start = set(seen["at_start"]["modules"])
    assert "ui.tray" in at_start
    assert {"httpx", "websockets", "ui.api_client", "ui.events", "ui.updates", "ui.web_install",
            "ui.folder_picker", "ui.status_window", "importlib.metadata", "plistlib"} & at_start == set()
    after = set(seen["after"]["modules"])
    assert {"httpx", "websockets", "ui.api_client", "ui.events", "ui.updates", "ui.web_install"} & after == set()
    assert seen["after"]["shown"] == "Reelroom is starting…"


def test_the_tray_start_leaves_qts_namespace_unmade(tmp_path: Path) -> None:
    """PySide makes the ~90 Python enums of ``PySide6.QtCore.Qt`` at its first use, ~15 ms of the
    GIL; the tray's start (its window icon, the stopped, starting and running icons) does without
    it, so the server's first 200 does not wait for it (ui/state_icon.py)."""
    seen = _start_order(tmp_path)
    assert seen["at_start"]["qt_namespace"] is False
    assert seen["after"]["qt_namespace"] is False
    assert seen["stopped"] == {"qt_namespace": False, "shown": "Reelroom is stopped"}
