"""Access tokens never reach the log files, even where clients put them in URLs."""

from __future__ import annotations

import asyncio
import logging

import websockets

from server.logs import RedactSecrets


def test_filter_redacts_keys_in_messages_and_arguments():
    record = logging.LogRecord("uvicorn.error", logging.INFO, __file__, 1,
                               '%s - "WebSocket %s" [accepted]', ("127.0.0.1:5", "/socket?api_key=abc123&deviceId=d"),
                               None)
    RedactSecrets().filter(record)
    assert record.getMessage() == '127.0.0.1:5 - "WebSocket /socket?api_key=***&deviceId=d" [accepted]'
    plain = logging.LogRecord("reelroom", logging.INFO, __file__, 1, "nothing secret", (), None)
    RedactSecrets().filter(plain)
    assert plain.getMessage() == "nothing secret"


def test_socket_url_token_is_not_in_the_server_log(server):
    url = server.url.replace("http://", "ws://") + f"/socket?api_key={server.admin_token}&deviceId=log-test"

    async def connect() -> None:
        async with websockets.connect(url) as ws:
            await asyncio.wait_for(ws.recv(), 10)

    asyncio.run(connect())
    for handler in logging.getLogger("uvicorn.error").handlers:
        handler.flush()
    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (server.data_dir / "log").glob("*.log"))
    assert "/socket?api_key=***&deviceId=log-test" in text  # the handshake is logged, redacted
    assert server.admin_token not in text
