"""Blocking HTTP client for the Jellyfin-compatible API, used by the desktop UI.

Every call blocks: run them through ``ui.worker.BackgroundCalls`` so the Qt event loop never waits.
"""

from __future__ import annotations

import functools
import importlib.metadata
import platform
import sys
import tomllib
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

# httpx imports its command-line tool, and with it rich, pygments and click (about 6 MB resident),
# whenever those are installed; the app never runs it. A None entry makes that import fail, and
# httpx then leaves its CLI out.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpx  # noqa: E402

CLIENT_NAME = "Reelroom Desktop"


@functools.cache
def reelroom_version() -> str:
    """The installed Reelroom version, or the one in a source checkout's pyproject.toml."""
    try:
        return importlib.metadata.version("reelroom")
    except importlib.metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        return str(tomllib.loads(pyproject.read_text("utf-8"))["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "0.0.0"


class ApiError(Exception):
    """The server answered with an error status, or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ServerUnreachable(ApiError):
    """No HTTP answer at all: the server is not running or the address is wrong."""


class Unauthorized(ApiError):
    """The server refused the API key (401/403)."""


def authorization_header(device: str, device_id: str, version: str, token: str | None) -> str:
    """The ``MediaBrowser`` authorization value; values are URL-encoded except spaces."""
    pairs = {"Client": CLIENT_NAME, "Device": device, "DeviceId": device_id, "Version": version}
    if token:
        pairs["Token"] = token
    return "MediaBrowser " + ", ".join(f'{key}="{quote(value, safe=" ")}"' for key, value in pairs.items())


def _error_message(response: httpx.Response) -> str:
    detail = ""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        detail = str(body.get("detail") or body.get("Detail") or body.get("title") or body.get("Title") or "")
    elif response.text and len(response.text) < 300:
        detail = response.text.strip()
    reason = response.reason_phrase or "error"
    prefix = f"Server answered {response.status_code} {reason}"
    return f"{prefix}: {detail}" if detail else prefix


class ServerClient:
    """One Reelroom (or Jellyfin) server, reached at ``base_url`` with an API key."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        device: str | None = None,
        device_id: str | None = None,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.device = device or platform.node() or "Desktop"
        self.device_id = device_id or uuid.uuid5(uuid.NAMESPACE_DNS, self.device).hex
        header = authorization_header(self.device, self.device_id, reelroom_version(), api_key)
        self.authorization = header
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": header, "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
            # Every request goes to a path under base_url, without redirects: with an http:// base
            # no TLS is ever spoken, so the CA store is not loaded (~3 MiB resident in the tray).
            verify=not self.base_url.lower().startswith("http://"),
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ServerClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise ServerUnreachable(f"The server at {self.base_url} did not answer in time") from exc
        except httpx.TransportError as exc:
            raise ServerUnreachable(f"Cannot reach the server at {self.base_url}: {exc}") from exc
        if response.status_code in (401, 403):
            raise Unauthorized(_error_message(response), response.status_code)
        if response.status_code >= 400:
            raise ApiError(_error_message(response), response.status_code)
        return response

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError as exc:
            raise ApiError(f"The server sent something that is not JSON for {path}") from exc

    def _object(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """A JSON object reply (anything else is an ApiError)."""
        data = self._json(method, path, **kwargs)
        if not isinstance(data, dict):
            raise ApiError(f"The server sent {type(data).__name__} where an object was expected for {path}")
        return data

    def _list(self, method: str, path: str, **kwargs: Any) -> list[dict[str, Any]]:
        """A JSON array of objects reply (anything else is an ApiError)."""
        data = self._json(method, path, **kwargs)
        if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
            raise ApiError(f"The server sent something other than a list of objects for {path}")
        return data

    # -- system -----------------------------------------------------------------------------------

    def public_info(self) -> dict[str, Any]:
        return self._object("GET", "/System/Info/Public")

    def system_info(self) -> dict[str, Any]:
        return self._object("GET", "/System/Info")

    def system_configuration(self) -> dict[str, Any]:
        return self._object("GET", "/System/Configuration")

    def set_system_configuration(self, configuration: dict[str, Any]) -> None:
        self._request("POST", "/System/Configuration", json=configuration)

    def named_configuration(self, key: str) -> dict[str, Any]:
        return self._object("GET", f"/System/Configuration/{quote(key, safe='')}")

    def set_named_configuration(self, key: str, configuration: dict[str, Any]) -> None:
        self._request("POST", f"/System/Configuration/{quote(key, safe='')}", json=configuration)

    def web_client_status(self) -> dict[str, Any]:
        """Reelroom's own route: whether a web app is hosted at /web/, and where from."""
        return self._object("GET", "/Reelroom/WebClient")

    def install_web_client(self, path: str, sha256: str | None = None) -> dict[str, Any]:
        """Install the web app from an archive or folder on this machine (slow: minutes allowed)."""
        body: dict[str, Any] = {"Path": path}
        if sha256:
            body["Sha256"] = sha256
        return self._object("POST", "/Reelroom/WebClient/Install", json=body, timeout=600)

    def scheduled_tasks(self) -> list[dict[str, Any]]:
        return self._list("GET", "/ScheduledTasks", params={"isHidden": "false"})

    def item_counts(self) -> dict[str, int]:
        return self._object("GET", "/Items/Counts")

    # -- startup wizard ---------------------------------------------------------------------------

    def set_tmdb_key(self, api_key: str) -> bool:
        """Reelroom's own route: the server checks the key with a test call to TMDb (an ApiError
        when TMDb refuses it), then saves it. Returns whether TMDb is now set up."""
        return bool(self._json("POST", "/Reelroom/Metadata/TmdbKey", json={"ApiKey": api_key}).get("Enabled"))

    def startup_configuration(self) -> dict[str, Any]:
        return self._object("GET", "/Startup/Configuration")

    def set_startup_configuration(self, ui_culture: str, metadata_country: str, metadata_language: str) -> None:
        body = {
            "UICulture": ui_culture,
            "MetadataCountryCode": metadata_country,
            "PreferredMetadataLanguage": metadata_language,
        }
        self._request("POST", "/Startup/Configuration", json=body)

    def localization_options(self) -> list[dict[str, Any]]:
        return self._list("GET", "/Localization/Options")

    def cultures(self) -> list[dict[str, Any]]:
        return self._list("GET", "/Localization/Cultures")

    def countries(self) -> list[dict[str, Any]]:
        return self._list("GET", "/Localization/Countries")

    def startup_user(self) -> dict[str, Any]:
        return self._object("GET", "/Startup/User")

    def set_startup_user(self, name: str, password: str) -> None:
        self._request("POST", "/Startup/User", json={"Name": name, "Password": password})

    def set_remote_access(self, enable_remote_access: bool, enable_port_mapping: bool) -> None:
        body = {"EnableRemoteAccess": enable_remote_access, "EnableAutomaticPortMapping": enable_port_mapping}
        self._request("POST", "/Startup/RemoteAccess", json=body)

    def complete_startup(self) -> None:
        self._request("POST", "/Startup/Complete")

    # -- libraries --------------------------------------------------------------------------------

    def virtual_folders(self) -> list[dict[str, Any]]:
        return self._list("GET", "/Library/VirtualFolders")

    def add_virtual_folder(
        self, name: str, collection_type: str | None, paths: Iterable[str], refresh: bool = True
    ) -> None:
        params: dict[str, str] = {"name": name, "refreshLibrary": "true" if refresh else "false"}
        if collection_type and collection_type != "mixed":
            params["collectionType"] = collection_type
        options = {"Enabled": True, "PathInfos": [{"Path": path} for path in paths]}
        self._request("POST", "/Library/VirtualFolders", params=params, json={"LibraryOptions": options})

    def remove_virtual_folder(self, name: str, refresh: bool = True) -> None:
        params = {"name": name, "refreshLibrary": "true" if refresh else "false"}
        self._request("DELETE", "/Library/VirtualFolders", params=params)

    def rename_virtual_folder(self, name: str, new_name: str, refresh: bool = True) -> None:
        params = {"name": name, "newName": new_name, "refreshLibrary": "true" if refresh else "false"}
        self._request("POST", "/Library/VirtualFolders/Name", params=params)

    def add_media_path(self, name: str, path: str, refresh: bool = True) -> None:
        body = {"Name": name, "PathInfo": {"Path": path}}
        self._request(
            "POST", "/Library/VirtualFolders/Paths", params={"refreshLibrary": str(refresh).lower()}, json=body
        )

    def remove_media_path(self, name: str, path: str, refresh: bool = True) -> None:
        params = {"name": name, "path": path, "refreshLibrary": "true" if refresh else "false"}
        self._request("DELETE", "/Library/VirtualFolders/Paths", params=params)

    def update_library_options(self, library_id: str, options: dict[str, Any]) -> None:
        body = {"Id": library_id, "LibraryOptions": options}
        self._request("POST", "/Library/VirtualFolders/LibraryOptions", json=body)

    def folder_exists(self, path: str) -> bool:
        """Ask the server whether ``path`` is a folder it can see (the server's disk, not ours)."""
        try:
            self._request("POST", "/Environment/ValidatePath", json={"Path": path, "ValidateWritable": False})
        except ApiError as exc:
            if exc.status in (400, 404):
                return False
            raise
        return True

    def refresh_all_libraries(self) -> None:
        self._request("POST", "/Library/Refresh")

    def refresh_library(self, item_id: str) -> None:
        """Scan one library (its ``ItemId`` from ``virtual_folders``) for new and changed files."""
        params = {
            "Recursive": "true",
            "MetadataRefreshMode": "Default",
            "ImageRefreshMode": "Default",
            "ReplaceAllMetadata": "false",
            "ReplaceAllImages": "false",
        }
        self._request("POST", f"/Items/{quote(item_id, safe='')}/Refresh", params=params)

    # -- logs -------------------------------------------------------------------------------------

    def log_files(self) -> list[dict[str, Any]]:
        return self._list("GET", "/System/Logs")

    def log_bytes(self, name: str, start: int = 0) -> tuple[bytes, bool]:
        """Bytes of log ``name`` from offset ``start``.

        Returns ``(data, partial)``: ``partial`` is True when the server honoured the Range request and
        ``data`` starts at ``start``; otherwise ``data`` is the whole file.
        """
        headers = {"Range": f"bytes={start}-"} if start > 0 else {}
        try:
            response = self._request("GET", "/System/Logs/Log", params={"name": name}, headers=headers)
        except ApiError as exc:
            if exc.status == 416:  # nothing past ``start`` yet
                return b"", True
            raise
        return response.content, response.status_code == 206
