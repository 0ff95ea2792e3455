"""A tiny in-memory Jellyfin-API server for desktop UI tests (Litestar on uvicorn, in a thread).

It implements only the endpoints the desktop UI calls, with the status codes the 10.10.7 spec lists.
"""

from __future__ import annotations

import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvicorn
from litestar import Litestar, Request, Response, delete, get, post
from litestar.params import FromPath, JSONBody

PUBLIC_PATHS = {"/System/Info/Public", "/repository/manifest.json"}


def _problem(status: int, detail: str) -> Response[Any]:
    return Response({"title": detail, "status": status, "detail": detail}, status_code=status)


def _no_content() -> Response[Any]:
    return Response(None, status_code=204)


def _token(header: str) -> str | None:
    match = re.search(r'Token="([^"]*)"', header)
    return match.group(1) if match else None


@dataclass
class FakeJellyfin:
    """The server's state; tests read and change it directly (guard with ``lock``)."""

    log_dir: Path
    api_key: str = field(default_factory=lambda: uuid.uuid4().hex)
    server_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    lock: threading.Lock = field(default_factory=threading.Lock)
    wizard_completed: bool = False
    startup_config: dict[str, str] = field(
        default_factory=lambda: {"UICulture": "en-US", "MetadataCountryCode": "US", "PreferredMetadataLanguage": "en"}
    )
    user: dict[str, str | None] = field(default_factory=lambda: {"Name": "reelroom", "Password": None})
    remote_access: dict[str, bool] | None = None
    virtual_folders: list[dict[str, Any]] = field(default_factory=list)
    library_refreshes: int = 0
    item_refreshes: list[str] = field(default_factory=list)
    scan_task: dict[str, Any] = field(
        default_factory=lambda: {
            "Name": "Scan Media Library",
            "Key": "RefreshLibrary",
            "Id": uuid.uuid4().hex,
            "Category": "Library",
            "State": "Idle",
            "IsHidden": False,
        }
    )
    item_counts: dict[str, int] = field(
        default_factory=lambda: {"MovieCount": 0, "SeriesCount": 0, "EpisodeCount": 0, "SongCount": 0,
                                 "AlbumCount": 0, "ItemCount": 0}
    )
    system_config: dict[str, Any] = field(
        default_factory=lambda: {"ServerName": "Reelroom Test", "IsStartupWizardCompleted": False,
                                 "LogFileRetentionDays": 3}
    )
    named_config: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {
            "encoding": {"HardwareAccelerationType": "none", "EncodingThreadCount": -1},
            "network": {"InternalHttpPort": 8096, "AutoDiscovery": True, "EnableRemoteAccess": True},
            "filesystem": {"RestrictToAllowedRoots": False, "AllowedRoots": []},
        }
    )
    manifest: list[dict[str, Any]] = field(default_factory=list)
    honor_range: bool = True
    requests: list[tuple[str, str]] = field(default_factory=list)
    auth_headers: list[str] = field(default_factory=list)
    failures: dict[tuple[str, str], int] = field(default_factory=dict)

    def calls(self, method: str, path: str) -> int:
        with self.lock:
            return sum(1 for m, p in self.requests if m == method and p == path)

    def fail_next(self, method: str, path: str, status: int) -> None:
        with self.lock:
            self.failures[(method, path)] = status

    def folder(self, name: str) -> dict[str, Any] | None:
        return next((f for f in self.virtual_folders if f["Name"].lower() == name.lower()), None)


