"""The Reelroom media server (see docs/architecture.md)."""

from server import lean_code
from server.lazy_modules import defer_library_imports

lean_code.install()  # libraries' docstrings are left out of their code as it loads (server/lean_code.py)
defer_library_imports()  # a few libraries' rarely used imports load on first use (server/lazy_modules.py)
