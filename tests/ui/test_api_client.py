from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.fake_server import FakeServerThread
from ui.api_client import ApiError, ServerClient, ServerUnreachable, authorization_header


def test_authorization_header_names_reelroom_and_carries_token() -> None:
    header = authorization_header("My PC", "abc", "0.1.0", "tok123")
    assert header.startswith("MediaBrowser ")
    assert 'Client="Reelroom Desktop"' in header
    assert 'Device="My PC"' in header and 'DeviceId="abc"' in header
    assert 'Version="0.1.0"' in header and 'Token="tok123"' in header
    assert "Token" not in authorization_header("pc", "id", "1", None)
    assert '"a%22b%2Cc"' in authorization_header('a"b,c', "id", "1", None)


def test_client_sends_api_key_and_reads_public_info(fake_server: FakeServerThread, client: ServerClient) -> None:
    info = client.public_info()
    assert info["StartupWizardCompleted"] is False
    assert f'Token="{fake_server.state.api_key}"' in fake_server.state.auth_headers[-1]


def test_server_errors_carry_status_and_detail(fake_server: FakeServerThread, client: ServerClient) -> None:
    with pytest.raises(ApiError) as info:
        client.rename_virtual_folder("nope", "other")
    assert info.value.status == 404
    assert "No such library" in str(info.value)


def test_folder_exists_asks_the_server(client: ServerClient, tmp_path: Path) -> None:
    assert client.folder_exists(str(tmp_path)) is True
    assert client.folder_exists(str(tmp_path / "missing")) is False


def test_unreachable_server_is_a_clear_error() -> None:
    client = ServerClient("http://127.0.0.1:9", "k", timeout=2)
    with pytest.raises(ServerUnreachable, match="Cannot reach"):
        client.public_info()
