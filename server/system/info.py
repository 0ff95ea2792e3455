"""What /System/Info and /System/Info/Public report."""

from __future__ import annotations

import platform
import sys

from server.context import ServerContext
from server.version import JELLYFIN_PRODUCT_NAME, JELLYFIN_VERSION
from server.wire import models as w


def local_address(ctx: ServerContext, request_host: str | None) -> str:
    """The address a client should use: the Host it reached us on, else our bound port."""
    if request_host:
        return f"http://{request_host}"
    return f"http://127.0.0.1:{ctx.options.port}"


def public_info(ctx: ServerContext, request_host: str | None) -> w.PublicSystemInfo:
    return w.PublicSystemInfo(
        LocalAddress=local_address(ctx, request_host), ServerName=ctx.server_name(), Version=JELLYFIN_VERSION,
        ProductName=JELLYFIN_PRODUCT_NAME, OperatingSystem="", Id=ctx.system_id,
        StartupWizardCompleted=ctx.wizard_completed)


def system_info(ctx: ServerContext, request_host: str | None) -> w.SystemInfo:
    enc = ctx.config.encoding()
    paths = ctx.paths
    return w.SystemInfo(
        LocalAddress=local_address(ctx, request_host), ServerName=ctx.server_name(), Version=JELLYFIN_VERSION,
        ProductName=JELLYFIN_PRODUCT_NAME, OperatingSystem="", Id=ctx.system_id,
        StartupWizardCompleted=ctx.wizard_completed, OperatingSystemDisplayName=f"{platform.system()} {platform.release()}",
        PackageName="reelroom", HasPendingRestart=False, IsShuttingDown=False, SupportsLibraryMonitor=True,
        WebSocketPortNumber=ctx.options.port, CompletedInstallations=[], CanSelfRestart=True,
        CanLaunchWebBrowser=False, ProgramDataPath=str(paths.data_dir), WebPath="", ItemsByNamePath=str(paths.metadata_dir),
        CachePath=str(paths.cache_dir), LogPath=str(paths.log_dir), InternalMetadataPath=str(paths.metadata_dir),
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
