"""Start and stop the LAN services with the server: the UDP discovery responder (port 7359)
and the zeroconf advert. Both follow NetworkConfiguration.AutoDiscovery, live: saving the
network configuration with AutoDiscovery switched starts or stops them without a restart."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server.net.discovery import DiscoveryResponder, ServerFacts
from server.version import JELLYFIN_VERSION

if TYPE_CHECKING:
    from server.net.zeroconf_advert import ZeroconfAdvert
    from server.wire.models import NetworkConfiguration

log = logging.getLogger("reelroom.lan")


def advert_interfaces(host: str) -> list[str] | None:
    """Where the zeroconf advert may announce a server listening on ``host``: None for every LAN
    interface (a wildcard or a host name), ``[host]`` for one IPv4 address, ``[]`` for none. A
    server bound to loopback (or to one IPv6 address; the advert is IPv4 only) is not reachable at
    the LAN addresses an advert would give, so it is not advertised at all."""
    if host in ("", "0.0.0.0", "::"):
        return None
    if host.lower() == "localhost":
        return []
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if address.is_loopback or address.version == 6:
        return []
    return [str(address)]


class LanServices:
    """``ctx.lan``. The server context calls ``config_saved`` on every configuration save."""

    def __init__(self, system_id: str, port: int, server_name: Callable[[], str],
                 network: Callable[[], NetworkConfiguration], *, enabled: bool = True, host: str = "0.0.0.0",
                 discovery_port: int = 7359, zeroconf: bool = True) -> None:
        self.system_id = system_id
        self.port = port  # the bound HTTP port
        self.server_name = server_name
        self.network = network  # the network configuration (AutoDiscovery, BaseUrl), read at each use
        self.enabled = enabled  # False: never (--no-lan, tests)
        self.host = host
        self.discovery_port = discovery_port
        self.zeroconf = zeroconf
        self.responder: DiscoveryResponder | None = None
        self.advert: ZeroconfAdvert | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def running(self) -> bool:
        return self.responder is not None

    def wanted(self) -> bool:
        return bool(self.enabled and self.network().AutoDiscovery)

    def _facts(self) -> ServerFacts:
        base = self.network().BaseUrl or ""
        return ServerFacts(system_id=self.system_id, server_name=self.server_name(),
                           http_port=self.port, base_path=base)

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
        host = self.host if self.host not in ("", "::") else "0.0.0.0"
        self.responder = DiscoveryResponder(self._facts, host=host, port=self.discovery_port)
        await self.responder.start()
        interfaces = advert_interfaces(self.host)
        if self.zeroconf and interfaces == []:
            log.info("Not advertised with zeroconf: the server listens on %s only", self.host)
        elif self.zeroconf:
            from server.net.zeroconf_advert import ZeroconfAdvert  # zeroconf loads only when it advertises

            self.advert = ZeroconfAdvert(self.system_id, self.server_name(), self.port,
                                         base_path=(self.network().BaseUrl or "/"), interfaces=interfaces,
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

    def config_saved(self, key: str, _value: Any) -> None:
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
