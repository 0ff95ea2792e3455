"""The type check's ratchet (.ci/typecheck.py), run with real mypy on a small project of its own:
more errors than a module's baseline entry fail, a module without an entry must be strict-clean,
fewer errors pass with a note, and --update refuses a growing total."""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if importlib.util.find_spec("mypy") is None:
    pytest.skip("mypy is not installed (the typecheck extra)", allow_module_level=True)

_spec = importlib.util.spec_from_file_location("ci_typecheck", ROOT / ".ci" / "typecheck.py")
typecheck = importlib.util.module_from_spec(_spec)
sys.modules["ci_typecheck"] = typecheck
_spec.loader.exec_module(typecheck)

PYPROJECT = """
[tool.mypy]
files = ["pkg"]
strict = true
cache_dir = "{cache}"
"""
TWO_ERRORS = "def f(x):\n    return x\n\ndef g() -> int:\n    return 'no'\n"
ONE_ERROR = "def f(x: int) -> int:\n    return x\n\ndef g() -> int:\n    return 'no'\n"
CLEAN = "def h(x: int) -> int:\n    return x + 1\n"


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mypy_cache")   # shared: typeshed is parsed once


@pytest.fixture
def project(tmp_path, mypy_cache):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.format(cache=mypy_cache.as_posix()))
    (tmp_path / ".ci").mkdir()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "old.py").write_text(TWO_ERRORS)
    (pkg / "good.py").write_text(CLEAN)
    return tmp_path


def baseline_of(root: Path) -> dict:
    return json.loads((root / ".ci" / "mypy-baseline.json").read_text())


def test_count_errors_reads_mypy_output(project):
    code, lines = typecheck.run_mypy(project)
    assert code == 1
    assert typecheck.count_errors(lines) == {"pkg/old.py": 2}
    assert typecheck.count_errors(["pkg/a.py:3: note: x", "pkg/a.py:4:7: error: y  [misc]",
                                   "Found 1 error in 1 file"]) == {"pkg/a.py": 1}


def test_the_baseline_only_shrinks(project, capsys):
    assert typecheck.main(["--update"], root=project) == 0
    data = baseline_of(project)
    assert data["modules"] == {"pkg/old.py": 2} and data["mypy"]
    assert typecheck.main([], root=project) == 0

    # one more error in a module with an entry fails, naming the module and its errors
    (project / "pkg" / "old.py").write_text(TWO_ERRORS + "\ndef k(y):\n    pass\n")
    capsys.readouterr()
    assert typecheck.main([], root=project) == 1
    out = capsys.readouterr().out
    assert "pkg/old.py has 3 errors, its baseline allows 2" in out
    assert "pkg/old.py:7: error:" in out and "FAILED" in out
    # and --update will not write it
    assert typecheck.main(["--update"], root=project) == 1
    assert "would grow from 2 to 3" in capsys.readouterr().out
    assert baseline_of(project)["modules"] == {"pkg/old.py": 2}

    # fewer errors pass, with the command that lowers the baseline
    (project / "pkg" / "old.py").write_text(ONE_ERROR)
    assert typecheck.main([], root=project) == 0
    out = capsys.readouterr().out
    assert "pkg/old.py 2 -> 1" in out and ".ci/typecheck.py --update" in out
    assert typecheck.main(["--update"], root=project) == 0
    assert baseline_of(project)["modules"] == {"pkg/old.py": 1}


def test_new_modules_are_strict(project, capsys):
    assert typecheck.main(["--update"], root=project) == 0
    (project / "pkg" / "new.py").write_text("def untyped(a, b):\n    return a\n")
    capsys.readouterr()
    assert typecheck.main([], root=project) == 1
    out = capsys.readouterr().out
    assert "pkg/new.py is not in the baseline: a new (or moved) module must be strict-clean" in out


def test_a_moved_module_keeps_its_allowance_after_update(project, capsys):
    assert typecheck.main(["--update"], root=project) == 0
    (project / "pkg" / "sub").mkdir()
    (project / "pkg" / "sub" / "__init__.py").write_text("")
    shutil.move(project / "pkg" / "old.py", project / "pkg" / "sub" / "old.py")
    capsys.readouterr()
    assert typecheck.main([], root=project) == 1          # the new path has no entry yet
    out = capsys.readouterr().out
    assert "pkg/sub/old.py is not in the baseline" in out and "pkg/old.py (gone)" in out
    assert typecheck.main(["--update"], root=project) == 0   # same total: accepted
    assert baseline_of(project)["modules"] == {"pkg/sub/old.py": 2}
    assert typecheck.main([], root=project) == 0


def test_a_broken_configuration_is_not_a_pass(project, capsys):
    (project / "pyproject.toml").write_text('[tool.mypy]\nfiles = ["pkg"]\nplugins = ["no_such_plugin"]\n')
    assert typecheck.main([], root=project) == 2


def test_update_resolves_a_conflicted_baseline(project, capsys):
    """Two branches lowered different modules: the merged file has git's markers; the check says
    what to run, and --update starts from each module's larger side."""
    (project / "pkg" / "other.py").write_text(ONE_ERROR)
    (project / ".ci" / "mypy-baseline.json").write_text(
        '{\n "mypy": "x",\n "modules": {\n<<<<<<< HEAD\n  "pkg/old.py": 2,\n  "pkg/other.py": 1\n'
        '=======\n  "pkg/old.py": 3,\n  "pkg/other.py": 1\n>>>>>>> branch\n }\n}\n')
    assert typecheck.main([], root=project) == 1
    assert "merge conflict markers" in capsys.readouterr().out
    assert typecheck.main(["--update"], root=project) == 0
    assert baseline_of(project)["modules"] == {"pkg/old.py": 2, "pkg/other.py": 1}
    assert typecheck.main([], root=project) == 0
