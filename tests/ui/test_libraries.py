from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget

from tests.ui.fake_server import FakeServerThread
from ui.api_client import ServerClient
from ui.libraries import LibraryFoldersWindow
from ui.worker import BackgroundCalls


def _non_native(parent: QWidget | None) -> QFileDialog:
    dialog = QFileDialog(parent)
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    return dialog


def _rows(window: LibraryFoldersWindow) -> list[tuple[str, str, list[str]]]:
    rows = []
    for i in range(window.tree.topLevelItemCount()):
        item = window.tree.topLevelItem(i)
        rows.append((item.text(0), item.text(1), [item.child(j).text(0) for j in range(item.childCount())]))
    return rows


def test_library_window_manages_libraries(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls, tmp_path: Path  # noqa: ANN001
) -> None:
    shows, extra = tmp_path / "Shows", tmp_path / "More shows"
    shows.mkdir()
    extra.mkdir()
    state = fake_server.state
    client.add_virtual_folder("Music", "music", [str(tmp_path)])
    window = LibraryFoldersWindow(client, calls, folder_dialog_factory=_non_native)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.loaded, timeout=5000)
    assert _rows(window) == [("Music", "Music", [str(tmp_path)])]

    dialog = window.open_add_library()
    dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("tvshows"))
    dialog.name_edit.setText("")
    dialog.save()
    assert dialog.message.text() == "Enter a name for the library."
    dialog.name_edit.setText("TV")
    dialog.add_folder_path(str(shows))
    qtbot.waitUntil(lambda: dialog.folders() == [str(shows)], timeout=5000)
    with qtbot.waitSignal(window.librariesChanged, timeout=5000):
        dialog.save()
    qtbot.waitUntil(lambda: len(_rows(window)) == 2, timeout=5000)
    assert _rows(window)[1] == ("TV", "Shows", [str(shows)])

    window.select_library("TV")
    assert window.scan_button.isEnabled() and not window.remove_folder_button.isEnabled()
    window.add_folder_button.click()
    picker = window.findChild(QFileDialog)
    assert picker is not None and picker.testOption(QFileDialog.Option.DontUseNativeDialog)
    picker.selectFile(str(extra))
    picker.accept()
    qtbot.waitUntil(lambda: _rows(window)[1][2] == [str(shows), str(extra)], timeout=5000)
    assert state.folder("TV")["Locations"] == [str(shows), str(extra)]

    window.add_folder("TV", str(tmp_path / "gone"))
    qtbot.waitUntil(lambda: "No such folder on the server" in window.message.text(), timeout=5000)

    tv_row = window.tree.topLevelItem(1)
    tv_row.setSelected(False)
    tv_row.child(0).setSelected(True)
    assert window.selected_folder() == str(shows)
    window.remove_folder_button.click()
    qtbot.waitUntil(lambda: _rows(window)[1][2] == [str(extra)], timeout=5000)

    window.select_library("TV")
    window.scan_button.click()
    qtbot.waitUntil(lambda: state.item_refreshes == [state.folder("TV")["ItemId"]], timeout=5000)

    window.rename_button.click()
    rename = window.findChild(QInputDialog)
    assert rename is not None
    rename.setTextValue("Television")
    rename.accept()
    qtbot.waitUntil(lambda: [r[0] for r in _rows(window)] == ["Music", "Television"], timeout=5000)

    window.rename_library("Television", "Music")
    qtbot.waitUntil(lambda: "409" in window.message.text(), timeout=5000)

    window.select_library("Television")
    window.remove_library_button.click()
    box = window.findChild(QMessageBox)
    assert box is not None and "Television" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: [r[0] for r in _rows(window)] == ["Music"], timeout=5000)
    assert [f["Name"] for f in state.virtual_folders] == ["Music"]


def test_cancelled_removal_keeps_the_library(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls, tmp_path: Path  # noqa: ANN001
) -> None:
    client.add_virtual_folder("Books", "books", [str(tmp_path)])
    window = LibraryFoldersWindow(client, calls)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.loaded, timeout=5000)
    window.select_library("Books")
    window.remove_library_button.click()
    box = window.findChild(QMessageBox)
    box.button(QMessageBox.StandardButton.No).click()
    qtbot.waitUntil(lambda: calls.pending == 0, timeout=5000)
    assert [f["Name"] for f in fake_server.state.virtual_folders] == ["Books"]
