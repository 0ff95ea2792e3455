"""Plugin repositories and package installation.

A Reelroom repository is a JSON manifest in Jellyfin's shape: a list of packages
``{guid, name, description, overview, owner, category, imageUrl, versions: [{version, changelog,
targetAbi, sourceUrl, checksum, timestamp}]}`` where ``sourceUrl`` is a wheel and ``checksum``
its SHA-256 (hex). Versions that are not wheels (Jellyfin's .NET zips) are left out.

Installing downloads the wheel, checks its SHA-256 and unpacks it (no pip: this also runs in
the PyInstaller bundle) into ``<data>/plugins/packages/<name>-<version>/``. Only pure-Python
wheels that declare a ``reelroom.plugins`` entry point are accepted; every member name is
checked so nothing lands outside that folder. The plugin runs after a restart.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import logging
import re
import shutil
import stat
import uuid
import zipfile
from email.parser import Parser
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec

from server.errors import BadRequestError, NotFoundError, ReelroomError
from server.guid import guid_from_text, normalize_guid
from server.metadata.providers.http import user_agent
from server.plugins.manager import ENTRY_POINT_GROUP, PACKAGE_INFO, PluginManager
from server.wire import models as w

log = logging.getLogger("reelroom.plugins")
MAX_MANIFEST_BYTES = 5 * 1024 * 1024
MAX_WHEEL_BYTES = 50 * 1024 * 1024
MAX_UNPACKED_BYTES = 200 * 1024 * 1024
_BINARY_SUFFIXES = (".so", ".pyd", ".dll", ".dylib", ".exe")
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


class PackageError(ReelroomError):
    status_code = 502
    title = "Bad Gateway"


class InstallCancelled(ReelroomError):
    status_code = 409
    title = "Conflict"


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def parse_manifest(data: Any, repo_name: str, repo_url: str) -> list[w.PackageInfo]:
    if not isinstance(data, list):
        raise PackageError(f"The repository {repo_name} did not send a list of packages.")
    out = []
    for entry in data:
        if not isinstance(entry, dict) or not _text(entry.get("name")):
            continue
        versions = []
        for v in entry.get("versions") or []:
            if not isinstance(v, dict):
                continue
            source = _text(v.get("sourceUrl"))
            if not source or not source.split("?")[0].lower().endswith(".whl") or not _text(v.get("version")):
                continue  # not a Python wheel (Jellyfin's .NET plugins): Reelroom cannot run it
            versions.append(w.VersionInfo(version=v["version"].strip(), VersionNumber=v["version"].strip(),
                                          changelog=_text(v.get("changelog")) or "",
                                          targetAbi=_text(v.get("targetAbi")), sourceUrl=source,
                                          checksum=_text(v.get("checksum")), timestamp=_text(v.get("timestamp")),
                                          repositoryName=repo_name, repositoryUrl=repo_url))
        if not versions:
            continue
        versions.sort(key=lambda v: [int(p) if p.isdigit() else 0 for p in re.split(r"[.\-]", v.version)],
                      reverse=True)
        guid = normalize_guid(_text(entry.get("guid")) or "") or guid_from_text("reelroom-plugin", entry["name"])
        out.append(w.PackageInfo(name=entry["name"].strip(), description=_text(entry.get("description")) or "",
                                 overview=_text(entry.get("overview")) or "", owner=_text(entry.get("owner")) or "",
                                 category=_text(entry.get("category")) or "General", guid=guid, versions=versions,
                                 imageUrl=_text(entry.get("imageUrl"))))
    return out


def _safe_member(name: str) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or not path.parts or ".." in path.parts or ":" in path.parts[0]:
        raise BadRequestError(f"The wheel has an unsafe file name: {name!r}.")
    return path


def unpack_wheel(content: bytes, target: Path) -> dict[str, str]:
    """Unpack a pure-Python wheel into ``target`` (which must not exist); returns its METADATA
    headers. Raises BadRequestError for anything that is not a safe, pure, Reelroom plugin."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except zipfile.BadZipFile:
        raise BadRequestError("The package is not a wheel (not a zip file).") from None
    with archive:
        members = archive.infolist()
        dist_info = {m.filename.split("/")[0] for m in members if m.filename.split("/")[0].endswith(".dist-info")}
        if len(dist_info) != 1:
            raise BadRequestError("The wheel has no single .dist-info folder.")
        info_dir = dist_info.pop()
        try:
            wheel_text = archive.read(f"{info_dir}/WHEEL").decode("utf-8")
            metadata = Parser().parsestr(archive.read(f"{info_dir}/METADATA").decode("utf-8"))
        except KeyError:
            raise BadRequestError("The wheel lacks its WHEEL or METADATA file.") from None
        if "root-is-purelib: true" not in wheel_text.lower():
            raise BadRequestError("Only pure-Python wheels can be installed (Root-Is-Purelib is not true).")
        try:
            entry_points = archive.read(f"{info_dir}/entry_points.txt").decode("utf-8")
        except KeyError:
            entry_points = ""
        if f"[{ENTRY_POINT_GROUP}]" not in entry_points:
            raise BadRequestError(f"The wheel declares no {ENTRY_POINT_GROUP} entry point: it is not a Reelroom plugin.")
        total = 0
        plan: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
        for member in members:
            path = _safe_member(member.filename)
            mode = member.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise BadRequestError(f"The wheel contains a symbolic link: {member.filename!r}.")
            if member.is_dir():
                continue
            if path.suffix.lower() in _BINARY_SUFFIXES:
                raise BadRequestError(f"The wheel contains compiled code ({member.filename}); only pure-Python "
                                      "plugins can be installed.")
            if path.parts[0].endswith(".data"):
                if len(path.parts) < 3 or path.parts[1] not in ("purelib", "platlib"):
                    continue  # scripts, headers and data files have no place in a plugin folder
                path = PurePosixPath(*path.parts[2:])
            total += member.file_size
            if total > MAX_UNPACKED_BYTES:
                raise BadRequestError("The wheel unpacks to more than 200 MB.")
            plan.append((member, path))
        target.mkdir(parents=True)
        root = target.resolve()
        for member, path in plan:
            out = (root / Path(*path.parts)).resolve()
            if root not in out.parents:
                raise BadRequestError(f"The wheel has an unsafe file name: {member.filename!r}.")
            out.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
    return {k: str(v) for k, v in metadata.items()}


