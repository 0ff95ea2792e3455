"""Settings: server name, port, hardware acceleration, start at login, LAN discovery, the TMDb key
and the opt-in list of folders libraries may use (for locked-down installs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ui.api_client import ServerClient
from ui.libraries import MessageLabel
from ui.tmdb_key import TmdbKeyField
from ui.worker import BackgroundCalls

HARDWARE_ACCELERATION: list[tuple[str, str]] = [
    ("None (software)", "none"),
    ("NVIDIA NVENC", "nvenc"),
    ("Intel Quick Sync (QSV)", "qsv"),
    ("Video Acceleration API (VA-API)", "vaapi"),
    ("AMD AMF", "amf"),
    ("Apple VideoToolbox", "videotoolbox"),
    ("Video4Linux2 (V4L2)", "v4l2m2m"),
    ("Rockchip MPP (RKMPP)", "rkmpp"),
]


class LoginItemLike(Protocol):
    def enable(self) -> None: ...
    def disable(self) -> None: ...
    def is_enabled(self) -> bool: ...


class SettingsDialog(QDialog):
    """Reads ``/System/Configuration`` plus its ``encoding``, ``network`` and ``filesystem`` parts,
    writes back changes."""

    saved = Signal(bool)  # True when the port changed (takes effect after a restart)

    def __init__(
        self,
        client: ServerClient,
        calls: BackgroundCalls,
        login_item: LoginItemLike | None = None,
        parent: QWidget | None = None,
        folder_picker: Callable[[], str] | None = None,
    ) -> None:
        super().__init__(parent)
        # () -> a chosen folder path or "" (a hook so tests need no native dialog)
        self._pick_folder = folder_picker or (lambda: QFileDialog.getExistingDirectory(self, "Allow a folder"))
        self.setWindowTitle("Settings — Reelroom")
        self._client = client
        self._calls = calls
        self._login_item = login_item
        self._system: dict[str, Any] = {}
        self._encoding: dict[str, Any] = {}
        self._network: dict[str, Any] = {}
        self._filesystem: dict[str, Any] = {}
        self.loaded = False
        self._saving = False

        self.name_edit = QLineEdit()
        self.port_spin = QSpinBox()
        self.port_spin.setRange(1, 65535)
        self.hwaccel_combo = QComboBox()
        for label, value in HARDWARE_ACCELERATION:
            self.hwaccel_combo.addItem(label, value)
        self.login_check = QCheckBox("Start Reelroom when I log in")
        self.login_check.setVisible(login_item is not None)
        self.discovery_check = QCheckBox("Let apps on my network find this server")
        self.restrict_check = QCheckBox("Only use folders inside these folders")
        self.restrict_check.setToolTip("For locked-down installs. Otherwise, like Jellyfin, any existing folder "
                                       "may be a library folder.")
        self.roots_list = QListWidget()
        self.roots_list.setMaximumHeight(110)
        self.add_root_button = QPushButton("Add…")
        self.remove_root_button = QPushButton("Remove")
        self.add_root_button.clicked.connect(self._add_root)
        self.remove_root_button.clicked.connect(self._remove_root)
        self.restrict_check.toggled.connect(self._update_roots_state)
        self.message = MessageLabel()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("Server name:", self.name_edit)
        form.addRow("Port:", self.port_spin)
        form.addRow("Hardware acceleration:", self.hwaccel_combo)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.discovery_check)
        layout.addWidget(self.login_check)
        folders = QGroupBox("Library folders")
        folders_layout = QVBoxLayout(folders)
        hint = QLabel("Any folder on this computer can hold a library. Restrict that only if others "
                      "administer this server.")
        hint.setWordWrap(True)
        folders_layout.addWidget(hint)
        folders_layout.addWidget(self.restrict_check)
        folders_layout.addWidget(self.roots_list)
        row = QHBoxLayout()
        row.addWidget(self.add_root_button)
        row.addWidget(self.remove_root_button)
        row.addStretch(1)
        folders_layout.addLayout(row)
        layout.addWidget(folders)
        self.tmdb = TmdbKeyField()  # metadata: the TMDb key, loaded and saved on its own
        layout.addWidget(self.tmdb)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self._set_enabled(False)
        self.load()
        self._load_tmdb()

    def _load_tmdb(self) -> None:
        self.tmdb.setEnabled(False)
        def loaded(data: dict[str, Any]) -> None:
            self.tmdb.set_key(str(data.get("ApiKey") or ""))
            self.tmdb.setEnabled(True)

        self._calls.submit(lambda: self._client.named_configuration("tmdb"), on_result=loaded,
                           on_error=lambda e: self.tmdb.status.setText(f"Could not read the TMDb settings. {e}"),
                           context=self)

    def load(self) -> None:
        client = self._client
        self.message.show_info("Loading settings…")
        self._calls.submit(
            lambda: (client.system_configuration(), client.named_configuration("encoding"),
                     client.named_configuration("network"), client.named_configuration("filesystem")),
            on_result=self._show,
            on_error=lambda e: self.message.show_error(f"Could not load the settings. {e}"),
            context=self,
        )

    def _show(self, data: tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]) -> None:
        self._system, self._encoding, self._network, filesystem = data
        self._filesystem = filesystem if isinstance(filesystem, dict) else {}
        self.roots_list.clear()
        self.roots_list.addItems([str(r) for r in self._filesystem.get("AllowedRoots") or []])
        self.restrict_check.setChecked(bool(self._filesystem.get("RestrictToAllowedRoots")))
        self.name_edit.setText(str(self._system.get("ServerName") or ""))
        self.port_spin.setValue(int(self._network.get("InternalHttpPort") or 8096))
        index = self.hwaccel_combo.findData(str(self._encoding.get("HardwareAccelerationType") or "none").lower())
        self.hwaccel_combo.setCurrentIndex(max(index, 0))
        self.discovery_check.setChecked(bool(self._network.get("AutoDiscovery", True)))
        if self._login_item is not None:
            self.login_check.setChecked(self._login_item.is_enabled())
        self.message.clear_message()
        self.loaded = True
        self._set_enabled(True)

    def save(self) -> None:
        if not self.loaded or self._saving:
            return
        name = self.name_edit.text().strip()
        if not name:
            self.message.show_error("Enter a server name.")
            return
        system = dict(self._system, ServerName=name)
        encoding = dict(self._encoding, HardwareAccelerationType=self.hwaccel_combo.currentData())
        network = dict(self._network, InternalHttpPort=self.port_spin.value(),
                       AutoDiscovery=self.discovery_check.isChecked())
        port_changed = network["InternalHttpPort"] != self._network.get("InternalHttpPort")
        roots = self.allowed_roots()
        if self.restrict_check.isChecked() and not roots:
            self.message.show_error("Add at least one folder, or untick \"Only use folders inside these folders\".")
            return
        filesystem = dict(self._filesystem, RestrictToAllowedRoots=self.restrict_check.isChecked(), AllowedRoots=roots)
        login_item, start_at_login = self._login_item, self.login_check.isChecked()
        client = self._client
        tmdb_key = self.tmdb.key() if self.tmdb.isEnabled() and self.tmdb.changed() else None

        def work() -> None:
            if tmdb_key is not None:  # checked by the server with a test call to TMDb, before anything is saved
                client.set_tmdb_key(tmdb_key)
            client.set_system_configuration(system)
            client.set_named_configuration("encoding", encoding)
            client.set_named_configuration("network", network)
            client.set_named_configuration("filesystem", filesystem)
            if login_item is not None and login_item.is_enabled() != start_at_login:
                login_item.enable() if start_at_login else login_item.disable()

        self._saving = True
        self._set_enabled(False)
        self.message.show_info("Saving…")
        self._calls.submit(work, on_result=lambda _: self._saved(port_changed), on_error=self._failed, context=self)

    def _saved(self, port_changed: bool) -> None:
        self._saving = False
        self.saved.emit(port_changed)
        self.accept()

    def _failed(self, error: Exception) -> None:
        self._saving = False
        self._set_enabled(True)
        self.message.show_error(f"Could not save the settings. {error}")

    def allowed_roots(self) -> list[str]:
        return [self.roots_list.item(i).text() for i in range(self.roots_list.count())]

    def _add_root(self) -> None:
        folder = self._pick_folder()
        if folder and folder not in self.allowed_roots():
            self.roots_list.addItem(folder)
        self._update_roots_state()

    def _remove_root(self) -> None:
        for item in self.roots_list.selectedItems():
            self.roots_list.takeItem(self.roots_list.row(item))
        self._update_roots_state()

    def _update_roots_state(self) -> None:
        enabled = self.loaded and not self._saving
        self.roots_list.setEnabled(enabled)
        self.add_root_button.setEnabled(enabled)
        self.remove_root_button.setEnabled(enabled and bool(self.roots_list.selectedItems() or self.roots_list.count()))

    def _set_enabled(self, enabled: bool) -> None:
        for widget in (self.name_edit, self.port_spin, self.hwaccel_combo, self.login_check, self.discovery_check,
                       self.restrict_check, self.roots_list, self.add_root_button, self.remove_root_button):
            widget.setEnabled(enabled)
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(enabled)
