"""Desktop UI tests run offscreen against a fake Jellyfin-API server on 127.0.0.1."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.ui.fake_server import FakeJellyfin, FakeServerThread  # noqa: E402
from ui.api_client import ServerClient  # noqa: E402
from ui.events import ServerEvents  # noqa: E402
from ui.worker import BackgroundCalls  # noqa: E402


@pytest.fixture(autouse=True)
def _no_socket_readers_left() -> Iterator[None]:
    """Socket readers of a test's tray end with the test, not later in another test."""
    yield
    readers = list(ServerEvents.instances)
    for reader in readers:
        reader.stop()
    for reader in readers:
        reader.wait(5)


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[FakeServerThread]:
    log_dir = tmp_path / "server-logs"
    log_dir.mkdir()
    server = FakeServerThread(FakeJellyfin(log_dir=log_dir))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def client(fake_server: FakeServerThread) -> Iterator[ServerClient]:
    client = ServerClient(fake_server.base_url, fake_server.state.api_key, device="pytest", timeout=5)
    yield client
    client.close()


@pytest.fixture
def calls(qtbot) -> Iterator[BackgroundCalls]:  # noqa: ANN001
    calls = BackgroundCalls()
    yield calls
    qtbot.waitUntil(lambda: calls.pending == 0, timeout=10_000)
    calls.wait_for_done()
