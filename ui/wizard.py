"""First-run wizard: the web wizard's steps, driving the Startup API in the same order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)

from ui.api_client import ServerClient
from ui.folder_picker import FolderDialogFactory, system_folder_dialog
from ui.libraries import AddLibraryDialog, MessageLabel, content_type_label
from ui.tmdb_key import TmdbKeyField
from ui.worker import BackgroundCalls

PAGE_LANGUAGE, PAGE_USER, PAGE_LIBRARIES, PAGE_METADATA, PAGE_REMOTE, PAGE_FINISH = range(6)


class ServerStepPage(QWizardPage):
    """A page that loads from the server when shown and saves to it when the person clicks Next.

    Saving is asynchronous: ``validatePage`` starts the call and says no; when the call succeeds the
    page moves the wizard on itself, and ``validatePage`` then says yes.
    """

    def __init__(self, client: ServerClient, calls: BackgroundCalls) -> None:
        super().__init__()
        self.client = client
        self.calls = calls
        self.loaded = False
        self._busy = False
        self._saved = False
        self.message = MessageLabel()
        self.retry_button = QPushButton("Try again")
        self.retry_button.hide()
        self.retry_button.clicked.connect(self._load)
        self.body = QVBoxLayout()
        layout = QVBoxLayout(self)
        layout.addLayout(self.body)
        layout.addStretch()
        layout.addWidget(self.message)
        layout.addWidget(self.retry_button)

    # -- to override ------------------------------------------------------------------------------

    def load_call(self) -> Callable[[], Any] | None:
        """A blocking function fetching what the page shows, or None."""
        return None

    def show_loaded(self, data: Any) -> None:
        """Fill the widgets from ``load_call``'s result."""

    def input_problem(self) -> str | None:
        """What is wrong with the person's input, in words, or None."""
        return None

    def save_call(self) -> Callable[[], Any] | None:
        """A blocking function sending the page's choices, or None if nothing to send."""
        return None

    # -- machinery --------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._busy

    def initializePage(self) -> None:
        if not self.loaded:
            self._load()

    def _load(self) -> None:
        fn = self.load_call()
        self.retry_button.hide()
        if fn is None:
            self.loaded = True
            self.completeChanged.emit()
            return
        self._set_busy(True)
        self.message.show_info("Asking the server…")
        self.calls.submit(fn, on_result=self._loaded, on_error=self._load_failed, context=self)

    def _loaded(self, data: Any) -> None:
        self._set_busy(False)
        self.message.clear_message()
        try:
            self.show_loaded(data)
        except ValueError as exc:
            self.message.show_error(str(exc))
            self.retry_button.show()
            return
        self.loaded = True
        self.completeChanged.emit()

    def _load_failed(self, error: Exception) -> None:
        self._set_busy(False)
        self.message.show_error(f"Could not load this step from the server. {error}")
        self.retry_button.show()

    def isComplete(self) -> bool:
        return self.loaded and not self._busy

    def validatePage(self) -> bool:
        if self._saved:
            self._saved = False
            return True
        if self._busy or not self.loaded:
            return False
        problem = self.input_problem()
        if problem:
            self.message.show_error(problem)
            return False
        fn = self.save_call()
        if fn is None:
            self.message.clear_message()
            return True
        self._set_busy(True)
        self.message.show_info("Saving…")
        self.calls.submit(fn, on_result=self._save_done, on_error=self._save_failed, context=self)
        return False

    def _save_done(self, _: Any) -> None:
        self._set_busy(False)
        self.message.clear_message()
        self._saved = True
        wizard = self.wizard()
        if wizard is None or wizard.currentPage() is not self:
            self._saved = False
            return
        if wizard.nextId() == -1:
            wizard.accept()
        else:
            wizard.next()

    def _save_failed(self, error: Exception) -> None:
        self._set_busy(False)
        self.message.show_error(f"The server did not accept this step. {error}")

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.completeChanged.emit()


