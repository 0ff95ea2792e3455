"""Server log viewer: live tail of the newest log, level filter, search with highlight, file list."""

from __future__ import annotations

import re
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QFontDatabase, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ui.api_client import ServerClient
from ui.libraries import MessageLabel
from ui.worker import BackgroundCalls

LEVEL_RANKS = {"VRB": 0, "DBG": 0, "INF": 1, "WRN": 2, "ERR": 3, "FTL": 3}
LEVEL_FILTERS: list[tuple[str, int]] = [
    ("Debug and above", 0),
    ("Information and above", 1),
    ("Warnings and errors", 2),
    ("Errors only", 3),
]
_LEVEL_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\s+\[([A-Z]{3})\]")
MAX_ENTRIES = 50_000
MAX_HIGHLIGHTS = 5_000
BIG_READ_LINES = 5_000  # a read this long (a file opened, or read again) is followed by a heap trim


def line_level(line: str) -> int | None:
    """The rank of a log line's ``[INF]``-style level, or None for a continuation line."""
    match = _LEVEL_RE.match(line)
    if not match:
        return None
    return LEVEL_RANKS.get(match.group(1))


def newest_log(files: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The most recently written entry of ``/System/Logs``."""
    if not files:
        return None
    return max(files, key=lambda f: (str(f.get("DateModified") or ""), str(f.get("Name") or "")))


class LogTail:
    """Reads only what was appended to one log file since the last read (blocking)."""

    def __init__(self, client: ServerClient, name: str) -> None:
        self.client = client
        self.name = name
        self.offset = 0
        self._fragment = b""

    def read_new(self, size: int | None = None) -> tuple[list[str], bool]:
        """New complete lines, and whether the file started over (truncated or replaced).

        ``size`` is the length ``/System/Logs`` reported; when it equals what was already read,
        nothing is downloaded.
        """
        restarted = False
        if size is not None and size < self.offset:
            self._restart()
            restarted = True
        if size is not None and size == self.offset and self.offset > 0:
            return [], restarted
        data, partial = self.client.log_bytes(self.name, self.offset)
        if not partial:
            if len(data) < self.offset:
                self._restart()
                restarted = True
            data = data[self.offset:]
        self.offset += len(data)
        chunks = (self._fragment + data).split(b"\n")
        self._fragment = chunks.pop()
        lines = [chunk.decode("utf-8", errors="replace").rstrip("\r") for chunk in chunks]
        return lines, restarted

    def _restart(self) -> None:
        self.offset = 0
        self._fragment = b""


@dataclass
class LogEntry:
    rank: int
    text: str


@dataclass
class _PollResult:
    files: list[dict[str, Any]]
    tail: LogTail | None
    lines: list[str]
    new_file: bool


class LogViewer(QWidget):
    """Shows the server's logs; follows the newest file and appends only new lines."""

    def __init__(
        self,
        client: ServerClient,
        calls: BackgroundCalls,
        poll_interval_ms: int = 2000,
        open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Logs — Reelroom")
        self.resize(960, 560)
        self._client = client
        self._calls = calls
        self._open_url = open_url
        self._tail: LogTail | None = None
        self._polling = False
        self._entries: deque[LogEntry] = deque(maxlen=MAX_ENTRIES)
        self._last_rank = 1
        self._closed = False  # closed: its entries given back, read again when shown (closeEvent)
        self._scroll_to: int | None = None  # where the text was scrolled when closed (None: its end)
        self.polls = 0

        self.file_list = QListWidget()
        self.file_list.itemActivated.connect(self._open_item)
        self.file_list.itemClicked.connect(self._open_item)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setMaximumBlockCount(MAX_ENTRIES)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

        self.level_combo = QComboBox()
        for label, rank in LEVEL_FILTERS:
            self.level_combo.addItem(label, rank)
        self.level_combo.setCurrentIndex(1)
        self.level_combo.currentIndexChanged.connect(self._refilter)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self._highlight)
        self.search_edit.returnPressed.connect(self.find_next)
        self.match_label = QLabel("")
        self.follow_check = QCheckBox("Follow newest log")
        self.follow_check.setChecked(True)
        self.folder_button = QPushButton("Open log folder")
        self.folder_button.clicked.connect(self.open_log_folder)
        self.message = MessageLabel()

        bar = QHBoxLayout()
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.level_combo)
        bar.addWidget(self.search_edit, 1)
        bar.addWidget(self.match_label)
        bar.addWidget(self.follow_check)
        bar.addWidget(self.folder_button)
        splitter = QSplitter()
        splitter.addWidget(self.file_list)
        splitter.addWidget(self.text)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([180, 780])
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.message)

        self._timer = QTimer(self)
        self._timer.setInterval(poll_interval_ms)
        self._timer.timeout.connect(self.poll)
        self._timer.start()
        self.poll()

    # -- state for tests and callers --------------------------------------------------------------

    @property
    def current_file(self) -> str | None:
        return self._tail.name if self._tail else None

    def visible_text(self) -> str:
        return self.text.toPlainText()

    def highlight_count(self) -> int:
        return len(self.text.extraSelections())

    def set_minimum_level(self, rank: int) -> None:
        self.level_combo.setCurrentIndex(max(0, self.level_combo.findData(rank)))

    # -- polling ----------------------------------------------------------------------------------

    @property
    def entry_count(self) -> int:
        """How many log lines the viewer holds (shown or filtered out)."""
        return len(self._entries)

    def poll(self) -> None:
        """Fetch the file list and anything new in the current file (one request in flight at most)."""
        if self._polling or self._closed:
            return
        self._polling = True
        follow = self.follow_check.isChecked()
        tail = self._tail
        client = self._client

        def work() -> _PollResult:
            files = client.log_files()
            target = tail
            newest = newest_log(files)
            if newest is not None and (target is None or (follow and newest.get("Name") != target.name)):
                target = LogTail(client, str(newest["Name"]))
            if target is None:
                return _PollResult(files, None, [], False)
            size = next((f.get("Size") for f in files if f.get("Name") == target.name), None)
            # A file that shrank was rotated: its lines are all new, so they are appended, not swapped in.
            lines, _rotated = target.read_new(size if isinstance(size, int) else None)
            return _PollResult(files, target, lines, target is not tail)

        def done(result: _PollResult) -> None:
            self._polling = False
            self.polls += 1
            self._show_files(result.files)
            if self._tail is not tail:  # the person opened another file meanwhile, or closed the viewer
                self.poll()
                return
            if result.tail is None:
                return
            self._tail = result.tail
            if result.new_file:
                self._entries.clear()
                self.text.clear()
                self._last_rank = 1
            self.message.clear_message()
            self._append(result.lines)
            if self._scroll_to is not None and result.lines:  # reopened: where it was when closed
                self.text.verticalScrollBar().setValue(self._scroll_to)
                self._scroll_to = None
            if len(result.lines) >= BIG_READ_LINES:  # the download and its lines, freed once this returns
                QTimer.singleShot(0, _trim_heap)
            self._select_in_list(result.tail.name)

        def failed(error: Exception) -> None:
            self._polling = False
            self.polls += 1
            self.message.show_error(f"Cannot read the server's logs. {error}")

        self._calls.submit(work, on_result=done, on_error=failed, context=self)

    def _show_files(self, files: list[dict[str, Any]]) -> None:
        names = [str(f.get("Name")) for f in sorted(files, key=lambda f: str(f.get("DateModified") or ""),
                                                    reverse=True)]
        current = [self.file_list.item(i).text() for i in range(self.file_list.count())]
        if names == current:
            return
        self.file_list.clear()
        for name in names:
            self.file_list.addItem(QListWidgetItem(name))
        if self._tail:
            self._select_in_list(self._tail.name)

    def _select_in_list(self, name: str | None) -> None:
        for i in range(self.file_list.count()):
            item = self.file_list.item(i)
            if item.text() == name and self.file_list.currentItem() is not item:
                self.file_list.setCurrentItem(item)

    def open_file(self, name: str) -> None:
        """Show log ``name`` from its start; following the newest file stops unless it is the newest."""
        if self._tail and self._tail.name == name:
            return
        newest = self.file_list.item(0).text() if self.file_list.count() else None
        self.follow_check.setChecked(name == newest)
        self._tail = LogTail(self._client, name)
        self._entries.clear()
        self.text.clear()
        self._last_rank = 1
        self._select_in_list(name)
        self.poll()

    def _open_item(self, item: QListWidgetItem) -> None:
        self.open_file(item.text())

    # -- showing ----------------------------------------------------------------------------------

    def _append(self, lines: list[str]) -> None:
        if not lines:
            return
        minimum = int(self.level_combo.currentData())
        shown: list[str] = []
        for line in lines:
            rank = line_level(line)
            if rank is None:
                rank = self._last_rank
            else:
                self._last_rank = rank
            self._entries.append(LogEntry(rank, line))
            if rank >= minimum:
                shown.append(line)
        if shown:
            bar = self.text.verticalScrollBar()
            at_end = bar.value() >= bar.maximum() - 2
            self.text.appendPlainText("\n".join(shown))
            if at_end:
                bar.setValue(bar.maximum())
            self._highlight()

    def _refilter(self) -> None:
        minimum = int(self.level_combo.currentData())
        self.text.setPlainText("\n".join(e.text for e in self._entries if e.rank >= minimum))
        self.text.moveCursor(QTextCursor.MoveOperation.End)
        self._highlight()

    def _highlight(self) -> None:
        needle = self.search_edit.text()
        selections: list[QTextEdit.ExtraSelection] = []
        if needle:
            fmt = QTextCharFormat()
            fmt.setBackground(QColor("#ffe066"))
            fmt.setForeground(QColor("#000000"))
            document = self.text.document()
            cursor = document.find(needle, 0)
            while not cursor.isNull() and len(selections) < MAX_HIGHLIGHTS:
                selection = QTextEdit.ExtraSelection()
                selection.cursor = cursor
                selection.format = fmt
                selections.append(selection)
                cursor = document.find(needle, cursor)
        self.text.setExtraSelections(selections)
        if not needle:
            self.match_label.setText("")
        else:
            count = len(selections)
            self.match_label.setText("No matches" if count == 0 else f"{count} match{'es' if count != 1 else ''}")

    def find_next(self) -> bool:
        """Move the cursor to the next match, wrapping at the end."""
        needle = self.search_edit.text()
        if not needle:
            return False
        if self.text.find(needle):
            return True
        self.text.moveCursor(QTextCursor.MoveOperation.Start)
        return self.text.find(needle, QTextDocument.FindFlag(0))

    # -- folder -----------------------------------------------------------------------------------

    def open_log_folder(self) -> None:
        """Open the server's log folder in the file manager, when it is on this computer."""

        def opened(info: dict[str, Any]) -> None:
            folder = str(info.get("LogPath") or "")
            if not folder or not Path(folder).is_dir():
                self.message.show_error(f"The log folder {folder or '(unknown)'} is not on this computer.")
                return
            self._open_url(QUrl.fromLocalFile(folder))

        self._calls.submit(
            self._client.system_info,
            on_result=opened,
            on_error=lambda e: self.message.show_error(str(e)),
            context=self,
        )

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self._timer.stop()
        self._give_back()
        super().closeEvent(event)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        if not self._timer.isActive():
            self._timer.start()
        if self._closed:
            self._closed = False
            self.poll()
        super().showEvent(event)

    def _give_back(self) -> None:
        """Closed, the viewer keeps no log lines: up to 50k entries and their text (tens of MiB in a
        tray that lives for weeks). What the view was stays: the file, following, the level, the
        search and the scroll position; shown again, it reads the file from its start (one
        request, as when first opened) and looks as it did, with what was appended since. (Lines of
        a file rotated away while it was open are not read again.)"""
        self._closed = True
        if self._tail is None:
            return
        bar = self.text.verticalScrollBar()
        self._scroll_to = None if bar.value() >= bar.maximum() - 2 else bar.value()
        self._tail = LogTail(self._client, self._tail.name)  # (a poll in flight is dropped: not its tail)
        self._entries = deque(maxlen=MAX_ENTRIES)
        self._last_rank = 1
        self.text.clear()
        self.text.setExtraSelections([])
        _trim_heap()


def _trim_heap() -> None:
    """Give freed heap pages back to the system now (glibc keeps them for reuse otherwise)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        pass

