"""The Reelroom media server (see docs/architecture.md)."""

from server.lazy_modules import defer_library_imports

defer_library_imports()  # a few libraries' rarely used imports load on first use (server/lazy_modules.py)
