"""Run a server on uvicorn: headless in the main thread (reelroom-server) or in a background
thread (the desktop app). Restart builds a fresh context and app on the same socket address."""

from __future__ import annotations

import asyncio
import io
import itertools
import logging
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

# Config and Server from their own modules: uvicorn's __init__ imports its command line (click,
# watchfiles, ...), and server/__init__.py defers it (server/lazy_modules.py).
from uvicorn.config import Config
from uvicorn.server import Server as UvicornServer

from server.app import create_app
from server.context import ServerContext, ServerOptions
from server.http.limits import MAX_SOCKET_MESSAGE_BYTES
from server.logs import configure_logging
from server.memory import collector_paused, limit_arenas, resume_collector, settle_collector

log = logging.getLogger("reelroom.server")
GRACEFUL_SHUTDOWN_SECONDS = 5
MAX_HEAD_BYTES = 48 * 1024  # for h11, which counts the whole head
# How long an idle keep-alive connection stays open: Kestrel's (Jellyfin's) default. uvicorn's
# own default, 5 s, closed connections that browsers and the Jellyfin apps still meant to reuse,
# so a request racing the close was reset under load.
KEEP_ALIVE_SECONDS = 130
SETTLE_AFTER_SECONDS = 1.0  # after ready, when a paused collector collects start-up's garbage
# At the loop's end: how long the tasks still alive get to end once cancelled, and how long the
# default executor's threads (asyncio.to_thread) get to finish their calls.
FINISH_SECONDS = 5.0


def websocket_mode() -> str:
    """uvicorn's current WebSocket implementation ("websockets" is deprecated since 0.35)."""
    from uvicorn.config import WS_PROTOCOLS

    return "websockets-sansio" if "websockets-sansio" in WS_PROTOCOLS else "wsproto"


def websocket_protocol() -> type[asyncio.Protocol]:
    """uvicorn's WebSocket protocol (:func:`websocket_mode`), imported at the first WebSocket
    upgrade instead of at start: uvicorn's ``Config.load`` would import it and the ``websockets``
    package with it (~20 modules, ~0.9 MiB) into a server that may never see a socket. uvicorn
    takes any callable as the class (it only calls it with ``config``, ``server_state`` and
    ``app_state``)."""
    mode = websocket_mode()
    loaded: list[Callable[..., asyncio.Protocol]] = []

    def protocol(**kwargs: object) -> asyncio.Protocol:
        if not loaded:
            from uvicorn.config import WS_PROTOCOLS
            from uvicorn.importer import import_from_string

            loaded.append(_closing_safe(import_from_string(WS_PROTOCOLS[mode])))
        return loaded[0](**kwargs)

    return cast("type[asyncio.Protocol]", protocol)  # a stand-in for the class: uvicorn only calls it