class LanguagePage(ServerStepPage):
    def __init__(self, client: ServerClient, calls: BackgroundCalls) -> None:
        super().__init__(client, calls)
        self.setTitle("Welcome to Reelroom")
        self.setSubTitle("A few steps set up your media server. First, pick the language Reelroom speaks.")
        self.language_combo = QComboBox()
        form = QFormLayout()
        form.addRow("Display language:", self.language_combo)
        self.body.addLayout(form)
        self._config: dict[str, Any] = {}

    def load_call(self) -> Callable[[], Any]:
        client = self.client
        return lambda: (client.startup_configuration(), client.localization_options())

    def show_loaded(self, data: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
        self._config, options = data
        if not options:
            raise ValueError("The server offered no display languages.")
        self.language_combo.clear()
        for option in options:
            self.language_combo.addItem(str(option.get("Name")), option.get("Value"))
        index = self.language_combo.findData(self._config.get("UICulture"))
        self.language_combo.setCurrentIndex(max(index, 0))

    def save_call(self) -> Callable[[], Any]:
        culture = str(self.language_combo.currentData())
        country = str(self._config.get("MetadataCountryCode") or "")
        language = str(self._config.get("PreferredMetadataLanguage") or "")
        return lambda: self.client.set_startup_configuration(culture, country, language)


class AdminUserPage(ServerStepPage):
    def __init__(self, client: ServerClient, calls: BackgroundCalls) -> None:
        super().__init__(client, calls)
        self.setTitle("Your administrator account")
        self.setSubTitle("This account manages Reelroom. You can add more people later.")
        self.name_edit = QLineEdit()
        self.password_edit = QLineEdit()
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.confirm_edit = QLineEdit()
        self.confirm_edit.setEchoMode(QLineEdit.EchoMode.Password)
        form = QFormLayout()
        form.addRow("User name:", self.name_edit)
        form.addRow("Password:", self.password_edit)
        form.addRow("Confirm password:", self.confirm_edit)
        self.body.addLayout(form)

    def load_call(self) -> Callable[[], Any]:
        return self.client.startup_user

    def show_loaded(self, data: dict[str, Any]) -> None:
        if not self.name_edit.text():
            self.name_edit.setText(str(data.get("Name") or ""))

    def input_problem(self) -> str | None:
        if not self.name_edit.text().strip():
            return "Enter a user name."
        if self.password_edit.text() != self.confirm_edit.text():
            return "The passwords do not match."
        return None

    def save_call(self) -> Callable[[], Any]:
        name, password = self.name_edit.text().strip(), self.password_edit.text()
        return lambda: self.client.set_startup_user(name, password)


class LibrariesPage(ServerStepPage):
    def __init__(
        self, client: ServerClient, calls: BackgroundCalls, folder_dialog_factory: FolderDialogFactory
    ) -> None:
        super().__init__(client, calls)
        self.setTitle("Your media libraries")
        self.setSubTitle("Tell Reelroom where your movies, shows, music and photos are. You can do this later too.")
        self._factory = folder_dialog_factory
        self.library_list = QListWidget()
        self.add_button = QPushButton("Add library…")
        self.add_button.clicked.connect(self.open_add_library)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addStretch()
        self.body.addWidget(self.library_list)
        self.body.addLayout(buttons)

    def initializePage(self) -> None:
        self._load()

    def load_call(self) -> Callable[[], Any]:
        return self.client.virtual_folders

    def show_loaded(self, data: list[dict[str, Any]]) -> None:
        self.library_list.clear()
        for library in data:
            folders = ", ".join(library.get("Locations") or [])
            kind = content_type_label(library.get("CollectionType"))
            self.library_list.addItem(f"{library.get('Name')} ({kind}): {folders}")

    def open_add_library(self) -> AddLibraryDialog:
        dialog = AddLibraryDialog(self.client, self.calls, self._factory, self)
        dialog.libraryAdded.connect(lambda _: self._load())
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog


class MetadataPage(ServerStepPage):
    def __init__(self, client: ServerClient, calls: BackgroundCalls) -> None:
        super().__init__(client, calls)
        self.setTitle("Metadata language")
        self.setSubTitle("Reelroom looks up titles, descriptions and artwork in this language and country.")
        self.language_combo = QComboBox()
        self.country_combo = QComboBox()
        form = QFormLayout()
        form.addRow("Language:", self.language_combo)
        form.addRow("Country:", self.country_combo)
        self.body.addLayout(form)
        self.tmdb = TmdbKeyField()
        self.body.addWidget(self.tmdb)
        self._config: dict[str, Any] = {}

    def initializePage(self) -> None:
        self.loaded = False
        self._load()

    def load_call(self) -> Callable[[], Any]:
        client = self.client
        return lambda: (client.startup_configuration(), client.cultures(), client.countries())

    def show_loaded(self, data: tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]) -> None:
        self._config, cultures, countries = data
        if not cultures or not countries:
            raise ValueError("The server sent no languages or countries, so setup cannot continue.")
        self.language_combo.clear()
        for culture in sorted(cultures, key=lambda c: str(c.get("DisplayName"))):
            self.language_combo.addItem(str(culture.get("DisplayName")), culture.get("TwoLetterISOLanguageName"))
        self.country_combo.clear()
        for country in sorted(countries, key=lambda c: str(c.get("DisplayName"))):
            self.country_combo.addItem(str(country.get("DisplayName")), country.get("TwoLetterISORegionName"))
        self.language_combo.setCurrentIndex(max(0, self.language_combo.findData(
            self._config.get("PreferredMetadataLanguage"))))
        self.country_combo.setCurrentIndex(max(0, self.country_combo.findData(
            self._config.get("MetadataCountryCode"))))

    def save_call(self) -> Callable[[], Any]:
        culture = str(self._config.get("UICulture") or "")
        language = str(self.language_combo.currentData())
        country = str(self.country_combo.currentData())
        key = self.tmdb.key()
        client = self.client

        def save() -> None:
            client.set_startup_configuration(culture, country, language)
            if key:  # checked by the server with a test call; a refused key keeps the wizard here
                client.set_tmdb_key(key)

        return save


