"""The desktop UI against a real Reelroom server hosted by ``app.server_host.ServerHost``.

No fake server here: the wizard, the library window, the folder picker, the log viewer and every
tray menu action go over HTTP (and the WebSocket) to the real thing, and the tests check what
changed on the server.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QFileDialog, QWidget, QWizard
from pytestqt.exceptions import TimeoutError as WaitTimeout

from app.autostart import LoginItem
from app.server_host import ServerHost
from tests.mediagen import make_video
from ui.api_client import ServerClient
from ui.logs import LogViewer
from ui.tray import TrayController
from ui.wizard import PAGE_FINISH, PAGE_LIBRARIES, PAGE_METADATA, PAGE_REMOTE, PAGE_USER, FirstRunWizard
from ui.worker import BackgroundCalls


def _non_native(parent: QWidget | None) -> QFileDialog:
    dialog = QFileDialog(parent, "Choose a media folder")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    return dialog


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def host(tmp_path: Path) -> Iterator[ServerHost]:
    host = ServerHost(tmp_path / "data", port=0, host="127.0.0.1", enable_lan=False)
    host.start()
    assert host.wait_until_running(60), host.error
    yield host
    host.stop()


@pytest.fixture
def desktop_client(host: ServerHost) -> Iterator[ServerClient]:
    client = ServerClient(host.base_url, host.desktop_api_key(), device="pytest-desktop", timeout=15)
    yield client
    client.close()


def _allow(client: ServerClient, *roots: Path) -> None:
    client.set_named_configuration("filesystem", {"AllowedRoots": [str(r) for r in roots]})


def _next_to(qtbot, wizard: FirstRunWizard, page_id: int) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: wizard.currentPage().isComplete(), timeout=10_000)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == page_id, timeout=10_000)


def test_wizard_sets_up_a_real_server(
    qtbot, host: ServerHost, desktop_client: ServerClient, calls: BackgroundCalls, tmp_path: Path  # noqa: ANN001
) -> None:
    movies = tmp_path / "media" / "Movies"
    movies.mkdir(parents=True)
    _allow(desktop_client, tmp_path / "media")
    assert desktop_client.public_info()["StartupWizardCompleted"] is False

    wizard = FirstRunWizard(desktop_client, calls, folder_dialog_factory=_non_native)
    qtbot.addWidget(wizard)
    wizard.show()

    page = wizard.language_page
    qtbot.waitUntil(lambda: page.loaded, timeout=10_000)
    assert page.language_combo.count() > 5
    page.language_combo.setCurrentIndex(page.language_combo.findData("de"))
    _next_to(qtbot, wizard, PAGE_USER)
    assert desktop_client.startup_configuration()["UICulture"] == "de"

    user_page = wizard.user_page
    qtbot.waitUntil(lambda: user_page.loaded, timeout=10_000)
    user_page.name_edit.setText("alice")
    user_page.password_edit.setText("s3cret")
    user_page.confirm_edit.setText("typo")
    wizard.next()
    assert user_page.message.text() == "The passwords do not match."
    user_page.confirm_edit.setText("s3cret")
    _next_to(qtbot, wizard, PAGE_LIBRARIES)

    lib_page = wizard.libraries_page
    qtbot.waitUntil(lambda: lib_page.loaded, timeout=10_000)
    dialog = lib_page.open_add_library()
    dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("movies"))
    dialog.add_folder_path(str(tmp_path / "media" / "nowhere"))
    qtbot.waitUntil(lambda: dialog.message.isVisible() and dialog.message.text() != "", timeout=10_000)
    assert dialog.folders() == []
    # The folder picker: a real (non-native) QFileDialog, driven like a person would.
    dialog.choose_folder()
    picker = dialog.findChild(QFileDialog)
    assert picker is not None and picker.testOption(QFileDialog.Option.DontUseNativeDialog)
    assert picker.fileMode() == QFileDialog.FileMode.Directory
    picker.setDirectory(str(movies.parent))
    picker.selectFile(str(movies))
    picker.accept()
    qtbot.waitUntil(lambda: dialog.folders() == [str(movies)], timeout=10_000)
    with qtbot.waitSignal(dialog.libraryAdded, timeout=10_000):
        dialog.save()
    qtbot.waitUntil(lambda: lib_page.library_list.count() == 1, timeout=10_000)
    assert "Movies" in lib_page.library_list.item(0).text()
    _next_to(qtbot, wizard, PAGE_METADATA)

    meta = wizard.metadata_page
    qtbot.waitUntil(lambda: meta.loaded, timeout=10_000)
    meta.language_combo.setCurrentIndex(meta.language_combo.findData("fr"))
    meta.country_combo.setCurrentIndex(meta.country_combo.findData("FR"))
    _next_to(qtbot, wizard, PAGE_REMOTE)
    wizard.remote_page.remote_check.setChecked(False)
    _next_to(qtbot, wizard, PAGE_FINISH)
    with qtbot.waitSignal(wizard.setupCompleted, timeout=10_000):
        wizard.button(QWizard.WizardButton.FinishButton).click()

    # The server's state changed: setup is complete, the user exists and can sign in, the library exists.
    with httpx.Client(base_url=host.base_url, timeout=15) as http:
        public = http.get("/System/Info/Public").json()
        assert public["StartupWizardCompleted"] is True
        key = {"Authorization": f'MediaBrowser Client="t", Device="t", DeviceId="t", Version="1", '
                                f'Token="{host.desktop_api_key()}"'}
        users = http.get("/Users", headers=key).json()
        assert [(u["Name"], u["Policy"]["IsAdministrator"]) for u in users] == [("alice", True)]
        signin = http.post("/Users/AuthenticateByName", json={"Username": "alice", "Pw": "s3cret"},
                           headers={"Authorization": 'MediaBrowser Client="t", Device="t", DeviceId="t2", '
                                                     'Version="1"'})
        assert signin.status_code == 200, signin.text
        folders = http.get("/Library/VirtualFolders", headers=key).json()
        assert [(f["Name"], f["CollectionType"], f["Locations"]) for f in folders] == [
            ("Movies", "movies", [str(movies)])]
        config = http.get("/System/Configuration", headers=key).json()
        assert (config["UICulture"], config["PreferredMetadataLanguage"], config["MetadataCountryCode"]) == (
            "de", "fr", "FR")
        network = http.get("/System/Configuration/network", headers=key).json()
        assert network["EnableRemoteAccess"] is False


def test_log_viewer_filters_and_searches_real_server_logs(
    qtbot, host: ServerHost, desktop_client: ServerClient, calls: BackgroundCalls  # noqa: ANN001
) -> None:
    # Real lines: the server's own start-up lines, plus a warning and an error written through its
    # logging set-up (the same handler and file every server module logs to).
    logging.getLogger("reelroom.server").warning("Disk space is getting low on /media")
    logging.getLogger("reelroom.scanner").error("Could not read /media/broken.mkv")
    files = desktop_client.log_files()
    assert files and files[0]["Name"].endswith(".log")
    data, partial = desktop_client.log_bytes(files[0]["Name"], 10)
    assert partial, "GET /System/Logs/Log answers a Range request with 206"
    whole, _ = desktop_client.log_bytes(files[0]["Name"])
    assert whole[10:10 + len(data)] == data[:len(whole) - 10]

    opened: list[QUrl] = []
    viewer = LogViewer(desktop_client, calls, poll_interval_ms=100, open_url=lambda u: opened.append(u) or True)
    qtbot.addWidget(viewer)
    viewer.show()
    qtbot.waitUntil(lambda: "Could not read /media/broken.mkv" in viewer.visible_text(), timeout=10_000)
    assert viewer.current_file == files[0]["Name"]
    assert "Reelroom is ready on port" in viewer.visible_text()
    assert [viewer.file_list.item(i).text() for i in range(viewer.file_list.count())] == [
        f["Name"] for f in files]

    viewer.set_minimum_level(2)  # warnings and errors
    text = viewer.visible_text()
    assert "Disk space is getting low" in text and "broken.mkv" in text
    assert "Reelroom is ready on port" not in text
    assert all("[WRN]" in line or "[ERR]" in line for line in text.splitlines() if line[:4].isdigit())
    viewer.set_minimum_level(3)
    assert "broken.mkv" in viewer.visible_text() and "Disk space" not in viewer.visible_text()

    viewer.set_minimum_level(1)
    viewer.search_edit.setText("/media")
    assert viewer.highlight_count() == 2
    assert viewer.match_label.text() == "2 matches"
    assert viewer.find_next()
    assert "/media" in viewer.text.textCursor().block().text()

    # Live tail: a new line appears without reopening, fetched with a Range request.
    offset = viewer._tail.offset if viewer._tail else 0
    logging.getLogger("reelroom.server").warning("Another warning for the tail")
    qtbot.waitUntil(lambda: "Another warning for the tail" in viewer.visible_text(), timeout=10_000)
    assert viewer._tail is not None and viewer._tail.offset > offset

    # Open the log folder (it is on this computer), and open another file /System/Logs lists.
    viewer.open_log_folder()
    qtbot.waitUntil(lambda: bool(opened), timeout=10_000)
    assert Path(opened[0].toLocalFile()) == host.options.data_dir / "log"
    old = host.options.data_dir / "log" / "reelroom.log.1"
    old.write_text("2026-01-01 10:00:00.000 [INF] reelroom.server: Yesterday's start\n", encoding="utf-8")
    os.utime(old, (time.time() - 86400, time.time() - 86400))  # a rotated log is older
    qtbot.waitUntil(lambda: viewer.file_list.count() == 2, timeout=10_000)
    viewer.open_file("reelroom.log.1")
    qtbot.waitUntil(lambda: "Yesterday's start" in viewer.visible_text(), timeout=10_000)
    assert "Another warning for the tail" not in viewer.visible_text()
    assert not viewer.follow_check.isChecked()
    viewer.close()


@pytest.fixture
def opened() -> list[QUrl]:
    return []


def _controller(qtbot, host: ServerHost, calls: BackgroundCalls, opened: list[QUrl], **kwargs) -> TrayController:  # noqa: ANN001, ANN003
    controller = TrayController(host, calls, tray_available=True, scan_poll_ms=500, log_poll_ms=100,
                                folder_dialog_factory=_non_native,
                                open_url=lambda url: opened.append(url) or True, **kwargs)
    qtbot.addWidget(controller.status_window)
    return controller


def test_every_tray_action_against_a_real_server(
    qtbot, tmp_path: Path, calls: BackgroundCalls, opened: list[QUrl], monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    media = tmp_path / "media"
    movies = media / "Movies"
    make_video(movies / "Big Trip (2001)" / "Big Trip (2001).mkv", seconds=1, acodec=None)
    # LAN discovery on, but only on 127.0.0.1 and an ephemeral port; no zeroconf.
    host = ServerHost(tmp_path / "data", port=None, host="127.0.0.1", enable_lan=True, enable_zeroconf=False,
                      discovery_port=0)
    (tmp_path / "data" / "config").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "config" / "network.json").write_text(f'{{"InternalHttpPort": {_free_port()}}}')
    host.start()
    assert host.wait_until_running(60), host.error
    try:
        with ServerClient(host.base_url, host.desktop_api_key(), timeout=15) as setup:
            _allow(setup, media)
            setup.set_startup_user("bob", "pw")
            setup.complete_startup()
        login_item = LoginItem(["/opt/reelroom/reelroom"], platform="linux")
        controller = _controller(qtbot, host, calls, opened, login_item=login_item)
        states: list[str] = []
        controller.displayStateChanged.connect(states.append)
        notices: list[tuple[str, str]] = []
        controller.notified.connect(lambda title, text: notices.append((title, text)))
        controller.start()
        qtbot.waitUntil(lambda: controller.client is not None and controller.display_state == "running",
                        timeout=10_000)
        qtbot.waitUntil(lambda: controller.events_connected, timeout=10_000)
        assert controller.events is not None and "api_key" not in controller.events.url.lower()  # key in a header
        assert controller.tray is not None and controller.tray.toolTip() == "Reelroom is running"
        assert controller.wizard is None

        controller.actions["open_browser"].trigger()
        assert opened[-1].toString() == host.base_url + "/web/"
        assert "Add the web app" in httpx.get(opened[-1].toString()).text  # no web app installed here

        controller.actions["show_address"].trigger()
        qtbot.waitUntil(lambda: controller.address_dialog is not None, timeout=10_000)
        assert controller.address_dialog is not None
        assert controller.address_dialog.address.endswith(f":{host.port}")
        assert not controller.address_dialog.qr_label.pixmap().isNull()

        # Libraries…: add one through the window and its non-native folder picker.
        controller.actions["libraries"].trigger()
        window = controller.libraries_window
        assert window is not None and window.isVisible()
        qtbot.waitUntil(lambda: window.loaded, timeout=10_000)
        dialog = window.open_add_library()
        dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("movies"))
        dialog.choose_folder()
        picker = dialog.findChild(QFileDialog)
        assert picker is not None
        picker.setDirectory(str(media))
        picker.selectFile(str(movies))
        picker.accept()
        qtbot.waitUntil(lambda: dialog.folders() == [str(movies)], timeout=10_000)
        with qtbot.waitSignal(window.librariesChanged, timeout=10_000):
            dialog.save()
        qtbot.waitUntil(lambda: window.tree.topLevelItemCount() == 1, timeout=10_000)

        # Adding the library scans it; "Scan all libraries" scans again. Both end in a notice that the
        # socket's RefreshProgress / ScheduledTasksInfo / ScheduledTaskEnded / LibraryChanged drive.
        qtbot.waitUntil(lambda: any(t == "Library scan finished" for t, _ in notices), timeout=30_000)
        assert ("Library scan finished", "New media: 1 movie.") in notices
        assert "scanning" in states
        notices.clear()
        controller.actions["scan_all"].trigger()
        qtbot.waitUntil(lambda: any(t == "Library scan finished" for t, _ in notices), timeout=30_000)
        assert notices == [("Library scan finished", "No new media found.")]
        assert controller.display_state == "running"

        # New media arriving outside a full scan: the server's folder watcher scans the new file and
        # announces it with LibraryChanged, which becomes a "new media" notice.
        notices.clear()
        make_video(movies / "Small Boat (2004)" / "Small Boat (2004).mkv", seconds=1, acodec=None)
        qtbot.waitUntil(lambda: ("New media in Reelroom", "Added 1 movie.") in notices, timeout=30_000)

        # A failing task becomes an error notice (ScheduledTaskEnded with Status "Failed").
        notices.clear()
        controller.handle_server_message("ScheduledTaskEnded", {
            "Key": "CleanTranscodeFolder", "Name": "Clean transcode folder", "Status": "Failed",
            "ErrorMessage": "Permission denied"})
        assert notices == [("Reelroom task failed", "Clean transcode folder failed: Permission denied")]

        controller.actions["logs"].trigger()
        viewer = controller.log_viewer
        assert viewer is not None and viewer.isVisible()
        qtbot.waitUntil(lambda: "Reelroom is ready on port" in viewer.visible_text(), timeout=10_000)

        controller.actions["settings"].trigger()
        settings = controller.settings_dialog
        assert settings is not None
        qtbot.waitUntil(lambda: settings.loaded, timeout=10_000)
        new_port = _free_port()
        settings.name_edit.setText("Living room")
        settings.port_spin.setValue(new_port)
        settings.hwaccel_combo.setCurrentIndex(settings.hwaccel_combo.findData("vaapi"))
        settings.discovery_check.setChecked(False)
        settings.login_check.setChecked(True)
        assert host._runner is not None and host._runner.ctx is not None
        server_ctx = host._runner.ctx
        assert server_ctx.lan.running
        with qtbot.waitSignal(controller.notified, timeout=10_000) as notice:
            settings.save()
        assert notice.args[0] == "Settings saved"
        qtbot.waitUntil(lambda: not server_ctx.lan.running, timeout=10_000)  # LAN off at once, no restart
        assert host._runner.ctx is server_ctx
        with ServerClient(host.base_url, host.desktop_api_key()) as check:
            assert check.system_configuration()["ServerName"] == "Living room"
            assert check.named_configuration("encoding")["HardwareAccelerationType"] == "vaapi"
            network = check.named_configuration("network")
            assert (network["InternalHttpPort"], network["AutoDiscovery"]) == (new_port, False)
        assert (tmp_path / "xdg" / "autostart" / "reelroom.desktop").is_file()

        # Restart: the server comes back on the port saved in Settings. Stopping uvicorn and starting a
        # new context happen off the GUI thread: the menu action returns before any of it is done.
        controller.actions["restart"].trigger()
        assert host.port != new_port
        qtbot.waitUntil(lambda: host.port == new_port and controller.display_state == "running", timeout=30_000)
        qtbot.waitUntil(lambda: controller.client is not None and controller.client.base_url.endswith(
            f":{new_port}"), timeout=10_000)
        qtbot.waitUntil(lambda: controller.events_connected, timeout=10_000)  # the socket follows the new port
        assert httpx.get(f"http://127.0.0.1:{new_port}/System/Info/Public").json()["ServerName"] == "Living room"

        controller.actions["start_stop"].trigger()
        assert host.state == "running"  # stopping goes on in the background
        qtbot.waitUntil(lambda: controller.display_state == "stopped", timeout=30_000)
        assert controller.actions["start_stop"].text() == "Start server"
        assert not controller.actions["scan_all"].isEnabled()
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{new_port}/System/Info/Public")
        controller.actions["start_stop"].trigger()
        assert host.state != "running"  # starting goes on in the background
        qtbot.waitUntil(lambda: controller.display_state == "running", timeout=30_000)

        with qtbot.waitSignal(controller.quitRequested, timeout=30_000):
            controller.actions["quit"].trigger()
        assert host.state == "stopped"
        assert not window.isVisible()
    finally:
        host.stop()


def test_dead_server_thread_shows_error_and_restart_recovers(
    qtbot, tmp_path: Path, calls: BackgroundCalls, opened: list[QUrl]  # noqa: ANN001
) -> None:
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    port = blocker.getsockname()[1]
    host = ServerHost(tmp_path / "data", port=port, host="127.0.0.1", enable_lan=False)
    try:
        controller = _controller(qtbot, host, calls, opened)
        with qtbot.waitSignal(controller.notified, timeout=20_000) as notice:
            controller.start()
        assert notice.args[0] == "Reelroom has a problem"
        assert "Address already in use" in notice.args[1] or "in use" in notice.args[1]
        qtbot.waitUntil(lambda: controller.display_state == "error", timeout=10_000)
        assert controller.tray is not None and controller.tray.toolTip().startswith("Reelroom has a problem:")
        assert controller.actions["restart"].isEnabled()
        assert controller.actions["start_stop"].text() == "Start server"
        assert not controller.actions["scan_all"].isEnabled()

        blocker.close()  # whatever held the port is gone: the offered restart now works
        controller.actions["restart"].trigger()
        qtbot.waitUntil(lambda: controller.display_state == "running" and controller.client is not None,
                        timeout=30_000)
        assert httpx.get(f"http://127.0.0.1:{port}/System/Info/Public").status_code == 200
        with qtbot.waitSignal(controller.quitRequested, timeout=30_000):
            controller.quit()
        assert host.state == "stopped"
    finally:
        blocker.close()
        host.stop()


def test_library_window_manages_a_real_servers_libraries(
    qtbot, host: ServerHost, desktop_client: ServerClient, calls: BackgroundCalls, tmp_path: Path  # noqa: ANN001
) -> None:
    from PySide6.QtWidgets import QInputDialog, QMessageBox

    from ui.libraries import LibraryFoldersWindow

    media = tmp_path / "media"
    shows, more = media / "Shows", media / "More shows"
    make_video(shows / "Sea Tales" / "Season 01" / "Sea Tales S01E01.mkv", seconds=1, acodec=None)
    more.mkdir(parents=True)
    _allow(desktop_client, media)
    window = LibraryFoldersWindow(desktop_client, calls, folder_dialog_factory=_non_native)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.loaded, timeout=10_000)
    assert window.tree.topLevelItemCount() == 0

    dialog = window.open_add_library()
    dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("tvshows"))
    dialog.add_folder_path(str(shows))
    qtbot.waitUntil(lambda: dialog.folders() == [str(shows)], timeout=10_000)
    with qtbot.waitSignal(window.librariesChanged, timeout=10_000):
        dialog.save()

    def server_folders() -> list[tuple[str, list[str]]]:  # a blocking call: fine in a test, never in the UI
        return [(f["Name"], f["Locations"]) for f in desktop_client.virtual_folders()]

    qtbot.waitUntil(lambda: window.tree.topLevelItemCount() == 1, timeout=10_000)
    assert server_folders() == [("Shows", [str(shows)])]

    window.select_library("Shows")
    window.add_folder_button.click()
    picker = window.findChild(QFileDialog)
    assert picker is not None and picker.testOption(QFileDialog.Option.DontUseNativeDialog)
    picker.setDirectory(str(media))
    picker.selectFile(str(more))
    picker.accept()
    qtbot.waitUntil(lambda: window.message.text() == f"Added {more} to Shows.", timeout=10_000)
    assert [(name, sorted(paths)) for name, paths in server_folders()] == [("Shows", sorted([str(shows), str(more)]))]
    qtbot.waitUntil(lambda: window.tree.topLevelItem(0).childCount() == 2, timeout=10_000)

    row = window.tree.topLevelItem(0)
    row.setSelected(False)
    next(row.child(i) for i in range(row.childCount()) if row.child(i).text(0) == str(more)).setSelected(True)
    window.remove_folder_button.click()
    qtbot.waitUntil(lambda: server_folders() == [("Shows", [str(shows)])], timeout=10_000)
    # The window reloads its list after the removal; a click while the tree is rebuilt finds
    # no selection (the scan button is disabled then), so wait for the rebuilt row first.
    qtbot.waitUntil(lambda: window.tree.topLevelItemCount() == 1 and window.tree.topLevelItem(0).childCount() == 1,
                    timeout=10_000)

    window.select_library("Shows")
    qtbot.waitUntil(lambda: window.selected_library() == "Shows" and window.scan_button.isEnabled(), timeout=10_000)
    window.scan_button.click()
    try:
        qtbot.waitUntil(lambda: window.message.text() == "Scanning Shows…", timeout=10_000)
    except WaitTimeout as exc:  # say what the window shows instead
        raise AssertionError(f"the window says {window.message.text()!r}") from exc

    window.rename_button.click()
    rename = window.findChild(QInputDialog)
    assert rename is not None
    rename.setTextValue("TV")
    rename.accept()
    qtbot.waitUntil(lambda: server_folders() == [("TV", [str(shows)])], timeout=10_000)
    qtbot.waitUntil(lambda: window.tree.topLevelItemCount() == 1 and window.tree.topLevelItem(0).text(0) == "TV",
                    timeout=10_000)

    window.select_library("TV")
    window.remove_library_button.click()
    box = window.findChild(QMessageBox)
    assert box is not None and "TV" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: server_folders() == [], timeout=10_000)
    qtbot.waitUntil(lambda: window.tree.topLevelItemCount() == 0, timeout=10_000)
    assert shows.is_dir(), "removing a library leaves the files alone"


def test_settings_edit_the_allowed_library_folders(
    qtbot, host: ServerHost, desktop_client: ServerClient, calls: BackgroundCalls, tmp_path: Path  # noqa: ANN001
) -> None:
    from ui.settings import SettingsDialog

    inside, outside = tmp_path / "media", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    dialog = SettingsDialog(desktop_client, calls, folder_picker=lambda: str(inside))
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.loaded, timeout=10_000)
    assert not dialog.restrict_check.isChecked() and dialog.allowed_roots() == []  # any folder, by default
    dialog.restrict_check.setChecked(True)
    dialog.save()  # restricting to nothing is refused in the dialog
    assert "at least one folder" in dialog.message.text()
    dialog.add_root_button.click()
    assert dialog.allowed_roots() == [str(inside)]
    with qtbot.waitSignal(dialog.saved, timeout=10_000):
        dialog.save()
    assert desktop_client.named_configuration("filesystem") == {"RestrictToAllowedRoots": True,
                                                                 "AllowedRoots": [str(inside)]}
    assert desktop_client.folder_exists(str(inside))
    with pytest.raises(Exception, match="outside the allowed folders"):
        desktop_client.add_virtual_folder("Elsewhere", None, [str(outside)])

    again = SettingsDialog(desktop_client, calls)  # shown as saved; untick to lift the restriction
    qtbot.addWidget(again)
    qtbot.waitUntil(lambda: again.loaded, timeout=10_000)
    assert again.restrict_check.isChecked() and again.allowed_roots() == [str(inside)]
    again.roots_list.setCurrentRow(0)
    again.remove_root_button.click()
    again.restrict_check.setChecked(False)
    with qtbot.waitSignal(again.saved, timeout=10_000):
        again.save()
    desktop_client.add_virtual_folder("Elsewhere", None, [str(outside)])
    assert any(f["Name"] == "Elsewhere" for f in desktop_client.virtual_folders())
