"""Wake-on-LAN: report this machine's MAC addresses, wake other hosts and wait for them."""

from __future__ import annotations

import ipaddress
import re
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import NamedTuple

from wakeonlan import wake

WAKE_ON_LAN_PORT = 9
SYS_CLASS_NET = Path("/sys/class/net")
_ARPHRD_LOOPBACK = "772"
_IFF_LOOPBACK = 0x8


class InvalidWakeTarget(ValueError):
    """A MAC address, IP address, port or timeout given for waking a host is not valid."""


class WakeOnLanInfo(NamedTuple):
    """One ``WakeOnLanInfo`` entry: a MAC address of this machine and the wake port."""

    mac_address: str
    port: int = WAKE_ON_LAN_PORT


def normalize_mac(mac: str) -> str:
    """``mac`` in ``AA:BB:CC:DD:EE:FF`` form; accepts ``:``, ``-``, ``.`` or no separators."""
    digits = re.sub(r"[:\-.\s]", "", mac)
    if not re.fullmatch(r"[0-9A-Fa-f]{12}", digits):
        raise InvalidWakeTarget(f"not a MAC address: {mac!r}")
    digits = digits.upper()
    return ":".join(digits[i : i + 2] for i in range(0, 12, 2))


def _is_real_mac(mac: str) -> bool:
    return mac not in ("00:00:00:00:00:00", "FF:FF:FF:FF:FF:FF")


def _sysfs_interface_macs(root: Path) -> list[str]:
    macs: list[str] = []
    for iface in sorted(root.iterdir()):
        try:
            if (iface / "type").read_text().strip() == _ARPHRD_LOOPBACK:
                continue
            if int((iface / "flags").read_text().strip(), 16) & _IFF_LOOPBACK:
                continue
            if (iface / "operstate").read_text().strip() not in ("up", "unknown"):
                continue
            mac = normalize_mac((iface / "address").read_text().strip())
        except (OSError, ValueError):
            continue
        if _is_real_mac(mac) and mac not in macs:
            macs.append(mac)
    return macs


def _node_mac() -> list[str]:
    node = uuid.getnode()
    if node >> 40 & 0x01:  # multicast bit set: uuid made up a random number, not a real MAC
        return []
    return [normalize_mac(f"{node:012x}")]


def wake_on_lan_info(sys_class_net: Path | None = None) -> list[WakeOnLanInfo]:
    """MAC addresses of this machine's non-loopback interfaces that are up, each with port 9.

    On Linux reads ``/sys/class/net`` (or ``sys_class_net``); elsewhere falls back to the MAC
    ``uuid.getnode()`` reports.
    """
    root = sys_class_net or SYS_CLASS_NET
    if sys_class_net is not None or (sys.platform.startswith("linux") and root.is_dir()):
        macs = _sysfs_interface_macs(root)
    else:
        macs = _node_mac()
    return [WakeOnLanInfo(mac) for mac in macs]


def _check_port(port: int) -> None:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise InvalidWakeTarget(f"not a port number: {port!r}")


def wake_host(mac: str, broadcast_ip: str = "255.255.255.255", port: int = WAKE_ON_LAN_PORT) -> None:
    """Send a magic packet for ``mac`` to ``broadcast_ip:port`` over UDP."""
    normalized = normalize_mac(mac)
    try:
        ipaddress.ip_address(broadcast_ip)
    except ValueError:
        raise InvalidWakeTarget(f"not an IP address: {broadcast_ip!r}") from None
    _check_port(port)
    wake(normalized, host=broadcast_ip, port=port)


def wait_for_host(host: str, port: int, timeout: float, interval: float = 1.0) -> bool:
    """Poll until a TCP connection to ``host:port`` succeeds; False if ``timeout`` seconds pass first."""
    _check_port(port)
    if timeout < 0 or interval <= 0:
        raise InvalidWakeTarget("timeout must be >= 0 and interval > 0")
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=max(0.05, min(interval, remaining))):
                return True
        except OSError:
            pass
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(interval, remaining))
