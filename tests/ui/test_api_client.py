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


def test_a_reply_of_the_wrong_json_shape_is_an_api_error() -> None:
    """An object where a list is expected (or the reverse) is an ApiError naming the path, not a
    crash further on in the widget that asked."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = json.dumps([1, 2] if self.path.startswith("/System/Info") else {"Items": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        client = ServerClient(f"http://127.0.0.1:{server.server_address[1]}", "k", timeout=5)
        with pytest.raises(ApiError, match="list where an object was expected for /System/Info/Public"):
            client.public_info()
        with pytest.raises(ApiError, match="other than a list of objects for /ScheduledTasks"):
            client.scheduled_tasks()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _ca_certificates(client: ServerClient) -> int:
    context = client._http._transport._pool._ssl_context  # type: ignore[attr-defined]
    return context.cert_store_stats()["x509_ca"]


def test_an_http_client_loads_no_ca_store_and_an_https_one_verifies() -> None:
    import ssl

    plain = ServerClient("http://127.0.0.1:9", "k")
    secure = ServerClient("https://media.example", "k")
    try:
        assert _ca_certificates(plain) == 0  # no TLS over http://: the CA store (~3 MiB) stays unloaded
        context = secure._http._transport._pool._ssl_context  # type: ignore[attr-defined]
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        assert _ca_certificates(secure) > 0
    finally:
        plain.close()
        secure.close()

