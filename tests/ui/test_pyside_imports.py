"""app/pyside_imports.py: modules imported after PySide6 (the hosted server, in the tray app) are
not kept as source lines in linecache, and shiboken still tells PySide users from the rest."""

from __future__ import annotations

import builtins
import linecache
import sys

import PySide6.QtCore  # noqa: F401 - installs shiboken's import hook

from app import pyside_imports


def test_modules_imported_after_pyside_keep_no_source_and_are_still_told_apart(tmp_path, monkeypatch):
    feature = sys.modules["shibokensupport.feature"]
    monkeypatch.setattr(feature, "_mod_uses_pyside", feature._mod_uses_pyside)  # restored afterwards
    # shiboken's hook swaps builtins.__import__ out and back around each call without a lock, so two
    # threads importing at once (an earlier test's server thread and the main one) can leave another
    # import function in place for good; this test is about what the hook asks, so it puts the hook back
    monkeypatch.setattr(builtins, "__import__", builtins.__feature_import__)  # type: ignore[attr-defined]
    assert pyside_imports.install()
    plain = tmp_path / "rr_plain_module.py"
    plain.write_text("VALUES = [\n" + "    1,\n" * 5000 + "]\n", encoding="utf-8")
    (tmp_path / "rr_qt_module.py").write_text("from PySide6.QtCore import QObject\n\nBASE = QObject\n",
                                               encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    linecache.checkcache()
    # an import statement goes through builtins.__import__, which is shiboken's hook
    plain_module = __import__("rr_plain_module")
    qt_module = __import__("rr_qt_module")
    try:
        assert len(plain_module.VALUES) == 5000 and qt_module.BASE is PySide6.QtCore.QObject
        assert str(plain) not in linecache.cache  # shiboken's own check read it through linecache
        assert feature.pyside_feature_dict.get("rr_plain_module") == -1
        assert feature.pyside_feature_dict.get("rr_qt_module") == 0
    finally:
        for name in ("rr_plain_module", "rr_qt_module"):
            sys.modules.pop(name, None)
            feature.pyside_feature_dict.pop(name, None)


def test_mentions_pyside_reads_the_source_file(tmp_path):
    import types

    uses = tmp_path / "uses.py"
    uses.write_text("import PySide6\n", encoding="utf-8")
    other = tmp_path / "other.py"
    other.write_text("import os\n", encoding="utf-8")
    module = types.ModuleType("m")
    module.__file__ = str(uses)
    assert pyside_imports.mentions_pyside(module)
    module.__file__ = str(other)
    assert not pyside_imports.mentions_pyside(module)
    module.__file__ = str(tmp_path / "gone.py")
    assert not pyside_imports.mentions_pyside(module)
    del module.__file__
    assert not pyside_imports.mentions_pyside(module)  # a frozen or built-in module


def test_the_tray_imports_its_windows_when_first_opened():
    """ui/tray.py imports the address (segno), log, settings and library windows, the setup wizard
    and the status window when they are first opened (tests/ui/test_tray.py opens each one)."""
    import json
    import subprocess
    from pathlib import Path

    code = "import sys, json, ui.tray; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                         text=True, timeout=120, env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr[-2000:]
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert loaded & {"ui.address_dialog", "ui.logs", "ui.settings", "segno", "ui.wizard", "ui.libraries",
                     "ui.status_window", "ui.tmdb_key"} == set()


WITHOUT_HOOK = r"""
import builtins, json, sys
from app import pyside_imports  # before PySide6, as app/desktop_main.py imports it
import PySide6.QtWidgets
pyside_imports.install()
feature = sys.modules["shibokensupport.feature"]
hooked = builtins.__import__
with pyside_imports.without_feature_hook() as bypassed:
    inside = builtins.__import__.__name__
    import colorsys
    from email import quoprimime
import wave
print(json.dumps({"bypassed": bypassed, "hooked": hooked.__name__, "inside": inside,
                  "restored": builtins.__import__ is hooked,
                  "in_table": [name in feature.pyside_feature_dict for name in ("colorsys", "email.quoprimime", "wave")]}))
"""


def test_imports_can_skip_shibokens_hook():
    """Inside ``without_feature_hook`` imports use Python's own ``__import__`` (the hosted server's
    modules, which never use Qt: app/desktop_main.py); shiboken's hook is back after it."""
    import json
    import subprocess
    from pathlib import Path

    out = subprocess.run([sys.executable, "-c", WITHOUT_HOOK], cwd=Path(__file__).resolve().parents[2],
                         capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"bypassed": True, "hooked": "__feature_import__", "inside": "__import__", "restored": True,
                    "in_table": [False, False, True]}


def test_without_feature_hook_does_nothing_when_pyside_came_first(monkeypatch):  # noqa: ANN001
    """Where PySide6 was imported before app.pyside_imports (no plain import kept), the block runs
    with the hook, as before."""
    import builtins

    from app import pyside_imports

    monkeypatch.setattr(pyside_imports, "PLAIN_IMPORT", None)
    before = builtins.__import__
    with pyside_imports.without_feature_hook() as bypassed:
        assert builtins.__import__ is before
    assert bypassed is False
