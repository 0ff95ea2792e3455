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

import builtins
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

log = logging.getLogger("reelroom.desktop")
# Python's own import, when this module is imported before PySide6 (as app/desktop_main.py does):
# shiboken replaces ``builtins.__import__`` with its feature hook (see without_feature_hook).
PLAIN_IMPORT = builtins.__import__ if "shiboken6" not in sys.modules else None


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


@contextmanager
def without_feature_hook() -> Iterator[bool]:
    """Imports in the block go through Python's own import, not shiboken's hook; yields whether it
    was bypassed.

    Once PySide6 is imported, every import statement runs shiboken's ``__feature_import__``: a
    Python function per statement (for ``from __feature__ import ...``) and, for each new module,
    the check above. The hosted server's modules and libraries (~800) never use Qt (server/ may
    not import it), so the hook has nothing to do for them; importing them through it cost ~5 % of
    the tray program's instructions up to its server running (~140 M, callgrind). Modules imported
    here are not in shiboken's feature table, which for a module that does not touch Qt types is
    the same as the "ignore" entry the check gives it. Only for a block that runs while no other
    thread imports (``builtins.__import__`` is process-wide): the host factory, before the server's
    thread starts (app/desktop_main.py)."""
    plain = PLAIN_IMPORT
    hooked = builtins.__import__
    if plain is None or hooked is plain:
        yield False
        return
    builtins.__import__ = plain
    try:
        yield True
    finally:
        builtins.__import__ = hooked
