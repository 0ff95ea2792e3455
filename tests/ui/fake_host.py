"""A stand-in for app.server_host.ServerHost that fronts the fake Jellyfin server."""

from __future__ import annotations

import threading
from collections.abc import Callable

from tests.ui.fake_server import FakeServerThread


class FakeHost:
    def __init__(self, server: FakeServerThread) -> None:
        self._server = server
        self.state = "stopped"
        self.error: str | None = None
        self.started = 0
        self.stopped = 0
        self.restarted = 0
        self.keys_asked = 0
        self._listeners: list[Callable[[str], None]] = []

    @property
    def base_url(self) -> str:
        return self._server.base_url

    def add_state_listener(self, callback: Callable[[str], None]) -> None:
        self._listeners.append(callback)

    def _set(self, state: str) -> None:
        self.state = state
        for listener in list(self._listeners):
            listener(state)

    def _from_server_thread(self, *states: str) -> None:
        def run() -> None:
            for state in states:
                self._set(state)

        thread = threading.Thread(target=run)
        thread.start()
        thread.join()

    def start(self) -> None:
        self.started += 1
        self.error = None
        self._set("starting")
        threading.Thread(target=self._set, args=("running",)).start()

    def stop(self, timeout: float = 10) -> None:
        self.stopped += 1
        self._from_server_thread("stopped")

    def restart(self) -> None:
        self.restarted += 1
        self._from_server_thread("stopped", "starting", "running")

    def fail(self, message: str) -> None:
        self.error = message
        self._from_server_thread("error")

    def desktop_api_key(self) -> str:
        self.keys_asked += 1
        return self._server.state.api_key
