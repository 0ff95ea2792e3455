"""The tray's "Install web app…" against a real server hosted by ServerHost: the chooser gives an
archive, the server installs it, /web/ serves it; a bad archive gives an error notice and keeps
what was there. Offscreen Qt."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QMessageBox

from app.server_host import ServerHost
from tests.web.conftest import make_dist
from ui.tray import TrayController
from ui.web_install import choose_web_source
from ui.worker import BackgroundCalls


@pytest.fixture
def host(tmp_path: Path) -> Iterator[ServerHost]:
    host = ServerHost(tmp_path / "data", port=0, host="127.0.0.1", enable_lan=False)
    host.start()
    assert host.wait_until_running(60), host.error
    yield host
    host.stop()


def test_install_web_app_from_the_tray(qtbot, host: ServerHost, calls: BackgroundCalls, tmp_path: Path) -> None:  # noqa: ANN001
    tarball = tmp_path / "jellyfin-web.tar.xz"
    with tarfile.open(tarball, "w:xz") as tf:
        tf.add(make_dist(tmp_path / "dist", marker="from-tray"), arcname="dist")
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive at all" * 10)
    chosen: list[str | None] = [str(tarball)]
    opened: list[QUrl] = []
    controller = TrayController(host, calls, tray_available=False, open_url=lambda u: opened.append(u) or True,
                                web_source_chooser=lambda parent: chosen[0])
    qtbot.addWidget(controller.status_window)
    notices: list[tuple[str, str]] = []
    controller.notified.connect(lambda title, text: notices.append((title, text)))
    controller.start()
    qtbot.waitUntil(lambda: controller.client is not None and controller.display_state == "running", timeout=20_000)
    assert controller.actions["install_web"].isEnabled()
    assert controller.actions["install_web"].text() == "Install web app…"

    controller.actions["install_web"].trigger()
    assert not controller.actions["install_web"].isEnabled()  # one install at a time
    qtbot.waitUntil(lambda: any(t == "Web app installed" for t, _ in notices), timeout=60_000)
    assert controller.actions["install_web"].isEnabled()
    controller.actions["open_browser"].trigger()
    assert opened[-1].toString() == host.base_url + "/web/"
    assert "from-tray" in httpx.get(opened[-1].toString()).text
    assert (host.options.data_dir / "web" / "index.html").is_file()

    chosen[0] = str(junk)
    controller.actions["install_web"].trigger()
    qtbot.waitUntil(lambda: any(t == "The web app was not installed" for t, _ in notices), timeout=60_000)
    error = next(text for t, text in notices if t == "The web app was not installed")
    assert "not a .tar.xz" in error
    assert "from-tray" in httpx.get(host.base_url + "/web/").text  # the installed copy stays

    chosen[0] = None  # cancelled: nothing happens
    count = len(notices)
    controller.actions["install_web"].trigger()
    assert len(notices) == count


def test_chooser_cancel(qtbot, monkeypatch) -> None:  # noqa: ANN001
    """The default chooser: Cancel in its question gives None without opening a file dialog."""
    def fake_exec(box: QMessageBox) -> int:
        box.button(QMessageBox.StandardButton.Cancel).click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", fake_exec)
    assert choose_web_source(None) is None


def test_chooser_archive_and_folder(qtbot, monkeypatch, tmp_path: Path) -> None:  # noqa: ANN001
    from PySide6.QtWidgets import QFileDialog

    picks = {"Archive…": None, "Folder…": None}

    def click(label: str):
        def fake_exec(box: QMessageBox) -> int:
            next(b for b in box.buttons() if b.text() == label).click()
            return 0
        return fake_exec

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(tmp_path / "w.tar.xz"), "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(tmp_path)))
    for label in picks:
        monkeypatch.setattr(QMessageBox, "exec", click(label))
        picks[label] = choose_web_source(None)
    assert picks == {"Archive…": str(tmp_path / "w.tar.xz"), "Folder…": str(tmp_path)}


def test_desktop_app_takes_the_web_flags(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """`reelroom --web-dir DIR` hosts DIR at /web/ (the same flag as reelroom-server), end to end."""
    from app.desktop_main import build_desktop, parse_args

    dist = make_dist(tmp_path / "dist", marker="desktop-flag")
    args = parse_args(["--data-dir", str(tmp_path / "data"), "--port", "0", "--host", "127.0.0.1",
                       "--web-dir", str(dist)])
    seen: dict = {}

    def factory(data_dir: Path, port: int | None, host: str, **options) -> ServerHost:  # noqa: ANN003
        seen.update(options)
        return ServerHost(data_dir, port, host, enable_lan=False, **options)  # no LAN traffic in tests

    desktop = build_desktop(args, [], factory, tray_available=False, login_item=None)
    assert desktop is not None
    controller = desktop.controller
    try:
        qtbot.waitUntil(lambda: controller.display_state == "running", timeout=60_000)
        host = controller.host
        assert seen == {"web_dir": dist.resolve()}  # options left at their defaults are not passed
        assert host.options.web_dir == dist.resolve() and host.options.host_web is True
        assert "desktop-flag" in httpx.get(host.base_url + "/web/").text
    finally:
        with qtbot.waitSignal(controller.quitRequested, timeout=30_000):
            controller.quit()
        desktop.instance.release()
        qtbot.waitUntil(lambda: desktop.calls.pending == 0, timeout=10_000)
