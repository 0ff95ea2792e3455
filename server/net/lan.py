"""Start and stop the LAN services with the server: the UDP discovery responder (port 7359)
and the zeroconf advert. Both follow NetworkConfiguration.AutoDiscovery, live: saving the
network configuration with AutoDiscovery switched starts or stops them without a restart."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from server.net.discovery import DiscoveryResponder, ServerFacts
from server.version import JELLYFIN_VERSION

if TYPE_CHECKING:
    from server.context import ServerContext
    from server.net.zeroconf_advert import ZeroconfAdvert

log = logging.getLogger("reelroom.lan")


class LanServices:
    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self.responder: DiscoveryResponder | None = None
        self.advert: ZeroconfAdvert | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        ctx.config.add_listener(self._config_saved)

    @property
    def running(self) -> bool:
        return self.responder is not None

    def wanted(self) -> bool:
        return bool(self.ctx.options.enable_lan and self.ctx.config.network().AutoDiscovery)

    def _facts(self) -> ServerFacts:
        base = self.ctx.config.network().BaseUrl or ""
        return ServerFacts(system_id=self.ctx.system_id, server_name=self.ctx.server_name(),
                           http_port=self.ctx.port, base_path=base)

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        async with self._lock:
            await self._start()

    async def _start(self) -> None:
        if self._closed or self.responder is not None:
            return
        if not self.wanted():
            log.info("LAN discovery is switched off")
            return
        host = self.ctx.options.host if self.ctx.options.host not in ("", "::") else "0.0.0.0"
        self.responder = DiscoveryResponder(self._facts, host=host, port=self.ctx.options.discovery_port)
        await self.responder.start()
        if self.ctx.options.enable_zeroconf:
            from server.net.zeroconf_advert import ZeroconfAdvert  # zeroconf loads only when it advertises

            self.advert = ZeroconfAdvert(self.ctx.system_id, self.ctx.server_name(), self.ctx.port,
                                         base_path=(self.ctx.config.network().BaseUrl or "/"),
                                         version=JELLYFIN_VERSION)
            self.advert.start()  # registers on its own thread (it blocks for about 1.6 s)
        log.info("LAN discovery is on")

    async def apply(self) -> None:
        """Bring the services in line with the configuration (after a settings change)."""
        async with self._lock:
            if self.wanted() and self.responder is None:
                await self._start()
            elif not self.wanted() and self.responder is not None:
                self.responder.stop()  # an asyncio transport: closed on the loop
                self.responder = None
                advert, self.advert = self.advert, None
                if advert is not None:
                    await asyncio.to_thread(advert.stop)  # unregistering blocks
                log.info("LAN discovery switched off")

    def _config_saved(self, key: str, _value: Any) -> None:
        loop = self._loop
        if key != "network" or loop is None or self._closed or loop.is_closed():
            return
        if self.wanted() == self.running:
            return
        loop.call_soon_threadsafe(lambda: loop.create_task(self.apply()))

    def _stop(self) -> None:
        if self.responder is not None:
            self.responder.stop()
            self.responder = None
        if self.advert is not None:
            self.advert.stop()
            self.advert = None

    def stop(self) -> None:
        self._closed = True
        self._stop()
