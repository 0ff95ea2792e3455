"""The TMDb API key in the native wizard's metadata step and in the tray's Settings, against a
real server (``ServerHost``) whose TMDb base URL points at a local fake."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWizard

from app.server_host import ServerHost
from tests.metadata.fakes import TMDB_KEY, FakeTmdb
from ui.api_client import ServerClient
from ui.settings import SettingsDialog
from ui.tmdb_key import TMDB_KEY_URL, WITH_KEY, WITHOUT_KEY
from ui.wizard import PAGE_FINISH, PAGE_LIBRARIES, PAGE_METADATA, PAGE_REMOTE, PAGE_USER, FirstRunWizard
from ui.worker import BackgroundCalls


@pytest.fixture
def host(tmp_path: Path) -> Iterator[ServerHost]:
    host = ServerHost(tmp_path / "data", port=0, host="127.0.0.1", enable_lan=False)
    host.start()
    assert host.wait_until_running(60), host.error
    yield host
    host.stop()


@pytest.fixture
def tmdb() -> Iterator[FakeTmdb]:
    fake = FakeTmdb().start()
    yield fake
    fake.stop()


@pytest.fixture
def desktop_client(host: ServerHost, tmdb: FakeTmdb) -> Iterator[ServerClient]:
    client = ServerClient(host.base_url, host.desktop_api_key(), device="pytest-desktop", timeout=15)
    client.set_named_configuration("tmdb", {"BaseUrl": tmdb.url, "ImageBaseUrl": tmdb.url + "/t/p/", "ApiKey": ""})
    yield client
    client.close()


def _next_to(qtbot, wizard: FirstRunWizard, page_id: int) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: wizard.currentPage().isComplete(), timeout=10_000)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == page_id, timeout=10_000)


def test_wizard_metadata_step_asks_for_and_checks_the_tmdb_key(
    qtbot, desktop_client: ServerClient, calls: BackgroundCalls, tmdb: FakeTmdb  # noqa: ANN001
) -> None:
    wizard = FirstRunWizard(desktop_client, calls)
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitUntil(lambda: wizard.language_page.loaded, timeout=10_000)
    _next_to(qtbot, wizard, PAGE_USER)
    user_page = wizard.user_page
    qtbot.waitUntil(lambda: user_page.loaded, timeout=10_000)
    user_page.name_edit.setText("alice")
    user_page.password_edit.setText("s3cret")
    user_page.confirm_edit.setText("s3cret")
    _next_to(qtbot, wizard, PAGE_LIBRARIES)
    _next_to(qtbot, wizard, PAGE_METADATA)

    meta = wizard.metadata_page
    qtbot.waitUntil(lambda: meta.loaded, timeout=10_000)
    # without a key the step says plainly what is missing, and links to where a key is got
    assert meta.tmdb.status.text() == WITHOUT_KEY and "posters" in WITHOUT_KEY
    assert TMDB_KEY_URL in meta.tmdb.link.text() and meta.tmdb.link.openExternalLinks()

    meta.tmdb.key_edit.setText("not-a-key")
    assert meta.tmdb.status.text() == WITH_KEY
    wizard.next()
    qtbot.waitUntil(lambda: "did not accept this API key" in meta.message.text(), timeout=10_000)
    assert wizard.currentId() == PAGE_METADATA
    assert desktop_client.named_configuration("tmdb")["ApiKey"] == ""

    meta.tmdb.key_edit.setText(TMDB_KEY)
    _next_to(qtbot, wizard, PAGE_REMOTE)
    assert desktop_client.named_configuration("tmdb")["ApiKey"] == TMDB_KEY
    assert [r.query.get("api_key") for r in tmdb.requests if r.path == "/3/configuration"] == ["not-a-key", TMDB_KEY]
    _next_to(qtbot, wizard, PAGE_FINISH)
    with qtbot.waitSignal(wizard.setupCompleted, timeout=10_000):
        wizard.button(QWizard.WizardButton.FinishButton).click()


def test_wizard_without_a_key_changes_nothing(
    qtbot, desktop_client: ServerClient, calls: BackgroundCalls, tmdb: FakeTmdb  # noqa: ANN001
) -> None:
    wizard = FirstRunWizard(desktop_client, calls)
    qtbot.addWidget(wizard)
    wizard.show()
    wizard.setStartId(PAGE_METADATA)
    wizard.restart()
    meta = wizard.metadata_page
    qtbot.waitUntil(lambda: meta.loaded, timeout=10_000)
    _next_to(qtbot, wizard, PAGE_REMOTE)
    assert not [r for r in tmdb.requests if r.path == "/3/configuration"]
    assert desktop_client.named_configuration("tmdb")["ApiKey"] == ""


def test_settings_has_the_tmdb_key(qtbot, desktop_client: ServerClient, calls: BackgroundCalls,  # noqa: ANN001
                                   tmdb: FakeTmdb) -> None:
    dialog = SettingsDialog(desktop_client, calls)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.loaded and dialog.tmdb.isEnabled(), timeout=10_000)
    assert dialog.tmdb.key() == "" and dialog.tmdb.status.text() == WITHOUT_KEY

    dialog.tmdb.key_edit.setText("wrong")
    dialog.save()
    qtbot.waitUntil(lambda: "did not accept this API key" in dialog.message.text(), timeout=10_000)
    assert dialog.isVisible() and desktop_client.named_configuration("tmdb")["ApiKey"] == ""

    dialog.tmdb.key_edit.setText(TMDB_KEY)
    with qtbot.waitSignal(dialog.saved, timeout=10_000):
        dialog.save()
    assert desktop_client.named_configuration("tmdb")["ApiKey"] == TMDB_KEY

    # opened again: the saved key is shown, and saving without touching it calls TMDb no more
    again = SettingsDialog(desktop_client, calls)
    qtbot.addWidget(again)
    qtbot.waitUntil(lambda: again.loaded and again.tmdb.isEnabled(), timeout=10_000)
    assert again.tmdb.key() == TMDB_KEY and again.tmdb.status.text() == WITH_KEY
    checks = len([r for r in tmdb.requests if r.path == "/3/configuration"])
    with qtbot.waitSignal(again.saved, timeout=10_000):
        again.save()
    assert len([r for r in tmdb.requests if r.path == "/3/configuration"]) == checks
