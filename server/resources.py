"""Where Reelroom's bundled, read-only resources live (localization data, branding, icons)."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    """The ``resources`` folder: inside the PyInstaller bundle when frozen, else next to ``server/``."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"
