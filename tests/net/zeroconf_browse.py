"""Browse for _jellyfin._tcp on 127.0.0.1 only; print one JSON line when found, one when removed.

Run by zeroconf_scenario.py inside a private network namespace.
"""

from __future__ import annotations

import json
import queue
import sys

from zeroconf import IPVersion, ServiceBrowser, ServiceStateChange, Zeroconf

SERVICE_TYPE = "_jellyfin._tcp.local."


def main() -> int:
    events: queue.Queue[tuple[ServiceStateChange, str]] = queue.Queue()

    def on_change(zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        events.put((state_change, name))

    zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    browser = ServiceBrowser(zc, SERVICE_TYPE, handlers=[on_change])
    try:
        while True:
            try:
                state, name = events.get(timeout=15)
            except queue.Empty:
                print(json.dumps({"event": "timeout"}), flush=True)
                return 1
            if state is ServiceStateChange.Added:
                info = zc.get_service_info(SERVICE_TYPE, name, timeout=3000)
                found = {"event": "found", "name": name}
                if info is not None:
                    found |= {
                        "port": info.port,
                        "addresses": info.parsed_addresses(),
                        "properties": {
                            k.decode(): (v.decode() if v is not None else None)
                            for k, v in info.properties.items()
                        },
                    }
                print(json.dumps(found), flush=True)
            elif state is ServiceStateChange.Removed:
                print(json.dumps({"event": "removed", "name": name}), flush=True)
                return 0
    finally:
        browser.cancel()
        zc.close()


if __name__ == "__main__":
    sys.exit(main())
