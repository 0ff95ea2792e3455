"""The compiled methods of dataclasses, kept from one start to the next as Python keeps bytecode.

``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__`` (and, as asked, its
ordering, hash and frozen ``__setattr__``) as source text and compiles that text with ``exec`` when
the class is made. A server start makes some 190 dataclasses (Litestar's, the server's, anyio's),
and compiling their ~450,000 characters of methods was ~0.53 G instructions, a fifth of a start
(``bench/startup_callgrind.py``), every time, for the same texts.

``install`` (``server/__init__.py``: before any module of the server imports Litestar) gives the
``dataclasses`` module an ``exec`` of its own that, for a text it compiled in an earlier run, takes
the code object kept in ``server/__pycache__`` and runs it with the same globals and namespace.
Nothing else changes: ``exec(text)`` compiles ``text`` as ``compile(text, "<string>", "exec")``
with the flags of the calling module (``dataclasses`` has no ``__future__`` import), which is how a
text missing from the cache is compiled here, so a class gets the very functions it would have got.
The cache is looked up by the whole text (no hash to collide) and belongs to one Python (its
bytecode magic number heads the file); a file that cannot be read is ignored. An entry goes from
memory as it is used. ``save`` writes what
this process compiled, merged with the file (a temporary file, then a rename: processes that save at
once leave one whole file), at exit, or once a server has started (``settle``: the entries left are
then let go, and the classes a running server makes later compile as without the cache); like bytecode,
never under ``PYTHONDONTWRITEBYTECODE``, in a PyInstaller bundle (``sys.frozen``: its folders are the
installed app's) nor where the folder is not writable. A bundle carries the file made at build time
(``installer/inputs.py`` ``write_code_cache``) in ``_internal/server/__pycache__/``, where ``FILE``
points in a frozen app, and only reads it.

The same file keeps the code of what else a start compiles from text: ``typing``'s forward
references (``typing.compile``), the functions SQLAlchemy's decorators generate
(``sqlalchemy.util.langhelpers``' ``compile``, set as that module loads: ``_Seeder``) and each
namedtuple's ``__new__`` (``collections.eval``); each with the flags its caller's call inherits, keyed
by mode, flags, file name and text (``caching_compile``, ``caching_eval``).
"""

from __future__ import annotations
import __future__

import atexit
import builtins
import marshal
import os
import sys
import threading
from collections.abc import Callable
from importlib.util import MAGIC_NUMBER
from types import CodeType
from typing import Any

# (REELROOM_CODE_CACHE_DIR: another folder for it, as the bundle's build makes its own, installer/inputs.py)
FILE = os.path.join(os.environ.get("REELROOM_CODE_CACHE_DIR") or os.path.join(os.path.dirname(__file__), "__pycache__"),
                    f"dataclass-code.{sys.implementation.cache_tag}.bin")
#: past this many texts the file keeps only what the saving process used (old texts go)
MOST = 2000
_HEADER = MAGIC_NUMBER + bytes([sys.flags.optimize & 0xFF])

_codes: dict[str, CodeType] = {}  # text -> its code: the file's texts this process has not run yet
_new: dict[str, CodeType] = {}  # texts compiled here that the file lacks, until saved
_used: set[int] = set()  # the hash of each text run (past MOST texts, the file keeps these)
_compiled = 0  # texts compiled here that the file lacked (for the tests and the benches)
_active = True  # until ``settle``: afterwards dataclasses compile as without the cache
_lock = threading.Lock()
_exec = builtins.exec
_eval = builtins.eval


def cached_exec(source: Any, globals: dict[str, Any] | None = None, locals: Any = None, /) -> None:  # noqa: A002
    """``exec`` as the ``dataclasses`` module calls it, with a text's compiled code kept."""
    if globals is None:  # exec's own default: the caller's namespaces
        frame = sys._getframe(1)
        globals = frame.f_globals  # noqa: A001
        if locals is None:
            locals = frame.f_locals
    if type(source) is str and _active:
        source = _kept(source, source, "exec")  # (dataclasses has no __future__ import: no flags)
    _exec(source, globals, locals)


