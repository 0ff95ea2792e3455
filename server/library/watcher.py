"""Real-time monitoring of library folders with watchfiles (placeholder until milestone 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.context import ServerContext


class LibraryWatcher:
    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx

    async def start(self) -> None:
        return None

    async def refresh(self) -> None:
        return None

    async def stop(self) -> None:
        return None
