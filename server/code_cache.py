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
"""

from __future__ import annotations

import atexit
import builtins
import marshal
import os
import sys
import threading
from importlib.util import MAGIC_NUMBER
from types import CodeType
from typing import Any

FILE = os.path.join(os.path.dirname(__file__), "__pycache__",
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


def cached_exec(source: Any, globals: dict[str, Any] | None = None, locals: Any = None, /) -> None:  # noqa: A002
    """``exec`` as the ``dataclasses`` module calls it, with a text's compiled code kept."""
    global _compiled
    if globals is None:  # exec's own default: the caller's namespaces
        frame = sys._getframe(1)
        globals = frame.f_globals  # noqa: A001
        if locals is None:
            locals = frame.f_locals
    if type(source) is str and _active:
        # Each text's entry goes as it is used, while the start still allocates (its memory is
        # reused at once, as a compile's is; kept to the end it stayed as ~1 MiB of holes). A
        # second class with the same text (~20 at start) compiles it again.
        code = _codes.pop(source, None)
        if code is None:
            code = _new.get(source)
            if code is None:
                code = compile(source, "<string>", "exec", dont_inherit=True)
                if hash(source) not in _used:  # not a text of the file this process ran already
                    _new[source] = code
                    _compiled += 1
        _used.add(hash(source))
        source = code
    _exec(source, globals, locals)


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


def install() -> None:
    """Give ``dataclasses`` the caching ``exec`` (once), with the texts kept by earlier runs."""
    import dataclasses

    if vars(dataclasses).get("exec") is cached_exec:
        return
    _codes.update(_read())
    dataclasses.exec = cached_exec  # type: ignore[attr-defined]  # a module global before the builtin
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
    with _lock:
        _active = False
        _codes.clear()
        _new.clear()
        _used.clear()
