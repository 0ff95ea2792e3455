"""Command-line flags for LAN presence, shared by `reelroom` and `reelroom-server`."""

from __future__ import annotations

import argparse


def add_lan_arguments(parser: argparse.ArgumentParser) -> None:
    """LAN presence flags, shared by `reelroom` and `reelroom-server`."""
    parser.add_argument("--no-lan", action="store_true", help="do not answer LAN discovery or advertise on zeroconf")
    parser.add_argument("--no-zeroconf", action="store_true",
                        help="answer UDP discovery but do not advertise the server on zeroconf/mDNS")
    parser.add_argument("--discovery-port", type=int, default=7359,
                        help="UDP port of Jellyfin client auto-discovery (default 7359)")


def lan_options(args: argparse.Namespace) -> dict:
    """The ServerOptions fields the LAN flags set."""
    return {"enable_lan": not args.no_lan, "enable_zeroconf": not args.no_zeroconf,
            "discovery_port": args.discovery_port}
