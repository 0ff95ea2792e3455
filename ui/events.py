"""The server's WebSocket (``/socket``), read on a background thread; messages reach the GUI
thread as a Qt signal. The tray uses it for scan progress, new media and task failures."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import weakref
from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit, urlunsplit

import shiboken6
from PySide6.QtCore import QObject, Signal
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.sync.client import connect

log = logging.getLogger("reelroom.desktop")

KEEPALIVE_SECONDS = 30
TASKS_PERIOD_MS = 1500


def socket_url(base_url: str, device_id: str) -> str:
    """``ws://host:port/socket?deviceId=…`` for an ``http://host:port`` base URL. The API key goes in
    the Authorization header, never in the URL (URLs end up in logs)."""
    parts = urlsplit(base_url.rstrip("/"))
    scheme = "wss" if parts.scheme == "https" else "ws"
    query = urlencode({"deviceId": device_id})
    return urlunsplit((scheme, parts.netloc, parts.path + "/socket", query, ""))


class ServerEvents(QObject):
    """Connects, subscribes to scheduled-task updates and re-connects until stopped.

    ``received(message_type, data)`` is emitted for every message; ``connectedChanged(bool)`` when
    the socket opens or drops. Nothing here blocks the thread that calls ``start``/``stop``.
    """

    received = Signal(str, object)
    connectedChanged = Signal(bool)
    # Every reader not yet collected, so a shutdown (or a test) can stop them all.
    instances: ClassVar[weakref.WeakSet[ServerEvents]] = weakref.WeakSet()

    def __init__(self, base_url: str, authorization: str, device_id: str, *, retry_seconds: float = 2.0,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.url = socket_url(base_url, device_id)
        self._headers = {"Authorization": authorization}
        self._retry = retry_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = False
        # The open connection's socket, so that a stop ends the reader's wait for a message at once
        # (the reader waits for messages without a timeout tick; ``_interrupt``).
        self._socket: list[socket.socket | None] = [None]
        stop, held = self._stop, self._socket
        # When Qt deletes this object (its parent went away), the reader must stop emitting.
        self.destroyed.connect(lambda *_: ServerEvents._interrupt(stop, held))
        ServerEvents.instances.add(self)

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="reelroom-events", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Ask the reader to finish (at once: its connection is shut down); never waits for it."""
        ServerEvents._interrupt(self._stop, self._socket)

    @staticmethod
    def _interrupt(stop: threading.Event, held: list[socket.socket | None]) -> None:
        stop.set()
        sock = held[0]
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # the reader's recv ends with ConnectionClosed
            except OSError:  # closed already
                pass

    def wait(self, timeout: float = 3.0) -> bool:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    # -- the reader thread ------------------------------------------------------------------------

    def _alive(self) -> bool:
        return not self._stop.is_set() and shiboken6.isValid(self)

    def _set_connected(self, value: bool) -> None:
        if value != self.connected:
            self.connected = value
            if self._alive():
                self.connectedChanged.emit(value)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._session()
            except (OSError, ConnectionClosed, InvalidHandshake, InvalidURI, TimeoutError) as exc:
                log.debug("Server events: %s", exc)
            except Exception:
                log.exception("Server events reader failed")
            self._set_connected(False)
            self._stop.wait(self._retry)

    def _session(self) -> None:
        with connect(self.url, additional_headers=self._headers, open_timeout=5, close_timeout=1,
                     max_size=8 * 1024 * 1024) as ws:
            self._socket[0] = ws.socket
            try:
                if self._stop.is_set():  # stopped while connecting: the shutdown found no socket
                    return
                ws.send(json.dumps({"MessageType": "ScheduledTasksInfoStart", "Data": f"0,{TASKS_PERIOD_MS}"}))
                self._set_connected(True)
                last_sent = time.monotonic()
                while not self._stop.is_set():
                    wait = last_sent + KEEPALIVE_SECONDS - time.monotonic()
                    if wait <= 0:
                        ws.send(json.dumps({"MessageType": "KeepAlive"}))
                        last_sent = time.monotonic()
                        continue
                    try:
                        raw = ws.recv(timeout=wait)  # sleeps until a message, the keep-alive or a stop
                    except TimeoutError:
                        continue
                    self._dispatch(raw)
            finally:
                self._socket[0] = None

    def _dispatch(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        kind = message.get("MessageType") or message.get("messageType")
        if isinstance(kind, str) and kind not in ("ForceKeepAlive", "KeepAlive"):
            data: Any = message.get("Data", message.get("data"))
            if self._alive():
                self.received.emit(kind, data)
