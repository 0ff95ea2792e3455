"""The web client options shared by `reelroom-server` and the desktop app."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    """The web client flags, the same for reelroom-server and the desktop app."""
    from server.web.locate import env_flag

    env_dir = os.environ.get("REELROOM_WEB_DIR")
    parser.add_argument("--web-dir", type=Path, default=Path(env_dir) if env_dir else None,
                        help="host the web client (jellyfin-web's dist folder) from DIR at /web/ "
                             "(default: REELROOM_WEB_DIR, else the bundled one, else <data>/web)")
    parser.add_argument("--no-web", action="store_true", default=env_flag("REELROOM_NO_WEB"),
                        help="do not host a web client at /web/ (also REELROOM_NO_WEB=1)")


def web_options(args: argparse.Namespace) -> dict:
    web_dir = getattr(args, "web_dir", None)
    return {"web_dir": web_dir.expanduser().resolve() if web_dir else None,
            "host_web": not getattr(args, "no_web", False)}
