"""Host the Reelroom server inside the desktop app: uvicorn on a background thread, with
start, stop (graceful, bounded), restart and a state the tray can show."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from server.context import ServerOptions
from server.logs import configure_logging
from server.paths import ServerPaths
from server.runner import GRACEFUL_SHUTDOWN_SECONDS, ServerRunner

log = logging.getLogger("reelroom.desktop")
DESKTOP_KEY_NAME = "Reelroom Desktop"
DEFAULT_PORT = 8096


def configured_port(data_dir: Path) -> int:
    """The HTTP port saved in the network settings (Settings… in the tray), else 8096."""
    from server.system.configuration import ConfigurationStore

    try:
        port = ConfigurationStore(ServerPaths(Path(data_dir))).network().InternalHttpPort
    except Exception:  # an unreadable settings file must not keep the app from starting
        log.exception("Could not read the saved port")
        return DEFAULT_PORT
    return int(port) if isinstance(port, int) and 0 < port <= 65535 else DEFAULT_PORT


class ServerHost:
    """``port=None`` uses the port saved in the settings, read again at every start and restart,
    so a port changed in Settings… applies from the next start; an explicit ``--port`` wins."""

    def __init__(self, data_dir: Path, port: int | None = None, host: str = "0.0.0.0", *,
                 enable_lan: bool = True, **options: object) -> None:
        self.fixed_port = port
        options.setdefault("migrate_in_child", True)  # Alembic stays out of the tray (server/db/migrate.py)
        self.options = ServerOptions(data_dir=Path(data_dir), port=port if port is not None else DEFAULT_PORT,
                                     host=host, enable_lan=enable_lan, **options)  # type: ignore[arg-type]
        self._state = "stopped"
        self._error: str | None = None
        self._listeners: list[Callable[[str], None]] = []
        self._runner: ServerRunner | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._key: str | None = None
        self.options.data_dir.mkdir(parents=True, exist_ok=True)
        configure_logging(self.options.data_dir / "log", console=False)

    # -- state ---------------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self._state

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def port(self) -> int | None:
        return self._runner.port if self._runner else None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port or self.options.port}"

    def add_state_listener(self, callback: Callable[[str], None]) -> None:
        self._listeners.append(callback)

    def _set_state(self, state: str, error: str | None = None) -> None:
        self._state = state
        self._error = error
        for fn in list(self._listeners):
            try:
                fn(state)
            except Exception:
                log.exception("A server state listener failed")

    # -- control -------------------------------------------------------------------------

    def start(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            if self.fixed_port is None:
                self.options.port = configured_port(self.options.data_dir)
            runner = ServerRunner(self.options, on_state=self._set_state)
            self._runner = runner
            self._thread = threading.Thread(target=self._run, args=(runner,), name="reelroom-server", daemon=True)
            self._set_state("starting")
            self._thread.start()

    def _run(self, runner: ServerRunner) -> None:
        try:
            runner.serve()
        except Exception as exc:  # the thread died: show it in the tray, offer a restart
            log.exception("The server stopped with an error")
            self._set_state("error", f"{type(exc).__name__}: {exc}")

    def stop(self, timeout: float = 10) -> None:
        with self._lock:
            runner, thread = self._runner, self._thread
            if runner is None or thread is None:
                return
            runner.request_shutdown()
            thread.join(max(timeout, GRACEFUL_SHUTDOWN_SECONDS + 1))
            if thread.is_alive():
                log.error("The server did not stop within %s s", timeout)
            self._thread = None
            self._key = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def wait_until_running(self, timeout: float = 30) -> bool:
        runner = self._runner
        return bool(runner and runner.ready.wait(timeout))

    def desktop_api_key(self) -> str:
        """The desktop UI's own API key, created on first use (the UI talks HTTP with it)."""
        if self._key:
            return self._key
        if not self.wait_until_running():
            raise RuntimeError(self._error or "The server is not running.")
        runner = self._runner
        assert runner is not None and runner.ctx is not None and runner.loop is not None
        tokens = runner.ctx.tokens

        async def ensure() -> str:
            return await tokens.key_named(DESKTOP_KEY_NAME) or await tokens.create_key(DESKTOP_KEY_NAME)

        self._key = asyncio.run_coroutine_threadsafe(ensure(), runner.loop).result(15)
        return self._key
