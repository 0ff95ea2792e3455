"""The server's address as text and QR code, with a copy button."""

from __future__ import annotations

import io

import segno
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


def qr_pixmap(text: str, scale: int = 6) -> QPixmap:
    """A QR code of ``text`` as a pixmap (segno renders PNG bytes)."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=scale, border=2)
    pixmap = QPixmap()
    if not pixmap.loadFromData(buffer.getvalue(), "PNG"):
        raise ValueError("could not draw the QR code")
    return pixmap


class AddressDialog(QDialog):
    """Shows where phones and TVs on the network can reach Reelroom."""

    def __init__(self, address: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reelroom address")
        self.address = address
        intro = QLabel("Enter this address in a Jellyfin app, or scan the code with your phone:")
        intro.setWordWrap(True)
        self.address_label = QLabel(address)
        self.address_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.address_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        self.address_label.setFont(font)
        self.qr_label = QLabel()
        self.qr_label.setPixmap(qr_pixmap(address))
        self.qr_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.copy_button = QPushButton("Copy address")
        self.copy_button.clicked.connect(self.copy_address)
        close_button = QPushButton("Close")
        close_button.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addStretch()
        buttons.addWidget(close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.address_label, alignment=Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.qr_label)
        layout.addLayout(buttons)

    def copy_address(self) -> None:
        QGuiApplication.clipboard().setText(self.address)
        self.copy_button.setText("Copied")