def _closing_safe(protocol: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """uvicorn's websockets-sansio protocol, whose ``shutdown`` (the server stopping) does not fail on
    a connection whose peer began the close: uvicorn sends its own close frame (1012) there without
    looking at the state, websockets raises ``InvalidState`` for a connection already CLOSING, and
    the exception ended ``Server.serve``, so a tray whose socket reader hung up as the server
    stopped saw the server fail. Here that connection is just closed. (wsproto's is unchanged.)"""
    try:
        from websockets.exceptions import InvalidState
    except ImportError:  # wsproto: no websockets package
        return protocol

    class ClosingSafe(protocol):  # type: ignore[valid-type,misc]
        def shutdown(self) -> None:
            try:
                super().shutdown()
            except InvalidState:  # the peer's close is under way: nothing more to say, close it
                self.transport.close()

    ClosingSafe.__name__ = ClosingSafe.__qualname__ = f"ClosingSafe{protocol.__name__}"
    return ClosingSafe


def http_protocol() -> type | str:
    """httptools with Reelroom's request-head bounds; h11 (with its own bound) without it."""
    try:
        from server.http.protocol import BoundedHttpToolsProtocol
    except ImportError:
        return "h11"
    return BoundedHttpToolsProtocol


EXECUTOR_THREADS = "reelroom-executor"
_loops = itertools.count(1)


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run(main)`` with an end that cannot hang: the tasks still alive are cancelled
    and waited for, and the default executor's calls (``asyncio.to_thread``) finished,
    ``FINISH_SECONDS`` each at most (asyncio.run waits for both without end in Python 3.11).
    What did not end is logged with its stack and left behind, so that Quit quits even if one
    call is stuck."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # (as asyncio.run does: the child watcher is attached to it)
    # asyncio's own default executor, its threads named for this loop (another server's are not its)
    threads = f"{EXECUTOR_THREADS}-{next(_loops)}"
    executor = ThreadPoolExecutor(thread_name_prefix=threads)
    loop.set_default_executor(executor)
    try:
        loop.run_until_complete(main)
    finally:
        try:
            _finish_loop(loop, executor, threads)
        finally:
            asyncio.set_event_loop(None)
            loop.close()  # (shuts the executor down without waiting)


def _finish_loop(loop: asyncio.AbstractEventLoop, executor: ThreadPoolExecutor, threads: str) -> None:
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=FINISH_SECONDS))
        for task in tasks:
            if not task.done():
                stack = io.StringIO()
                task.print_stack(limit=12, file=stack)
                log.warning("Task %s did not end when cancelled; left behind at:\n%s", task.get_name(),
                            stack.getvalue())
            elif not task.cancelled() and task.exception() is not None:
                loop.call_exception_handler({"message": "unhandled exception at shutdown",
                                             "exception": task.exception(), "task": task})
    try:
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), FINISH_SECONDS))
    except TimeoutError:
        log.warning("Asynchronous generators did not close in %.1f s", FINISH_SECONDS)
    # (not loop.shutdown_default_executor(): it joins its thread on the loop, so no timeout can cut it)
    waiter = threading.Thread(target=executor.shutdown, name="reelroom-shutdown-wait", daemon=True)
    waiter.start()
    waiter.join(FINISH_SECONDS)
    if waiter.is_alive():
        frames = sys._current_frames()
        # (the executor's threads named ``{threads}_N``; after the waited shutdown only busy ones are left)
        busy = [t for t in threading.enumerate() if t.name.startswith(f"{threads}_") and t.ident in frames]
        log.warning("%d executor call(s) did not finish in %.1f s; left behind:\n%s", len(busy), FINISH_SECONDS,
                    "\n".join(f"{t.name}:\n" + "".join(traceback.format_stack(frames[t.ident or 0], limit=12))
                              for t in busy))


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto IPPROTO_TCP (not 0): asyncio only sets TCP_NODELAY on accepted sockets whose proto
    # says TCP. Without it, a small reply written in two parts (head, body) waits ~40 ms for the
    # client's delayed ACK (Nagle). The listening socket's TCP_NODELAY is inherited as well.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class Server(UvicornServer):
    """uvicorn's server, with its main loop woken once a second instead of ten times.

    uvicorn's ``main_loop`` sleeps 0.1 s between ticks, only to turn the Date header over once a
    second and to notice ``should_exit``: an idle server's loop woke ten times a second, for
    nothing (a tray app on a laptop keeps the CPU from its deeper sleep states). Here a tick comes
    at each turn of the wall clock's second, so the Date header turns with the clock rather than
    up to a second behind it, and setting ``should_exit`` (uvicorn's signal handler, or
    ``ServerRunner`` from another thread through ``call_soon_threadsafe``) wakes the loop at once."""

    def __init__(self, config: Config) -> None:
        self._exit_wakeup: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        super().__init__(config)

    @property
    def should_exit(self) -> bool:
        return self._should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._should_exit = value
        loop, wakeup = self._loop, self._exit_wakeup
        if value and loop is not None and wakeup is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wakeup.set)  # writes to the loop's self-pipe: wakes it now

    async def main_loop(self) -> None:
        self._exit_wakeup = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            try:
                async with asyncio.timeout(1.0 - time.time() % 1.0):  # to the next whole second
                    await self._exit_wakeup.wait()
            except TimeoutError:
                pass
            counter = (counter + 10) % 864000  # uvicorn's on_tick turns the headers when counter % 10 == 0
            should_exit = await self.on_tick(counter)


