"""What /System/Info and /System/Info/Public report (``ctx.system_info``)."""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.version import JELLYFIN_PRODUCT_NAME, JELLYFIN_VERSION
from server.wire import models as w

if TYPE_CHECKING:
    from server.paths import ServerPaths
    from server.system.configuration import ConfigurationStore


class SystemInfoService:
    def __init__(self, system_id: str, port: int, paths: ServerPaths, config: ConfigurationStore,
                 server_name: Callable[[], str]) -> None:
        self.system_id = system_id
        self.port = port  # the configured port (ServerOptions.port)
        self.paths = paths
        self.config = config  # IsStartupWizardCompleted, the encoding section's TranscodingTempPath
        self.server_name = server_name

    def local_address(self, request_host: str | None) -> str:
        """The address a client should use: the Host it reached us on, else our port."""
        if request_host:
            return f"http://{request_host}"
        return f"http://127.0.0.1:{self.port}"

    def public_info(self, request_host: str | None) -> w.PublicSystemInfo:
        return w.PublicSystemInfo(
            LocalAddress=self.local_address(request_host), ServerName=self.server_name(), Version=JELLYFIN_VERSION,
            ProductName=JELLYFIN_PRODUCT_NAME, OperatingSystem="", Id=self.system_id,
            StartupWizardCompleted=bool(self.config.server().IsStartupWizardCompleted))

    def system_info(self, request_host: str | None) -> w.SystemInfo:
        """Blocking (platform facts): call from a worker thread."""
        enc = self.config.encoding()
        paths = self.paths
        return w.SystemInfo(
            LocalAddress=self.local_address(request_host), ServerName=self.server_name(), Version=JELLYFIN_VERSION,
            ProductName=JELLYFIN_PRODUCT_NAME, OperatingSystem="", Id=self.system_id,
            StartupWizardCompleted=bool(self.config.server().IsStartupWizardCompleted),
            OperatingSystemDisplayName=f"{platform.system()} {platform.release()}",
            PackageName="reelroom", HasPendingRestart=False, IsShuttingDown=False, SupportsLibraryMonitor=True,
            WebSocketPortNumber=self.port, CompletedInstallations=[], CanSelfRestart=True,
            CanLaunchWebBrowser=False, ProgramDataPath=str(paths.data_dir), WebPath="",
            ItemsByNamePath=str(paths.metadata_dir), CachePath=str(paths.cache_dir), LogPath=str(paths.log_dir),
            InternalMetadataPath=str(paths.metadata_dir),
            TranscodingTempPath=enc.TranscodingTempPath or str(paths.transcode_dir), CastReceiverApplications=[],
            HasUpdateAvailable=False, EncoderLocation="System", SystemArchitecture=_arch(),
        )


def _arch() -> str:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return "X64"
    if machine in ("aarch64", "arm64"):
        return "Arm64"
    if machine.startswith("arm"):
        return "Arm"
    return "X86" if sys.maxsize < 2**32 else "X64"