class PackageService:
    """``ctx.packages``: repositories, the package list and installations in progress."""

    def __init__(self, config, plugins: PluginManager, events) -> None:
        self.config = config
        self.plugins = plugins
        self.events = events
        self.installing: dict[str, asyncio.Task] = {}

    def repositories(self) -> list[w.RepositoryInfo]:
        return [r for r in self.config.server().PluginRepositories or [] if r.Url and r.Enabled is not False]

    async def packages(self) -> list[w.PackageInfo]:
        import httpx  # loaded when first needed, not at start-up
        out: list[w.PackageInfo] = []
        async with httpx.AsyncClient(headers={"User-Agent": user_agent()}, follow_redirects=True, timeout=20) as client:
            for repo in self.repositories():
                try:
                    reply = await client.get(repo.Url)
                    if reply.status_code != 200:
                        raise PackageError(f"HTTP {reply.status_code}")
                    if len(reply.content) > MAX_MANIFEST_BYTES:
                        raise PackageError("the manifest is too large")
                    out += parse_manifest(json.loads(reply.content), repo.Name or repo.Url, repo.Url)
                except (httpx.HTTPError, ValueError, PackageError) as exc:
                    log.warning("Plugin repository %s could not be read: %s", repo.Url, exc)
        return out

    async def package(self, name: str, guid: str | None = None) -> w.PackageInfo:
        wanted = normalize_guid(guid or "")
        for package in await self.packages():
            if (wanted and package.guid == wanted) or (not wanted and package.name.lower() == name.strip().lower()):
                return package
        raise NotFoundError(f"No package named {name!r} in the configured repositories.")

    async def install(self, name: str, guid: str | None = None, version: str | None = None,
                      repository_url: str | None = None) -> None:
        package = await self.package(name, guid)
        versions = [v for v in package.versions or []
                    if (not version or v.version == version) and (not repository_url or v.repositoryUrl == repository_url)]
        if not versions:
            raise NotFoundError(f"{package.name} has no version {version!r}.")
        chosen = versions[0]
        if package.guid in self.installing:
            raise BadRequestError(f"{package.name} is already being installed.")
        task = asyncio.ensure_future(self._install(package, chosen))
        self.installing[package.guid] = task
        try:
            await task
        except asyncio.CancelledError:
            if task.cancelled():
                raise InstallCancelled(f"The installation of {package.name} was cancelled.") from None
            raise
        finally:
            self.installing.pop(package.guid, None)

    def cancel(self, package_id: str) -> bool:
        task = self.installing.get(normalize_guid(package_id))
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def _installation(self, package: w.PackageInfo, version: w.VersionInfo) -> dict[str, Any]:
        return msgspec.to_builtins(w.InstallationInfo(Guid=package.guid, Name=package.name, Version=version.version,
                                                      Changelog=version.changelog, SourceUrl=version.sourceUrl,
                                                      Checksum=version.checksum))

    async def _install(self, package: w.PackageInfo, version: w.VersionInfo) -> None:
        info = self._installation(package, version)
        self.events.publish("PackageInstalling", info, admins_only=True)
        try:
            checksum = (version.checksum or "").strip().lower()
            if not _SHA256.match(checksum):
                raise BadRequestError(f"{package.name} {version.version} has no SHA-256 checksum in its manifest.")
            content = await self._download(version.sourceUrl or "")
            digest = hashlib.sha256(content).hexdigest()
            if digest != checksum:
                raise BadRequestError(f"The download of {package.name} {version.version} does not match its checksum "
                                      f"(got sha256 {digest}).")
            folder = await asyncio.to_thread(self._unpack, package, version, content)
        except asyncio.CancelledError:
            self.events.publish("PackageInstallationCancelled", info, admins_only=True)
            raise
        except Exception:
            self.events.publish("PackageInstallationFailed", info, admins_only=True)
            raise
        self.plugins.add_installed(folder, json.loads((folder / PACKAGE_INFO).read_text(encoding="utf-8")))
        self.events.publish("PackageInstallationCompleted", info, admins_only=True)
        self.events.publish("RestartRequired", None, admins_only=True)

    async def _download(self, url: str) -> bytes:
        import httpx
        chunks: list[bytes] = []
        total = 0
        try:
            async with httpx.AsyncClient(headers={"User-Agent": user_agent()}, follow_redirects=True,
                                         timeout=60) as client:
                async with client.stream("GET", url) as reply:
                    if reply.status_code != 200:
                        raise PackageError(f"The package download {url} answered HTTP {reply.status_code}.")
                    async for chunk in reply.aiter_bytes():
                        total += len(chunk)
                        if total > MAX_WHEEL_BYTES:
                            raise PackageError("The package is larger than 50 MB.")
                        chunks.append(chunk)
        except httpx.HTTPError as exc:
            raise PackageError(f"The package could not be downloaded: {exc.__class__.__name__}: {exc}") from None
        return b"".join(chunks)

    def _unpack(self, package: w.PackageInfo, version: w.VersionInfo, content: bytes) -> Path:
        packages_dir = self.plugins.packages_dir
        packages_dir.mkdir(parents=True, exist_ok=True)
        staging = packages_dir / f".staging-{uuid.uuid4().hex}"
        try:
            metadata = unpack_wheel(content, staging)
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{metadata.get('Name') or package.name}-{version.version}")
            (staging / PACKAGE_INFO).write_text(json.dumps({
                "guid": package.guid, "name": package.name, "version": version.version,
                "description": package.description or metadata.get("Summary") or "",
                "distribution": metadata.get("Name"), "repositoryUrl": version.repositoryUrl,
                "checksum": version.checksum}), encoding="utf-8")
            final = packages_dir / safe
            for other in packages_dir.iterdir():  # an older version: removed at the next start
                if other.is_dir() and other != final and not other.name.startswith(".") and \
                        PluginManager.package_info(other).get("guid") == package.guid:
                    (other / ".uninstall").write_text("", encoding="utf-8")
            if final.exists():
                shutil.rmtree(final)
            staging.rename(final)
            return final
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
