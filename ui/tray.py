"""The tray icon and its menu (or a status window where there is no tray), driving a hosted server."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import shiboken6
from PySide6.QtCore import QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon, QWidget

from ui.state_icon import state_icon
from ui.worker import BackgroundCalls

if TYPE_CHECKING:  # the windows are imported when first opened (~4 MiB less in an idle tray), and
    # made then: the status window too where there is a tray (~5 MiB: its widgets, fonts, style).
    # The HTTP client (httpx), the socket reader (websockets), the update check and the choosers
    # are imported when first used, once the server runs: up to then the tray imports only what its
    # icon and menu need, as all of it delays the server's start (app/desktop_main.py).
    from PySide6.QtWidgets import QFileDialog

    from ui.address_dialog import AddressDialog
    from ui.api_client import ServerClient
    from ui.events import ServerEvents
    from ui.folder_picker import FolderDialogFactory
    from ui.libraries import LibraryFoldersWindow
    from ui.logs import LogViewer
    from ui.settings import LoginItemLike, SettingsDialog
    from ui.status_window import StatusWindow
    from ui.updates import Release
    from ui.web_install import WebSourceChooser
    from ui.wizard import FirstRunWizard

log = logging.getLogger("reelroom.desktop")

SCAN_TASK_KEY = "RefreshLibrary"
NEW_MEDIA_CHECK_EVERY = 10  # scan polls between item-count checks while idle (polling without the socket)
SCAN_SETTLE_MS = 2500  # after the last library reports 100 %, wait this long for another one to start
SCAN_START_GRACE_S = 5.0  # an idle task list this soon after "Scan all" may predate the scan
_COUNT_WORDS = [
    ("MovieCount", "movie", "movies"),
    ("SeriesCount", "show", "shows"),
    ("EpisodeCount", "episode", "episodes"),
    ("AlbumCount", "album", "albums"),
    ("SongCount", "song", "songs"),
    ("MusicVideoCount", "music video", "music videos"),
    ("BookCount", "book", "books"),
    ("BoxSetCount", "collection", "collections"),
]


class ServerHostLike(Protocol):
    """What the tray needs from ``app.server_host.ServerHost``."""

    @property
    def state(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def base_url(self) -> str: ...
    def start(self) -> None: ...
    def stop(self, timeout: float = 10) -> None: ...
    def restart(self) -> None: ...
    def add_state_listener(self, callback: Callable[[str], None]) -> None: ...
    def desktop_api_key(self) -> str: ...


def describe_new_media(before: dict[str, int], after: dict[str, int]) -> str | None:
    """``"2 movies, 1 episode"`` for what ``/Items/Counts`` gained, or None if nothing new."""
    parts = []
    for key, one, many in _COUNT_WORDS:
        gained = int(after.get(key) or 0) - int(before.get(key) or 0)
        if gained > 0:
            parts.append(f"{gained} {one if gained == 1 else many}")
    if not parts:
        gained = int(after.get("ItemCount") or 0) - int(before.get("ItemCount") or 0)
        if gained > 0:
            parts.append(f"{gained} item{'s' if gained != 1 else ''}")
    return ", ".join(parts) if parts else None


class _StateRelay(QObject):
    """Carries host state changes from the server thread into the GUI thread."""

    changed = Signal(str)


class TrayController(QObject):
    """Owns the tray icon, its menu actions, the status window and the windows the menu opens."""

    notified = Signal(str, str)
    displayStateChanged = Signal(str)
    clientReady = Signal()
    quitRequested = Signal()

    def __init__(
        self,
        host: ServerHostLike,
        calls: BackgroundCalls,
        *,
        login_item: LoginItemLike | None = None,
        update_manifest_url: str | None = None,
        tray_available: bool | None = None,
        folder_dialog_factory: FolderDialogFactory | None = None,
        open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl,
        scan_poll_ms: int = 3000,
        log_poll_ms: int = 2000,
        icon_path: Path | None = None,
        current_version: str | None = None,
        client_factory: Callable[[str, str], ServerClient] | None = None,
        use_events: bool = True,
        web_source_chooser: WebSourceChooser | None = None,
    ) -> None:
        super().__init__()
        self.host = host
        self.calls = calls
        self.client: ServerClient | None = None
        self._login_item = login_item
        self._manifest_url = update_manifest_url
        self._factory = folder_dialog_factory or _system_folder_dialog
        self._open_url = open_url
        self._log_poll_ms = log_poll_ms
        self._icon_path = icon_path
        self._current_version = current_version  # (else the installed one's, read at the update check)
        self._client_factory = client_factory or _server_client
        self._choose_web_source = web_source_chooser or _choose_web_source
        self._installing_web = False
        self._host_state = host.state
        self._scanning = False
        self._scan_progress: float | None = None
        self._scan_task_seen = False  # the RefreshLibrary task ran during this scan (not only the watcher)
        self._task_running_seen = False
        self._scan_requested_at = 0.0
        self._scan_ended_at = 0.0
        self._library_progress: dict[str, float] = {}
        self._added_ids: set[str] = set()  # ItemsAdded from LibraryChanged not yet announced
        self._use_events = use_events
        self.events: ServerEvents | None = None
        self._counts: dict[str, int] | None = None
        self._polls = 0
        self._poll_busy = False
        self._asking_key = False
        self._quitting = False
        self.update: Release | None = None
        self.wizard: FirstRunWizard | None = None
        self.libraries_window: LibraryFoldersWindow | None = None
        self.log_viewer: LogViewer | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.address_dialog: AddressDialog | None = None

        self.actions = self._make_actions()
        self.menu = QMenu()
        for name in ("update", None, "open_browser", "show_address", None, "scan_all", "libraries", "logs",
                     "settings", "install_web", None, "start_stop", "restart", None, "quit"):
            if name is None:
                self.menu.addSeparator()
            else:
                self.menu.addAction(self.actions[name])

        available = QSystemTrayIcon.isSystemTrayAvailable() if tray_available is None else tray_available
        self.tray: QSystemTrayIcon | None = None
        if available:
            self.tray = QSystemTrayIcon(self)
            self.tray.setContextMenu(self.menu)
            self.tray.activated.connect(self._tray_activated)
        order = ["open_browser", "show_address", "scan_all", "libraries", "logs", "settings", "install_web",
                 "start_stop", "restart", "update", "quit"]
        self._status_actions = [self.actions[name] for name in order]
        self._status_window: StatusWindow | None = None  # made when first shown (status_window)
        self._shown_state: tuple[QIcon, str, str] | None = None  # its icon, state line and address
        self._last_notice: tuple[str, str, bool] | None = None  # its notification line

        self._relay = _StateRelay()
        self._relay.changed.connect(self._on_host_state)
        host.add_state_listener(self._relay.changed.emit)
        self._scan_timer = QTimer(self)
        self._scan_timer.setInterval(scan_poll_ms)
        self._scan_timer.timeout.connect(self.poll_scan)
        self._settle_timer = QTimer(self)
        self._settle_timer.setSingleShot(True)
        self._settle_timer.setInterval(SCAN_SETTLE_MS)
        self._settle_timer.timeout.connect(self._scan_may_have_ended)
        self._media_timer = QTimer(self)  # batches LibraryChanged messages outside a scan
        self._media_timer.setSingleShot(True)
        self._media_timer.setInterval(1000)
        self._media_timer.timeout.connect(lambda: self._announce(full=False))
        self._refresh()

    # -- setup ------------------------------------------------------------------------------------

    def _make_actions(self) -> dict[str, QAction]:
        specs: list[tuple[str, str, Callable[[], Any]]] = [
            ("update", "Reelroom update available", self._open_update),
            ("open_browser", "Open in browser", self.open_in_browser),
            ("show_address", "Show address && QR code", self.show_address),
            ("scan_all", "Scan all libraries", self.scan_all_libraries),
            ("libraries", "Libraries…", self.show_libraries),
            ("logs", "Logs…", self.show_logs),
            ("settings", "Settings…", self.show_settings),
            ("install_web", "Install web app…", self.install_web_app),
            ("start_stop", "Stop server", self.toggle_server),
            ("restart", "Restart", self.restart_server),
            ("quit", "Quit Reelroom", self.quit),
        ]
        actions = {}
        for name, text, slot in specs:
            action = QAction(text, self)
            action.setObjectName(name)
            action.triggered.connect(lambda _checked=False, fn=slot: fn())
            actions[name] = action
        actions["update"].setVisible(False)
        return actions

    def start(self) -> None:
        """Show the tray (or the status window) and start the server."""
        if self.tray is not None:
            self.tray.show()
        else:
            self.status_window.bring_to_front()
        if self._manifest_url:
            QTimer.singleShot(5000, self.check_for_update)
        if self.host.state in ("stopped", "error"):
            self.host.start()
        else:
            self._on_host_state(self.host.state)

    @property
    def uses_tray(self) -> bool:
        return self.tray is not None

    @property
    def status_window(self) -> StatusWindow:
        """The status window, made when first asked for: at start without a tray, else when the
        tray icon is clicked or a second launch asks for it. Made, it shows the state and the last
        notice as if it had been there from the start."""
        window = self._status_window
        if window is None or not shiboken6.isValid(window):  # (a test may have deleted it)
            from ui.status_window import StatusWindow

            window = StatusWindow(self._status_actions)
            window.closeRequested.connect(self._status_window_closed)
            if self._shown_state is not None:
                window.set_state(*self._shown_state)
            if self._last_notice is not None:
                window.show_notification(*self._last_notice)
            self._status_window = window
        return window

    def _made_status_window(self) -> StatusWindow | None:
        """The status window if it was made and still exists; never makes it."""
        window = self._status_window
        return window if window is not None and shiboken6.isValid(window) else None

    # -- state ------------------------------------------------------------------------------------

    @property
    def display_state(self) -> str:
        if self._host_state == "running" and self._scanning:
            return "scanning"
        return self._host_state if self._host_state in ("starting", "running", "error", "stopped") else "stopped"

    def state_text(self) -> str:
        state = self.display_state
        if state == "starting":
            return "Reelroom is starting…"
        if state == "running":
            return "Reelroom is running"
        if state == "scanning":
            progress = f" ({self._scan_progress:.0f}%)" if self._scan_progress is not None else ""
            return f"Reelroom is scanning your libraries{progress}"
        if state == "error":
            return f"Reelroom has a problem: {self.host.error or 'the server stopped unexpectedly'}"
        return "Reelroom is stopped"

    def _on_host_state(self, state: str) -> None:
        previous, self._host_state = self._host_state, state
        if state == "running":
            self._with_client(self._server_up)
        else:
            self._scan_timer.stop()
            self._settle_timer.stop()
            self._stop_events()
            self._scanning = False
            self._scan_progress = None
            self._library_progress.clear()
        if state == "error" and previous != "error":
            self.notify("Reelroom has a problem", self.host.error or "The server stopped unexpectedly.", error=True)
        self._refresh()

    def _refresh(self) -> None:
        state = self.display_state
        icon = state_icon(state, self._scan_progress, self._icon_path)
        text = self.state_text()
        running = self._host_state == "running"
        ready = running and self.client is not None
        for name in ("show_address", "scan_all", "libraries", "logs", "settings"):
            self.actions[name].setEnabled(ready)
        self.actions["install_web"].setEnabled(ready and not self._installing_web)
        self.actions["open_browser"].setEnabled(running)
        self.actions["restart"].setEnabled(self._host_state in ("running", "error"))
        up = self._host_state in ("running", "starting")
        self.actions["start_stop"].setText("Stop server" if up else "Start server")
        if self.tray is not None:
            self.tray.setIcon(icon)
            self.tray.setToolTip(text)
        address = self.host.base_url if running else ""
        self._shown_state = (icon, text, address)
        window = self._made_status_window()
        if window is not None:
            window.set_state(icon, text, address)
        self.displayStateChanged.emit(state)

    def _with_client(self, then: Callable[[], None]) -> None:
        """Run ``then`` once a client with the desktop API key exists (the key is fetched off-thread)."""
        if self.client is not None and self.client.base_url == self.host.base_url.rstrip("/"):
            then()
            return
        if self._asking_key:
            return
        self._asking_key = True

        def made(client: ServerClient) -> None:
            self._asking_key = False
            if self.client is not None:
                self.client.close()
            self.client = client
            self.clientReady.emit()
            self._refresh()
            if self._host_state == "running":
                then()

        def failed(error: Exception) -> None:
            self._asking_key = False
            self.notify("Reelroom has a problem", f"Could not get an API key for the desktop app: {error}", True)

        base_url, factory, host = self.host.base_url, self._client_factory, self.host
        self.calls.submit(lambda: factory(base_url, host.desktop_api_key()), on_result=made, on_error=failed,
                          context=self)

    def _server_up(self) -> None:
        self._scan_timer.start()
        client = self.client
        assert client is not None
        self._start_events(client)
        self.calls.submit(client.public_info, on_result=self._check_setup, on_error=self._report, context=self)
        self.calls.submit(client.item_counts, on_result=self._set_counts, on_error=lambda _e: None, context=self)

    def _check_setup(self, info: dict[str, Any]) -> None:
        if info.get("StartupWizardCompleted") is False:
            self.show_wizard()

    def _set_counts(self, counts: dict[str, int]) -> None:
        self._counts = counts

    # -- scanning and new media -------------------------------------------------------------------

    # The server's socket drives this: RefreshProgress (a library being scanned, with its percentage),
    # LibraryChanged (items added), ScheduledTaskEnded (a task finished or failed) and the periodic
    # ScheduledTasksInfo list. Without a socket (an old server, a proxy), /ScheduledTasks is polled.

    def _start_events(self, client: ServerClient) -> None:
        if not self._use_events or not client.api_key:
            return
        if self.events is not None and self.events.url.startswith(client.base_url.replace("http", "ws", 1)):
            return
        self._stop_events()
        from ui.events import ServerEvents

        events = ServerEvents(client.base_url, client.authorization, client.device_id, parent=self)
        events.received.connect(self.handle_server_message)
        events.start()
        self.events = events

    def _stop_events(self) -> None:
        if self.events is not None:
            self.events.received.disconnect(self.handle_server_message)
            self.events.stop()
            self.events = None

    @property
    def events_connected(self) -> bool:
        return self.events is not None and self.events.connected

    def handle_server_message(self, kind: str, data: Any) -> None:
        if self._host_state != "running":
            return
        if kind == "ScheduledTasksInfo" and isinstance(data, list):
            task = next((t for t in data if isinstance(t, dict) and t.get("Key") == SCAN_TASK_KEY), None)
            self._scan_task_state(task)
        elif kind == "RefreshProgress" and isinstance(data, dict):
            self._library_progressed(str(data.get("ItemId") or ""), data.get("Progress"))
        elif kind == "LibraryChanged" and isinstance(data, dict):
            added = [str(i) for i in data.get("ItemsAdded") or []]
            if added:
                self._added_ids.update(added)
                if not self._scanning:
                    self._media_timer.start()
        elif kind == "ScheduledTaskEnded" and isinstance(data, dict):
            self._task_ended(data)

    def _library_progressed(self, library_id: str, progress: Any) -> None:
        try:
            value = float(progress)
        except (TypeError, ValueError):
            return
        if value >= 100:
            self._library_progress.pop(library_id, None)
            if self._scanning and not self._library_progress:
                self._settle_timer.start()
            return
        self._library_progress[library_id] = value
        self._settle_timer.stop()
        if not self._scan_task_seen:
            self._scan_progress = value
        self._begin_scan()

    def _scan_task_state(self, task: dict[str, Any] | None) -> None:
        running = task is not None and task.get("State") in ("Running", "Cancelling")
        if running:
            assert task is not None
            progress = task.get("CurrentProgressPercentage")
            self._scan_progress = float(progress) if isinstance(progress, int | float) else self._scan_progress
            self._scan_task_seen = self._task_running_seen = True
            self._settle_timer.stop()
            self._begin_scan()
        elif self._scanning and self._scan_task_seen and not self._library_progress:
            just_asked = time.monotonic() - self._scan_requested_at < SCAN_START_GRACE_S
            if self._task_running_seen or not just_asked:
                self._end_scan()

    def _task_ended(self, result: dict[str, Any]) -> None:
        status, name = result.get("Status"), result.get("Name") or result.get("Key") or "A task"
        if status == "Failed":
            error = result.get("ErrorMessage") or "no reason given"
            self.notify("Reelroom task failed", f"{name} failed: {error}", error=True)
        if result.get("Key") == SCAN_TASK_KEY:
            if status == "Cancelled":
                self._scan_task_seen = False  # no "finished" notice for a cancelled scan
            if self._scanning:
                self._scan_task_seen = self._scan_task_seen or status == "Completed"
                self._end_scan()

    def _begin_scan(self) -> None:
        if not self._scanning:
            self._scanning = True
            if self._counts is None and self.client is not None:
                self.calls.submit(self.client.item_counts, on_result=self._set_counts,
                                  on_error=lambda _e: None, context=self)
        self._refresh()

    def _scan_may_have_ended(self) -> None:
        if self._scanning and not self._library_progress:
            self._end_scan()

    def _end_scan(self) -> None:
        """The scan is over: a full scan says so; a quiet one (the folder watcher) only tells new media."""
        self._settle_timer.stop()
        full = self._scan_task_seen
        self._scan_ended_at = time.monotonic()
        self._scanning = False
        self._scan_task_seen = self._task_running_seen = False
        self._scan_progress = None
        self._library_progress.clear()
        self._refresh()
        self._announce(full)

    def _announce(self, full: bool) -> None:
        """Say what a scan found: new media by kind from ``/Items/Counts`` when the server has it,
        else how many items ``LibraryChanged`` reported as added."""
        self._media_timer.stop()
        added, self._added_ids = len(self._added_ids), set()
        client = self.client
        if client is None or (not full and not added):
            return

        def counted(counts: dict[str, int] | None) -> None:
            new = describe_new_media(self._counts, counts) if self._counts is not None and counts else None
            if counts:
                self._counts = counts
            if not new and added:
                new = f"{added} new item{'s' if added != 1 else ''}"
            if full:
                self.notify("Library scan finished", f"New media: {new}." if new else "No new media found.")
            elif new:
                self.notify("New media in Reelroom", f"Added {new}.")

        self.calls.submit(client.item_counts, on_result=counted, on_error=lambda _e: counted(None), context=self)

    def poll_scan(self) -> None:
        """Without the socket: ask whether the library scan task runs; notify when it finishes or media appear."""
        if self.client is None or self._poll_busy or self._host_state != "running" or self.events_connected:
            return
        self._poll_busy = True
        self._polls += 1
        client = self.client
        check_counts = self._polls % NEW_MEDIA_CHECK_EVERY == 0 and not self._scanning

        def work() -> tuple[list[dict[str, Any]], dict[str, int] | None]:
            return client.scheduled_tasks(), client.item_counts() if check_counts else None

        def done(result: tuple[list[dict[str, Any]], dict[str, int] | None]) -> None:
            self._poll_busy = False
            tasks, counts = result
            was_scanning = self._scanning
            self._scan_task_state(next((t for t in tasks if t.get("Key") == SCAN_TASK_KEY), None))
            if counts is not None and not was_scanning and not self._scanning:
                self._compare_counts(counts)

        def failed(_error: Exception) -> None:
            self._poll_busy = False

        self.calls.submit(work, on_result=done, on_error=failed, context=self)

    def _compare_counts(self, counts: dict[str, int] | None) -> None:
        if counts is None:
            return
        new = describe_new_media(self._counts, counts) if self._counts is not None else None
        self._counts = counts
        if new:
            self.notify("New media in Reelroom", f"Added {new}.")

    # -- menu actions -----------------------------------------------------------------------------

    def open_in_browser(self) -> None:
        self._open_url(QUrl(self.host.base_url.rstrip("/") + "/web/"))

    def install_web_app(self) -> None:
        """Choose an archive or folder and have the server install it as its web app."""
        if self.client is None:
            return
        source = self._choose_web_source(None)
        if not source:
            return
        client = self.client
        self._installing_web = True
        self._refresh()
        self.notify("Installing the web app", f"From {source}…")

        def installed(status: dict[str, Any]) -> None:
            self._installing_web = False
            self._refresh()
            self.notify("Web app installed", "Open in browser shows it now.")

        def failed(error: Exception) -> None:
            self._installing_web = False
            self._refresh()
            self.notify("The web app was not installed", str(error), error=True)

        self.calls.submit(lambda: client.install_web_client(source), on_result=installed, on_error=failed,
                          context=self)

    def show_address(self) -> None:
        if self.client is None:
            return

        def show(info: dict[str, Any]) -> None:
            address = str(info.get("LocalAddress") or self.host.base_url)
            if self.address_dialog is not None:
                self.address_dialog.close()
            from ui.address_dialog import AddressDialog

            self.address_dialog = AddressDialog(address)
            self.address_dialog.show()
            self.address_dialog.raise_()

        self.calls.submit(self.client.public_info, on_result=show, on_error=self._report, context=self)

    def scan_all_libraries(self) -> None:
        if self.client is None:
            return

        asked = self._scan_requested_at = time.monotonic()

        def started(_: Any) -> None:
            if self._scan_ended_at >= asked:
                return  # the socket already reported this scan's end (it can beat the HTTP reply)
            self._scan_task_seen = True
            self._scan_progress = self._scan_progress or 0.0
            self._begin_scan()

        self.calls.submit(self.client.refresh_all_libraries, on_result=started, on_error=self._report, context=self)

    def show_libraries(self) -> None:
        if self.client is None:
            return
        if self.libraries_window is None:
            from ui.libraries import LibraryFoldersWindow

            self.libraries_window = LibraryFoldersWindow(self.client, self.calls, self._factory)
        else:
            self.libraries_window.reload()
        _bring_to_front(self.libraries_window)

    def show_logs(self) -> None:
        if self.client is None:
            return
        if self.log_viewer is None:
            from ui.logs import LogViewer

            self.log_viewer = LogViewer(self.client, self.calls, self._log_poll_ms, self._open_url)
        _bring_to_front(self.log_viewer)

    def show_settings(self) -> None:
        if self.client is None:
            return
        if self.settings_dialog is None or not self.settings_dialog.isVisible():
            from ui.settings import SettingsDialog

            self.settings_dialog = SettingsDialog(self.client, self.calls, self._login_item)
            self.settings_dialog.saved.connect(self._settings_saved)
        _bring_to_front(self.settings_dialog)

    def _settings_saved(self, port_changed: bool) -> None:
        if port_changed:
            self.notify("Settings saved", "The new port is used from the next start; choose Restart to use it now.")

    def show_wizard(self) -> None:
        if self.client is None:
            return
        if self.wizard is None:
            from ui.wizard import FirstRunWizard

            self.wizard = FirstRunWizard(self.client, self.calls, self._factory)
            self.wizard.setupCompleted.connect(self._setup_completed)
        _bring_to_front(self.wizard)

    def _setup_completed(self) -> None:
        self.notify("Reelroom is set up", "Your libraries are being scanned in the background.")
        if self.wizard is not None:
            self.wizard.deleteLater()
        self.wizard = None

    def show_main_window(self) -> None:
        """What a second launch asks for: the setup wizard if it is open, else the status window."""
        if self.wizard is not None and self.wizard.isVisible():
            _bring_to_front(self.wizard)
        else:
            self.status_window.bring_to_front()

    def toggle_server(self) -> None:
        if self._host_state in ("running", "starting"):
            host = self.host
            self.calls.submit(lambda: host.stop(timeout=10), on_error=self._report, context=self)
        else:
            self.calls.submit(self.host.start, on_error=self._report, context=self)

    def restart_server(self) -> None:
        self.calls.submit(self.host.restart, on_error=self._report, context=self)

    def quit(self) -> None:
        """Stop the server (off the GUI thread), then ask the application to quit."""
        if self._quitting:
            return
        self._quitting = True
        self._scan_timer.stop()
        self._settle_timer.stop()
        self._stop_events()
        for name in ("start_stop", "restart", "quit"):
            self.actions[name].setEnabled(False)
        for window in (self.wizard, self.libraries_window, self.log_viewer, self.settings_dialog,
                       self.address_dialog):
            if window is not None:
                window.close()
        if self._host_state in ("running", "starting"):
            host = self.host
            self.calls.submit(lambda: host.stop(timeout=10), on_result=lambda _: self._finish_quit(),
                              on_error=lambda _e: self._finish_quit(), context=self)
        else:
            self._finish_quit()

    def _finish_quit(self) -> None:
        if self.tray is not None:
            self.tray.hide()
        window = self._made_status_window()
        if window is not None:
            window.hide()
        if self.client is not None:
            self.client.close()
        self.quitRequested.emit()

    def _status_window_closed(self) -> None:
        if self.tray is None and not self._quitting:
            self.quit()

    def _tray_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.show_main_window()

    # -- updates ----------------------------------------------------------------------------------

    def check_for_update(self) -> None:
        """Read the update manifest off the GUI thread; show a menu item and a notice if newer."""
        url = self._manifest_url
        if not url:
            return
        from ui.api_client import reelroom_version
        from ui.updates import available_update

        version = self._current_version or reelroom_version()

        def found(release: Release | None) -> None:
            if release is None:
                return
            self.update = release
            action = self.actions["update"]
            action.setText(f"Reelroom {release.version} is available")
            action.setVisible(True)
            self.notify("Update available", f"Reelroom {release.version} is available.")

        self.calls.submit(lambda: available_update(url, version), on_result=found,
                          on_error=lambda e: log.info("Update check failed: %s", e), context=self)

    def _open_update(self) -> None:
        if self.update is not None and self.update.source_url:
            self._open_url(QUrl(self.update.source_url))

    # -- notices ----------------------------------------------------------------------------------

    def notify(self, title: str, text: str, error: bool = False) -> None:
        """A desktop notification from the tray, or a line in the status window without a tray."""
        log.log(logging.WARNING if error else logging.INFO, "%s: %s", title, text)
        if self.tray is not None and self.tray.isVisible() and QSystemTrayIcon.supportsMessages():
            kind = QSystemTrayIcon.MessageIcon.Critical if error else QSystemTrayIcon.MessageIcon.Information
            self.tray.showMessage(title, text, kind, 8000)
        self._last_notice = (title, text, error)
        window = self._made_status_window()
        if window is not None:
            window.show_notification(title, text, error)
        self.notified.emit(title, text)

    def _report(self, error: Exception) -> None:
        self.notify("Reelroom could not do that", str(error), error=True)


def _server_client(base_url: str, api_key: str) -> ServerClient:
    from ui.api_client import ServerClient

    return ServerClient(base_url, api_key)


def _system_folder_dialog(parent: QWidget | None) -> QFileDialog:
    from ui.folder_picker import system_folder_dialog

    return system_folder_dialog(parent)


def _choose_web_source(parent: QWidget | None) -> str | None:
    from ui.web_install import choose_web_source

    return choose_web_source(parent)


def _bring_to_front(window: QWidget) -> None:
    window.show()
    window.raise_()
    window.activateWindow()
