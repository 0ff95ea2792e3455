"""`reelroom-server`: run the media server headless."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.web_cli import add_web_arguments, run_install_web, web_options
from server.memory import pause_collector, resume_collector
from server.paths import default_data_dir

if TYPE_CHECKING:
    from server.context import ServerOptions
    from server.db.migration_child import MigrationChild


def build_parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--data-dir", type=Path, default=None,
                        help=f"where Reelroom keeps its database, configuration and logs (default: {default_data_dir()})")
    parser.add_argument("--port", type=int, default=None,
                        help="HTTP port (default: the port saved in the network settings, else 8096; 0 picks a free one)")
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    parser.add_argument("--database-url", default=os.environ.get("REELROOM_DATABASE_URL"),
                        help="SQLAlchemy database URL, e.g. postgresql://user:pw@host/db (needs the postgres extra; "
                             "default: SQLite in the data folder)")
    parser.add_argument("--no-lan", action="store_true", help="do not answer LAN discovery or advertise on zeroconf")
    parser.add_argument("--no-zeroconf", action="store_true", help="answer LAN discovery but do not advertise on zeroconf")
    parser.add_argument("--discovery-port", type=int, default=7359,
                        help="UDP port of the Jellyfin discovery responder (default 7359, the one the apps ask)")
    parser.add_argument("--check-ffmpeg", action="store_true",
                        help="print the ffmpeg Reelroom would use (path, source, version) and exit")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    add_web_arguments(parser)
    return parser


def options_from(args: argparse.Namespace, migration: MigrationChild | None = None) -> ServerOptions:
    from server.context import ServerOptions

    data_dir = (args.data_dir or default_data_dir()).expanduser().resolve()
    if args.port is None:
        from app.server_host import configured_port

        args.port = configured_port(data_dir)
    return ServerOptions(data_dir=data_dir, port=args.port, host=args.host, database_url=args.database_url,
                         enable_lan=not args.no_lan, enable_zeroconf=not getattr(args, "no_zeroconf", False),
                         discovery_port=getattr(args, "discovery_port", 7359), migrate_in_child=True,
                         migration=migration, **web_options(args))


def check_ffmpeg() -> int:
    from server.media.ffmpeg import FfmpegNotFoundError, find_ffmpeg

    try:
        info = find_ffmpeg()
    except FfmpegNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"ffmpeg: {info.path}\nsource: {info.source}\nversion: {info.version}\n"
          f"libx264: {'yes' if info.has_encoder('libx264') else 'no'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser("reelroom-server", "Reelroom media server (headless)").parse_args(argv)
    if args.check_ffmpeg:
        return check_ffmpeg()
    if args.install_web:
        return run_install_web(args, (args.data_dir or default_data_dir()).expanduser().resolve())
    if args.sha256:
        print("--sha256 goes with --install-web", file=sys.stderr)
        return 2
    if args.port is not None and not 0 <= args.port <= 65535:
        print("--port must be between 0 and 65535", file=sys.stderr)
        return 2
    pause_collector()  # until the server is ready: start-up's objects all live (server/memory.py)
    try:
        return _serve(args)
    finally:
        resume_collector()


def _serve(args: argparse.Namespace) -> int:
    from server.db.migration_child import start_if_due

    data_dir = (args.data_dir or default_data_dir()).expanduser().resolve()
    # A due migration starts now, in a child, and runs while the server below imports (see there).
    migration = None if args.database_url else start_if_due(data_dir, None)
    try:
        options = options_from(args, migration)
    except BaseException:
        if migration is not None:
            migration.stop()
        raise
    if options.database_url:
        from server.db.dialect import DatabaseUnavailable, check_database

        try:
            check_database(options.database_url)
        except DatabaseUnavailable as exc:
            print(f"reelroom-server: {exc}", file=sys.stderr)
            return 2
    options.data_dir.mkdir(parents=True, exist_ok=True)
    from server.runner import ServerRunner

    runner = ServerRunner(options, console_log=True, log_level=getattr(logging, args.log_level))
    # uvicorn handles SIGINT/SIGTERM while serving and re-raises them afterwards; these
    # handlers make that re-raise a clean exit (status 0) instead of death by signal.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: runner.request_shutdown())
    try:
        runner.serve()
    except OSError as exc:
        logging.getLogger("reelroom.server").error("Could not listen on %s:%s: %s", args.host, args.port, exc)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
