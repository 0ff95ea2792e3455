"""Advertise the server on the LAN as a ``_jellyfin._tcp.local.`` zeroconf (mDNS/DNS-SD) service.

python-zeroconf's registration blocks for about 1.6 s while it probes and announces, so
``ZeroconfAdvert.start()`` hands it to a background thread and returns at once.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
from collections.abc import Sequence

import ifaddr
from zeroconf import InterfaceChoice, IPVersion, ServiceInfo, Zeroconf

log = logging.getLogger(__name__)

SERVICE_TYPE = "_jellyfin._tcp.local."
JELLYFIN_VERSION = "10.10.7"
_MAX_LABEL_BYTES = 63


def instance_label(server_name: str) -> str:
    """A DNS-SD instance label for ``server_name``: no dots, at most 63 UTF-8 bytes."""
    label = server_name.replace(".", "-").strip() or "Reelroom"
    while len(label.encode("utf-8")) > _MAX_LABEL_BYTES:
        label = label[:-1]
    return label


def _mdns_host_name() -> str:
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname().split(".", 1)[0]).strip("-")
    return f"{host or 'reelroom'}.local."


def _lan_ipv4_addresses() -> list[str]:
    found: list[str] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str) and not ip.ip.startswith("127.") and ip.ip not in found:
                found.append(ip.ip)
    return found or ["127.0.0.1"]


class ZeroconfAdvert:
    """One ``_jellyfin._tcp`` service registration with TXT id, version and path.

    ``interfaces`` lists the IPv4 addresses to announce on and advertise (default: every
    non-loopback IPv4 address).
    """

    def __init__(
        self,
        system_id: str,
        server_name: str,
        http_port: int,
        base_path: str = "/",
        interfaces: Sequence[str] | None = None,
        version: str = JELLYFIN_VERSION,
    ) -> None:
        self._interfaces = list(interfaces) if interfaces is not None else None
        addresses = self._interfaces or _lan_ipv4_addresses()
        path = "/" + base_path.strip("/") if base_path.strip("/") else "/"
        self.service_info = ServiceInfo(
            SERVICE_TYPE,
            f"{instance_label(server_name)}.{SERVICE_TYPE}",
            port=http_port,
            properties={"id": system_id, "version": version, "path": path},
            server=_mdns_host_name(),
            parsed_addresses=addresses,
        )
        self._zeroconf: Zeroconf | None = None
        self._thread: threading.Thread | None = None
        self._registered = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    @property
    def registered_name(self) -> str | None:
        """The service name actually registered (may differ after a name conflict), or None."""
        return self.service_info.name if self._registered.is_set() else None

    def start(self) -> None:
        """Begin registering in a background thread; returns immediately."""
        with self._lock:
            if self._thread is not None:
                return
            self._stopping.clear()
            self._thread = threading.Thread(target=self._register, name="zeroconf-advert", daemon=True)
            self._thread.start()

    def wait_until_registered(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for registration; True once the service is announced."""
        return self._registered.wait(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Unregister the service (sending goodbyes) and close the mDNS sockets."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._stopping.set()
        if thread is not None:
            thread.join(timeout)
        with self._lock:
            zc, self._zeroconf = self._zeroconf, None
        if zc is not None:
            self._withdraw(zc)

    def _withdraw(self, zc: Zeroconf) -> None:
        try:
            if self._registered.is_set():
                zc.unregister_service(self.service_info)
        except Exception:
            log.warning("Zeroconf unregister failed", exc_info=True)
        finally:
            self._registered.clear()
            zc.close()

    def _register(self) -> None:
        interfaces = self._interfaces if self._interfaces is not None else InterfaceChoice.All
        try:
            zc = Zeroconf(interfaces=interfaces, ip_version=IPVersion.V4Only)
        except OSError as exc:
            log.warning("Zeroconf advertising disabled: %s", exc)
            return
        try:
            zc.register_service(self.service_info, allow_name_change=True)
        except Exception:
            log.warning("Zeroconf registration of %s failed", self.service_info.name, exc_info=True)
            zc.close()
            return
        self._registered.set()
        with self._lock:
            stopped_meanwhile = self._stopping.is_set()
            if not stopped_meanwhile:
                self._zeroconf = zc
        if stopped_meanwhile:  # stop() gave up waiting for us: clean up here
            self._withdraw(zc)
            return
        log.info("Advertising %s on port %s", self.service_info.name, self.service_info.port)
