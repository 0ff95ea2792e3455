"""Library hosts: NAS boxes that hold library folders and may be asleep.

The named configuration ``libraryhosts`` lists them::

    {"Hosts": [{"Name": "nas", "MacAddress": "00:11:22:33:44:55", "BroadcastAddress": "192.168.1.255",
                "Host": "192.168.1.10", "Port": 445, "WaitSeconds": 60}]}

Before a scheduled scan each host gets a Wake-on-LAN magic packet; the scan then waits until
the host accepts TCP connections on ``Port`` (at most ``WaitSeconds``). A host that does not
come up is logged and the scan goes on (its folders then look empty only if unreachable; the
scanner never deletes items of a library path that cannot be listed).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from server.net.wake import InvalidWakeTarget, wait_for_host, wake_host

log = logging.getLogger("reelroom.scanner")
CONFIG_KEY = "libraryhosts"


def configured_hosts(value: Any) -> list[dict[str, Any]]:
    """The hosts of the ``libraryhosts`` configuration value that can be woken."""
    hosts = value.get("Hosts") if isinstance(value, dict) else None
    return [h for h in hosts or [] if isinstance(h, dict) and h.get("MacAddress")]


def wake_and_wait(host: dict[str, Any]) -> bool:
    name = host.get("Name") or host.get("Host") or host.get("MacAddress")
    try:
        wake_host(str(host["MacAddress"]), str(host.get("BroadcastAddress") or "255.255.255.255"),
                  int(host.get("WakePort") or 9))
    except (InvalidWakeTarget, OSError, ValueError) as exc:
        log.warning("Could not wake library host %s: %s", name, exc)
        return False
    target, port = host.get("Host"), host.get("Port")
    if not target or not port:
        return True
    try:
        up = wait_for_host(str(target), int(port), float(host.get("WaitSeconds") or 60))
    except (InvalidWakeTarget, ValueError) as exc:
        log.warning("Library host %s is misconfigured: %s", name, exc)
        return False
    if not up:
        log.warning("Library host %s did not come up in time", name)
    return up


async def wake_library_hosts(hosts: list[dict[str, Any]]) -> list[bool]:
    """Wake each host and wait for it (in threads, together); True for each that is up."""
    if not hosts:
        return []
    return list(await asyncio.gather(*(asyncio.to_thread(wake_and_wait, h) for h in hosts)))
