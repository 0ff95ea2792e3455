"""Choosing what to install as the web app: an archive (jellyfin-web's built dist as .tar.xz,
.tar.gz or .zip) or its unpacked folder. The install itself is the server's
(``POST /Reelroom/WebClient/Install``, admin, from this machine only)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

WebSourceChooser = Callable[[QWidget | None], "str | None"]
ARCHIVE_FILTER = "Web app archives (*.tar.xz *.txz *.tar.gz *.tgz *.zip);;All files (*)"


def choose_web_source(parent: QWidget | None) -> str | None:
    """Ask for an archive or a folder; None when the person cancels."""
    box = QMessageBox(parent)
    box.setWindowTitle("Install web app")
    box.setText("Install the Jellyfin web app (jellyfin-web 10.10) so browsers and the apps that "
                "load it from the server can use Reelroom.")
    box.setInformativeText("Choose the built web app: a release archive, or its unpacked folder "
                           "(the one with index.html).")
    archive = box.addButton("Archive…", QMessageBox.ButtonRole.AcceptRole)
    folder = box.addButton("Folder…", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    clicked = box.clickedButton()
    if clicked is archive:
        path, _ = QFileDialog.getOpenFileName(parent, "Choose the web app archive", "", ARCHIVE_FILTER)
        return path or None
    if clicked is folder:
        path = QFileDialog.getExistingDirectory(parent, "Choose the web app folder")
        return path or None
    return None
