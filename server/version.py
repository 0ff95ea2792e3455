"""Version facts. Reelroom's own version comes from the installed distribution (pyproject);
the Jellyfin product name and version are what clients gate features on."""

from __future__ import annotations

import functools
from importlib import metadata
from pathlib import Path

JELLYFIN_PRODUCT_NAME = "Jellyfin Server"
JELLYFIN_VERSION = "10.10.7"
PRODUCT = "Reelroom"


def reelroom_version() -> str:
    import sys

    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        # A PyInstaller build: VERSION is written from pyproject.toml at build time (installer/reelroom.spec).
        try:
            return (Path(bundle) / "VERSION").read_text(encoding="utf-8").strip()
        except OSError:
            pass
    return _installed_version()


@functools.cache
def _installed_version() -> str:
    """The installed distribution's version (else pyproject's), looked up once: a start asks for
    the version some 15 times (the OpenAPI document, the built-in plugins, the provider user agent,
    System/Info), and ``importlib.metadata`` finds and parses the distribution's METADATA file each
    time, ~1.3 ms a call."""
    try:
        return metadata.version("reelroom")
    except metadata.PackageNotFoundError:  # running from a source tree that was not installed
        import tomllib

        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
        except (OSError, KeyError, ValueError):
            return "0.0.0"
