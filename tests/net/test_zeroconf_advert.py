"""Zeroconf advertising, seen by a browser in another process.

Everything runs in a private network namespace (``unshare -n``) with only loopback up, so no
multicast ever reaches a real network.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from server.net.zeroconf_advert import ZeroconfAdvert, instance_label

HERE = Path(__file__).parent
REPO = HERE.parents[1]


def _require_private_netns() -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not available, cannot isolate multicast in a network namespace")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True, timeout=10)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n is not permitted here: {probe.stderr.strip()}")


def _run_in_private_netns(script: Path, timeout: float) -> str:
    setup = 'ip link set lo up && ip link set lo multicast on && exec "$0" "$1"'
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        ["unshare", "-n", "sh", "-c", setup, sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"zeroconf scenario timed out\nstdout: {out}\nstderr: {err}")
    assert proc.returncode == 0, f"stdout: {out}\nstderr: {err}"
    return out


def test_browser_in_another_process_finds_service_with_txt() -> None:
    _require_private_netns()
    out = _run_in_private_netns(HERE / "zeroconf_scenario.py", timeout=60)
    summary = json.loads(out.strip().splitlines()[-1])

    assert summary["registered_when_started"] is False, "start() must not block on registration"
    assert summary["registered"] is True
    assert summary["registered_name"] == "Reelroom Test._jellyfin._tcp.local."

    found = summary["found"]
    assert found is not None, summary
    assert found["event"] == "found"
    assert found["name"] == "Reelroom Test._jellyfin._tcp.local."
    assert found["port"] == 8096
    assert found["addresses"] == ["127.0.0.1"]
    assert found["properties"] == {
        "id": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
        "version": "10.10.7",
        "path": "/",
    }
    assert summary["after_stop"] == {"event": "removed", "name": "Reelroom Test._jellyfin._tcp.local."}


def test_instance_label_is_a_valid_dns_sd_label() -> None:
    assert instance_label("Den.Server") == "Den-Server"
    assert instance_label("   ") == "Reelroom"
    long = instance_label("Ü" * 100)
    assert len(long.encode("utf-8")) <= 63 and long == "Ü" * 31


def test_advert_record_before_start_and_stop_without_start() -> None:
    advert = ZeroconfAdvert("abc", "Den", 8920, base_path="jf/")
    assert advert.service_info.properties == {b"id": b"abc", b"version": b"10.10.7", b"path": b"/jf"}
    addresses = advert.service_info.parsed_addresses()
    assert addresses
    assert addresses == ["127.0.0.1"] or not any(a.startswith("127.") for a in addresses)
    assert advert.registered_name is None
    advert.stop()  # never started: nothing to unregister, must not raise
