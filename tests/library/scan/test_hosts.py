"""Library hosts: a Wake-on-LAN magic packet before a scan, then a wait for the host."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

from server.library.scan.hosts import configured_hosts, wake_library_hosts


async def test_hosts_are_woken_and_waited_for() -> None:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(5)
    tcp_port_holder = socket.socket()
    tcp_port_holder.bind(("127.0.0.1", 0))
    tcp_port = tcp_port_holder.getsockname()[1]
    tcp_port_holder.close()

    def come_up_later() -> None:  # the "NAS" starts listening a moment after the packet
        packet, _ = udp.recvfrom(1024)
        received.append(packet)
        time.sleep(0.3)
        server.bind(("127.0.0.1", tcp_port))
        server.listen()

    received: list[bytes] = []
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    thread = threading.Thread(target=come_up_later)
    thread.start()
    hosts = configured_hosts({"Hosts": [{
        "Name": "nas", "MacAddress": "00:11:22:33:44:55", "BroadcastAddress": "127.0.0.1",
        "WakePort": udp.getsockname()[1], "Host": "127.0.0.1", "Port": tcp_port, "WaitSeconds": 5}]})
    t0 = time.monotonic()
    assert await wake_library_hosts(hosts) == [True]
    assert time.monotonic() - t0 >= 0.3
    thread.join(5)
    assert received[0] == b"\xff" * 6 + bytes.fromhex("001122334455") * 16
    server.close()
    udp.close()


async def test_a_host_that_stays_down_does_not_block_forever() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    hosts = configured_hosts({"Hosts": [{
        "MacAddress": "00:11:22:33:44:55", "BroadcastAddress": "127.0.0.1", "Host": "127.0.0.1",
        "Port": port, "WaitSeconds": 0.5}, {"MacAddress": "not-a-mac"}, {"Name": "no mac"}]})
    assert len(hosts) == 2
    # WaitSeconds 0.5 each: the generous bound only catches waiting forever
    assert await asyncio.wait_for(wake_library_hosts(hosts), 30) == [False, False]
    assert configured_hosts({}) == configured_hosts(None) == []
    assert await asyncio.wait_for(wake_library_hosts([]), 1) == []
