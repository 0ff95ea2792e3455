"""The plugin manager (``ctx.plugins``): finds plugins, keeps their status, enabled flag and
configuration, and hands their providers to the services that use them.

- Built-in providers are plugins registered here (bundled; they cannot be uninstalled but can
  be disabled or left out of a library's fetcher order).
- Installed packages live in ``<data>/plugins/packages/<name>-<version>/`` (unpacked wheels);
  each of those folders is put on ``sys.path`` at start, so their entry points in the
  ``reelroom.plugins`` group are found like those of any installed distribution.
- A plugin that raises while loading is Malfunctioned; the server starts anyway.
- ``<data>/plugins/state.json`` holds the disabled plugin ids; a package folder holding an
  ``.uninstall`` marker is removed at the next start (files of a loaded plugin stay in place
  while it runs).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import logging
import os
import shutil
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.errors import BadRequestError, NotFoundError
from server.guid import guid_from_text, normalize_guid
from server.plugins.base import Plugin, PluginHost
from server.version import reelroom_version

log = logging.getLogger("reelroom.plugins")
ENTRY_POINT_GROUP = "reelroom.plugins"
PACKAGE_INFO = "reelroom-package.json"
UNINSTALL_MARKER = ".uninstall"


@dataclass
class PluginRecord:
    id: str
    name: str
    version: str
    description: str = ""
    status: str = "Active"  # PluginStatus
    plugin: Plugin | None = None
    builtin: bool = False
    folder: Path | None = None  # the package folder of an installed package
    error: str | None = None
    providers: list[Any] = field(default_factory=list)
    #: a built-in plugin's providers, not built yet: (the kinds they offer, how to build them)
    pending: tuple[frozenset[str], Callable[[], list[Any]]] | None = None

    @property
    def can_uninstall(self) -> bool:
        return not self.builtin and self.folder is not None


def _version_tuple(text: str) -> tuple[int, ...]:
    out = []
    for part in str(text).split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def _plugin_id(plugin: Any, fallback: str) -> str:
    value = normalize_guid(str(getattr(plugin, "id", "") or ""))
    if value and len(value) == 32 and all(c in "0123456789abcdef" for c in value):
        return value
    return guid_from_text("reelroom-plugin", fallback)


class PluginManager:
    def __init__(self, config, data_dir: Path, builtins: Callable[[], list[Plugin]] | None = None) -> None:
        self.config = config  # ConfigurationStore
        self.root = data_dir / "plugins"
        self.packages_dir = self.root / "packages"
        self.state_file = self.root / "state.json"
        self._builtins = builtins or (lambda: [])
        self._lock = threading.Lock()
        self._build_lock = threading.RLock()  # a built-in's providers, built on first use
        self.records: dict[str, PluginRecord] = {}
        self._disabled: set[str] = set()
        self._listeners: list[Callable[[], None]] = []

    # -- start-up ------------------------------------------------------------------------

    def load(self) -> None:
        """Remove uninstalled packages, put package folders on sys.path and load every plugin."""
        self.packages_dir.mkdir(parents=True, exist_ok=True)
        self._disabled = set(self._read_state().get("disabled", []))
        for folder in sorted(self.packages_dir.iterdir()):
            if not folder.is_dir():
                continue
            if (folder / UNINSTALL_MARKER).exists() or folder.name.startswith(".staging"):
                shutil.rmtree(folder, ignore_errors=True)
                continue
            if str(folder) not in sys.path:
                sys.path.append(str(folder))
        importlib.invalidate_caches()
        for plugin in self._builtins():
            self._register(plugin, builtin=True)
        self._load_entry_points()
        for folder in self._package_folders():  # installed but not (yet) loaded: waiting for a restart
            info = self.package_info(folder)
            if info and not any(r.folder == folder for r in self.records.values()):
                self._add_pending(folder, info)

    def _load_entry_points(self) -> None:
        try:
            entry_points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        except Exception:  # a broken distribution's metadata must not stop the server
            log.exception("Plugin entry points could not be read")
            return
        seen: set[tuple[str, str]] = set()
        for ep in entry_points:
            key = (str(getattr(getattr(ep, "dist", None), "name", "") or "").lower(), ep.name)
            if key in seen:  # the same distribution found twice on sys.path
                continue
            seen.add(key)
            folder = self._folder_of(ep)
            try:
                target = ep.load()
                plugin = target() if isinstance(target, type) or callable(target) else target
                if not getattr(plugin, "name", None):
                    raise TypeError(f"{ep.value} is not a Reelroom plugin (it has no name)")
            except Exception as exc:
                log.exception("Plugin %s (%s) failed to load", ep.name, ep.value)
                info = self.package_info(folder) if folder else {}
                record = PluginRecord(id=normalize_guid(info.get("guid")) or guid_from_text("reelroom-plugin", ep.name),
                                      name=info.get("name") or ep.name, version=str(info.get("version") or "0.0.0"),
                                      description=f"Failed to load: {exc.__class__.__name__}: {exc}",
                                      status="Malfunctioned", folder=folder, error=str(exc))
                self.records[record.id] = record
                continue
            self._register(plugin, builtin=False, folder=folder)

    def _folder_of(self, ep: importlib.metadata.EntryPoint) -> Path | None:
        dist = getattr(ep, "dist", None)
        path = getattr(dist, "_path", None) if dist is not None else None
        if path is None:
            return None
        parent = Path(path).parent
        try:
            parent.relative_to(self.packages_dir)
        except ValueError:
            return None
        return parent

    def _register(self, plugin: Any, builtin: bool, folder: Path | None = None) -> None:
        plugin_id = _plugin_id(plugin, getattr(plugin, "name", "plugin"))
        if plugin_id in self.records:
            log.warning("Plugin %s: a plugin with id %s is already loaded; skipped", plugin.name, plugin_id)
            return
        record = PluginRecord(id=plugin_id, name=str(plugin.name), version=str(getattr(plugin, "version", "1.0.0")),
                              description=str(getattr(plugin, "description", "") or ""), plugin=plugin,
                              builtin=builtin, folder=folder)
        self.records[plugin_id] = record
        needed = getattr(plugin, "min_server_version", None)
        if needed and _version_tuple(needed) > _version_tuple(reelroom_version()):
            record.status = "NotSupported"
            record.error = f"needs Reelroom {needed} or later"
            return
        if folder is not None and (folder / UNINSTALL_MARKER).exists():
            record.status = "Deleted"
            return
        host = PluginHost(settings=lambda: self.configuration(plugin_id), data_dir=self.root / "data" / plugin_id,
                          server_version=reelroom_version())
        kinds = getattr(plugin, "lazy_provider_kinds", None)
        if kinds is not None:  # a built-in: its providers (and their modules) are built on first use
            record.pending = (frozenset(kinds), lambda: list(plugin.providers(host) or []))
        elif not self._build_providers(record, lambda: list(plugin.providers(host) or [])):
            return
        record.status = "Disabled" if plugin_id in self._disabled else "Active"

    @staticmethod
    def _build_providers(record: PluginRecord, build: Callable[[], list[Any]]) -> bool:
        try:
            record.providers = build()
        except Exception as exc:
            log.exception("Plugin %s failed to start", record.name)
            record.status = "Malfunctioned"
            record.error = str(exc)
            record.providers = []
            return False
        return True

    def _add_pending(self, folder: Path, info: dict[str, Any]) -> None:
        plugin_id = normalize_guid(info.get("guid")) or guid_from_text("reelroom-plugin", folder.name)
        status = "Deleted" if (folder / UNINSTALL_MARKER).exists() else "Restart"
        self.records[plugin_id] = PluginRecord(id=plugin_id, name=str(info.get("name") or folder.name),
                                               version=str(info.get("version") or "0.0.0"),
                                               description=str(info.get("description") or ""), status=status,
                                               folder=folder)

    # -- state ---------------------------------------------------------------------------

    def _read_state(self) -> dict[str, Any]:
        try:
            data = json.loads(self.state_file.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write_state(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"disabled": sorted(self._disabled)}), encoding="utf-8")
        os.replace(tmp, self.state_file)

    def _package_folders(self) -> list[Path]:
        if not self.packages_dir.is_dir():
            return []
        return [f for f in sorted(self.packages_dir.iterdir()) if f.is_dir() and not f.name.startswith(".")]

    @staticmethod
    def package_info(folder: Path | None) -> dict[str, Any]:
        if folder is None:
            return {}
        try:
            data = json.loads((folder / PACKAGE_INFO).read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def on_change(self, fn: Callable[[], None]) -> None:
        self._listeners.append(fn)

    def _changed(self) -> None:
        for fn in list(self._listeners):
            try:
                fn()
            except Exception:
                log.exception("Plugin change listener failed")

    # -- queries -------------------------------------------------------------------------

    def list(self) -> list[PluginRecord]:
        return sorted(self.records.values(), key=lambda r: (not r.builtin, "" if r.builtin else r.name.lower()))

    def get(self, plugin_id: str | None) -> PluginRecord:
        record = self.records.get(normalize_guid(plugin_id or ""))
        if record is None:
            raise NotFoundError(f"No plugin {plugin_id} is installed.")
        return record

    def providers(self, kind: str) -> list[Any]:
        """The providers of active plugins that offer ``kind``, built-ins first. A built-in
        plugin's providers are built the first time ``kind`` is one of theirs."""
        out = []
        for record in self.list():
            if record.pending is not None and kind in record.pending[0]:
                with self._build_lock:  # built once; a concurrent caller waits for the list
                    pending = record.pending
                    if pending is not None:
                        self._build_providers(record, pending[1])
                        record.pending = None
            if record.status != "Active":
                continue
            out += [p for p in record.providers if kind in getattr(p, "provider_kinds", ())]
        return out

    def add_installed(self, folder: Path, info: dict[str, Any]) -> PluginRecord:
        """A package was just unpacked: listed as waiting for a restart."""
        for record in list(self.records.values()):
            if record.folder is not None and record.folder != folder and record.name == info.get("name") \
                    and record.status in ("Restart", "Deleted"):
                del self.records[record.id]
        plugin_id = normalize_guid(info.get("guid")) or guid_from_text("reelroom-plugin", folder.name)
        existing = self.records.get(plugin_id)
        if existing is not None and existing.plugin is not None:
            existing.status = "Restart"  # an update of a loaded plugin: the new version runs after a restart
            return existing
        self._add_pending(folder, info)
        return self.records[plugin_id]

    # -- enable / disable / uninstall ---------------------------------------------------

    def set_enabled(self, plugin_id: str, enabled: bool) -> PluginRecord:
        record = self.get(plugin_id)
        if record.status in ("Malfunctioned", "NotSupported", "Restart", "Deleted") and record.plugin is None:
            raise BadRequestError(f"{record.name} is {record.status}; it cannot be "
                                  f"{'enabled' if enabled else 'disabled'} now.")
        with self._lock:
            if enabled:
                self._disabled.discard(record.id)
            else:
                self._disabled.add(record.id)
            self._write_state()
        if record.status in ("Active", "Disabled"):
            record.status = "Active" if enabled else "Disabled"
        self._changed()
        return record

    def uninstall(self, plugin_id: str) -> PluginRecord:
        record = self.get(plugin_id)
        if not record.can_uninstall:
            raise BadRequestError(f"{record.name} is part of Reelroom and cannot be uninstalled; disable it "
                                  "or leave it out of the libraries' fetcher order instead.")
        assert record.folder is not None
        (record.folder / UNINSTALL_MARKER).write_text("", encoding="utf-8")
        record.status = "Deleted"
        self._changed()
        return record

    # -- configuration -------------------------------------------------------------------

    def _section(self, record: PluginRecord) -> str:
        plugin = record.plugin
        return getattr(plugin, "config_section", None) or f"plugin-{record.id}"

    def configuration(self, plugin_id: str) -> dict[str, Any]:
        record = self.get(plugin_id)
        plugin = record.plugin
        if plugin is None:
            raise NotFoundError(f"{record.name} is not loaded ({record.status}).")
        section = self._section(record)
        stored = self.config.get(section)
        if getattr(plugin, "config_section", None):
            return dict(stored) if isinstance(stored, dict) else {}
        base = plugin.default_config()
        if isinstance(stored, dict) and stored:
            try:
                return plugin.validate_config({**base, **stored})
            except BadRequestError:
                log.warning("The stored configuration of %s is not valid; using its defaults", record.name)
        return base

    def save_configuration(self, plugin_id: str, data: Any) -> dict[str, Any]:
        record = self.get(plugin_id)
        plugin = record.plugin
        if plugin is None:
            raise NotFoundError(f"{record.name} is not loaded ({record.status}).")
        section = self._section(record)
        if getattr(plugin, "config_section", None):
            value = self.config.parse(section, data)
        else:
            value = plugin.validate_config(data)
        self.config.save(section, value)
        self._changed()
        return value

    # -- pages and images ----------------------------------------------------------------

    def config_pages(self) -> list[tuple[PluginRecord, Any]]:
        out = []
        for record in self.list():
            if record.plugin is not None and record.status == "Active":
                out += [(record, page) for page in getattr(record.plugin, "config_pages", ()) or ()]
        return out

    def config_page(self, name: str | None) -> tuple[bytes, str]:
        for record, page in self.config_pages():
            if page.name.lower() == (name or "").strip().lower():
                content = record.plugin.resource(page.resource)
                if content is None:
                    break
                media = "application/x-javascript" if page.resource.lower().endswith(".js") else "text/html"
                return content, media
        raise NotFoundError(f"No configuration page named {name!r}.")

    def image(self, plugin_id: str) -> tuple[bytes, str]:
        record = self.get(plugin_id)
        name = getattr(record.plugin, "image", None) if record.plugin is not None else None
        content = record.plugin.resource(name) if name else None
        if content is None:
            raise NotFoundError(f"{record.name} has no image.")
        media = "image/png" if name.lower().endswith(".png") else "image/jpeg"
        return content, media

    async def close(self) -> None:
        for record in self.records.values():
            for provider in record.providers:
                close = getattr(provider, "aclose", None)
                if close is not None:
                    try:
                        await close()
                    except Exception:
                        log.exception("Closing a provider of %s failed", record.name)