class ServerRunner:
    def __init__(self, options: ServerOptions, on_state: Callable[[str, str | None], None] | None = None,
                 *, console_log: bool = False, log_level: int = logging.INFO) -> None:
        self.options = options
        self.console_log = console_log
        self.log_level = log_level
        self.on_state = on_state or (lambda state, error: None)
        self.ctx: ServerContext | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port: int | None = None
        self._server: Server | None = None
        self._restart = False
        self._stopping = False
        self.ready = threading.Event()

    def request_restart(self) -> None:
        log.info("Restart requested")
        self._restart = True
        self._signal_exit()

    def request_shutdown(self) -> None:
        log.info("Shutdown requested")
        self._stopping = True
        self._signal_exit()

    def _signal_exit(self) -> None:
        server = self._server
        if server is not None:
            if self.loop is not None and self.loop.is_running():
                self.loop.call_soon_threadsafe(setattr, server, "should_exit", True)
            else:
                server.should_exit = True

    def serve(self) -> None:
        """Serve until shut down; a restart request serves again with a fresh context."""
        configure_logging(self.options.data_dir / "log", self.log_level, console=self.console_log)
        limit_arenas()  # fewer glibc malloc arenas: the thread pools' freed memory is reused, not kept
        sock = bind_socket(self.options.host, self.options.port)
        self.port = sock.getsockname()[1]
        try:
            while True:
                self._restart = False
                run_loop(self._serve_once(sock))
                if not self._restart or self._stopping:
                    break
                log.info("Restarting Reelroom")
        finally:
            resume_collector()
            sock.close()
            self.on_state("stopped", None)

    async def _serve_once(self, sock: socket.socket) -> None:
        self.loop = asyncio.get_running_loop()
        self.on_state("starting", None)
        ctx = ServerContext(self.options, port=self.port)
        ctx.request_restart = self.request_restart
        ctx.request_shutdown = self.request_shutdown
        self.ctx = ctx
        app = create_app(ctx)
        config = Config(app, lifespan="on", log_config=None, access_log=False,
                        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS, ws=websocket_protocol(),
                        ws_max_size=MAX_SOCKET_MESSAGE_BYTES,
                        timeout_keep_alive=KEEP_ALIVE_SECONDS,
                        http=http_protocol(), h11_max_incomplete_event_size=MAX_HEAD_BYTES,
                        server_header=False, date_header=True)
        server = Server(config)
        self._server = server
        if self._stopping:
            return

        async def report_ready() -> None:
            while not ctx.startup.ready and not ctx.startup.failed and not server.should_exit:
                await asyncio.sleep(0.02)
            if ctx.startup.failed:
                resume_collector()
                self.on_state("error", ctx.startup.failed)
            elif ctx.startup.ready:
                # Everything alive now (modules, the app, the context) lives as long as the server:
                # move it out of the cyclic collector's reach, and resume it if an entry point paused
                # it for start-up (server/memory.py). A paused collector first collects once (a walk
                # of the whole heap, ~60 ms): shortly after the first requests, not in their way.
                if not collector_paused():
                    settle_collector()
                self.ready.set()
                self.on_state("running", None)
                if collector_paused():
                    await asyncio.sleep(SETTLE_AFTER_SECONDS)
                    settle_collector()

        watcher = asyncio.create_task(report_ready())
        try:
            # uvicorn closes the sockets it serves; a duplicate keeps ours listening across a
            # restart, so clients queue in the backlog instead of being refused.
            await server.serve(sockets=[sock.dup()])
        finally:
            watcher.cancel()
            self.ready.clear()
            self._server = None
