from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget, QWizard

from tests.ui.fake_server import FakeServerThread
from ui.api_client import ServerClient
from ui.wizard import PAGE_FINISH, PAGE_LIBRARIES, PAGE_METADATA, PAGE_REMOTE, PAGE_USER, FirstRunWizard
from ui.worker import BackgroundCalls


def _non_native(parent: QWidget | None) -> QFileDialog:
    dialog = QFileDialog(parent, "Choose a media folder")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    return dialog


def _next_to(qtbot, wizard: FirstRunWizard, page_id: int) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: wizard.currentPage().isComplete(), timeout=5000)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == page_id, timeout=5000)


def test_wizard_sets_up_the_server_end_to_end(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls, tmp_path: Path  # noqa: ANN001
) -> None:
    movies = tmp_path / "Movies"
    movies.mkdir()
    state = fake_server.state
    wizard = FirstRunWizard(client, calls, folder_dialog_factory=_non_native)
    qtbot.addWidget(wizard)
    wizard.show()

    page = wizard.language_page
    qtbot.waitUntil(lambda: page.loaded and page.language_combo.count() == 3, timeout=5000)
    assert page.language_combo.currentData() == "en-US"
    page.language_combo.setCurrentIndex(page.language_combo.findData("de"))
    _next_to(qtbot, wizard, PAGE_USER)
    assert state.startup_config["UICulture"] == "de"

    user_page = wizard.user_page
    qtbot.waitUntil(lambda: user_page.name_edit.text() == "reelroom", timeout=5000)
    user_page.name_edit.setText("   ")
    wizard.next()
    assert user_page.message.text() == "Enter a user name."
    user_page.name_edit.setText("alice")
    user_page.password_edit.setText("s3cret")
    user_page.confirm_edit.setText("secret")
    wizard.next()
    assert user_page.message.text() == "The passwords do not match."
    assert wizard.currentId() == PAGE_USER
    user_page.confirm_edit.setText("s3cret")
    _next_to(qtbot, wizard, PAGE_LIBRARIES)
    assert state.user == {"Name": "alice", "Password": "s3cret"}

    lib_page = wizard.libraries_page
    qtbot.waitUntil(lambda: lib_page.loaded, timeout=5000)
    dialog = lib_page.open_add_library()
    dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("movies"))
    assert dialog.name_edit.text() == "Movies"
    dialog.add_folder_path(str(tmp_path / "nowhere"))
    qtbot.waitUntil(lambda: "No such folder" in dialog.message.text(), timeout=5000)
    assert dialog.folders() == []
    dialog.save()
    assert dialog.message.text() == "Add at least one folder to the library."
    dialog.choose_folder()
    picker = next(w for w in dialog.findChildren(QFileDialog))
    assert picker.testOption(QFileDialog.Option.DontUseNativeDialog)
    picker.setDirectory(str(tmp_path))
    picker.selectFile(str(movies))
    picker.accept()
    qtbot.waitUntil(lambda: dialog.folders() == [str(movies)], timeout=5000)
    with qtbot.waitSignal(dialog.libraryAdded, timeout=5000):
        dialog.save()
    qtbot.waitUntil(lambda: lib_page.library_list.count() == 1, timeout=5000)
    assert "Movies (Movies)" in lib_page.library_list.item(0).text()
    assert state.virtual_folders[0]["Name"] == "Movies"
    assert state.virtual_folders[0]["CollectionType"] == "movies"
    assert state.virtual_folders[0]["Locations"] == [str(movies)]
    _next_to(qtbot, wizard, PAGE_METADATA)

    meta = wizard.metadata_page
    qtbot.waitUntil(lambda: meta.loaded and meta.country_combo.count() == 2, timeout=5000)
    meta.language_combo.setCurrentIndex(meta.language_combo.findData("de"))
    meta.country_combo.setCurrentIndex(meta.country_combo.findData("DE"))
    _next_to(qtbot, wizard, PAGE_REMOTE)
    assert state.startup_config == {"UICulture": "de", "MetadataCountryCode": "DE",
                                    "PreferredMetadataLanguage": "de"}

    wizard.remote_page.remote_check.setChecked(False)
    _next_to(qtbot, wizard, PAGE_FINISH)
    assert state.remote_access == {"EnableRemoteAccess": False, "EnableAutomaticPortMapping": False}

    assert not state.wizard_completed
    with qtbot.waitSignal(wizard.setupCompleted, timeout=5000):
        wizard.button(QWizard.WizardButton.FinishButton).click()
    assert state.wizard_completed

    order = [(m, p) for m, p in state.requests if p.startswith("/Startup") or p.startswith("/Library")
             or p.startswith("/Localization")]
    posts = [p for m, p in order if m == "POST"]
    assert posts == ["/Startup/Configuration", "/Startup/User", "/Library/VirtualFolders",
                     "/Startup/Configuration", "/Startup/RemoteAccess", "/Startup/Complete"]


def test_wizard_reports_server_errors_in_the_page(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls  # noqa: ANN001
) -> None:
    wizard = FirstRunWizard(client, calls)
    qtbot.addWidget(wizard)
    wizard.show()
    page = wizard.language_page
    qtbot.waitUntil(lambda: page.isComplete(), timeout=5000)
    fake_server.state.fail_next("POST", "/Startup/Configuration", 500)
    wizard.next()
    assert page.busy
    qtbot.waitUntil(lambda: "did not accept" in page.message.text(), timeout=5000)
    assert "500" in page.message.text()
    assert wizard.currentId() == 0
    assert page.isComplete()
    _next_to(qtbot, wizard, PAGE_USER)


def test_wizard_page_offers_retry_when_the_server_is_down(qtbot, calls: BackgroundCalls) -> None:  # noqa: ANN001
    client = ServerClient("http://127.0.0.1:9", "k", timeout=2)
    wizard = FirstRunWizard(client, calls)
    qtbot.addWidget(wizard)
    wizard.show()
    page = wizard.language_page
    qtbot.waitUntil(lambda: page.retry_button.isVisible(), timeout=5000)
    assert "Cannot reach the server" in page.message.text()
    assert not page.isComplete()
