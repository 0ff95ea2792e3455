"""Modules that libraries import at start-up but a running server hardly ever uses, run on first use
instead (``defer_library_imports``, called by ``server/__init__.py``: before any module of the
server imports Litestar or uvicorn).

- ``yaml`` (Litestar's OpenAPI YAML renderer, which Reelroom does not serve) and ``pdb`` (the
  default of Litestar's ``debugger_module``, used only with ``pdb_on_exception``): both are a plain
  ``import x`` in Litestar, and nothing reads them while the server starts.
- ``logging.config`` (with ``socketserver``): uvicorn's ``config`` module
  imports it for ``dictConfig``, which it calls only with a ``log_config`` (the runner passes none).
- ``uvicorn``: its package ``__init__`` imports ``uvicorn.main``, the command line, and with it
  click, watchfiles, multiprocessing and the reload supervisors. The runner takes ``Config`` and
  ``Server`` from their own modules, and ``uvicorn.Config`` / ``uvicorn.Server`` (uvicorn's lifespan
  module imports the first at every start) come from those without running the ``__init__``.

Each becomes its module object as the import system makes it (``__spec__``, ``__path__``,
``__file__``: imports of it and of its submodules work as usual) with a module ``__getattr__``
(PEP 562) that runs the module's own code, into the same object, the first time a name it would
define is read (``uvicorn.run``, ``from yaml import safe_dump``, ``pdb.set_trace``). Python 3.11's
``importlib.util.LazyLoader`` cannot serve here: a second ``import x`` reads ``x.__spec__``, which
made it load. Together some 48 modules and ~2.3 MiB of resident memory less in every server. A module
already imported is left as it is; ``tests/system/test_startup_imports.py`` checks the deferral and
that each module works when used.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

DEFERRED = ("yaml", "pdb", "uvicorn", "logging.config")
# Names a deferred package gives from one of its submodules, without running its __init__ (uvicorn's
# lifespan module does ``from uvicorn import Config`` at every start).
FROM_SUBMODULES = {"uvicorn": {"Config": "uvicorn.config", "Server": "uvicorn.server"}}
_lock = threading.RLock()


def _defer(name: str) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
        return
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    shortcuts = FROM_SUBMODULES.get(name, {})

    def __getattr__(attribute: str) -> Any:  # PEP 562: only for names the module lacks
        if attribute in shortcuts and module.__dict__.get("__getattr__") is __getattr__:
            value = getattr(importlib.import_module(shortcuts[attribute]), attribute)
            module.__dict__[attribute] = value  # as the package's __init__ would have set it
            return value
        with _lock:
            if module.__dict__.get("__getattr__") is __getattr__:
                del module.__dict__["__getattr__"]
                try:
                    loader.exec_module(module)  # the module's own code, into the same module
                except BaseException:
                    sys.modules.pop(name, None)  # as a failed import: the next import tries again
                    raise
        return getattr(module, attribute)

    __getattr__.deferred = True  # type: ignore[attr-defined]  # what loaded() looks for
    module.__dict__["__getattr__"] = __getattr__
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:  # a submodule is also its package's attribute (``import logging.config`` then ``logging.config.x``)
        setattr(sys.modules[parent], child, module)


def defer_library_imports() -> None:
    for name in DEFERRED:
        _defer(name)


def loaded(module: ModuleType) -> bool:
    """False for a module deferred here whose code has not run yet."""
    return not getattr(module.__dict__.get("__getattr__"), "deferred", False)


def lazy_exports(package: str, sources: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562) that give each exported name from its
    own submodule (``sources``: name -> submodule), imported the first time the name is read
    (``from package import name`` too). The package's ``__init__`` then imports nothing itself, so
    importing one submodule (``package.x``) loads no other (``server/library/scan/naming``,
    ``server/metadata/providers``)."""

    def __getattr__(name: str) -> Any:
        module = sources.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # found directly from now on
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(sources))

    return __getattr__, __dir__
