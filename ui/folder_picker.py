"""Choosing a media folder without blocking the event loop; the dialog factory is injectable."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFileDialog, QWidget

FolderDialogFactory = Callable[[QWidget | None], QFileDialog]


def system_folder_dialog(parent: QWidget | None) -> QFileDialog:
    """The platform's folder chooser (what ``QFileDialog.getExistingDirectory`` shows)."""
    return QFileDialog(parent, "Choose a media folder")


def pick_folder(
    parent: QWidget | None,
    on_chosen: Callable[[str], None],
    factory: FolderDialogFactory = system_folder_dialog,
    start_dir: str = "",
) -> QFileDialog:
    """Open a folder chooser window-modally; ``on_chosen(path)`` runs if the person picks one."""
    dialog = factory(parent)
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    if start_dir:
        dialog.setDirectory(start_dir)
    dialog.fileSelected.connect(lambda path: on_chosen(path) if path else None)
    dialog.finished.connect(dialog.deleteLater)
    dialog.open()
    return dialog
