"""Jellyfin-compatible UDP auto-discovery on port 7359.

Clients broadcast a datagram containing ``who is JellyfinServer?``; the server answers the sender
with a JSON ``ServerDiscoveryInfo`` object whose Address is reachable from the asker.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

DISCOVERY_PORT = 7359
DISCOVERY_PHRASE = "who is jellyfinserver?"


@dataclass(frozen=True)
class ServerFacts:
    """What a discovery reply says about this server."""

    system_id: str
    server_name: str
    http_port: int = 8096
    published_url: str | None = None
    base_path: str = ""


def is_discovery_request(datagram: bytes) -> bool:
    """True if the datagram's UTF-8 text contains the discovery phrase (case-insensitive)."""
    text = datagram.decode("utf-8", errors="replace")
    return DISCOVERY_PHRASE in text.lower()


def local_address_for(peer_ip: str) -> str:
    """The local IP address the OS would use to reach ``peer_ip`` (loopback for a loopback peer).

    Uses the routing decision of a connected UDP socket; nothing is sent.
    """
    peer = ipaddress.ip_address(peer_ip.split("%", 1)[0])
    if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
        peer = peer.ipv4_mapped
        peer_ip = str(peer)
    if peer.is_loopback:
        return "127.0.0.1" if peer.version == 4 else "::1"
    family = socket.AF_INET if peer.version == 4 else socket.AF_INET6
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((peer_ip, 9))
            return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1" if peer.version == 4 else "::1"


def server_url_for(peer_ip: str, facts: ServerFacts) -> str:
    """The API base URL to hand to a client at ``peer_ip``: the published URL if set, else a local one."""
    if facts.published_url:
        return facts.published_url.rstrip("/")
    host = local_address_for(peer_ip)
    if ":" in host:
        host = "[" + host.replace("%", "%25") + "]"
    path = facts.base_path.strip("/")
    return f"http://{host}:{facts.http_port}" + (f"/{path}" if path else "")


def discovery_reply(datagram: bytes, sender: tuple[str, int], facts: ServerFacts) -> bytes | None:
    """The reply datagram for ``datagram`` from ``sender``, or None if it is not a discovery request."""
    if not is_discovery_request(datagram):
        return None
    info = {
        "Address": server_url_for(sender[0], facts),
        "Id": facts.system_id,
        "Name": facts.server_name,
        "EndpointAddress": None,
    }
    return json.dumps(info, separators=(",", ":")).encode("utf-8")


class _DiscoveryProtocol(asyncio.DatagramProtocol):
    def __init__(self, facts: Callable[[], ServerFacts]) -> None:
        self._facts = facts
        self._transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        try:
            if not is_discovery_request(data):
                return
            reply = discovery_reply(data, addr, self._facts())
            if reply is not None and self._transport is not None:
                self._transport.sendto(reply, addr)
        except Exception:
            log.exception("Discovery request from %s could not be answered", addr)

    def error_received(self, exc: Exception) -> None:
        log.debug("Discovery socket error: %s", exc)


class DiscoveryResponder:
    """Answers discovery datagrams on ``host:port`` inside the running asyncio loop."""

    def __init__(
        self, facts: Callable[[], ServerFacts], host: str = "0.0.0.0", port: int = DISCOVERY_PORT
    ) -> None:
        self._facts = facts
        self._host = host
        self._port = port
        self._transport: asyncio.DatagramTransport | None = None

    @property
    def bound_address(self) -> tuple[str, int] | None:
        """The (host, port) actually bound, or None when not listening."""
        if self._transport is None:
            return None
        sockname = self._transport.get_extra_info("sockname")
        return (str(sockname[0]), int(sockname[1]))

    async def start(self) -> bool:
        """Bind and start answering; returns False (and logs a warning) if the port cannot be bound."""
        if self._transport is not None:
            return True
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await loop.create_datagram_endpoint(
                lambda: _DiscoveryProtocol(self._facts), local_addr=(self._host, self._port)
            )
        except OSError as exc:
            log.warning("UDP discovery disabled: cannot bind %s:%s (%s)", self._host, self._port, exc)
            return False
        self._transport = transport
        log.info("UDP discovery listening on %s:%s", *self.bound_address)  # type: ignore[misc]
        return True

    def stop(self) -> None:
        """Stop answering and release the port."""
        if self._transport is not None:
            self._transport.close()
            self._transport = None
