"""The whole first-run path with jellyfin-apiclient-python (the client behind the Kodi add-on and
jellyfin-mpv-shim) against a real `reelroom-server` process on an ephemeral port."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from jellyfin_apiclient_python import JellyfinClient
from jellyfin_apiclient_python.connection_manager import CONNECTION_STATE

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server_process(tmp_path):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.server_main", "--data-dir", str(tmp_path / "data"),
                             "--port", str(port), "--host", "127.0.0.1", "--no-lan"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if httpx.get(url + "/System/Ping", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(proc.stderr.read().decode())
        time.sleep(0.1)
    yield url
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0


def make_client(device_id: str = "pytest-device-id") -> JellyfinClient:
    client = JellyfinClient()
    client.config.app("Reelroom Tests", "1.0.0", "pytest-machine", device_id)
    client.config.data["auth.ssl"] = False
    return client


def test_first_run_with_a_real_client(server_process):
    url = server_process
    client = make_client()
    # Public info, as a client sees it before signing in.
    state = client.auth.connect_to_address(url)
    assert state["State"] == CONNECTION_STATE.ServerSignIn  # a server was found, no user yet
    public = client.jellyfin._get("System/Info/Public")
    assert public["ProductName"] == "Jellyfin Server" and public["Version"] == "10.10.7"
    assert public["StartupWizardCompleted"] is False

    # The wizard, in the web client's order.
    api = client.jellyfin
    assert api._get("Startup/Configuration")["UICulture"]
    assert len(api._get("Localization/Options")) > 10
    api._post("Startup/Configuration", {"UICulture": "en-US", "MetadataCountryCode": "US",
                                        "PreferredMetadataLanguage": "en"})
    api._get("Startup/User")
    api._post("Startup/User", {"Name": "mira", "Password": "pa55word"})
    assert len(api._get("Localization/Cultures")) > 100
    assert len(api._get("Localization/Countries")) > 200
    api._post("Startup/RemoteAccess", {"EnableRemoteAccess": True, "EnableAutomaticPortMapping": False})
    api._post("Startup/Complete")
    assert api._get("System/Info/Public")["StartupWizardCompleted"] is True

    # Create a second user as the admin, then sign in as each.
    result = client.auth.login(url, "mira", "pa55word")
    assert result["User"]["Name"] == "mira"
    assert result["ServerId"] == public["Id"]
    admin_token = client.config.data["auth.token"]
    new = client.jellyfin.new_user("jo", "jo-pass")
    assert new["Name"] == "jo"
    me = client.jellyfin.get_user()
    assert me["Name"] == "mira" and me["Policy"]["IsAdministrator"] is True

    jo = make_client("jo-phone")  # tokens are per device: a second device keeps the first signed in
    jo.auth.connect_to_address(url)
    jo_result = jo.auth.login(url, "jo", "jo-pass")
    jo_token = jo.config.data["auth.token"]
    assert jo.jellyfin.get_user()["Id"] == jo_result["User"]["Id"]

    # Sign out: the old token is refused afterwards.
    jo.jellyfin._post("Sessions/Logout")
    r = httpx.get(url + "/Users/Me", headers={"X-Emby-Token": jo_token})
    assert r.status_code == 401
    assert httpx.get(url + "/Users/Me", headers={"X-Emby-Token": admin_token}).status_code == 200
