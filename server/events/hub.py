"""The WebSocket event hub: every domain publishes here; each connected socket gets the
messages meant for it in Jellyfin's envelope {MessageType, Data, MessageId}."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from server.wire.casing import encode_json

log = logging.getLogger("reelroom.events")


def envelope(message_type: str, data: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"MessageType": message_type, "MessageId": uuid.uuid4().hex}
    if data is not None:
        out["Data"] = data
    return out


@dataclass(eq=False)
class SocketClient:
    """One connected socket; ``send`` puts an encoded message on its queue."""

    user_id: str | None
    device_id: str
    is_admin: bool
    queue: asyncio.Queue[bytes] = field(default_factory=lambda: asyncio.Queue(maxsize=1000))
    subscriptions: dict[str, asyncio.Task] = field(default_factory=dict)

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(encode_json(message))
        except asyncio.QueueFull:
            log.warning("Dropping a %s message for a slow socket (%s)", message.get("MessageType"), self.device_id)


class EventHub:
    def __init__(self) -> None:
        self._clients: set[SocketClient] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listeners: list[Callable[[str, Any], None]] = []

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def connect(self, client: SocketClient) -> None:
        self._clients.add(client)

    def disconnect(self, client: SocketClient) -> None:
        self._clients.discard(client)
        for task in client.subscriptions.values():
            task.cancel()
        client.subscriptions.clear()

    @property
    def clients(self) -> list[SocketClient]:
        return list(self._clients)

    def add_listener(self, fn: Callable[[str, Any], None]) -> None:
        """In-process listeners (tests, the desktop bridge) see every published message."""
        self._listeners.append(fn)

    def publish(self, message_type: str, data: Any = None, *, user_id: str | None = None,
                admins_only: bool = False) -> None:
        """Send to every socket (or one user's, or admins'). Safe to call from any thread."""
        if self._loop is not None and not _on_loop(self._loop):
            self._loop.call_soon_threadsafe(self._publish, message_type, data, user_id, admins_only)
        else:
            self._publish(message_type, data, user_id, admins_only)

    def send_to_device(self, device_id: str, message_type: str, data: Any = None) -> int:
        """Send to the sockets of one device (remote control); returns how many got it."""
        targets = [c for c in self._clients if c.device_id == device_id]
        for client in targets:
            if self._loop is not None and not _on_loop(self._loop):
                self._loop.call_soon_threadsafe(client.send, envelope(message_type, data))
            else:
                client.send(envelope(message_type, data))
        return len(targets)

    def _publish(self, message_type: str, data: Any, user_id: str | None, admins_only: bool) -> None:
        for fn in list(self._listeners):
            try:
                fn(message_type, data)
            except Exception:
                log.exception("Event listener failed")
        for client in list(self._clients):
            if user_id is not None and client.user_id != user_id and not client.is_admin:
                continue
            if admins_only and not client.is_admin:
                continue
            client.send(envelope(message_type, data))


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
