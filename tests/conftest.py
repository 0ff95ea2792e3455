"""Shared fixtures: a real Reelroom server (uvicorn on 127.0.0.1, ephemeral port, fresh data
folder) and small helpers for talking to it like a Jellyfin client does."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

AUTH_BASE = 'MediaBrowser Client="Reelroom Tests", Device="pytest", DeviceId="{device}", Version="1.0.0"'


def auth_header(token: str | None = None, device: str = "test-device") -> dict[str, str]:
    value = AUTH_BASE.format(device=device)
    if token:
        value += f', Token="{token}"'
    return {"Authorization": value}


@dataclass
class LiveServer:
    url: str
    data_dir: Path
    runner: object
    thread: threading.Thread
    admin_token: str | None = None
    admin_id: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def ctx(self):
        return self.runner.ctx

    def client(self, token: str | None = None, device: str = "test-device") -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=auth_header(token, device), timeout=30)

    def admin(self) -> httpx.Client:
        assert self.admin_token, "use the `server` fixture (wizard completed) for an admin client"
        return self.client(self.admin_token, "admin-device")


def start_server(data_dir: Path, **options) -> LiveServer:
    from server.context import ServerOptions
    from server.runner import ServerRunner

    opts = ServerOptions(data_dir=data_dir, port=0, host="127.0.0.1", enable_lan=False, **options)
    runner = ServerRunner(opts)
    thread = threading.Thread(target=runner.serve, name="reelroom-test-server", daemon=True)
    thread.start()
    if not runner.ready.wait(120):
        raise RuntimeError("the test server did not become ready")
    return LiveServer(url=f"http://127.0.0.1:{runner.port}", data_dir=data_dir, runner=runner, thread=thread)


def stop_server(live: LiveServer) -> None:
    live.runner.request_shutdown()
    live.thread.join(20)
    assert not live.thread.is_alive(), "the server thread did not stop"


def complete_wizard(live: LiveServer, name: str = "admin", password: str = "s3cret!") -> None:
    with live.client() as c:
        assert c.post("/Startup/Configuration", json={"UICulture": "en-US", "MetadataCountryCode": "US",
                                                      "PreferredMetadataLanguage": "en"}).status_code == 204
        assert c.get("/Startup/User").status_code == 200
        assert c.post("/Startup/User", json={"Name": name, "Password": password}).status_code == 204
        assert c.post("/Startup/Complete").status_code == 204
        r = c.post("/Users/AuthenticateByName", json={"Username": name, "Pw": password})
        assert r.status_code == 200, r.text
        live.admin_token = r.json()["AccessToken"]
        live.admin_id = r.json()["User"]["Id"]


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A server whose startup wizard has not run."""
    live = start_server(tmp_path / "data")
    yield live
    stop_server(live)


@pytest.fixture
def server(fresh_server: LiveServer) -> LiveServer:
    """A server with the wizard completed and an admin signed in (``server.admin()``)."""
    complete_wizard(fresh_server)
    return fresh_server
