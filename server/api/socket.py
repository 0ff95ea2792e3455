"""The WebSocket (`/socket`; the wire middleware routes every socket path here).

On connect the server sends ForceKeepAlive (Data 60) and answers each KeepAlive. A client may
subscribe to periodic updates: SessionsStart / ScheduledTasksInfoStart / ActivityLogEntryStart
with Data "dueMs,periodMs", and stop them with the matching *Stop message.
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
from server.events.hub import SocketClient, envelope

log = logging.getLogger("reelroom.socket")
KEEPALIVE_SECONDS = 60


def _periodic_payload(ctx: ServerContext, kind: str, auth: AuthInfo):
    if kind == "Sessions":
        sessions = ctx.sessions.list(user_id=None if auth.is_admin else auth.user_id)
        return ctx.sessions.dtos(sessions)
    if kind == "ScheduledTasksInfo":
        return ctx.tasks.infos()
    return None


async def _periodic(ctx: ServerContext, client: SocketClient, kind: str, auth: AuthInfo, due_ms: int,
                    period_ms: int) -> None:
    await asyncio.sleep(max(due_ms, 0) / 1000)
    while True:
        if kind == "ActivityLogEntry":
            rows, _ = await ctx.activity.query(0, 10, None, None)
            data = [{"Id": r.id, "Name": r.name, "Type": r.type, "Date": r.date, "Severity": r.severity,
                     "UserId": r.user_id or "0" * 32} for r in rows]
        else:
            data = _periodic_payload(ctx, kind, auth)
        client.send(envelope(kind, data))
        await asyncio.sleep(max(period_ms, 500) / 1000)


def _parse_timing(data) -> tuple[int, int]:
    try:
        due, period = str(data or "0,1500").split(",", 1)
        return int(due), int(period)
    except ValueError:
        return 0, 1500


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
            try:
                message = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                continue
            if not isinstance(message, dict):
                continue
            kind = str(message.get("MessageType") or message.get("messageType") or "")
            data = message.get("Data", message.get("data"))
            if kind == "KeepAlive":
                client.send(envelope("KeepAlive"))
                ctx.sessions.touch(auth, socket.client.host if socket.client else "")
            elif kind.endswith("Start") and kind[:-5] in ("Sessions", "ScheduledTasksInfo", "ActivityLogEntry"):
                name = kind[:-5]
                old = client.subscriptions.pop(name, None)
                if old:
                    old.cancel()
                due, period = _parse_timing(data)
                client.subscriptions[name] = asyncio.create_task(_periodic(ctx, client, name, auth, due, period))
            elif kind.endswith("Stop"):
                task = client.subscriptions.pop(kind[:-4], None)
                if task:
                    task.cancel()
    except WebSocketDisconnect:
        pass
    finally:
        ctx.events.disconnect(client)
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender
        with contextlib.suppress(Exception):
            await socket.close()
