"""Library folders: list the server's libraries, add, rename, remove, change folders, scan."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ui.api_client import ServerClient
from ui.folder_picker import FolderDialogFactory, pick_folder, system_folder_dialog
from ui.worker import BackgroundCalls

CONTENT_TYPES: list[tuple[str, str]] = [
    ("Movies", "movies"),
    ("Shows", "tvshows"),
    ("Music", "music"),
    ("Music videos", "musicvideos"),
    ("Home videos", "homevideos"),
    ("Collections", "boxsets"),
    ("Books", "books"),
    ("Photos", "photos"),
    ("Mixed movies and shows", "mixed"),
]
NO_LIBRARIES = "No libraries yet. Add one to start sharing your media."
_TYPE_LABELS = dict((value, label) for label, value in CONTENT_TYPES)


def content_type_label(collection_type: str | None) -> str:
    """What a person calls a library's ``CollectionType``."""
    if not collection_type:
        return _TYPE_LABELS["mixed"]
    return _TYPE_LABELS.get(collection_type, collection_type)


class MessageLabel(QLabel):
    """One line of feedback: errors in red, everything else plain."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hide()

    def show_error(self, text: str) -> None:
        self.setStyleSheet("color: #c62828;")
        self.setText(text)
        self.show()

    def show_info(self, text: str) -> None:
        self.setStyleSheet("")
        self.setText(text)
        self.show()

    def clear_message(self) -> None:
        self.setText("")
        self.hide()


class AddLibraryDialog(QDialog):
    """Name, content type and folders of a new library; adds it on the server when accepted."""

    libraryAdded = Signal(str)

    def __init__(
        self,
        client: ServerClient,
        calls: BackgroundCalls,
        folder_dialog_factory: FolderDialogFactory = system_folder_dialog,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add a library — Reelroom")
        self._client = client
        self._calls = calls
        self._factory = folder_dialog_factory
        self._checking = 0
        self._saving = False

        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. Movies")
        self.type_combo = QComboBox()
        for label, value in CONTENT_TYPES:
            self.type_combo.addItem(label, value)
        self.type_combo.currentIndexChanged.connect(self._suggest_name)
        self.folder_list = QListWidget()
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.clicked.connect(self.choose_folder)
        self.remove_folder_button = QPushButton("Remove folder")
        self.remove_folder_button.clicked.connect(self._remove_selected_folder)
        self.message = MessageLabel()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Add library")
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("Content type:", self.type_combo)
        form.addRow("Display name:", self.name_edit)
        folder_buttons = QHBoxLayout()
        folder_buttons.addWidget(self.add_folder_button)
        folder_buttons.addWidget(self.remove_folder_button)
        folder_buttons.addStretch()
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Folders:"))
        layout.addWidget(self.folder_list)
        layout.addLayout(folder_buttons)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self._suggest_name()

    def folders(self) -> list[str]:
        return [self.folder_list.item(row).text() for row in range(self.folder_list.count())]

    def choose_folder(self) -> None:
        pick_folder(self, self.add_folder_path, self._factory)

    def add_folder_path(self, path: str) -> None:
        """Check ``path`` with the server, then list it; says so if the server cannot see it."""
        path = path.strip()
        if not path:
            return
        if path in self.folders():
            self.message.show_info(f"{path} is already in this library.")
            return
        self._checking += 1
        self._update_buttons()
        self._calls.submit(
            lambda: self._client.folder_exists(path),
            on_result=lambda exists: self._folder_checked(path, exists),
            on_error=self._check_failed,
            context=self,
        )

    def _folder_checked(self, path: str, exists: bool) -> None:
        self._checking -= 1
        if exists:
            self.folder_list.addItem(path)
            self.message.clear_message()
        else:
            self.message.show_error(f"No such folder on the server: {path}")
        self._update_buttons()

    def _remove_selected_folder(self) -> None:
        for item in self.folder_list.selectedItems():
            self.folder_list.takeItem(self.folder_list.row(item))

    def _suggest_name(self) -> None:
        labels = [label for label, _ in CONTENT_TYPES]
        if not self.name_edit.text() or self.name_edit.text() in labels:
            self.name_edit.setText("" if self.type_combo.currentData() == "mixed" else self.type_combo.currentText())

    def save(self) -> None:
        name = self.name_edit.text().strip()
        if not name:
            self.message.show_error("Enter a name for the library.")
            return
        folders = self.folders()
        if not folders:
            self.message.show_error("Add at least one folder to the library.")
            return
        collection_type = str(self.type_combo.currentData())
        self._saving = True
        self._update_buttons()
        self.message.show_info("Adding the library…")
        self._calls.submit(
            lambda: self._client.add_virtual_folder(name, collection_type, folders),
            on_result=lambda _: self._saved(name),
            on_error=self._save_failed,
            context=self,
        )

    def _saved(self, name: str) -> None:
        self._saving = False
        self.libraryAdded.emit(name)
        self.accept()

    def _check_failed(self, error: Exception) -> None:
        self._checking -= 1
        self.message.show_error(str(error))
        self._update_buttons()

    def _save_failed(self, error: Exception) -> None:
        self._saving = False
        self.message.show_error(str(error))
        self._update_buttons()

    def _update_buttons(self) -> None:
        busy = self._checking > 0 or self._saving
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not busy)


class LibraryFoldersWindow(QWidget):
    """The server's libraries as a tree: library rows with their folders underneath."""

    librariesChanged = Signal()

    def __init__(
        self,
        client: ServerClient,
        calls: BackgroundCalls,
        folder_dialog_factory: FolderDialogFactory = system_folder_dialog,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Libraries — Reelroom")
        self.resize(640, 420)
        self._client = client
        self._calls = calls
        self._factory = folder_dialog_factory
        self._libraries: list[dict[str, Any]] = []
        self.loaded = False

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Library", "Content type"])
        self.tree.setColumnWidth(0, 380)
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        self.message = MessageLabel()

        self.add_library_button = QPushButton("Add library…")
        self.add_folder_button = QPushButton("Add folder…")
        self.remove_folder_button = QPushButton("Remove folder")
        self.rename_button = QPushButton("Rename…")
        self.remove_library_button = QPushButton("Remove library")
        self.scan_button = QPushButton("Scan library")
        self.reload_button = QPushButton("Refresh list")
        self.add_library_button.clicked.connect(self.open_add_library)
        self.add_folder_button.clicked.connect(self._choose_folder_for_selected)
        self.remove_folder_button.clicked.connect(self._remove_selected_folder)
        self.rename_button.clicked.connect(self._ask_rename)
        self.remove_library_button.clicked.connect(self._ask_remove)
        self.scan_button.clicked.connect(self._scan_selected)
        self.reload_button.clicked.connect(self.reload)

        buttons = QVBoxLayout()
        for button in (self.add_library_button, self.add_folder_button, self.remove_folder_button,
                       self.rename_button, self.remove_library_button, self.scan_button):
            buttons.addWidget(button)
        buttons.addStretch()
        buttons.addWidget(self.reload_button)
        body = QHBoxLayout()
        body.addWidget(self.tree, 1)
        body.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.addLayout(body)
        layout.addWidget(self.message)
        self._update_buttons()
        self.reload()

    # -- reading ----------------------------------------------------------------------------------

    def libraries(self) -> list[dict[str, Any]]:
        return list(self._libraries)

    def reload(self) -> None:
        self._calls.submit(self._client.virtual_folders, on_result=self._show, on_error=self._failed, context=self)

    def _show(self, libraries: list[dict[str, Any]]) -> None:
        selected = self.selected_library()
        self._libraries = sorted(libraries, key=lambda lib: str(lib.get("Name", "")).lower())
        self.tree.clear()
        for library in self._libraries:
            row = QTreeWidgetItem([library.get("Name", ""), content_type_label(library.get("CollectionType"))])
            row.setData(0, Qt.ItemDataRole.UserRole, library.get("Name"))
            for path in library.get("Locations") or []:
                child = QTreeWidgetItem([path, ""])
                child.setData(0, Qt.ItemDataRole.UserRole, library.get("Name"))
                child.setData(1, Qt.ItemDataRole.UserRole, path)
                row.addChild(child)
            self.tree.addTopLevelItem(row)
            row.setExpanded(True)
            if library.get("Name") == selected:
                row.setSelected(True)
        if not self._libraries:
            self.message.show_info(NO_LIBRARIES)
        elif self.message.text() == NO_LIBRARIES:
            self.message.clear_message()
        self.loaded = True
        self._update_buttons()

    def selected_library(self) -> str | None:
        items = self.tree.selectedItems()
        return items[0].data(0, Qt.ItemDataRole.UserRole) if items else None

    def selected_folder(self) -> str | None:
        items = self.tree.selectedItems()
        return items[0].data(1, Qt.ItemDataRole.UserRole) if items else None

    def select_library(self, name: str) -> None:
        for index in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(index)
            if item is not None:
                item.setSelected(item.data(0, Qt.ItemDataRole.UserRole) == name)

    # -- changing ---------------------------------------------------------------------------------

    def open_add_library(self) -> AddLibraryDialog:
        dialog = AddLibraryDialog(self._client, self._calls, self._factory, self)
        dialog.libraryAdded.connect(lambda name: self._changed(f"Added the library {name}."))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def add_folder(self, library: str, path: str) -> None:
        """Validate ``path`` on the server, then add it to ``library``."""
        def work() -> bool:
            if not self._client.folder_exists(path):
                return False
            self._client.add_media_path(library, path)
            return True

        def done(added: bool) -> None:
            if added:
                self._changed(f"Added {path} to {library}.")
            else:
                self.message.show_error(f"No such folder on the server: {path}")

        self._calls.submit(work, on_result=done, on_error=self._failed, context=self)

    def remove_folder(self, library: str, path: str) -> None:
        self._run(lambda: self._client.remove_media_path(library, path), f"Removed {path} from {library}.")

    def rename_library(self, library: str, new_name: str) -> None:
        new_name = new_name.strip()
        if not new_name:
            self.message.show_error("Enter a new name for the library.")
            return
        if new_name == library:
            return
        self._run(lambda: self._client.rename_virtual_folder(library, new_name), f"Renamed {library} to {new_name}.")

    def remove_library(self, library: str) -> None:
        self._run(lambda: self._client.remove_virtual_folder(library), f"Removed the library {library}.")

    def scan_library(self, library: str) -> None:
        item_id = next((lib.get("ItemId") for lib in self._libraries if lib.get("Name") == library), None)
        if not item_id:
            self.message.show_error(f"The server did not give an id for {library}; refresh the list.")
            return
        self._calls.submit(
            lambda: self._client.refresh_library(str(item_id)),
            on_result=lambda _: self.message.show_info(f"Scanning {library}…"),
            on_error=self._failed,
            context=self,
        )

    def _run(self, fn: Any, success: str) -> None:
        self._calls.submit(fn, on_result=lambda _: self._changed(success), on_error=self._failed, context=self)

    def _changed(self, text: str) -> None:
        self.message.show_info(text)
        self.librariesChanged.emit()
        self.reload()

    def _failed(self, error: Exception) -> None:
        self.message.show_error(str(error))

    # -- button handlers (they ask, then call the methods above) -----------------------------------

    def _choose_folder_for_selected(self) -> None:
        library = self.selected_library()
        if library:
            pick_folder(self, lambda path: self.add_folder(library, path), self._factory)

    def _remove_selected_folder(self) -> None:
        library, path = self.selected_library(), self.selected_folder()
        if library and path:
            self.remove_folder(library, path)

    def _ask_rename(self) -> QInputDialog | None:
        library = self.selected_library()
        if not library:
            return None
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename library — Reelroom")
        dialog.setLabelText(f"New name for {library}:")
        dialog.setTextValue(library)
        dialog.textValueSelected.connect(lambda text: self.rename_library(library, text))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def _ask_remove(self) -> QMessageBox | None:
        library = self.selected_library()
        if not library:
            return None
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove library — Reelroom",
            f"Remove the library {library}? Your files stay where they are.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.buttonClicked.connect(
            lambda button: self.remove_library(library)
            if box.standardButton(button) == QMessageBox.StandardButton.Yes
            else None
        )
        box.finished.connect(box.deleteLater)
        box.open()
        return box

    def _scan_selected(self) -> None:
        library = self.selected_library()
        if library:
            self.scan_library(library)

    def _update_buttons(self) -> None:
        has_library = self.selected_library() is not None
        for button in (self.add_folder_button, self.rename_button, self.remove_library_button, self.scan_button):
            button.setEnabled(has_library)
        self.remove_folder_button.setEnabled(self.selected_folder() is not None)
