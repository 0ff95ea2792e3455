"""A small window with the server's state and the tray menu's actions, for desktops without a tray."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from ui.libraries import MessageLabel


class StatusWindow(QWidget):
    """State, address, last notification and one button per action."""

    closeRequested = Signal()

    def __init__(self, actions: list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reelroom")
        self.icon_label = QLabel()
        self.state_label = QLabel("Reelroom is starting…")
        font = self.state_label.font()
        font.setBold(True)
        self.state_label.setFont(font)
        self.state_label.setWordWrap(True)
        self.address_label = QLabel("")
        self.address_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message = MessageLabel()
        self.buttons: dict[str, QToolButton] = {}

        header = QHBoxLayout()
        header.addWidget(self.icon_label)
        text = QVBoxLayout()
        text.addWidget(self.state_label)
        text.addWidget(self.address_label)
        header.addLayout(text, 1)
        grid = QGridLayout()
        for index, action in enumerate(actions):
            button = QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
            button.setVisible(action.isVisible())
            # A bound method of this window: Qt drops the connection when the window is deleted.
            action.changed.connect(self._sync_buttons)
            self.buttons[action.objectName()] = button
            grid.addWidget(button, index // 2, index % 2)
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addLayout(grid)
        layout.addWidget(self.message)

    def _sync_buttons(self) -> None:
        for button in self.buttons.values():
            action = button.defaultAction()
            if action is not None:
                button.setVisible(action.isVisible())

    def set_state(self, icon: QIcon, text: str, address: str) -> None:
        self.setWindowIcon(icon)
        self.icon_label.setPixmap(icon.pixmap(48, 48))
        self.state_label.setText(text)
        self.address_label.setText(address)

    def show_notification(self, title: str, text: str, error: bool = False) -> None:
        line = f"{title}: {text}" if text else title
        if error:
            self.message.show_error(line)
        else:
            self.message.show_info(line)

    def bring_to_front(self) -> None:
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.closeRequested.emit()
        super().closeEvent(event)
