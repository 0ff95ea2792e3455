"""The WebSocket (`/socket`; the wire middleware routes every socket path here).

On connect the server sends ForceKeepAlive (Data 60) and answers each KeepAlive. An administrator
may subscribe to a list: SessionsStart / ScheduledTasksInfoStart / ActivityLogEntryStart with Data
"dueMs,periodMs", stopped by the matching *Stop message. The list comes once when due, then each
time it changes (progress at most once a period; ``server/events/hub.py`` ``Subscription``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import msgspec
from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect

from server.auth.service import AuthInfo
from server.context import ServerContext
from server.events.hub import SocketClient, Subscription, envelope
from server.http.limits import json_too_deep

log = logging.getLogger("reelroom.socket")
KEEPALIVE_SECONDS = 60


_LISTS = ("Sessions", "ScheduledTasksInfo", "ActivityLogEntry")


async def _send_list(ctx: ServerContext, client: SocketClient, kind: str) -> None:
    """Put the subscribed list of ``kind`` on the socket's queue (``Subscription`` calls this)."""
    data: Any
    if kind == "Sessions":
        data = ctx.sessions.dtos(ctx.sessions.list())
    elif kind == "ScheduledTasksInfo":
        data = ctx.tasks.infos(is_hidden=False)
    else:
        rows, _ = await ctx.activity.query(0, 10, None, None)
        data = [{"Id": r.id, "Name": r.name, "Type": r.type, "Date": r.date, "Severity": r.severity,
                 "UserId": r.user_id or "0" * 32} for r in rows]
    client.send(envelope(kind, data))


def _parse_timing(data) -> tuple[int, int]:
    """"dueMs,periodMs" (Jellyfin's *Start), each bounded to a day; anything else is "0,1500"."""
    try:
        due, period = str(data or "0,1500")[:40].split(",", 1)
        return min(max(int(due), 0), 86_400_000), min(max(int(period), 500), 86_400_000)
    except ValueError:
        return 0, 1500


def _subscribe(ctx: ServerContext, client: SocketClient, auth: AuthInfo, kind: str, data: Any) -> None:
    """A *Start message. As in Jellyfin, only an administrator (or an API key) may see the sessions,
    the activity log or the tasks; another user's request is logged and ignored."""
    if not auth.is_admin:
        log.info("Socket %s: %sStart refused (not an administrator)", client.device_id, kind)
        return
    old = client.subscriptions.pop(kind, None)
    if old:
        old.cancel()
    due, period = _parse_timing(data)
    client.subscriptions[kind] = Subscription(lambda: _send_list(ctx, client, kind), due / 1000, period / 1000)


@websocket("/socket", opt={"auth": "user"}, include_in_schema=False)
async def socket_handler(socket: WebSocket[Any, Any, Any]) -> None:
    ctx: ServerContext = socket.app.state.ctx
    auth: AuthInfo = socket.state["auth"]
    device_id = socket.query_params.get("deviceId") or auth.device_id
    await socket.accept()
    client = SocketClient(user_id=auth.user_id, device_id=device_id, is_admin=auth.is_admin)
    ctx.events.connect(client)
    client.send(envelope("ForceKeepAlive", KEEPALIVE_SECONDS))

    async def pump() -> None:
        while True:
            data = await client.queue.get()
            await socket.send_text(data.decode("utf-8"))

    sender = asyncio.create_task(pump())
    try:
        while True:
            try:
                raw = await asyncio.wait_for(socket.receive_text(), timeout=KEEPALIVE_SECONDS * 2)
            except TimeoutError:
                log.info("Socket %s went silent; closing it", device_id)
                break
            encoded = raw.encode("utf-8", "surrogatepass")
            if json_too_deep(encoded):
                continue  # (msgspec would raise RecursionError deep enough)
            try:
                message = msgspec.json.decode(encoded)
            except msgspec.DecodeError:
                continue
            if not isinstance(message, dict):
                continue
            kind = str(message.get("MessageType") or message.get("messageType") or "")
            data = message.get("Data", message.get("data"))
            if kind == "KeepAlive":
                client.send(envelope("KeepAlive"))
                ctx.sessions.touch(auth, socket.client.host if socket.client else "")
            elif kind.endswith("Start") and kind[:-5] in _LISTS:
                _subscribe(ctx, client, auth, kind[:-5], data)
            elif kind.endswith("Stop"):
                subscription = client.subscriptions.pop(kind[:-4], None)
                if subscription:
                    subscription.cancel()
    except WebSocketDisconnect:
        pass
    finally:
        ctx.events.disconnect(client)
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender
        with contextlib.suppress(Exception):
            await socket.close()
