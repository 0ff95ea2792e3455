"""server/code_cache.py keeps, besides the dataclasses' methods, what a start compiles from text
through ``compile``: ``typing``'s forward references (an annotation's text, ~670 at a start) and
the functions SQLAlchemy's decorators generate as text (~120). A start after one that kept them
compiles none of them, and the kept code is the code ``compile`` makes; so are the texts
``collections.namedtuple`` evaluates (each class's ``__new__``, ~50).

Each start runs in a fresh interpreter, with the cache pointed at the test's own file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

START = '''
import builtins, json, sys
counts = {"forward": 0, "sqlalchemy": 0, "namedtuple": 0}
real = builtins.compile
real_eval = builtins.eval


def counting(source, filename, mode, *args, **kwargs):
    if mode == "eval" and filename == "<string>" and str(source).startswith("lambda _cls"):
        counts["namedtuple"] += 1  # (a namedtuple's __new__ compiled for the cache)
    elif mode == "eval" and filename == "<string>":
        counts["forward"] += 1
    elif isinstance(filename, str) and filename.startswith("<sqlalchemy generated"):
        counts["sqlalchemy"] += 1
    return real(source, filename, mode, *args, **kwargs)


def counting_eval(source, *args):
    if isinstance(source, str) and sys._getframe(1).f_globals.get("__name__") == "collections":
        counts["namedtuple"] += 1
    if not args:
        frame = sys._getframe(1)
        args = (frame.f_globals, frame.f_locals)
    return real_eval(source, *args)


builtins.compile = counting
builtins.eval = counting_eval
from server import code_cache
code_cache.FILE = sys.argv[1]
code_cache._codes.clear()  # server/__init__ installed the cache with the tree's file: the test's instead
code_cache._new.clear()  # (and what it compiled before this line: not the test's)
code_cache._codes.update(code_cache._read())
counts.update(forward=0, sqlalchemy=0, namedtuple=0)
import typing
import sqlalchemy, sqlalchemy.dialects.sqlite  # SQLAlchemy's forward references and generated functions
import litestar  # Litestar's forward references
import server.app  # the server's
text = "dict[str, list[int]] | None"
ref = typing.ForwardRef(text)
made = real(text, "<string>", "eval")
from sqlalchemy.util import langhelpers
import collections
Point = collections.namedtuple("Point", "x y", defaults=(0,))
point = Point(1)
print(json.dumps({**counts, "saved": code_cache.save(), "same": ref.__forward_code__ == made,
                  "evaluated": ref._evaluate({}, {}, frozenset()) == (dict[str, list[int]] | None),
                  "langhelpers": langhelpers.__dict__.get("compile") is not None,
                  "point": [list(point), point._replace(y=2).y, Point._fields],
                  "seeder_left": any(type(f).__name__ == "_Seeder" for f in sys.meta_path),
                  "wrapped": [vars(m).get(n) is not None for m, n in ((typing, "compile"), (collections, "eval"),
                                                                       (langhelpers, "compile"))]}))
# after the start (settle) the modules call the builtins again: a forward reference, a namedtuple or
# a generated function made while serving pays no wrapper (each is compiled by the builtin)
code_cache.settle()
counts.update(forward=0, sqlalchemy=0, namedtuple=0)
late = typing.ForwardRef("tuple[int, str] | None")
Late = collections.namedtuple("Late", "a b")
print(json.dumps({"settled": [vars(m).get(n) is not None for m, n in ((typing, "compile"), (collections, "eval"),
                                                                      (langhelpers, "compile"))],
                  "late": [late._evaluate({}, {}, frozenset()) == (tuple[int, str] | None), list(Late(1, 2))],
                  "late_counts": counts}))
'''


def _start(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", START, str(cache)], cwd=ROOT, capture_output=True, text=True,
                         timeout=180, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    return {**json.loads(lines[-2]), **json.loads(lines[-1])}


def test_a_start_after_one_that_kept_them_compiles_no_forward_reference_nor_generated_function(tmp_path):
    cache = tmp_path / "dataclass-code.bin"
    first = _start(cache)
    assert first["forward"] > 100 and first["sqlalchemy"] > 50  # compiled, and kept
    assert first["namedtuple"] > 0
    assert first["saved"] is True
    second = _start(cache)
    assert second["forward"] == 0 and second["sqlalchemy"] == 0 and second["namedtuple"] == 0
    for run in (first, second):
        assert run["same"] is True and run["evaluated"] is True
        assert run["langhelpers"] is True and run["seeder_left"] is False
        assert run["point"] == [[1, 0], 2, ["x", "y"]]
        assert run["wrapped"] == [True, True, True]  # while the server starts


def test_after_the_start_typing_collections_and_sqlalchemy_call_the_builtins_again(tmp_path):
    """The cause of lazystart's slower mixed load looked for (stop 32): the caching ``compile`` and
    ``eval`` stayed on ``typing``, ``collections`` and ``langhelpers`` after the start. ``settle``
    takes them off: what is made later compiles through the builtin, as without the cache."""
    run = _start(tmp_path / "dataclass-code.bin")
    assert run["wrapped"] == [True, True, True]
    assert run["settled"] == [False, False, False]
    assert run["late"] == [True, [1, 2]]
    assert run["late_counts"]["forward"] == 1 and run["late_counts"]["namedtuple"] == 1  # the builtins, once each
