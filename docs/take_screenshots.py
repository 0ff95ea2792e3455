"""Take the README's desktop screenshots under Xvfb with a tray host (trayer).

    /work/venv/bin/python docs/take_screenshots.py [--out docs/screenshots]

Runs a real Reelroom server in a temporary data folder (127.0.0.1, LAN off), generates two small
videos with ffmpeg, and shows the real windows: the tray menu, the setup wizard, the folder picker
(Qt's own dialog) and the log viewer. Needs Xvfb, trayer and ffmpeg.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.xvfb_session import XvfbSession  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with XvfbSession(size="1280x800x24"), tempfile.TemporaryDirectory(prefix="reelroom-shots-") as tmp:
        os.environ["QT_QPA_PLATFORM"] = "xcb"
        return shoot(args.out, Path(tmp))


def shoot(out: Path, tmp: Path) -> int:
    from PySide6.QtCore import QPoint, QRect, Qt
    from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

    from app.server_host import ServerHost
    from tests.mediagen import make_video
    from ui.api_client import ServerClient
    from ui.logs import LogViewer
    from ui.tray import TrayController
    from ui.wizard import PAGE_LIBRARIES, PAGE_USER, FirstRunWizard
    from ui.worker import BackgroundCalls

    app = QApplication([])
    app.setApplicationName("Reelroom")
    app.setQuitOnLastWindowClosed(False)

    def wait(condition: Callable[[], bool], timeout: float = 30, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited too long for {what or condition}")
            app.processEvents()
            time.sleep(0.02)

    def settle(seconds: float = 0.6) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.02)

    def save(widget: QWidget, name: str) -> None:
        settle()
        path = out / name
        widget.grab().save(str(path))
        print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")

    def non_native(parent: QWidget | None) -> QFileDialog:
        dialog = QFileDialog(parent, "Choose a media folder")
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        return dialog

    media = tmp / "Media"
    for title in ("Big Trip (2001)", "Small Boat (2004)"):
        make_video(media / "Movies" / title / f"{title}.mkv", seconds=1, acodec=None)
    (media / "Shows").mkdir(parents=True)
    (media / "Music").mkdir(parents=True)

    host = ServerHost(tmp / "data", port=0, host="127.0.0.1", enable_lan=False)
    calls = BackgroundCalls()
    host.start()
    if not host.wait_until_running(60):
        raise RuntimeError(host.error or "the server did not start")
    client = ServerClient(host.base_url, host.desktop_api_key())
    client.set_named_configuration("filesystem", {"AllowedRoots": [str(media)]})
    try:
        # -- the setup wizard, on its libraries step, and the folder picker over it ---------------------
        wizard = FirstRunWizard(client, calls, folder_dialog_factory=non_native)
        wizard.resize(720, 520)
        wizard.show()
        wait(lambda: wizard.language_page.loaded, what="language step")
        wizard.next()
        wait(lambda: wizard.currentId() == PAGE_USER, what="user step")
        wait(lambda: wizard.user_page.loaded, what="user step loaded")
        wizard.user_page.name_edit.setText("alice")
        wizard.user_page.password_edit.setText("correct horse")
        wizard.user_page.confirm_edit.setText("correct horse")
        wizard.next()
        wait(lambda: wizard.currentId() == PAGE_LIBRARIES, what="libraries step")
        client.add_virtual_folder("Movies", "movies", [str(media / "Movies")], refresh=True)
        wizard.libraries_page.initializePage()
        wait(lambda: wizard.libraries_page.library_list.count() == 1, what="library listed")
        save(wizard, "wizard.png")

        dialog = wizard.libraries_page.open_add_library()
        dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("tvshows"))
        settle(0.3)
        dialog.choose_folder()
        picker = dialog.findChild(QFileDialog)
        assert picker is not None
        picker.resize(760, 460)
        picker.setDirectory(str(media))
        settle(1.5)  # the file system model fills in the background
        picker.selectFile(str(media / "Shows"))
        save(picker, "folder-picker.png")
        picker.reject()
        dialog.reject()
        wizard.hide()
        client.set_startup_user("alice", "correct horse")
        client.complete_startup()

        # -- the tray icon and its menu --------------------------------------------------------------
        desktop = QWidget(None, Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnBottomHint)
        desktop.setStyleSheet("background: qlineargradient(x1:0, y1:0, x2:1, y2:1, stop:0 #3a2d6e, stop:1 #1e88e5);")
        desktop.setGeometry(app.primaryScreen().geometry())
        desktop.show()
        desktop.lower()  # no window manager: lowering keeps the tray panel above this "wallpaper"
        controller = TrayController(host, calls, folder_dialog_factory=non_native, open_url=lambda _u: True)
        if controller.tray is None:
            raise RuntimeError("no system tray: is trayer running?")
        controller.start()
        wait(lambda: controller.client is not None and controller.display_state == "running", what="tray running")
        wait(lambda: controller.tray.geometry().width() > 0, what="tray icon embedded")
        geometry = controller.tray.geometry()
        controller.menu.popup(QPoint(geometry.right() - 220, geometry.bottom() + 2))
        settle(0.8)
        menu = controller.menu.geometry()
        screen = app.primaryScreen()
        area = QRect(menu.left() - 60, 0, max(menu.width() + 80, 320), menu.bottom() + 30).intersected(
            screen.geometry())
        shot = screen.grabWindow(0, area.x(), area.y(), area.width(), area.height())
        shot.save(str(out / "tray-menu.png"))
        print(f"wrote {(out / 'tray-menu.png').relative_to(REPO)}")
        controller.menu.hide()
        desktop.hide()

        # -- the log viewer, filtered and searching -----------------------------------------------------
        client.refresh_all_libraries()
        settle(2.0)
        viewer = LogViewer(client, calls, poll_interval_ms=500, open_url=lambda _u: True)
        viewer.resize(1100, 520)
        viewer.show()
        wait(lambda: "Reelroom is ready" in viewer.visible_text(), what="log lines")
        viewer.search_edit.setText("Scanned")
        save(viewer, "log-viewer.png")
        viewer.close()

        controller.quit()
        wait(lambda: host.state == "stopped", timeout=30, what="server stop")
    finally:
        client.close()
        host.stop()
        calls.wait_for_done(10_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
