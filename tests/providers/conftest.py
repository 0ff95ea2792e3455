"""One signed-in server per test module (tests use distinct item paths and set up the providers
they use themselves)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import LiveServer, complete_wizard, start_server, stop_server


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = start_server(tmp_path_factory.mktemp("providers") / "data")
    complete_wizard(live)
    yield live
    stop_server(live)
