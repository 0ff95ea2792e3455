from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from app.autostart import LoginItem
from tests.ui.fake_host import FakeHost
from tests.ui.fake_server import FakeServerThread
from ui.state_icon import BADGE_COLOURS, state_pixmap
from ui.status_window import StatusWindow
from ui.tray import TrayController, describe_new_media
from ui.worker import BackgroundCalls


@pytest.fixture
def opened() -> list[QUrl]:
    return []


def _controller(qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl],  # noqa: ANN001
                tray: bool = True, scan_poll_ms: int = 30, **kwargs) -> tuple[TrayController, FakeHost]:  # noqa: ANN003
    host = FakeHost(fake_server)
    controller = TrayController(host, calls, tray_available=tray, scan_poll_ms=scan_poll_ms, log_poll_ms=50,
                                open_url=lambda url: opened.append(url) or True, **kwargs)
    qtbot.addWidget(controller.status_window)
    controller.start()
    qtbot.waitUntil(lambda: controller.client is not None and controller.display_state == "running", timeout=5000)
    return controller, host


def _menu_texts(controller: TrayController) -> list[str]:
    return [a.text() for a in controller.menu.actions() if not a.isSeparator() and a.isVisible()]


def test_tray_menu_actions_call_the_server(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl], tmp_path: Path,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = fake_server.state
    state.wizard_completed = True
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    login_item = LoginItem(["/opt/reelroom/reelroom"], platform="linux")
    controller, host = _controller(qtbot, fake_server, calls, opened, login_item=login_item)
    assert controller.uses_tray
    assert _menu_texts(controller) == [
        "Open in browser", "Show address && QR code", "Scan all libraries", "Libraries…", "Logs…", "Settings…", "Install web app…",
        "Stop server", "Restart", "Quit Reelroom",
    ]
    assert controller.tray is not None and controller.tray.toolTip() == "Reelroom is running"
    assert controller.wizard is None

    controller.actions["open_browser"].trigger()
    assert opened[-1].toString() == fake_server.base_url + "/web/"

    controller.actions["scan_all"].trigger()
    qtbot.waitUntil(lambda: state.library_refreshes == 1, timeout=5000)

    controller.actions["libraries"].trigger()
    window = controller.libraries_window
    assert window is not None and window.isVisible()
    qtbot.waitUntil(lambda: window.loaded, timeout=5000)

    controller.actions["logs"].trigger()
    assert controller.log_viewer is not None and controller.log_viewer.isVisible()

    controller.actions["show_address"].trigger()
    qtbot.waitUntil(lambda: controller.address_dialog is not None, timeout=5000)
    dialog = controller.address_dialog
    assert dialog is not None and dialog.address == f"http://127.0.0.1:{fake_server.base_url.rsplit(':', 1)[1]}"
    assert not dialog.qr_label.pixmap().isNull()
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == dialog.address

    controller.actions["settings"].trigger()
    settings = controller.settings_dialog
    assert settings is not None
    qtbot.waitUntil(lambda: settings.loaded, timeout=5000)
    assert settings.name_edit.text() == "Reelroom Test" and settings.port_spin.value() == 8096
    assert not settings.login_check.isChecked()
    settings.name_edit.setText("Living room")
    settings.port_spin.setValue(8097)
    settings.hwaccel_combo.setCurrentIndex(settings.hwaccel_combo.findData("vaapi"))
    settings.discovery_check.setChecked(False)
    settings.login_check.setChecked(True)
    with qtbot.waitSignal(controller.notified, timeout=5000) as notice:
        settings.save()
    assert notice.args[0] == "Settings saved"
    assert state.system_config["ServerName"] == "Living room"
    assert state.system_config["LogFileRetentionDays"] == 3  # other settings kept
    assert state.named_config["encoding"]["HardwareAccelerationType"] == "vaapi"
    assert state.named_config["network"]["InternalHttpPort"] == 8097
    assert state.named_config["network"]["AutoDiscovery"] is False
    assert (tmp_path / "cfg" / "autostart" / "reelroom.desktop").is_file()

    controller.actions["start_stop"].trigger()
    qtbot.waitUntil(lambda: controller.display_state == "stopped", timeout=5000)
    assert host.stopped == 1
    assert controller.actions["start_stop"].text() == "Start server"
    assert not controller.actions["scan_all"].isEnabled()
    controller.actions["start_stop"].trigger()
    qtbot.waitUntil(lambda: controller.display_state == "running", timeout=5000)
    assert host.started == 2

    controller.actions["restart"].trigger()
    qtbot.waitUntil(lambda: host.restarted == 1 and controller.display_state == "running", timeout=5000)

    with qtbot.waitSignal(controller.quitRequested, timeout=5000):
        controller.actions["quit"].trigger()
    assert host.stopped == 2
    assert not window.isVisible()


