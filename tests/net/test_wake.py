"""Wake-on-LAN: reported MACs, magic packets on the wire, waiting for a woken host."""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

import pytest

from server.net.wake import (
    InvalidWakeTarget,
    WakeOnLanInfo,
    normalize_mac,
    wait_for_host,
    wake_host,
    wake_on_lan_info,
)

MAC_RE = re.compile(r"[0-9A-F]{2}(:[0-9A-F]{2}){5}")


def test_this_machine_reports_well_formed_macs() -> None:
    infos = wake_on_lan_info()
    for info in infos:
        assert isinstance(info, WakeOnLanInfo)
        assert MAC_RE.fullmatch(info.mac_address), info.mac_address
        assert info.mac_address != "00:00:00:00:00:00"
        assert info.port == 9
    assert len({i.mac_address for i in infos}) == len(infos)


def _fake_iface(root: Path, name: str, address: str, type_: str, flags: str, operstate: str) -> None:
    iface = root / name
    iface.mkdir()
    (iface / "address").write_text(address + "\n")
    (iface / "type").write_text(type_ + "\n")
    (iface / "flags").write_text(flags + "\n")
    (iface / "operstate").write_text(operstate + "\n")


def test_skips_loopback_down_and_macless_interfaces(tmp_path: Path) -> None:
    _fake_iface(tmp_path, "lo", "00:00:00:00:00:00", "772", "0x9", "unknown")
    _fake_iface(tmp_path, "eth0", "3c:7c:3f:1a:2b:0d", "1", "0x1003", "up")
    _fake_iface(tmp_path, "wlan0", "a4:5e:60:c1:02:ff", "1", "0x1003", "unknown")
    _fake_iface(tmp_path, "eth1", "3c:7c:3f:1a:2b:0e", "1", "0x1002", "down")
    _fake_iface(tmp_path, "tun0", "", "65534", "0x1091", "unknown")
    assert wake_on_lan_info(tmp_path) == [
        WakeOnLanInfo("3C:7C:3F:1A:2B:0D", 9),
        WakeOnLanInfo("A4:5E:60:C1:02:FF", 9),
    ]


@pytest.mark.parametrize("raw", ["3c:7c:3f:1a:2b:0d", "3C-7C-3F-1A-2B-0D", "3c7c.3f1a.2b0d", "3C7C3F1A2B0D"])
def test_mac_spellings_normalize(raw: str) -> None:
    assert normalize_mac(raw) == "3C:7C:3F:1A:2B:0D"


@pytest.mark.parametrize("raw", ["", "3c:7c:3f:1a:2b", "zz:7c:3f:1a:2b:0d", "3c:7c:3f:1a:2b:0d:11"])
def test_bad_mac_is_rejected(raw: str) -> None:
    with pytest.raises(InvalidWakeTarget):
        normalize_mac(raw)


def test_magic_packet_reaches_listener() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.settimeout(2)
        port = listener.getsockname()[1]
        wake_host("3c-7c-3f-1a-2b-0d", broadcast_ip="127.0.0.1", port=port)
        packet, _ = listener.recvfrom(1024)
    assert len(packet) == 102
    assert packet[:6] == b"\xff" * 6
    assert packet[6:] == bytes.fromhex("3c7c3f1a2b0d") * 16


@pytest.mark.parametrize(
    ("mac", "ip", "port"),
    [("nope", "127.0.0.1", 9), ("3c7c3f1a2b0d", "not-an-ip", 9), ("3c7c3f1a2b0d", "127.0.0.1", 70000)],
)
def test_bad_wake_target_raises_typed_error(mac: str, ip: str, port: int) -> None:
    with pytest.raises(InvalidWakeTarget):
        wake_host(mac, broadcast_ip=ip, port=port)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_wait_for_host_sees_listening_port() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert wait_for_host("127.0.0.1", server.getsockname()[1], timeout=2)


def test_wait_for_host_gives_up_after_timeout() -> None:
    started = time.monotonic()
    assert not wait_for_host("127.0.0.1", _free_port(), timeout=0.6, interval=0.2)
    waited = time.monotonic() - started
    assert waited >= 0.5  # it did wait for its timeout (the upper bound only catches a hang)
    assert waited < 30


def test_wait_for_host_waits_for_a_host_that_comes_up_later() -> None:
    port = _free_port()
    server = socket.socket()

    def come_up() -> None:
        time.sleep(0.5)
        server.bind(("127.0.0.1", port))
        server.listen()

    waker = threading.Thread(target=come_up)
    waker.start()
    try:
        started = time.monotonic()
        assert wait_for_host("127.0.0.1", port, timeout=5, interval=0.1)
        assert time.monotonic() - started >= 0.4
    finally:
        waker.join()
        server.close()
