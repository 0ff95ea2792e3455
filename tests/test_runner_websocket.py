"""A server that stops while a WebSocket's peer is closing it stops cleanly (server/runner.py
``_closing_safe``): uvicorn's websockets-sansio protocol sent its own close frame there without
looking at the state, websockets raised ``InvalidState``, and that ended ``Server.serve`` with an
error (the tray, whose socket reader hung up as it stopped the server, reported the server failed)."""

from __future__ import annotations

import asyncio

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from server.runner import websocket_mode, websocket_protocol


class _Transport(asyncio.Transport):
    """Where the protocol writes: kept, so the test can see what it sent and whether it closed."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = b""
        self.closed = False

    def write(self, data: bytes) -> None:
        self.sent += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


async def _app(scope, receive, send) -> None:  # noqa: ANN001
    raise AssertionError("not called")


@pytest.mark.skipif(websocket_mode() != "websockets-sansio", reason="uvicorn's websockets-sansio protocol only")
def test_a_shutdown_closes_a_connection_whose_peer_is_closing_it_without_failing() -> None:
    from websockets.protocol import State

    async def main() -> None:
        config = Config(_app, ws=websocket_protocol(), lifespan="off", log_config=None)
        config.load()
        protocol = config.ws_protocol_class(config=config, server_state=ServerState(), app_state={})
        transport = _Transport()
        protocol.transport = transport
        protocol.handshake_complete = True
        protocol.conn.state = State.CLOSING  # the peer's close frame came, ours is not sent yet
        protocol.shutdown()  # uvicorn's own raised websockets.exceptions.InvalidState here
        assert transport.closed
        assert (await protocol.queue.get()) == {"type": "websocket.disconnect", "code": 1012}

    asyncio.run(main())