def build_app(state: FakeJellyfin, port_ref: list[int]) -> Litestar:
    def gate(request: Request[Any, Any, Any]) -> Response[Any] | None:
        path = request.url.path
        with state.lock:
            state.requests.append((request.method, path))
            state.auth_headers.append(request.headers.get("authorization", ""))
            status = state.failures.pop((request.method, path), None)
            completed = state.wizard_completed
        if status is not None:
            return _problem(status, f"Injected failure for {path}")
        if completed and path not in PUBLIC_PATHS:
            if _token(request.headers.get("authorization", "")) != state.api_key:
                return Response(None, status_code=401)
        return None

    @get("/System/Info/Public")
    async def public_info() -> dict[str, Any]:
        return {
            "LocalAddress": f"http://127.0.0.1:{port_ref[0]}",
            "ServerName": state.system_config["ServerName"],
            "Version": "10.10.7",
            "ProductName": "Jellyfin Server",
            "OperatingSystem": "",
            "Id": state.server_id,
            "StartupWizardCompleted": state.wizard_completed,
        }

    @get("/System/Info")
    async def system_info() -> dict[str, Any]:
        return {"ServerName": state.system_config["ServerName"], "Version": "10.10.7", "Id": state.server_id,
                "LogPath": str(state.log_dir), "StartupWizardCompleted": state.wizard_completed}

    @get("/System/Configuration")
    async def get_config() -> dict[str, Any]:
        return dict(state.system_config)

    @post("/System/Configuration", status_code=204)
    async def set_config(data: JSONBody[dict[str, Any]]) -> None:
        with state.lock:
            state.system_config = data

    @get("/System/Configuration/{key:str}")
    async def get_named(key: FromPath[str]) -> Response[Any]:
        if key.lower() not in state.named_config:
            return _problem(404, f"No configuration named {key}")
        return Response(dict(state.named_config[key.lower()]))

    @post("/System/Configuration/{key:str}", status_code=204)
    async def set_named(key: FromPath[str], data: JSONBody[dict[str, Any]]) -> None:
        with state.lock:
            state.named_config[key.lower()] = data

    @get("/ScheduledTasks")
    async def tasks() -> list[dict[str, Any]]:
        return [dict(state.scan_task)]

    @get("/Items/Counts")
    async def counts() -> dict[str, int]:
        return dict(state.item_counts)

    @get("/Startup/Configuration")
    async def startup_config() -> dict[str, str]:
        return dict(state.startup_config)

    @post("/Startup/Configuration", status_code=204)
    async def set_startup_config(data: JSONBody[dict[str, Any]]) -> None:
        with state.lock:
            state.startup_config = {k: data[k] for k in ("UICulture", "MetadataCountryCode", "PreferredMetadataLanguage")}

    @get("/Localization/Options")
    async def options() -> list[dict[str, str]]:
        return [{"Name": "English", "Value": "en-US"}, {"Name": "Deutsch", "Value": "de"},
                {"Name": "Français", "Value": "fr"}]

    @get("/Localization/Cultures")
    async def cultures() -> list[dict[str, Any]]:
        return [
            {"Name": "English", "DisplayName": "English", "TwoLetterISOLanguageName": "en",
             "ThreeLetterISOLanguageName": "eng", "ThreeLetterISOLanguageNames": ["eng"]},
            {"Name": "German", "DisplayName": "German", "TwoLetterISOLanguageName": "de",
             "ThreeLetterISOLanguageName": "deu", "ThreeLetterISOLanguageNames": ["deu", "ger"]},
        ]

    @get("/Localization/Countries")
    async def countries() -> list[dict[str, str]]:
        return [
            {"Name": "US", "DisplayName": "United States", "TwoLetterISORegionName": "US",
             "ThreeLetterISORegionName": "USA"},
            {"Name": "DE", "DisplayName": "Germany", "TwoLetterISORegionName": "DE",
             "ThreeLetterISORegionName": "DEU"},
        ]

    @get("/Startup/User")
    async def startup_user() -> Response[Any]:
        if state.wizard_completed:
            return Response(None, status_code=401)
        hashed = None if state.user["Password"] is None else "$argon2$" + str(hash(state.user["Password"]))
        return Response({"Name": state.user["Name"], "Password": hashed})

    @post("/Startup/User")
    async def set_startup_user(data: JSONBody[dict[str, Any]]) -> Response[Any]:
        if not str(data.get("Name") or "").strip():
            return _problem(400, "Name is required")
        with state.lock:
            state.user = {"Name": data["Name"], "Password": data.get("Password")}
        return _no_content()

    @post("/Startup/RemoteAccess", status_code=204)
    async def remote_access(data: JSONBody[dict[str, Any]]) -> None:
        with state.lock:
            state.remote_access = {k: bool(data[k]) for k in ("EnableRemoteAccess", "EnableAutomaticPortMapping")}

    @post("/Startup/Complete", status_code=204)
    async def complete() -> None:
        with state.lock:
            state.wizard_completed = True
            state.system_config["IsStartupWizardCompleted"] = True

    @get("/Library/VirtualFolders")
    async def folders() -> list[dict[str, Any]]:
        return [dict(f) for f in state.virtual_folders]

    @post("/Library/VirtualFolders")
    async def add_folder(request: Request[Any, Any, Any]) -> Response[Any]:
        name = request.query_params.get("name", "").strip()
        body = await request.json() if await request.body() else {}
        infos = ((body or {}).get("LibraryOptions") or {}).get("PathInfos") or []
        paths = [info["Path"] for info in infos] + request.query_params.getall("paths", [])
        if not name:
            return _problem(400, "Name is required")
        if state.folder(name):
            return _problem(400, f"There is already a media library with the name {name}")
        missing = [p for p in paths if not Path(p).is_dir()]
        if missing:
            return _problem(404, f"The path {missing[0]} does not exist")
        with state.lock:
            state.virtual_folders.append({
                "Name": name,
                "CollectionType": request.query_params.get("collectionType"),
                "Locations": paths,
                "ItemId": uuid.uuid4().hex,
                "LibraryOptions": body.get("LibraryOptions") or {},
            })
        return _no_content()

    @delete("/Library/VirtualFolders", status_code=200)
    async def remove_folder(request: Request[Any, Any, Any]) -> Response[Any]:
        folder = state.folder(request.query_params.get("name", ""))
        if folder is None:
            return _problem(404, "No such library")
        with state.lock:
            state.virtual_folders.remove(folder)
        return _no_content()

    @post("/Library/VirtualFolders/Name")
    async def rename_folder(request: Request[Any, Any, Any]) -> Response[Any]:
        name = request.query_params.get("name", "")
        new_name = request.query_params.get("newName", "")
        if not name.strip() or not new_name.strip():
            return _problem(400, "Name and new name are required")
        folder = state.folder(name)
        if folder is None:
            return _problem(404, "No such library")
        if state.folder(new_name) and new_name.lower() != name.lower():
            return _problem(409, "A library with that name already exists")
        with state.lock:
            folder["Name"] = new_name
        return _no_content()

    @post("/Library/VirtualFolders/Paths")
    async def add_path(data: JSONBody[dict[str, Any]]) -> Response[Any]:
        folder = state.folder(str(data.get("Name") or ""))
        path = data.get("Path") or (data.get("PathInfo") or {}).get("Path")
        if folder is None:
            return _problem(404, "No such library")
        if not path or not Path(path).is_dir():
            return _problem(404, f"The path {path} does not exist")
        with state.lock:
            folder["Locations"].append(path)
        return _no_content()

    @delete("/Library/VirtualFolders/Paths", status_code=200)
    async def remove_path(request: Request[Any, Any, Any]) -> Response[Any]:
        name = request.query_params.get("name", "")
        if not name.strip():
            return _problem(400, "Name is required")
        folder = state.folder(name)
        path = request.query_params.get("path", "")
        if folder is None or path not in folder["Locations"]:
            return _problem(404, "No such library or path")
        with state.lock:
            folder["Locations"].remove(path)
        return _no_content()

    @post("/Library/VirtualFolders/LibraryOptions")
    async def library_options(data: JSONBody[dict[str, Any]]) -> Response[Any]:
        folder = next((f for f in state.virtual_folders if f["ItemId"] == data.get("Id")), None)
        if folder is None:
            return _problem(404, "No such library")
        with state.lock:
            folder["LibraryOptions"] = data.get("LibraryOptions") or {}
        return _no_content()

    @post("/Environment/ValidatePath")
    async def validate_path(data: JSONBody[dict[str, Any]]) -> Response[Any]:
        path = Path(str(data.get("Path") or ""))
        exists = path.is_file() if data.get("IsFile") else path.is_dir()
        if not str(data.get("Path") or "") or not exists:
            return _problem(404, f"Path not found: {path}")
        return _no_content()

    @post("/Library/Refresh", status_code=204)
    async def refresh_all() -> None:
        with state.lock:
            state.library_refreshes += 1

    @post("/Items/{item_id:str}/Refresh")
    async def refresh_item(item_id: FromPath[str]) -> Response[Any]:
        if not any(f["ItemId"] == item_id for f in state.virtual_folders):
            return _problem(404, "No such item")
        with state.lock:
            state.item_refreshes.append(item_id)
        return _no_content()

    @get("/System/Logs")
    async def logs() -> list[dict[str, Any]]:
        files = []
        for path in sorted(state.log_dir.glob("*.log")):
            stat = path.stat()
            stamp = datetime.fromtimestamp(stat.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            files.append({"Name": path.name, "Size": stat.st_size, "DateCreated": stamp, "DateModified": stamp})
        return files

    @get("/System/Logs/Log")
    async def log_file(request: Request[Any, Any, Any]) -> Response[Any]:
        name = request.query_params.get("name", "")
        path = state.log_dir / Path(name).name
        if not name or not path.is_file():
            return _problem(404, "No such log file")
        data = path.read_bytes()
        match = re.fullmatch(r"bytes=(\d+)-", request.headers.get("range", ""))
        if match and state.honor_range:
            start = int(match.group(1))
            if start >= len(data):
                return Response(b"", status_code=416, media_type="text/plain")
            return Response(data[start:], status_code=206, media_type="text/plain")
        return Response(data, media_type="text/plain")

    @get("/repository/manifest.json")
    async def manifest() -> list[dict[str, Any]]:
        return list(state.manifest)

    handlers = [
        public_info, system_info, get_config, set_config, get_named, set_named, tasks, counts, startup_config,
        set_startup_config, options, cultures, countries, startup_user, set_startup_user, remote_access, complete,
        folders, add_folder, remove_folder, rename_folder, add_path, remove_path, library_options, validate_path,
        refresh_all, refresh_item, logs, log_file, manifest,
    ]
    return Litestar(route_handlers=handlers, before_request=gate, debug=False)


class FakeServerThread:
    """Runs the fake on 127.0.0.1 with a free port until ``stop()``."""

    def __init__(self, state: FakeJellyfin) -> None:
        self.state = state
        self._port_ref = [0]
        config = uvicorn.Config(
            build_app(state, self._port_ref), host="127.0.0.1", port=0, log_level="warning", lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="fake-jellyfin", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port_ref[0]}"

    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        deadline = datetime.now().timestamp() + timeout
        while not self._server.started:
            if datetime.now().timestamp() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake Jellyfin server did not start")
            threading.Event().wait(0.01)
        self._port_ref[0] = self._server.servers[0].sockets[0].getsockname()[1]

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