#: the caching ``compile``s and ``eval``s given to modules (``settle`` takes them off again)
_WRAPPERS: set[Callable[..., Any]] = set()


def caching_compile(inherited: int) -> Callable[..., Any]:
    """A ``compile`` for a module's globals that keeps the code of what it compiles from a text
    (modes ``eval`` and ``exec``): ``typing``'s (``ForwardRef``: an annotation's text, ~670 at a
    start, most of them SQLAlchemy's and Litestar's) and SQLAlchemy's ``langhelpers`` (the ~120
    functions its decorators generate as text). ``inherited``: the ``__future__`` flags of that
    module, which its own calls to the builtin inherit; so do these, and no others."""

    def cached_compile(source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False,
                       optimize: int = -1, **kwargs: Any) -> Any:
        use = flags if dont_inherit else flags | inherited
        if type(source) is str and type(filename) is str and mode in ("eval", "exec") and optimize == -1 \
                and not kwargs and _active:
            return _kept(f"\0{mode}\0{use}\0{filename}\0{source}", source, mode, filename, use, keep=True)
        return compile(source, filename, mode, use, True, optimize, **kwargs)

    cached_compile.inherited = inherited  # type: ignore[attr-defined]
    _WRAPPERS.add(cached_compile)
    return cached_compile


def caching_eval(inherited: int) -> Callable[..., Any]:
    """An ``eval`` for a module's globals that keeps the code of the texts it evaluates, as
    ``caching_compile``: ``collections``' (``namedtuple`` makes each class's ``__new__`` from text,
    ~50 at a start)."""

    def cached_eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:  # noqa: A002
        if globals is None:  # eval's own default: the caller's namespaces
            frame = sys._getframe(1)
            globals = frame.f_globals  # noqa: A001
            if locals is None:
                locals = frame.f_locals
        if type(source) is str and _active:
            text = source.lstrip(" \t")  # (as eval reads a text)
            source = _kept(f"\0eval\0{inherited}\0<string>\0{text}", text, "eval", "<string>", inherited, keep=True)
        return _eval(source, globals, locals)

    _WRAPPERS.add(cached_eval)
    return cached_eval


def _kept(key: str, source: str, mode: str, filename: str = "<string>", flags: int = 0, keep: bool = False) -> CodeType:
    """The code of ``source`` compiled as asked: kept by an earlier run, else compiled now. ``key``:
    the text for ``exec``'s, else the text after a head naming the mode, flags and file name
    (between NULs: no source text holds one)."""
    global _compiled
    # Each dataclass text's entry goes as it is used, while the start still allocates (its memory
    # is reused at once, as a compile's is; kept to the end it stayed as ~1 MiB of holes). A second
    # class with the same text (~20 at start) compiles it again. A compile's entry stays (to
    # ``settle``): they are small (~220 forward references asked ~670 times).
    code = _codes.get(key) if keep else _codes.pop(key, None)
    if code is None:
        code = _new.get(key)
        if code is None:
            code = compile(source, filename, mode, flags, dont_inherit=True)
            if hash(key) not in _used:  # not a text of the file this process ran already
                # (under the lock, while active: one text compiled on two of the start's threads
                # at once is counted once)
                with _lock:
                    if _active and _new.setdefault(key, code) is code:
                        _compiled += 1
    with _lock:  # (a call that raced ``settle`` leaves nothing behind it)
        if _active:
            _used.add(hash(key))
    return code


def _read() -> dict[str, CodeType]:
    try:
        with open(FILE, "rb") as f:
            data = f.read()
        if not data.startswith(_HEADER):
            return {}
        codes = marshal.loads(memoryview(data)[len(_HEADER):])
    except Exception:  # missing, unreadable, another Python's, cut short: compiled as without it
        return {}
    if type(codes) is not dict:
        return {}
    return {text: code for text, code in codes.items() if type(text) is str and type(code) is CodeType}


