"""Version facts. Reelroom's own version comes from the installed distribution (pyproject);
the Jellyfin product name and version are what clients gate features on."""

from __future__ import annotations

from importlib import metadata

JELLYFIN_PRODUCT_NAME = "Jellyfin Server"
JELLYFIN_VERSION = "10.10.7"
PRODUCT = "Reelroom"


def reelroom_version() -> str:
    try:
        return metadata.version("reelroom")
    except metadata.PackageNotFoundError:  # a frozen build without metadata, or an uninstalled source tree
        import sys
        import tomllib
        from pathlib import Path

        bundle = getattr(sys, "_MEIPASS", None)
        if getattr(sys, "frozen", False) and bundle:  # written at build time by installer/build_inputs.py
            try:
                return (Path(bundle) / "VERSION").read_text(encoding="utf-8").strip()
            except OSError:
                pass
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
        except (OSError, KeyError, ValueError):
            return "0.0.0"
