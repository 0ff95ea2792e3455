"""The Reelroom media server (see docs/architecture.md)."""

from server.code_cache import install as install_code_cache
from server.lazy_modules import defer_library_imports

install_code_cache()  # dataclasses' methods compiled in an earlier run are taken as kept (server/code_cache.py)
defer_library_imports()  # a few libraries' rarely used imports load on first use (server/lazy_modules.py)
