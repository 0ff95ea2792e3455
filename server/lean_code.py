"""Libraries' docstrings are left out of their code as it is loaded (what ``python -OO`` does to
docstrings, for library modules only, asserts kept).

A started server holds ~4 MiB of docstrings (SQLAlchemy alone ~1.8 MiB), unmarshalled with the
code of every module it imports and read by nothing but ``help()``. ``install`` puts a path hook
in front of Python's own file finder whose loaders (``.py`` with its cached bytecode, and the
bundle's bare ``.pyc`` files) load a module's code as usual, then swap each docstring constant
for ``None`` before the code runs:

- a function's docstring is its code's first constant (CPython puts ``None`` there when there is
  none, and ``-OO`` leaves that ``None``): the first constant of every function's code is made
  ``None``;
- a module's or a class's docstring is the constant stored into ``__doc__`` by the first
  instructions of its body: that constant is made ``None``.

So ``f.__doc__`` and ``cls.__doc__`` are ``None`` in library code, exactly as under ``-OO``
(libraries that support ``-OO`` work unchanged). The server's own packages (``server``, ``app``,
``ui``, ``tests``) keep theirs: a handler's docstring is its operation's description in the
OpenAPI document, and wire models' docstrings their schemas' description. ``REELROOM_DOCSTRINGS=1``
leaves every module as it is. ``sqlalchemy.orm.events`` keeps its docstrings too: SQLAlchemy
asserts that some event methods have one (under ``-OO`` that assert is gone as well).

Walking the code costs ~40-65 ms of CPU for the ~600 library modules of a start, so the lean code
is kept as bytecode next to Python's own (see ``LeanSourceFileLoader``) and only a first start
after an install or upgrade walks it. Where nothing may be written (``PYTHONDONTWRITEBYTECODE``, a
read-only install, the bundle's bare ``.pyc`` files) every start walks it. Only on CPython 3.11,
whose code layout this follows; elsewhere nothing is installed.
"""

from __future__ import annotations

import _imp
import marshal
import os
import sys
from importlib.machinery import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    SourceFileLoader,
    SourcelessFileLoader,
)
from importlib.util import MAGIC_NUMBER, cache_from_source
from opcode import opmap
from types import CodeType
from typing import Any

# Packages whose docstrings are read at run time (the OpenAPI document's descriptions) or by people.
KEPT = frozenset({"server", "app", "ui", "tests", "__main__"})
# Library modules that read their own docstrings: SQLAlchemy's ORM events assert that some have one
# (``event.legacy._augment_fn_docs``; under -OO that assert is gone too).
KEPT_MODULES = frozenset({"sqlalchemy.orm.events"})
_FUNCTION = 0x1 | 0x2  # CO_OPTIMIZED | CO_NEWLOCALS: a function's (or a comprehension's) code
_LOAD_CONST, _STORE_NAME = opmap["LOAD_CONST"], opmap["STORE_NAME"]
# What may come before a body's first statement: its cells, RESUME, a class's __module__ and __qualname__, SETUP_ANNOTATIONS.
_PREAMBLE = frozenset(
    opmap[name]
    for name in ("COPY_FREE_VARS", "MAKE_CELL", "RESUME", "SETUP_ANNOTATIONS", "LOAD_NAME", "LOAD_CONST")
)
TAG = "lean2"  # the lean bytecode's optimization tag: a change to lean() needs a new one
_SUPPORTED = sys.version_info[:2] == (3, 11) and sys.implementation.name == "cpython"  # the layout checked


def _body_doc_index(code: CodeType) -> int | None:
    """The constant a module's or a class's body stores into ``__doc__`` as its first statement
    (after a class's ``__module__`` and ``__qualname__``): where the compiler puts a docstring."""
    if "__doc__" not in code.co_names:
        return None
    raw = code.co_code
    previous_const = None
    for at in range(0, min(len(raw), 32), 2):
        op, arg = raw[at], raw[at + 1]
        if op == _STORE_NAME:
            name = code.co_names[arg]
            if name == "__doc__":
                return previous_const
            if name not in ("__module__", "__qualname__"):
                return None
        elif op not in _PREAMBLE:
            return None
        previous_const = arg if op == _LOAD_CONST else None
    return None