class RemoteAccessPage(ServerStepPage):
    def __init__(self, client: ServerClient, calls: BackgroundCalls) -> None:
        super().__init__(client, calls)
        self.setTitle("Remote access")
        self.setSubTitle("Choose whether devices outside your home network may connect to Reelroom.")
        self.remote_check = QCheckBox("Allow remote connections to this server")
        self.remote_check.setChecked(True)
        self.port_mapping_check = QCheckBox("Open the port on my router automatically (UPnP)")
        self.body.addWidget(self.remote_check)
        self.body.addWidget(self.port_mapping_check)

    def save_call(self) -> Callable[[], Any]:
        remote, mapping = self.remote_check.isChecked(), self.port_mapping_check.isChecked()
        return lambda: self.client.set_remote_access(remote, mapping)


class FinishPage(ServerStepPage):
    def __init__(self, client: ServerClient, calls: BackgroundCalls) -> None:
        super().__init__(client, calls)
        self.setTitle("Reelroom is ready")
        self.setSubTitle("Click Finish to save. Your libraries will be scanned in the background.")
        text = QLabel("Open Reelroom from its tray icon, or use any Jellyfin app on your devices to watch.")
        text.setWordWrap(True)
        self.body.addWidget(text)

    def save_call(self) -> Callable[[], Any]:
        return self.client.complete_startup


class FirstRunWizard(QWizard):
    """The setup steps in the web wizard's order; emits ``setupCompleted`` once the server says done."""

    setupCompleted = Signal()

    def __init__(
        self,
        client: ServerClient,
        calls: BackgroundCalls,
        folder_dialog_factory: FolderDialogFactory = system_folder_dialog,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reelroom setup")
        self.setOption(QWizard.WizardOption.NoBackButtonOnLastPage, True)
        self.language_page = LanguagePage(client, calls)
        self.user_page = AdminUserPage(client, calls)
        self.libraries_page = LibrariesPage(client, calls, folder_dialog_factory)
        self.metadata_page = MetadataPage(client, calls)
        self.remote_page = RemoteAccessPage(client, calls)
        self.finish_page = FinishPage(client, calls)
        for page_id, page in enumerate((self.language_page, self.user_page, self.libraries_page,
                                        self.metadata_page, self.remote_page, self.finish_page)):
            self.setPage(page_id, page)
        self.setStartId(PAGE_LANGUAGE)
        self.accepted.connect(self.setupCompleted.emit)
