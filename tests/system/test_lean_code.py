"""Libraries' docstrings are left out of their code as it loads (server/lean_code.py): the same
functions as ``-OO`` gives, the server's own docstrings kept, the lean bytecode cache used and
started over when the source changes. Each start runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from server import lean_code

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not lean_code._SUPPORTED, reason="lean code is installed on CPython 3.11 only")


def _codes(code: types.CodeType, out: dict[tuple[str, int], types.CodeType]) -> dict[tuple[str, int], types.CodeType]:
    out[(code.co_qualname, code.co_firstlineno)] = code
    for const in code.co_consts:
        if type(const) is types.CodeType:
            _codes(const, out)
    return out


@pytest.mark.parametrize("module", ["sqlalchemy.sql.elements", "litestar.app", "pydantic.main", "asyncio.base_events"])
def test_functions_lose_their_docstrings_as_under_OO(module: str) -> None:
    import importlib.util

    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_bytes()
    lean = _codes(lean_code.lean(compile(source, spec.origin, "exec", dont_inherit=True)), {})
    optimized = _codes(compile(source, spec.origin, "exec", dont_inherit=True, optimize=2), {})
    functions = 0
    for key, code in lean.items():
        if code.co_flags & 3 == 3 and not code.co_name.startswith("<") and key in optimized:
            functions += 1
            assert code.co_consts[0] is None and optimized[key].co_consts[0] is None, key
    assert functions > 20
    strings = {c for code in lean.values() for c in code.co_consts if type(c) is str}
    kept = {c for code in optimized.values() for c in code.co_consts if type(c) is str}
    if b"assert" not in source and b"__debug__" not in source:  # -OO drops those too
        assert strings == kept  # the same strings as -OO keeps: every docstring went


def test_a_module_and_class_docstring_is_none_and_code_runs_the_same() -> None:
    source = '"""Module doc."""\nclass A:\n    """Class doc."""\n    x = 1\n    def f(self):\n        """Doc."""\n' \
             '        return [i for i in range(3)], (lambda: "lambda")(), super().__class__\n' \
             'class B:\n    __doc__ = 5\n    y = "not a doc"\ndef g():\n    return "first const"\n'
    namespace: dict[str, object] = {"__name__": "m"}
    exec(lean_code.lean(compile(source, "m.py", "exec")), namespace)
    a, b, g = namespace["A"], namespace["B"], namespace["g"]
    assert namespace["__doc__"] is None and a.__doc__ is None and a.f.__doc__ is None  # type: ignore[attr-defined]
    assert a().f() == ([0, 1, 2], "lambda", super)  # type: ignore[operator]
    assert b.__doc__ == 5 and b.y == "not a doc" and g() == "first const"  # type: ignore[attr-defined,operator]
    assert g.__doc__ is None  # type: ignore[attr-defined]


START = """
import json, sys
import server, sqlalchemy, sqlalchemy.orm, litestar, server.app, server.context, server.db.tables
print(json.dumps({
    "library": [sqlalchemy.select.__doc__, sqlalchemy.__doc__, litestar.Litestar.__doc__, sqlalchemy.orm.Session.__doc__],
    "kept_module": sqlalchemy.orm.events.MapperEvents.before_configured.__doc__ is not None,
    "server": [server.app.__doc__ is not None, server.context._is_local_address.__doc__ is not None],
    "hooked": any(getattr(h, "lean", False) for h in sys.path_hooks)}))
"""


def _start(env: dict[str, str], code: str = START, cwd: Path = ROOT) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return result


def test_a_server_process_loads_libraries_lean_and_keeps_its_own_docstrings() -> None:
    started = _start({})
    assert started["hooked"] is True
    assert started["library"] == [None, None, None, None]
    assert started["kept_module"] is True  # SQLAlchemy's ORM events read their own docstrings
    assert started["server"] == [True, True]
    plain = _start({"REELROOM_DOCSTRINGS": "1"})
    assert plain["hooked"] is False and plain["library"][0] and plain["library"][2]  # type: ignore[index]


def test_the_lean_bytecode_is_written_used_and_started_over_when_the_source_changes(tmp_path: Path) -> None:
    package = tmp_path / "leanlib"
    package.mkdir()
    (package / "__init__.py").write_text('"""Package doc."""\ndef f():\n    """Old doc."""\n    return 1\n')
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]) if len(sys.argv) > 1 else None\n"
            "import server, leanlib\n"
            "print(json.dumps({'doc': leanlib.f.__doc__, 'f': leanlib.f(), 'origin': leanlib.__spec__.loader.__class__.__name__}))")
    full_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    full_env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{ROOT}"

    def run() -> dict[str, object]:
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=full_env, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        result: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
        return result

    assert run() == {"doc": None, "f": 1, "origin": "LeanSourceFileLoader"}
    lean_file = package / "__pycache__" / f"__init__.{sys.implementation.cache_tag}.opt-{lean_code.TAG}.pyc"
    assert lean_file.exists()
    written = lean_file.stat().st_mtime_ns
    assert run()["f"] == 1
    assert lean_file.stat().st_mtime_ns == written  # read, not written again
    time.sleep(0.01)
    (package / "__init__.py").write_text('"""Package doc."""\ndef f():\n    """New doc."""\n    return 22\n')
    os.utime(package / "__init__.py", (time.time() + 5, time.time() + 5))  # a new mtime even on coarse clocks
    assert run() == {"doc": None, "f": 22, "origin": "LeanSourceFileLoader"}
    assert lean_file.stat().st_mtime_ns != written
    lean_file.write_bytes(lean_file.read_bytes()[:20])  # a truncated file is made again, not trusted
    assert run()["f"] == 22