def lean(code: CodeType) -> CodeType:
    """``code`` with its docstrings, and those of the code it holds, made ``None``."""
    consts = code.co_consts
    changed: list[Any] | None = None
    for i, const in enumerate(consts):
        if type(const) is CodeType:
            slim = lean(const)
            if slim is not const:
                if changed is None:
                    changed = list(consts)
                changed[i] = slim
    if code.co_flags & _FUNCTION == _FUNCTION:
        doc = 0 if consts and type(consts[0]) is str and not code.co_name.startswith("<") else None
    else:
        doc = _body_doc_index(code)
        if doc is not None and (doc >= len(consts) or type(consts[doc]) is not str):
            doc = None
    if doc is not None:
        if changed is None:
            changed = list(consts)
        changed[doc] = None
    return code if changed is None else code.replace(co_consts=tuple(changed))


def _pack(value: int) -> bytes:
    return value.to_bytes(4, "little")


def _kept(fullname: str) -> bool:
    return fullname.partition(".")[0] in KEPT or fullname in KEPT_MODULES


class LeanSourceFileLoader(SourceFileLoader):
    """Loads a library module's code from its lean bytecode (``__pycache__/x.cpython-311.opt-lean2.pyc``
    next to Python's own, checked against the source's mtime and size the same way), else from
    Python's own bytecode or the source, then leaves the docstrings out and writes the lean bytecode
    for the next start (when bytecode may be written at all). A start from lean bytecode unmarshals
    less than one from Python's own; only the first one after an install or an upgrade walks the code."""

    def get_code(self, fullname: str) -> CodeType | None:
        if _kept(fullname):
            return super().get_code(fullname)
        source_path = self.get_filename(fullname)
        try:
            lean_path = cache_from_source(source_path, optimization=TAG)
            stats = self.path_stats(source_path)
        except (NotImplementedError, OSError, ValueError):
            code = super().get_code(fullname)
            return None if code is None else lean(code)
        mtime, size = int(stats["mtime"]) & 0xFFFFFFFF, int(stats["size"]) & 0xFFFFFFFF
        header = MAGIC_NUMBER + _pack(0) + _pack(mtime) + _pack(size)
        try:
            data = self.get_data(lean_path)
        except OSError:
            data = b""
        if data[:16] == header:
            try:
                kept = marshal.loads(memoryview(data)[16:])
            except (EOFError, ValueError, TypeError):
                kept = None
            if type(kept) is CodeType:
                _imp._fix_co_filename(kept, source_path)  # type: ignore[attr-defined]  # as Python's loader does
                return kept
        code = super().get_code(fullname)
        if code is None:
            return None
        code = lean(code)
        if not sys.dont_write_bytecode:
            try:
                self._cache_bytecode(source_path, lean_path, header + marshal.dumps(code))  # type: ignore[attr-defined]
            except (OSError, NotImplementedError):
                pass
        return code


class LeanSourcelessFileLoader(SourcelessFileLoader):
    def get_code(self, fullname: str) -> CodeType | None:
        code = super().get_code(fullname)
        return code if code is None or _kept(fullname) else lean(code)


def _is_file_finder_hook(hook: Any) -> bool:
    return getattr(hook, "__qualname__", "").startswith("FileFinder.path_hook")


def install() -> bool:
    """Use the lean loaders for the modules imported from now on (True if installed)."""
    if not _SUPPORTED or os.environ.get("REELROOM_DOCSTRINGS") == "1" or sys.flags.optimize >= 2:
        return False
    if any(getattr(hook, "lean", False) for hook in sys.path_hooks):
        return True
    for i, hook in enumerate(sys.path_hooks):
        if _is_file_finder_hook(hook):
            lean_hook = FileFinder.path_hook(
                (ExtensionFileLoader, EXTENSION_SUFFIXES),
                (LeanSourceFileLoader, SOURCE_SUFFIXES),
                (LeanSourcelessFileLoader, BYTECODE_SUFFIXES),
            )
            lean_hook.lean = True  # type: ignore[attr-defined]
            sys.path_hooks[i] = lean_hook
            # Finders already made for sys.path entries keep their loaders: make them again.
            for path, finder in list(sys.path_importer_cache.items()):
                if isinstance(finder, FileFinder):
                    del sys.path_importer_cache[path]
            return True
    return False
