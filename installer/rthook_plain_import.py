"""Run-time hook of the tray program (`reelroom`), run before PyInstaller's own (custom run-time
hooks come first: installer/reelroom.spec).

PyInstaller's PySide6 hook imports ``PySide6.QtCore`` (for its qt.conf) in every process of this
executable, which installs shiboken's import hook before the entry point runs:

- the tray: app/pyside_imports.py keeps Python's own ``__import__`` when it is imported before
  PySide6; imported only by app/desktop_main.py, after that hook, it kept none, so a bundle
  imported every module of the hosted server through shiboken's hook (~0.14 G instructions a
  start). Imported here, it keeps it, as in a source start.
- the server's children started from this executable never use Qt (server/ never imports it): a
  reader (``--reelroom-reader``), a migration (``--reelroom-migrate``), the scanner's probe workers
  and multiprocessing's resource tracker (the argv forms: app/server_children.py). PySide6 is
  marked not importable for them, so the hook's import fails as it expects (``ImportError``: no
  qt.conf) instead of loading Qt (~0.1 s of CPU, ~9 MiB, each).
"""

import sys

from app.server_children import server_only

if server_only(sys.argv):
    sys.modules["PySide6"] = None  # type: ignore[assignment]  # server/ never imports Qt
else:
    import app.pyside_imports  # noqa: F401
