"""Server configuration: the spec's ServerConfiguration plus named sections, kept as JSON files
under <data>/config and written atomically.

Each section is declared (key, defaults, wire type or plain JSON, validator) by the domain that
owns it, as a :class:`ConfigSection` it registers on the store; this module imports no domain."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from server.errors import BadRequestError
from server.paths import ServerPaths
from server.wire import models as w
from server.wire.body import canonical_keys

log = logging.getLogger("reelroom.config")


def default_server_configuration(paths: ServerPaths) -> w.ServerConfiguration:
    return w.ServerConfiguration(
        LogFileRetentionDays=3, IsStartupWizardCompleted=False, CachePath=str(paths.cache_dir),
        EnableMetrics=False, EnableNormalizedItemByNameIds=True, IsPortAuthorized=True,
        QuickConnectAvailable=True, EnableCaseSensitiveItemIds=True, DisableLiveTvChannelUserDataName=True,
        MetadataPath=str(paths.metadata_dir), PreferredMetadataLanguage="en", MetadataCountryCode="US",
        SortReplaceCharacters=[".", "+", "%"], SortRemoveCharacters=[",", "&", "-", "{", "}", "'"],
        SortRemoveWords=["the", "a", "an"], MinResumePct=5, MaxResumePct=90, MinResumeDurationSeconds=300,
        MinAudiobookResume=5, MaxAudiobookResume=5, InactiveSessionThreshold=0, LibraryMonitorDelay=60,
        LibraryUpdateDuration=30, ImageSavingConvention="Legacy", MetadataOptions=[],
        SkipDeserializationForBasicTypes=True, ServerName=socket.gethostname() or "Reelroom", UICulture="en-US",
        SaveMetadataHidden=False, ContentTypes=[], RemoteClientBitrateLimit=0, EnableFolderView=False,
        EnableGroupingIntoCollections=False, DisplaySpecialsWithinSeasons=True, CodecsUsed=[],
        PluginRepositories=[], EnableExternalContentInSuggestions=True, ImageExtractionTimeoutMs=0,
        PathSubstitutions=[], EnableSlowResponseWarning=True, SlowResponseThresholdMs=500, CorsHosts=["*"],
        ActivityLogRetentionDays=30, LibraryScanFanoutConcurrency=0, LibraryMetadataRefreshConcurrency=0,
        RemoveOldPlugins=False, AllowClientLogUpload=True, DummyChapterDuration=0,
        ChapterImageResolution="MatchSource", ParallelImageEncodingLimit=0, CastReceiverApplications=[],
        TrickplayOptions=w.TrickplayOptions(
            EnableHwAcceleration=False, EnableHwEncoding=False, EnableKeyFrameOnlyExtraction=False,
            ScanBehavior="NonBlocking", ProcessPriority="BelowNormal", Interval=10000, WidthResolutions=[320],
            TileWidth=10, TileHeight=10, Qscale=4, JpegQuality=90, ProcessThreads=1),
    )


def default_network_configuration() -> w.NetworkConfiguration:
    return w.NetworkConfiguration(
        BaseUrl="", EnableHttps=False, RequireHttps=False, InternalHttpPort=8096, InternalHttpsPort=8920,
        PublicHttpPort=8096, PublicHttpsPort=8920, AutoDiscovery=True, EnableUPnP=False, EnableIPv4=True,
        EnableIPv6=False, EnableRemoteAccess=True, LocalNetworkSubnets=[], LocalNetworkAddresses=[],
        KnownProxies=[], IgnoreVirtualInterfaces=True, VirtualInterfaceNames=["veth"],
        EnablePublishedServerUriByRequest=False, PublishedServerUriBySubnet=[], RemoteIPFilter=[],
        IsRemoteIPFilterBlacklist=False,
    )


def default_branding() -> w.BrandingOptions:
    return w.BrandingOptions(LoginDisclaimer="", CustomCss="", SplashscreenEnabled=False)


@dataclass(frozen=True)
class ConfigSection:
    """A named configuration section, declared by the domain that owns it.

    - ``defaults(paths)``: the value before anything is saved (a new object on every call);
    - ``wire_type``: the spec's struct for the section (``EncodingOptions``, ...); a client's JSON
      is converted to it (keys in any case) and a saved struct is merged over the stored one.
      Without one the section is a plain JSON object;
    - ``validate``: checks a client's value (the converted struct, or the JSON object) and returns
      what is stored; raises ``BadRequestError`` (400) when it is not acceptable;
    - ``redact``: the value as a non-administrator may read it (secrets left out);
    - ``public``: reachable at ``/System/Configuration/{key}`` (``system`` is not: it has its own route).
    """

    key: str
    defaults: Callable[[ServerPaths], Any]
    wire_type: type[msgspec.Struct] | None = None
    validate: Callable[[Any], Any] | None = None
    redact: Callable[[Any], Any] | None = None
    public: bool = True


Listener = Callable[[str, Any], None]
SectionListener = Callable[[Any], None]


CORE_SECTIONS: tuple[ConfigSection, ...] = (
    ConfigSection("system", default_server_configuration, wire_type=w.ServerConfiguration, public=False),
    ConfigSection("network", lambda _paths: default_network_configuration(), wire_type=w.NetworkConfiguration),
    ConfigSection("branding", lambda _paths: default_branding(), wire_type=w.BrandingOptions),
    ConfigSection("desktop", lambda _paths: {}),  # the desktop app's own settings, kept as given
)


class ConfigurationStore:
    """Loads and saves configuration sections; notifies listeners after a save.

    The store knows only its core sections (``system``, ``network``, ``branding``, ``desktop``);
    every other domain registers its own with :meth:`register` when the server is composed
    (``server/context.py``). A key nobody registered reads as a plain JSON object (``{}`` until
    saved) and is not reachable over HTTP."""

    def __init__(self, paths: ServerPaths) -> None:
        self.paths = paths
        self._lock = threading.Lock()  # the cache and the registries
        self._save_lock = threading.RLock()  # one save (write, then listeners) at a time; a listener may save
        self._cache: dict[str, Any] = {}
        self._sections: dict[str, ConfigSection] = {}
        self._listeners: list[Listener] = []
        self._section_listeners: dict[str, list[SectionListener]] = {}
        self.register(*CORE_SECTIONS)

    # -- sections ------------------------------------------------------------------------

    def register(self, *sections: ConfigSection) -> None:
        """Declare sections. A key may be registered once."""
        with self._lock:
            for section in sections:
                if section.key != section.key.lower() or not section.key:
                    raise ValueError(f"Configuration section keys are lower case: {section.key!r}")
                if section.key in self._sections:
                    raise ValueError(f"The configuration section {section.key!r} is already registered")
                self._sections[section.key] = section
                self._cache.pop(section.key, None)  # read before registration: read again with defaults

    def section(self, key: str) -> ConfigSection | None:
        return self._sections.get(key.lower())

    def keys(self) -> list[str]:
        return sorted(self._sections)

    def parse(self, key: str, data: Any) -> Any:
        """A client's decoded JSON as the value to save in ``key``; BadRequestError when it is
        not acceptable. An unregistered key (a plugin's section) takes any JSON object."""
        section = self.section(key)
        tp = section.wire_type if section else None
        value: Any
        if tp is not None:
            try:
                value = msgspec.convert(canonical_keys(data, tp), tp, strict=False)
            except msgspec.ValidationError as exc:
                raise BadRequestError(f"Invalid {key} configuration: {exc}") from None
        elif not isinstance(data, dict):
            raise BadRequestError(f"The {key} configuration must be a JSON object.")
        else:
            value = data
        if section is not None and section.validate is not None:
            value = section.validate(value)
        return value

    # -- listeners -----------------------------------------------------------------------

    def on_change(self, key: str, fn: SectionListener) -> Callable[[], None]:
        """Call ``fn(value)`` after every save of ``key``, on the thread that saved (a worker
        thread for the HTTP API). Exceptions are logged; the save stands. Returns a function
        that removes the listener."""
        key = key.lower()
        with self._lock:
            self._section_listeners.setdefault(key, []).append(fn)

        def remove() -> None:
            with self._lock:
                listeners = self._section_listeners.get(key, [])
                if fn in listeners:
                    listeners.remove(fn)

        return remove

    def add_listener(self, fn: Listener) -> None:
        """Call ``fn(key, value)`` after a save of any section (same rules as on_change)."""
        with self._lock:
            self._listeners.append(fn)

    def _notify(self, key: str, value: Any) -> None:
        with self._lock:
            section_listeners = list(self._section_listeners.get(key, ()))
            listeners = list(self._listeners)
        for fn in section_listeners:
            try:
                fn(value)
            except Exception:  # a listener must not break saving
                log.exception("A listener of the %s configuration failed", key)
        for listener in listeners:
            try:
                listener(key, value)
            except Exception:
                log.exception("A configuration listener failed (%s)", key)

    # -- reading and saving --------------------------------------------------------------

    def _defaults(self, key: str) -> Any:
        section = self._sections.get(key)
        return section.defaults(self.paths) if section is not None else {}

    def _type(self, key: str) -> type[msgspec.Struct] | None:
        section = self._sections.get(key)
        return section.wire_type if section is not None else None

    def _file(self, key: str) -> Path:
        return self.paths.config_dir / f"{key}.json"

    def get(self, key: str) -> Any:
        key = key.lower()
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            value = self._defaults(key)
            path = self._file(key)
            if path.exists():
                try:
                    raw = path.read_bytes()
                    tp = self._type(key)
                    if tp is not None:
                        stored = msgspec.json.decode(raw, type=tp, strict=False)
                        value = _merge(value, stored)
                    else:
                        value = msgspec.json.decode(raw)
                except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
                    log.error("Configuration file %s is unreadable (%s); using defaults", path, exc)
            self._cache[key] = value
            return value

    def server(self) -> w.ServerConfiguration:
        value: w.ServerConfiguration = self.get("system")
        return value

    def encoding(self) -> w.EncodingOptions:
        value: w.EncodingOptions = self.get("encoding")
        return value

    def network(self) -> w.NetworkConfiguration:
        value: w.NetworkConfiguration = self.get("network")
        return value

    def save(self, key: str, value: Any) -> None:
        """Write ``key`` atomically (blocking: call it from a worker thread on a request path),
        then call its listeners. Saves are serialized, so listeners hear them in the order they
        were written and the last value a listener got is the stored one."""
        key = key.lower()
        with self._save_lock:
            tp = self._type(key)
            if tp is not None and isinstance(value, msgspec.Struct):
                value = _merge(self.get(key), value)
            data = msgspec.json.encode(value)
            path = self._file(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".json.tmp")
            with self._lock:
                tmp.write_bytes(data)
                os.replace(tmp, path)
                self._cache[key] = value
            self._notify(key, value)

    def update_server(self, **changes: Any) -> w.ServerConfiguration:
        cfg = msgspec.structs.replace(self.server(), **changes)
        self.save("system", cfg)
        return cfg


def _merge(base: Any, update: Any) -> Any:
    """Fields set in ``update`` win; fields it leaves out keep ``base``'s value."""
    if not isinstance(base, msgspec.Struct) or type(base) is not type(update):
        return update
    changes = {f: getattr(update, f) for f in update.__struct_fields__ if getattr(update, f) is not None}
    return msgspec.structs.replace(base, **changes)
