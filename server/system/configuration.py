"""Server configuration: the spec's ServerConfiguration plus named sections (encoding,
network, metadata, branding), kept as JSON files under <data>/config and written atomically."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from server.paths import ServerPaths
from server.wire import models as w

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


def default_encoding_options(paths: ServerPaths) -> w.EncodingOptions:
    return w.EncodingOptions(
        EncodingThreadCount=-1, TranscodingTempPath=str(paths.transcode_dir), FallbackFontPath="",
        EnableFallbackFont=False, EnableAudioVbr=False, DownMixAudioBoost=2.0, DownMixStereoAlgorithm="None",
        MaxMuxingQueueSize=2048, EnableThrottling=False, ThrottleDelaySeconds=180, EnableSegmentDeletion=False,
        SegmentKeepSeconds=720, HardwareAccelerationType="none", EncoderAppPath="", EncoderAppPathDisplay="",
        VaapiDevice="/dev/dri/renderD128", QsvDevice="", EnableTonemapping=False, EnableVppTonemapping=False,
        EnableVideoToolboxTonemapping=False, TonemappingAlgorithm="bt2390", TonemappingMode="auto",
        TonemappingRange="auto", TonemappingDesat=0, TonemappingPeak=100, TonemappingParam=0,
        VppTonemappingBrightness=16, VppTonemappingContrast=1, H264Crf=23, H265Crf=28, EncoderPreset="auto",
        DeinterlaceDoubleRate=False, DeinterlaceMethod="yadif", EnableDecodingColorDepth10Hevc=True,
        EnableDecodingColorDepth10Vp9=True, EnableDecodingColorDepth10HevcRext=False,
        EnableDecodingColorDepth12HevcRext=False, EnableEnhancedNvdecDecoder=False,
        PreferSystemNativeHwDecoder=True, EnableIntelLowPowerH264HwEncoder=False,
        EnableIntelLowPowerHevcHwEncoder=False, EnableHardwareEncoding=True, AllowHevcEncoding=False,
        AllowAv1Encoding=False, EnableSubtitleExtraction=True, HardwareDecodingCodecs=["h264", "vc1"],
        AllowOnDemandMetadataBasedKeyframeExtractionForExtensions=["mkv"],
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


class ConfigurationStore:
    """Loads and saves configuration sections; notifies listeners after a save."""

    NAMED_TYPES: dict[str, type[msgspec.Struct]] = {
        "encoding": w.EncodingOptions,
        "network": w.NetworkConfiguration,
        "metadata": w.MetadataConfiguration,
        "xbmcmetadata": w.XbmcMetadataOptions,
        "branding": w.BrandingOptions,
        "livetv": w.LiveTvOptions,
    }

    # Reelroom's own sections (not in the Jellyfin spec): plain JSON objects, checked here.
    EXTRA_KEYS = ("filesystem", "desktop", "tmdb", "musicbrainz", "transcoding", "web", "tvmaze", "fanart",
                  "opensubtitles", "lrclib", "schedulesdirect")
    PROVIDER_KEYS = ("tmdb", "musicbrainz", "tvmaze", "fanart", "opensubtitles", "lrclib", "schedulesdirect")

    def validate_extra(self, key: str, data: Any) -> Any:
        from server.errors import BadRequestError

        if not isinstance(data, dict):
            raise BadRequestError(f"The {key} configuration must be a JSON object.")
        if key == "livetv":
            from server.livetv.tuners import default_livetv_options

            return default_livetv_options()
        if key == "filesystem":
            roots = data.get("AllowedRoots", [])
            if not isinstance(roots, list) or not all(isinstance(r, str) and r.strip() for r in roots):
                raise BadRequestError("AllowedRoots must be a list of folder paths.")
            roots = [r.strip() for r in roots]
            if any(not os.path.isabs(os.path.expanduser(r)) for r in roots):
                raise BadRequestError("AllowedRoots must be absolute folder paths.")
            restrict = data.get("RestrictToAllowedRoots", False)
            if not isinstance(restrict, bool):
                raise BadRequestError("RestrictToAllowedRoots must be true or false.")
            if restrict and not roots:
                raise BadRequestError("List at least one allowed folder before restricting to them.")
            return {"RestrictToAllowedRoots": restrict, "AllowedRoots": roots}
        if key in self.PROVIDER_KEYS:
            from server.metadata.settings import validate_provider_settings

            return validate_provider_settings(key, data)
        if key == "transcoding":
            from server.playback.hls_service import validate_transcoding_settings

            return validate_transcoding_settings(data)
        if key == "web":
            host = data.get("HostWebClient", True)
            if not isinstance(host, bool):
                raise BadRequestError("HostWebClient must be true or false.")
            return {"HostWebClient": host}
        return data

    def __init__(self, paths: ServerPaths) -> None:
        self.paths = paths
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}
        self._listeners: list[Callable[[str, Any], None]] = []

    def _defaults(self, key: str) -> Any:
        if key == "system":
            return default_server_configuration(self.paths)
        if key == "encoding":
            return default_encoding_options(self.paths)
        if key == "network":
            return default_network_configuration()
        if key == "branding":
            return default_branding()
        if key == "livetv":
            from server.livetv.tuners import default_livetv_options

            return default_livetv_options()
        if key == "filesystem":  # any folder, as in Jellyfin; locked-down installs opt in
            return {"RestrictToAllowedRoots": False, "AllowedRoots": []}
        if key in self.PROVIDER_KEYS:
            from server.metadata.settings import DEFAULTS

            return dict(DEFAULTS[key])
        if key == "transcoding":
            from server.playback.hls_service import TRANSCODING_DEFAULTS

            return dict(TRANSCODING_DEFAULTS)
        if key == "web":
            return {"HostWebClient": True}
        if key == "metadata":
            return w.MetadataConfiguration(UseFileCreationTimeForDateAdded=True)
        if key == "xbmcmetadata":
            return w.XbmcMetadataOptions(UserId=None, ReleaseDateFormat="yyyy-MM-dd", SaveImagePathsInNfo=True,
                                         EnablePathSubstitution=True, EnableExtraThumbsDuplication=False)
        return {}

    def _type(self, key: str) -> type | None:
        return w.ServerConfiguration if key == "system" else self.NAMED_TYPES.get(key)

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
        return self.get("system")

    def encoding(self) -> w.EncodingOptions:
        return self.get("encoding")

    def network(self) -> w.NetworkConfiguration:
        return self.get("network")

    def save(self, key: str, value: Any) -> None:
        key = key.lower()
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
        for listener in list(self._listeners):
            try:
                listener(key, value)
            except Exception:  # a listener must not break saving
                log.exception("Configuration listener failed")

    def update_server(self, **changes: Any) -> w.ServerConfiguration:
        cfg = msgspec.structs.replace(self.server(), **changes)
        self.save("system", cfg)
        return cfg

    def add_listener(self, fn: Callable[[str, Any], None]) -> None:
        self._listeners.append(fn)


def _merge(base: Any, update: Any) -> Any:
    """Fields set in ``update`` win; fields it leaves out keep ``base``'s value."""
    if not isinstance(base, msgspec.Struct) or type(base) is not type(update):
        return update
    changes = {f: getattr(update, f) for f in update.__struct_fields__ if getattr(update, f) is not None}
    return msgspec.structs.replace(base, **changes)
