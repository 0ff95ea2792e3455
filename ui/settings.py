"""Settings: server name, port, hardware acceleration, start at login, LAN discovery, TMDb key."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
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
    """Reads ``/System/Configuration`` plus its ``encoding`` and ``network`` parts, writes back changes."""

    saved = Signal(bool)  # True when the port changed (takes effect after a restart)

    def __init__(
        self,
        client: ServerClient,
        calls: BackgroundCalls,
        login_item: LoginItemLike | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings — Reelroom")
        self._client = client
        self._calls = calls
        self._login_item = login_item
        self._system: dict[str, Any] = {}
        self._encoding: dict[str, Any] = {}
        self._network: dict[str, Any] = {}
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
        self.tmdb = TmdbKeyField()  # metadata: the TMDb key, loaded and saved on its own
        layout.addWidget(self.tmdb)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self._set_enabled(False)
        self.load()
        self._load_tmdb()

    def _load_tmdb(self) -> None:
        self.tmdb.setEnabled(False)
        self._calls.submit(lambda: self._client.named_configuration("tmdb"),
                           on_result=lambda data: (self.tmdb.set_key(str(data.get("ApiKey") or "")),
                                                   self.tmdb.setEnabled(True)),
                           on_error=lambda e: self.tmdb.status.setText(f"Could not read the TMDb settings. {e}"),
                           context=self)

    def load(self) -> None:
        client = self._client
        self.message.show_info("Loading settings…")
        self._calls.submit(
            lambda: (client.system_configuration(), client.named_configuration("encoding"),
                     client.named_configuration("network")),
            on_result=self._show,
            on_error=lambda e: self.message.show_error(f"Could not load the settings. {e}"),
            context=self,
        )

    def _show(self, data: tuple[dict[str, Any], dict[str, Any], dict[str, Any]]) -> None:
        self._system, self._encoding, self._network = data
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
        login_item, start_at_login = self._login_item, self.login_check.isChecked()
        client = self._client
        tmdb_key = self.tmdb.key() if self.tmdb.isEnabled() and self.tmdb.changed() else None

        def work() -> None:
            if tmdb_key is not None:  # checked by the server with a test call to TMDb, before anything is saved
                client.set_tmdb_key(tmdb_key)
            client.set_system_configuration(system)
            client.set_named_configuration("encoding", encoding)
            client.set_named_configuration("network", network)
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

    def _set_enabled(self, enabled: bool) -> None:
        for widget in (self.name_edit, self.port_spin, self.hwaccel_combo, self.login_check, self.discovery_check):
            widget.setEnabled(enabled)
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(enabled)
