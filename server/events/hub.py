"""The WebSocket event hub: every domain publishes here; each connected socket gets the
messages meant for it in Jellyfin's envelope {MessageType, Data, MessageId}.

A socket may also subscribe to a list (Sessions, ScheduledTasksInfo, ActivityLogEntry; Jellyfin's
``*Start`` messages with "dueMs,periodMs"). As in Jellyfin 10.10, such a list is pushed when what it
shows changes, not on a timer: the domains call ``changed(topic)``, and each socket subscribed to the
topic gets the list again, at once for a change that matters (a task or session starting or ending)
and at most once a period for progress. An idle server with the tray (which subscribes to the tasks)
attached therefore sends nothing and wakes for nothing.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
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
    subscriptions: dict[str, Subscription] = field(default_factory=dict)

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(encode_json(message))
        except asyncio.QueueFull:
            log.warning("Dropping a %s message for a slow socket (%s)", message.get("MessageType"), self.device_id)


class Subscription:
    """One socket's subscription to a topic: ``send`` (a coroutine function that builds the list and
    puts it on the socket's queue) runs once when ``due`` seconds have passed, then after each
    ``poke``: a forced poke sends as soon as no send is under way, another waits until ``period``
    seconds after the last send (one send then covers every poke in between, and the last state is
    always sent). Runs on the event loop; ``cancel`` ends it."""

    def __init__(self, send: Callable[[], Awaitable[None]], due: float, period: float) -> None:
        self._send = send
        self.period = period
        self._loop = asyncio.get_running_loop()
        self._last = float("-inf")  # loop time of the last send
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(max(due, 0.0), self._fire)
        self._running: asyncio.Task | None = None
        self._again = False  # poked while a send ran
        self._again_forced = False
        self.cancelled = False

    def poke(self, force: bool = False) -> None:
        if self.cancelled:
            return
        if self._running is not None:
            self._again = True
            self._again_forced = self._again_forced or force
            return
        wait = 0.0 if force else self._last + self.period - self._loop.time()
        if self._timer is not None:
            if self._timer.when() <= self._loop.time() + max(wait, 0.0):
                return  # already coming, no later than this poke needs
            self._timer.cancel()
        self._timer = self._loop.call_later(max(wait, 0.0), self._fire)

    def cancel(self) -> None:
        self.cancelled = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._running is not None:
            self._running.cancel()

    def _fire(self) -> None:
        self._timer = None
        if self.cancelled:
            return
        self._running = self._loop.create_task(self._run())

    async def _run(self) -> None:
        try:
            await self._send()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("Could not send a subscribed list")
        finally:
            self._last = self._loop.time()
            self._running = None
        if self._again and not self.cancelled:
            force, self._again, self._again_forced = self._again_forced, False, False
            self.poke(force)


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
        for subscription in client.subscriptions.values():
            subscription.cancel()
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

    def changed(self, topic: str, *, force: bool = True) -> None:
        """What a subscribed list shows changed (topic: "Sessions", "ScheduledTasksInfo" or
        "ActivityLogEntry"): every socket subscribed to it gets the list again (``Subscription``);
        ``force=False`` for progress, sent at most once a subscription's period. Nothing goes out
        to a socket that did not subscribe. Safe to call from any thread."""
        if self._loop is not None and not _on_loop(self._loop):
            self._loop.call_soon_threadsafe(self._changed, topic, force)
        else:
            self._changed(topic, force)

    def _changed(self, topic: str, force: bool) -> None:
        for client in self._clients:
            subscription = client.subscriptions.get(topic)
            if subscription is not None:
                subscription.poke(force)

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