def test_scan_progress_and_new_media_notice(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    state = fake_server.state
    state.wizard_completed = True
    controller, _ = _controller(qtbot, fake_server, calls, opened)
    with state.lock:
        state.scan_task.update(State="Running", CurrentProgressPercentage=42.0)
    qtbot.waitUntil(lambda: controller.display_state == "scanning", timeout=5000)
    qtbot.waitUntil(lambda: "42%" in controller.tray.toolTip(), timeout=5000)
    assert controller.status_window.state_label.text() == "Reelroom is scanning your libraries (42%)"
    with state.lock:
        state.item_counts.update(MovieCount=2, EpisodeCount=1, ItemCount=3)
        state.scan_task.update(State="Idle")
        state.scan_task.pop("CurrentProgressPercentage")
    with qtbot.waitSignal(controller.notified, timeout=5000) as notice:
        pass
    assert notice.args == ["Library scan finished", "New media: 2 movies, 1 episode."]
    assert controller.display_state == "running"

    with state.lock:
        state.item_counts.update(SongCount=12, ItemCount=15)
    with qtbot.waitSignal(controller.notified, timeout=5000) as notice:
        pass
    assert notice.args == ["New media in Reelroom", "Added 12 songs."]


def test_server_error_is_shown_and_notified(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    fake_server.state.wizard_completed = True
    controller, host = _controller(qtbot, fake_server, calls, opened)
    with qtbot.waitSignal(controller.notified, timeout=5000) as notice:
        host.fail("port 8096 is already in use")
    assert notice.args == ["Reelroom has a problem", "port 8096 is already in use"]
    assert controller.display_state == "error"
    assert controller.tray.toolTip() == "Reelroom has a problem: port 8096 is already in use"
    assert controller.actions["start_stop"].text() == "Start server"


def test_status_window_replaces_the_tray(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    state = fake_server.state
    state.wizard_completed = True
    controller, host = _controller(qtbot, fake_server, calls, opened, tray=False)
    window = controller.status_window
    assert controller.tray is None and window.isVisible()
    assert window.state_label.text() == "Reelroom is running"
    assert window.address_label.text() == fake_server.base_url
    assert set(window.buttons) >= {"open_browser", "show_address", "scan_all", "libraries", "logs", "settings",
                                   "start_stop", "restart", "quit"}
    assert not window.buttons["update"].isVisible()
    window.buttons["scan_all"].click()
    qtbot.waitUntil(lambda: state.library_refreshes == 1, timeout=5000)
    window.buttons["start_stop"].click()
    qtbot.waitUntil(lambda: window.buttons["start_stop"].text() == "Start server", timeout=5000)
    controller.actions["start_stop"].trigger()
    qtbot.waitUntil(lambda: controller.display_state == "running", timeout=5000)
    with qtbot.waitSignal(controller.quitRequested, timeout=5000):
        window.close()
    assert host.state == "stopped"


def test_with_a_tray_the_status_window_is_made_when_first_shown(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    """An idle tray holds no status window (~5 MiB: its widgets, fonts and style); made when the
    icon is clicked or a second launch asks, it shows the state and the last notice all the same."""
    fake_server.state.wizard_completed = True
    controller = TrayController(FakeHost(fake_server), calls, tray_available=True, scan_poll_ms=30, log_poll_ms=50,
                                open_url=lambda url: opened.append(url) or True)

    def status_windows() -> list[StatusWindow]:  # made since this test began
        return [w for w in QApplication.topLevelWidgets() if isinstance(w, StatusWindow) and w not in earlier]

    earlier = [w for w in QApplication.topLevelWidgets() if isinstance(w, StatusWindow)]  # (other tests')
    controller.start()
    qtbot.waitUntil(lambda: controller.client is not None and controller.display_state == "running", timeout=5000)
    controller.notify("Library scan finished", "New media: 2 movies.")
    assert status_windows() == []
    controller._tray_activated(QSystemTrayIcon.ActivationReason.Trigger)
    window = controller.status_window
    qtbot.addWidget(window)
    assert status_windows() == [window] and window.isVisible()
    assert window.state_label.text() == "Reelroom is running"
    assert window.address_label.text() == fake_server.base_url
    assert window.message.text() == "Library scan finished: New media: 2 movies."
    assert window.buttons["scan_all"].isEnabled()
    controller.notify("Reelroom could not do that", "no", error=True)  # a shown window follows
    assert window.message.text() == "Reelroom could not do that: no"
    window.close()  # with a tray, closing it hides it; the app goes on
    assert controller.status_window is window and not controller._quitting
    with qtbot.waitSignal(controller.quitRequested, timeout=5000):
        controller.quit()


def test_wizard_opens_when_setup_is_incomplete(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    controller, _ = _controller(qtbot, fake_server, calls, opened)
    qtbot.waitUntil(lambda: controller.wizard is not None and controller.wizard.isVisible(), timeout=5000)
    controller.show_main_window()
    assert not controller.status_window.isVisible()
    controller.wizard.close()
    controller.show_main_window()
    assert controller.status_window.isVisible()


def test_update_notice_from_manifest(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    state = fake_server.state
    state.wizard_completed = True
    state.manifest = [
        {"name": "Other", "versions": [{"version": "9.0.0"}]},
        {"name": "Reelroom", "guid": "x", "versions": [
            {"version": "0.1.5", "sourceUrl": "https://example.invalid/0.1.5"},
            {"version": "0.2.0", "changelog": "Faster scans", "sourceUrl": "https://example.invalid/0.2.0"},
        ]},
    ]
    url = fake_server.base_url + "/repository/manifest.json"
    controller, _ = _controller(qtbot, fake_server, calls, opened, update_manifest_url=url, current_version="0.1.0")
    with qtbot.waitSignal(controller.notified, timeout=5000) as notice:
        controller.check_for_update()
    assert notice.args == ["Update available", "Reelroom 0.2.0 is available."]
    assert _menu_texts(controller)[0] == "Reelroom 0.2.0 is available"
    controller.actions["update"].trigger()
    assert opened[-1].toString() == "https://example.invalid/0.2.0"

    current, _ = _controller(qtbot, fake_server, calls, opened, update_manifest_url=url, current_version="0.2.0")
    current.check_for_update()
    qtbot.waitUntil(lambda: calls.pending == 0, timeout=5000)
    assert not current.actions["update"].isVisible()


def test_state_icons_carry_a_coloured_badge(qtbot) -> None:  # noqa: ANN001
    for state, colour in BADGE_COLOURS.items():
        image = state_pixmap(state, size=64).toImage()
        sample = image.pixelColor(64 - 15, 64 - 8)
        assert sample.name() in (QColor(colour).name(), "#ffffff"), state
    half = state_pixmap("scanning", progress=50, size=64).toImage()
    assert half.pixelColor(64 - 10, 64 - 15).name() == QColor(BADGE_COLOURS["scanning"]).name()  # done half
    assert half.pixelColor(64 - 20, 64 - 15).name() != QColor(BADGE_COLOURS["scanning"]).name()


def test_describe_new_media() -> None:
    assert describe_new_media({"MovieCount": 1}, {"MovieCount": 2, "EpisodeCount": 3}) == "1 movie, 3 episodes"
    assert describe_new_media({"ItemCount": 1}, {"ItemCount": 4}) == "3 items"
    assert describe_new_media({"MovieCount": 2}, {"MovieCount": 1}) is None


def test_socket_messages_drive_scanning_progress_and_notices(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    """The messages a real server sends on /socket (tests/ui/test_real_server.py sees them end to end)."""
    state = fake_server.state
    state.wizard_completed = True
    # No socket and no polling here: only the messages below change the state.
    controller, _ = _controller(qtbot, fake_server, calls, opened, use_events=False, scan_poll_ms=3_600_000)
    notices: list[tuple[str, str]] = []
    controller.notified.connect(lambda title, text: notices.append((title, text)))
    qtbot.waitUntil(lambda: calls.pending == 0, timeout=5000)  # the item counts before any scan are known

    # A library scanned on its own (the folder watcher): progress in the tooltip, then a new-media notice.
    controller.handle_server_message("RefreshProgress", {"ItemId": "lib1", "Progress": "42.5"})
    assert controller.display_state == "scanning"
    assert controller.tray.toolTip() == "Reelroom is scanning your libraries (42%)"
    # The scan's start fetched the counts to compare with, in the background: let it land first.
    qtbot.waitUntil(lambda: controller._counts is not None, timeout=5000)
    controller.handle_server_message("LibraryChanged", {"ItemsAdded": ["a1", "a2"], "ItemsRemoved": []})
    with state.lock:
        state.item_counts.update(MovieCount=2, ItemCount=2)
    controller.handle_server_message("RefreshProgress", {"ItemId": "lib1", "Progress": "100.0"})
    assert controller.display_state == "scanning"  # another library may follow
    qtbot.waitUntil(lambda: notices == [("New media in Reelroom", "Added 2 movies.")], timeout=8000)
    assert controller.display_state == "running"

    # The RefreshLibrary task: progress from ScheduledTasksInfo, the end from ScheduledTaskEnded.
    notices.clear()
    task = {"Key": "RefreshLibrary", "Name": "Scan Media Library", "State": "Running",
            "CurrentProgressPercentage": 60.0}
    controller.handle_server_message("ScheduledTasksInfo", [{"Key": "Other", "State": "Idle"}, task])
    assert controller.tray.toolTip() == "Reelroom is scanning your libraries (60%)"
    controller.handle_server_message("ScheduledTaskEnded", {"Key": "RefreshLibrary", "Name": "Scan Media Library",
                                                            "Status": "Completed"})
    qtbot.waitUntil(lambda: notices == [("Library scan finished", "No new media found.")], timeout=5000)
    assert controller.tray.toolTip() == "Reelroom is running"

    # New media outside any scan, and a failed task.
    notices.clear()
    with state.lock:
        state.item_counts.update(EpisodeCount=3, ItemCount=5)
    controller.handle_server_message("LibraryChanged", {"ItemsAdded": ["e1", "e2", "e3"]})
    qtbot.waitUntil(lambda: notices == [("New media in Reelroom", "Added 3 episodes.")], timeout=5000)
    notices.clear()
    controller.handle_server_message("ScheduledTaskEnded", {"Key": "RefreshChapterImages", "Name": "Chapter images",
                                                            "Status": "Failed", "ErrorMessage": "ffmpeg crashed"})
    assert notices == [("Reelroom task failed", "Chapter images failed: ffmpeg crashed")]


def test_state_icon_is_drawn_on_the_reelroom_icon(qtbot) -> None:  # noqa: ANN001
    from PySide6.QtGui import QImage

    from ui.state_icon import icon_file

    assert icon_file(22).name == "reelroom-32.png" and icon_file(64).is_file()
    base = QImage(str(icon_file(64)))
    drawn = state_pixmap("running", size=64).toImage()
    for x, y in ((32, 32), (20, 12), (12, 40)):  # away from the badge in the lower right
        assert drawn.pixelColor(x, y) == base.pixelColor(x, y)


def test_the_icon_is_scaled_as_qpixmap_scaled_smoothly_keeping_its_aspect(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """ui/state_icon.py scales through QIcon's engine (no ``Qt`` enums at start): the same pixels as
    ``QPixmap.scaled(..., KeepAspectRatio, SmoothTransformation)``, for the bundled icons (22 px is
    scaled from 32) and for a given file that is not square."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPainter, QPixmap

    from ui.state_icon import app_icon_pixmap, icon_file

    wide = QPixmap(90, 40)
    wide.fill(QColor("#204080"))
    painter = QPainter(wide)
    painter.fillRect(10, 5, 30, 20, QColor("#f0c020"))
    painter.end()
    wide_path = tmp_path / "wide.png"
    assert wide.save(str(wide_path))
    for size, path in [(n, None) for n in (16, 22, 32, 48, 64)] + [(22, wide_path), (64, wide_path)]:
        source = QPixmap(str(path or icon_file(size)))
        expected = source.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio,
                                 Qt.TransformationMode.SmoothTransformation).toImage()
        got = app_icon_pixmap(size, path)
        assert got.devicePixelRatio() == 1.0
        assert got.toImage() == expected, (size, path)
    assert app_icon_pixmap(22, wide_path).size().toTuple() == (22, 9)  # its aspect kept (90 x 40)


def test_the_badge_looks_as_drawn_with_the_painters_pen_and_brush(qtbot) -> None:  # noqa: ANN001
    """ui/state_icon.py fills and outlines the badge as paths (no ``Qt`` enums at start); the icons
    look as they did drawn with ``setPen``/``setBrush`` and ``drawEllipse``/``drawRect``: the same
    pixels for the badge, the stop square within 1/255 on a few edge pixels."""
    from PySide6.QtCore import QPointF, QRectF
    from PySide6.QtGui import QBrush, QColor, QPainter, QPen

    from ui.state_icon import app_icon_pixmap

    def classic(state: str, size: int):  # noqa: ANN202 - the badge as the painter's own calls draw it
        pixmap = app_icon_pixmap(size)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        radius = size * 0.22
        centre = QPointF(size - radius - 1, size - radius - 1)
        painter.setPen(QPen(QColor("#ffffff"), max(1.0, size / 32)))
        painter.setBrush(QBrush(QColor(BADGE_COLOURS[state])))
        painter.drawEllipse(QRectF(centre.x() - radius, centre.y() - radius, 2 * radius, 2 * radius))
        if state == "stopped":
            painter.setPen(QColor("#ffffff"))
            painter.setBrush(QColor("#ffffff"))
            side = radius * 0.8
            painter.drawRect(QRectF(centre.x() - side / 2, centre.y() - side / 2, side, side))
        painter.end()
        return pixmap.toImage()

    for size in (16, 22, 32, 64, 128):
        for state in ("starting", "running", "scanning"):
            assert state_pixmap(state, size=size).toImage() == classic(state, size), (state, size)
        drawn, expected = state_pixmap("stopped", size=size).toImage(), classic("stopped", size)
        worst = max(abs(getattr(drawn.pixelColor(x, y), part)() - getattr(expected.pixelColor(x, y), part)())
                    for x in range(size) for y in range(size) for part in ("red", "green", "blue", "alpha"))
        assert worst <= 1, (size, worst)


def test_scan_end_on_the_socket_before_the_http_reply_does_not_leave_the_tray_scanning(
    qtbot, fake_server: FakeServerThread, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    fake_server.state.wizard_completed = True
    controller, _ = _controller(qtbot, fake_server, calls, opened, use_events=False, scan_poll_ms=3_600_000)
    qtbot.waitUntil(lambda: calls.pending == 0, timeout=5000)
    notices: list[tuple[str, str]] = []
    controller.notified.connect(lambda title, text: notices.append((title, text)))
    controller.scan_all_libraries()  # the POST is in flight on a worker thread…
    controller.handle_server_message("RefreshProgress", {"ItemId": "lib1", "Progress": "10"})
    controller.handle_server_message("ScheduledTaskEnded", {"Key": "RefreshLibrary", "Status": "Completed"})
    qtbot.waitUntil(lambda: fake_server.state.library_refreshes == 1 and calls.pending == 0, timeout=5000)
    assert controller.display_state == "running"  # …and its late reply does not start a second scan
    assert notices == [("Library scan finished", "No new media found.")]
