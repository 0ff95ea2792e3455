"""UDP auto-discovery: what a Jellyfin client on the LAN gets back."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket

from server.net.discovery import (
    DiscoveryResponder,
    ServerFacts,
    discovery_reply,
    is_discovery_request,
    local_address_for,
)

SYSTEM_ID = "5b2c1a9e4f7d4e0a8c3b6d1e2f3a4b5c"


def facts(name: str = "Living Room", port: int = 8096, published: str | None = None) -> ServerFacts:
    return ServerFacts(system_id=SYSTEM_ID, server_name=name, http_port=port, published_url=published)


def test_request_phrase_is_case_insensitive_substring() -> None:
    assert is_discovery_request(b"who is JellyfinServer?")
    assert is_discovery_request(b"xx WHO IS jellyfinserver? yy")
    assert is_discovery_request(b"\xff\xfe who is JellyfinServer?")
    assert not is_discovery_request(b"who is EmbyServer?")
    assert not is_discovery_request(b"")


def test_reply_includes_nulls_and_loopback_address() -> None:
    reply = discovery_reply(b"who is JellyfinServer?", ("127.0.0.1", 50000), facts(port=8920))
    assert reply == (
        b'{"Address":"http://127.0.0.1:8920","Id":"'
        + SYSTEM_ID.encode()
        + b'","Name":"Living Room","EndpointAddress":null}'
    )


def test_published_url_overrides_address() -> None:
    reply = discovery_reply(
        b"who is JellyfinServer?", ("127.0.0.1", 1), facts(published="https://media.example.org/")
    )
    assert reply is not None
    assert json.loads(reply)["Address"] == "https://media.example.org"


def test_base_path_is_part_of_address() -> None:
    info = ServerFacts(system_id=SYSTEM_ID, server_name="x", http_port=8096, base_path="/jf/")
    reply = discovery_reply(b"who is JellyfinServer?", ("127.0.0.1", 1), info)
    assert reply is not None and json.loads(reply)["Address"] == "http://127.0.0.1:8096/jf"


def test_non_request_gets_no_reply() -> None:
    assert discovery_reply(b"hello", ("127.0.0.1", 1), facts()) is None
    assert discovery_reply(os.urandom(512), ("127.0.0.1", 1), facts()) is None


def test_local_address_follows_routing() -> None:
    assert local_address_for("127.0.0.1") == "127.0.0.1"
    assert local_address_for("127.8.9.10") == "127.0.0.1"
    assert local_address_for("::1") == "::1"
    assert local_address_for("::ffff:127.0.0.1") == "127.0.0.1"
    # A private (never contacted) address: the answer is one of this machine's own addresses.
    chosen = local_address_for("10.255.255.1")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((chosen, 0))  # only succeeds for a local address


def _client() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    return sock


async def _ask(sock: socket.socket, payload: bytes, port: int, wait: float = 2.0) -> bytes | None:
    loop = asyncio.get_running_loop()
    await loop.sock_sendto(sock, payload, ("127.0.0.1", port))
    try:
        return await asyncio.wait_for(loop.sock_recv(sock, 65535), wait)
    except TimeoutError:
        return None


async def test_responder_answers_on_loopback() -> None:
    responder = DiscoveryResponder(lambda: facts(port=8096), host="127.0.0.1", port=0)
    assert await responder.start()
    port = responder.bound_address[1]  # type: ignore[index]
    with _client() as sock:
        reply = await _ask(sock, b"who is JellyfinServer?", port)
    responder.stop()
    assert reply is not None
    assert json.loads(reply) == {
        "Address": f"http://127.0.0.1:{8096}",
        "Id": SYSTEM_ID,
        "Name": "Living Room",
        "EndpointAddress": None,
    }
    assert list(json.loads(reply)) == ["Address", "Id", "Name", "EndpointAddress"]


async def test_responder_survives_garbage_and_ignores_other_datagrams() -> None:
    responder = DiscoveryResponder(lambda: facts(), host="127.0.0.1", port=0)
    assert await responder.start()
    port = responder.bound_address[1]  # type: ignore[index]
    with _client() as sock:
        assert await _ask(sock, b"who is EmbyServer?", port, wait=0.3) is None
        for junk in (b"", b"\xff\xfe\x00\x80" * 100, os.urandom(60000)):
            assert await _ask(sock, junk, port, wait=0.1) is None
        reply = await _ask(sock, b"WHO IS JELLYFINSERVER?", port)
    responder.stop()
    assert reply is not None and json.loads(reply)["Id"] == SYSTEM_ID


async def test_rename_applies_to_next_reply() -> None:
    current = {"name": "Before"}
    responder = DiscoveryResponder(lambda: facts(name=current["name"]), host="127.0.0.1", port=0)
    assert await responder.start()
    port = responder.bound_address[1]  # type: ignore[index]
    with _client() as sock:
        first = await _ask(sock, b"who is JellyfinServer?", port)
        current["name"] = "After"
        second = await _ask(sock, b"who is JellyfinServer?", port)
    responder.stop()
    assert first is not None and json.loads(first)["Name"] == "Before"
    assert second is not None and json.loads(second)["Name"] == "After"


async def test_failing_facts_source_does_not_kill_responder() -> None:
    calls = {"n": 0}

    def flaky() -> ServerFacts:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("settings not loaded yet")
        return facts()

    responder = DiscoveryResponder(flaky, host="127.0.0.1", port=0)
    assert await responder.start()
    port = responder.bound_address[1]  # type: ignore[index]
    with _client() as sock:
        assert await _ask(sock, b"who is JellyfinServer?", port, wait=0.3) is None
        reply = await _ask(sock, b"who is JellyfinServer?", port)
    responder.stop()
    assert reply is not None and json.loads(reply)["Name"] == "Living Room"


async def test_port_in_use_logs_warning_instead_of_crashing(caplog) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        responder = DiscoveryResponder(lambda: facts(), host="127.0.0.1", port=port)
        with caplog.at_level(logging.WARNING, logger="server.net.discovery"):
            assert await responder.start() is False
    assert responder.bound_address is None
    assert any("discovery" in r.getMessage().lower() for r in caplog.records)
    responder.stop()  # stopping a responder that never bound is harmless
