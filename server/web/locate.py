"""Which web client folder the server hosts at ``/web/``, and whether it hosts one at all.

The folder is looked up in this order (as Jellyfin does with ``--webdir`` and its bundled
``jellyfin-web``):

1. ``--web-dir DIR`` / ``REELROOM_WEB_DIR`` (``ServerOptions.web_dir``);
2. ``web/`` inside the installed (PyInstaller) bundle;
3. ``web/`` in the data folder (where ``reelroom-server --install-web`` puts it).

A folder counts only when it has an ``index.html``. Hosting is off with ``--no-web`` /
``REELROOM_NO_WEB`` (``ServerOptions.host_web``) or the ``web`` configuration section's
``HostWebClient: false`` (Jellyfin's ``hostwebclient`` setting).
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("reelroom.web")

TRUE_WORDS = ("1", "true", "yes", "on")


def env_flag(name: str, environ: dict[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(name, "")
    return value.strip().lower() in TRUE_WORDS


def bundle_web_dirs() -> list[Path]:
    """``web/`` of a frozen (PyInstaller) build: beside the executables, or in ``_internal``."""
    if not getattr(sys, "frozen", False):
        return []
    dirs = [Path(sys.executable).resolve().parent / "web"]
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        dirs.append(Path(meipass) / "web")
    return dirs


def data_web_dir(data_dir: Path) -> Path:
    return Path(data_dir) / "web"


def is_web_client(folder: Path) -> bool:
    try:
        return (folder / "index.html").is_file()
    except OSError:
        return False


@dataclass(frozen=True)
class WebLocation:
    """The outcome of a lookup: ``folder`` is None when nothing is hosted, and ``reason`` says why."""

    folder: Path | None
    source: str  # "option", "bundle", "data" or "none"
    reason: str = ""


def locate_web_client(data_dir: Path, web_dir: Path | None = None, host_web: bool = True,
                      bundle_dirs: list[Path] | None = None) -> WebLocation:
    if not host_web:
        return WebLocation(None, "none", "Hosting the web app is turned off on this server.")
    if web_dir is not None:
        folder = Path(web_dir).expanduser()
        if is_web_client(folder):
            return WebLocation(folder.resolve(), "option")
        # An explicit choice that does not work is reported (and logged with its path), not replaced.
        log.error("The web app folder %s (--web-dir / REELROOM_WEB_DIR) has no index.html", folder)
        return WebLocation(None, "none", "The web app folder this server was given has no index.html.")
    for folder in bundle_web_dirs() if bundle_dirs is None else bundle_dirs:
        if is_web_client(folder):
            return WebLocation(folder.resolve(), "bundle")
    folder = data_web_dir(data_dir)
    if is_web_client(folder):
        return WebLocation(folder.resolve(), "data")
    return WebLocation(None, "none", "No web app is installed on this server.")
