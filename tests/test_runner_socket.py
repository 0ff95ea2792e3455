"""The listening socket is a TCP socket by protocol number, so asyncio turns Nagle off
(TCP_NODELAY) on every accepted connection: otherwise each small response waits ~40 ms for the
client's delayed ACK."""

from __future__ import annotations

import asyncio
import socket

from server.runner import bind_socket


def test_accepted_connections_have_nodelay():
    listener = bind_socket("127.0.0.1", 0)
    assert listener.proto == socket.IPPROTO_TCP
    port = listener.getsockname()[1]
    seen: list[int] = []

    async def main() -> None:
        def on_connect(reader, writer):
            sock = writer.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=listener)
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await reader.read()
            writer.close()

    asyncio.run(main())
    assert seen and seen[0] != 0
