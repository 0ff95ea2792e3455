"""Entry point of the Reelroom desktop app: tray, single instance, hosted server; headless without a display."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from app import pyside_imports  # before PySide6: it keeps Python's own import (app/pyside_imports.py)

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from app.single_instance import SingleInstance
    from ui.tray import ServerHostLike, TrayController
    from ui.worker import BackgroundCalls

log = logging.getLogger("reelroom.desktop")

DEFAULT_PORT = 8096
DEFAULT_HOST = "0.0.0.0"
UPDATE_MANIFEST_ENV = "REELROOM_UPDATE_MANIFEST_URL"

HostFactory = Callable[[Path, "int | None", str], "ServerHostLike"]


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("Reelroom", appauthor=False))


def build_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reelroom", description="Reelroom media server (desktop app)")
    parser.add_argument("--data-dir", type=Path, default=None, help="folder for the database, settings and logs")
    parser.add_argument("--port", type=int, default=None,
                        help=f"HTTP port (default: the one saved in Settings, else {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    parser.add_argument("--database-url", default=os.environ.get("REELROOM_DATABASE_URL") or None,
                        help="SQLAlchemy database URL, e.g. postgresql://user:pw@host/db (default: SQLite in the data folder)")
    from app.web_cli import add_web_arguments

    add_web_arguments(parser)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    args = build_arg_parser().parse_args(argv)
    if args.port is not None and not 0 <= args.port <= 65535:
        build_arg_parser().error(f"--port must be between 0 and 65535, not {args.port}")
    args.data_dir = (args.data_dir or default_data_dir()).expanduser().resolve()
    return args


def has_display(environ: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """False only on X11/Wayland systems with no display and no Qt platform chosen."""
    env = os.environ if environ is None else environ
    if (platform or sys.platform) in ("win32", "darwin"):
        return True
    return any(env.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def _server_host_factory(data_dir: Path, port: int | None, host: str, **options: Any) -> ServerHostLike:
    from server.db.migration_child import start_if_due

    # A due migration starts now, in a child, and runs while the server imports (server/db/migration_child.py).
    options.setdefault("migration", start_if_due(Path(data_dir).expanduser().resolve(), options.get("database_url")))
    from app.server_host import ServerHost

    return ServerHost(data_dir=data_dir, port=port, host=host, **options)


def database_problem(url: str | None) -> str | None:
    """None when the database can be used (or is the default SQLite file), else one line saying why not."""
    if not url:
        return None
    from server.db.dialect import DatabaseUnavailable, check_database

    try:
        check_database(url)
    except DatabaseUnavailable as exc:
        return str(exc)
    return None


def run_headless(argv: Sequence[str], server_main: Callable[[list[str]], int] | None = None) -> int:
    """No display: say so, then run exactly what ``reelroom-server`` runs, with the same flags."""
    log.warning("No display found (DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM are unset); "
                "running Reelroom headless, like reelroom-server")
    if server_main is None:
        from app.server_main import main as default_main
        server_main = default_main
    return server_main(list(argv))


@dataclass
class DesktopApp:
    """The running pieces, kept together so nothing is garbage-collected early."""

    app: QApplication
    instance: SingleInstance
    calls: BackgroundCalls
    controller: TrayController


def build_desktop(
    args: argparse.Namespace,
    argv: Sequence[str],
    host_factory: HostFactory = _server_host_factory,
    **controller_options: Any,
) -> DesktopApp | None:
    """Make the QApplication, claim the single instance and start the tray; None if another instance runs.

    Up to its server running, the tray program is Python work holding the GIL, in one thread after
    the other: what is done before the server runs is what delays it. So the server's modules are
    imported past shiboken's import hook (app/pyside_imports.py), and the tray imports and makes
    only what its icon and menu show; its HTTP client, socket reader, update check and windows come
    once the server runs (ui/tray.py). The tray is made before the server's thread starts, not while
    it starts: made alongside it (tried at stop 30) it took the same CPU from the server's start and
    added the GIL's hand-overs between the two threads, which a loaded machine makes slow."""
    from PySide6.QtWidgets import QApplication

    pyside_imports.install()  # before the UI and the hosted server are imported (app/pyside_imports.py)
    from app.single_instance import SHOW, SingleInstance, instance_name

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "reelroom"])
    assert isinstance(app, QApplication)
    app.setApplicationName("Reelroom")
    app.setApplicationDisplayName("Reelroom")
    app.setQuitOnLastWindowClosed(False)

    instance = SingleInstance(instance_name(args.data_dir))
    if not instance.claim():
        log.info("Reelroom is already running; asked it to show its window")
        return None
    from app.web_cli import web_options

    # A host factory that takes no web or database options (tests) gets the defaults.
    defaults = {"web_dir": None, "host_web": True}
    extra = {k: v for k, v in web_options(args).items() if v != defaults[k]}
    if getattr(args, "database_url", None):
        extra["database_url"] = args.database_url
    # The server's modules are imported here (the host factory), past shiboken's import hook.
    with pyside_imports.without_feature_hook():
        server = host_factory(args.data_dir, args.port, args.host, **extra)

    from app.autostart import LoginItem, launch_command
    from ui.state_icon import state_icon
    from ui.tray import TrayController
    from ui.worker import BackgroundCalls

    app.setWindowIcon(state_icon("running"))
    calls = BackgroundCalls()
    options: dict[str, Any] = {
        "login_item": LoginItem(launch_command() + list(argv)),
        "update_manifest_url": os.environ.get(UPDATE_MANIFEST_ENV) or None,
    }
    options.update(controller_options)
    controller = TrayController(server, calls, **options)
    instance.messageReceived.connect(lambda message: controller.show_main_window() if message == SHOW else None)
    controller.quitRequested.connect(app.quit)
    from app import stop_signals

    stop_signals.install(controller.quit, controller)  # SIGTERM (systemd, logout) quits cleanly
    controller.start()
    return DesktopApp(app, instance, calls, controller)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="%(asctime)s [%(levelname)s] %(name)s: %(message)s")
    if args.install_web:
        from app.web_cli import run_install_web

        return run_install_web(args, args.data_dir)
    if not has_display():
        return run_headless(argv)
    problem = database_problem(args.database_url)
    if problem:
        print(f"reelroom: {problem}", file=sys.stderr)
        return 2
    from server.memory import pause_collector, resume_collector

    pause_collector()  # until the hosted server is ready, which resumes it (server/memory.py)
    try:
        desktop = build_desktop(args, argv)
    except BaseException:
        resume_collector()
        raise
    if desktop is None:
        resume_collector()
        return 0
    code = desktop.app.exec()
    desktop.instance.release()
    desktop.calls.wait_for_done(15_000)
    return code


if __name__ == "__main__":
    sys.exit(main())
