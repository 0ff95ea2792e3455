"""The TMDb API key field shared by the first-run wizard and Settings: where to get a key, what
Reelroom cannot do without one, and the key itself (the server checks it with a test call to
TMDb before saving it)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

TMDB_KEY_URL = "https://www.themoviedb.org/settings/api"
WITHOUT_KEY = ("Without a TMDb API key Reelroom cannot fetch posters, descriptions, cast or ratings for movies "
               "and shows (it still reads your own artwork and NFO files; TVmaze and MusicBrainz need no key).")
WITH_KEY = "TMDb is set up: Reelroom fetches posters, descriptions, cast and ratings for movies and shows."


class TmdbKeyField(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key_edit = QLineEdit()
        self.key_edit.setPlaceholderText("TMDb API key (optional)")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        self.key_edit.textChanged.connect(self._update_status)
        self.link = QLabel(f'Get a free key: sign in at <a href="{TMDB_KEY_URL}">themoviedb.org</a>, '
                           "Settings &gt; API, and copy the \"API Key\".")
        self.link.setOpenExternalLinks(True)
        self.link.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.link.setWordWrap(True)
        self.status = QLabel()
        self.status.setWordWrap(True)
        form = QFormLayout()
        form.addRow("TMDb API key:", self.key_edit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(self.link)
        layout.addWidget(self.status)
        self.saved_key = ""
        self._update_status()

    def set_key(self, key: str) -> None:
        self.saved_key = key
        self.key_edit.setText(key)
        self._update_status()

    def key(self) -> str:
        return self.key_edit.text().strip()

    def changed(self) -> bool:
        return self.key() != self.saved_key

    def _update_status(self) -> None:
        self.status.setText(WITH_KEY if self.key() else WITHOUT_KEY)
