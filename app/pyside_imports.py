"""Keep PySide's import hook from holding the source of every module imported after it.

Once PySide6 is imported, shiboken's ``__feature__`` import hook looks at each newly imported
module to decide whether it uses PySide (``shibokensupport.feature._mod_uses_pyside``). It asks
``inspect.getsource(module)``, which goes through ``linecache``: the lines of every module
imported after PySide (the whole hosted server: SQLAlchemy, Litestar, ...) then stay in memory
for the life of the process, about 30 MiB resident in the tray app, and reading them as lines
costs start-up time too. ``install()`` swaps that check for one with the same answer (the
module's source file mentions "PySide6") that reads the file once and keeps nothing. Modules
without a source file (a frozen app) get False, as ``inspect.getsource`` failing gives today.
"""

from __future__ import annotations

import logging
import sys
from types import ModuleType

log = logging.getLogger("reelroom.desktop")


def mentions_pyside(module: ModuleType) -> bool:
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return False
    try:
        with open(path, "rb") as f:
            return b"PySide6" in f.read()
    except OSError:
        return False


def install() -> bool:
    """Replace shiboken's check (after PySide6 is imported); True when it was there to replace."""
    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        log.debug("shiboken's feature module has no _mod_uses_pyside; nothing to replace")
        return False
    feature._mod_uses_pyside = mentions_pyside  # type: ignore[attr-defined]
    return True