#: modules given a caching ``compile`` as they load (their ``__future__`` flags): see ``caching_compile``
COMPILING = {"sqlalchemy.util.langhelpers": __future__.annotations.compiler_flag}


class _Seeder:
    """First on ``sys.meta_path`` until the modules of ``COMPILING`` are loaded: finds each as the
    finders after it would, and has its loader run it with the caching ``compile`` already among
    its globals (its code defines none: calls to ``compile`` then find it before the builtin)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        flags = COMPILING.get(name)
        if flags is None:
            return None
        if all(m in sys.modules or m == name for m in COMPILING):
            _unseed()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if finder is not self and find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module: Any) -> None:
            if module.__name__ == name:  # (a loader may serve several modules: PyInstaller's)
                module.__dict__.setdefault("compile", caching_compile(flags))
                vars(loader).pop("exec_module", None)
            run(module)

        try:
            loader.exec_module = exec_module  # this loader's for this module (the class's again after)
        except (AttributeError, TypeError):
            pass
        return spec


_seeder = _Seeder()


def _unseed() -> None:
    if _seeder in sys.meta_path:
        sys.meta_path.remove(_seeder)


def install() -> None:
    """Give ``dataclasses`` the caching ``exec`` and ``typing`` the caching ``compile`` (once), with
    the texts kept by earlier runs."""
    import collections
    import dataclasses
    import typing

    if vars(dataclasses).get("exec") is cached_exec:
        return
    _codes.update(_read())
    dataclasses.exec = cached_exec  # type: ignore[attr-defined]  # a module global before the builtin
    typing.compile = caching_compile(0)  # type: ignore[attr-defined]  # (the same; typing has no __future__)
    collections.eval = caching_eval(0)  # type: ignore[attr-defined]  # (nor has collections)
    if not all(m in sys.modules for m in COMPILING):
        sys.meta_path.insert(0, _seeder)
    atexit.register(save)


def save() -> bool:
    """Write the texts this process compiled (with those already kept); True if it wrote the file."""
    if sys.dont_write_bytecode or getattr(sys, "frozen", False):
        # (a bundle's folders are the installed app's: a signed macOS app must not change)
        return False
    with _lock:
        new = dict(_new)  # (one C call each: a class made on another thread meanwhile cannot break them)
        if not new:
            return False
        kept = _read()
        kept.update(new)
        if len(kept) > MOST:
            used = set(_used)
            kept = {text: code for text, code in kept.items() if hash(text) in used}
        data = _HEADER + marshal.dumps(kept)
        temporary = f"{FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            os.makedirs(os.path.dirname(FILE), exist_ok=True)
            with open(temporary, "wb") as f:
                f.write(data)
            os.replace(temporary, FILE)
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            return False
        for text in new:
            _new.pop(text, None)
        return True


def settle() -> None:
    """After a server's start (``ServerContext.initialize``, in the executor): save what it compiled,
    then let go of the file's texts it did not run (those it ran went as it ran them), so an idle
    server holds what it held without the cache; classes made later (modules loaded on first
    use) compile as they would without it."""
    global _active
    save()
    _unseed()
    with _lock:
        _codes.clear()
        _new.clear()
        _used.clear()
        _active = False  # (last: whoever sees it False sees the texts gone)
    _unwrap()


def _unwrap() -> None:
    """Take the caching ``compile`` and ``eval`` off the modules given them (``typing``,
    ``collections``, SQLAlchemy's ``langhelpers``): their calls go to the builtins again, as
    without the cache. Left on, each forward reference, namedtuple or generated function made
    after the start paid a Python call more (``dataclasses`` keeps its ``exec``, as before)."""
    for module_name in ("typing", "collections", *COMPILING):
        names = getattr(sys.modules.get(module_name), "__dict__", None)
        if type(names) is not dict:
            continue
        for name in ("compile", "eval"):
            if names.get(name) in _WRAPPERS:
                del names[name]
