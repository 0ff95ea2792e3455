"""The web client options shared by `reelroom-server` and the desktop app."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    """The web client flags, the same for reelroom-server and the desktop app."""
    from server.web.locate import env_flag

    env_dir = os.environ.get("REELROOM_WEB_DIR")
    parser.add_argument("--web-dir", type=Path, default=Path(env_dir) if env_dir else None,
                        help="host the web client (jellyfin-web's dist folder) from DIR at /web/ "
                             "(default: REELROOM_WEB_DIR, else the bundled one, else <data>/web)")
    parser.add_argument("--no-web", action="store_true", default=env_flag("REELROOM_NO_WEB"),
                        help="do not host a web client at /web/ (also REELROOM_NO_WEB=1)")
    parser.add_argument("--install-web", metavar="PATH_OR_URL", default=None,
                        help="install the web client (jellyfin-web's built dist: a .tar.xz/.tar.gz/.zip, "
                             "its URL, or a folder) into <data>/web, then exit")
    parser.add_argument("--sha256", metavar="HEX", default=None,
                        help="with --install-web: the archive's expected sha256")


def web_options(args: argparse.Namespace) -> dict[str, Any]:
    web_dir = getattr(args, "web_dir", None)
    return {"web_dir": web_dir.expanduser().resolve() if web_dir else None,
            "host_web": not getattr(args, "no_web", False)}


def run_install_web(args: argparse.Namespace, data_dir: Path) -> int:
    """``--install-web``: install, say what happened, and return the exit status."""
    import sys

    from server.web.install import WebInstallError, install_web, is_url

    source = args.install_web
    if is_url(source):
        print(f"Downloading {source} ...", flush=True)
    try:
        result = install_web(source, data_dir, args.sha256)
    except WebInstallError as exc:
        print(f"Could not install the web app: {exc}", file=sys.stderr)
        return 1
    checked = f", sha256 {result.sha256}" if result.sha256 else ""
    print(f"Installed the web app into {result.folder} ({result.files} files, "
          f"{result.bytes / 1e6:.1f} MB{checked}).\n"
          "A running Reelroom server using this data folder serves it at /web/ now.")
    return 0
