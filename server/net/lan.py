"""Start and stop the LAN services with the server: the UDP discovery responder (port 7359)
and the zeroconf advert. Both follow NetworkConfiguration.AutoDiscovery."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from server.net.discovery import DiscoveryResponder, ServerFacts
from server.net.zeroconf_advert import ZeroconfAdvert
from server.version import JELLYFIN_VERSION

if TYPE_CHECKING:
    from server.context import ServerContext

log = logging.getLogger("reelroom.lan")


class LanServices:
    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx
        self.responder: DiscoveryResponder | None = None
        self.advert: ZeroconfAdvert | None = None

    def _facts(self) -> ServerFacts:
        base = self.ctx.config.network().BaseUrl or ""
        return ServerFacts(system_id=self.ctx.system_id, server_name=self.ctx.server_name(),
                           http_port=self.ctx.port, base_path=base)

    async def start(self) -> None:
        if not self.ctx.options.enable_lan or not self.ctx.config.network().AutoDiscovery:
            log.info("LAN discovery is switched off")
            return
        host = self.ctx.options.host if self.ctx.options.host not in ("", "::") else "0.0.0.0"
        self.responder = DiscoveryResponder(self._facts, host=host, port=self.ctx.options.discovery_port)
        await self.responder.start()
        if self.ctx.options.enable_zeroconf:
            self.advert = ZeroconfAdvert(self.ctx.system_id, self.ctx.server_name(), self.ctx.port,
                                         base_path=(self.ctx.config.network().BaseUrl or "/"),
                                         version=JELLYFIN_VERSION)
            self.advert.start()

    def stop(self) -> None:
        if self.responder is not None:
            self.responder.stop()
            self.responder = None
        if self.advert is not None:
            self.advert.stop()
            self.advert = None
