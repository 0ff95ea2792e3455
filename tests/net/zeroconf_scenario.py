"""Advertise on 127.0.0.1, let a browser in a second process find it, then withdraw it.

Meant to run inside a fresh network namespace (only loopback, multicast on). Prints one JSON
summary line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from server.net.zeroconf_advert import ZeroconfAdvert

SYSTEM_ID = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"


def _read_line(proc: subprocess.Popen[str], timeout: float) -> dict | None:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    return json.loads(box[0]) if box and box[0].strip() else None


def main() -> int:
    browse = Path(__file__).with_name("zeroconf_browse.py")
    advert = ZeroconfAdvert(SYSTEM_ID, "Reelroom Test", 8096, base_path="/", interfaces=["127.0.0.1"])
    started = time.monotonic()
    advert.start()
    # registration (mDNS probing and announcing) takes over a second: start() returning before it
    # ended shows it does not wait for it, whatever the machine's speed
    registered_when_started = advert.registered_name is not None
    start_seconds = time.monotonic() - started
    browser = subprocess.Popen([sys.executable, str(browse)], stdout=subprocess.PIPE, text=True)
    summary: dict = {"start_seconds": start_seconds, "registered_when_started": registered_when_started}
    try:
        summary["registered"] = advert.wait_until_registered(10)
        summary["registered_name"] = advert.registered_name
        summary["found"] = _read_line(browser, 20)
        advert.stop()
        summary["after_stop"] = _read_line(browser, 20)
    finally:
        advert.stop()
        if browser.poll() is None:
            browser.kill()
        browser.wait()
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
