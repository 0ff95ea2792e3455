"""A small web client the tests make themselves (the shape of jellyfin-web's dist), and a server
hosting it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LiveServer, start_server, stop_server

REPO = Path(__file__).resolve().parents[2]
_DIST_NAME = Path("shared") / "jellyfin-web" / "jellyfin-web-10.10.7-dist.tar.xz"


def _shared_dist() -> Path:
    """REELROOM_WEB_DIST if set, else ../shared beside the checkout (or beside a worktree's parent)."""
    given = os.environ.get("REELROOM_WEB_DIST")
    if given:
        return Path(given)
    for base in (REPO.parent, REPO.parent.parent):
        if (base / _DIST_NAME).is_file():
            return base / _DIST_NAME
    return REPO.parent / _DIST_NAME


SHARED_DIST = _shared_dist()
SHARED_DIST_SHA256 = "9dbf14a6a21c214fcf7679ad84550ef0fa9848007e2f8dc74a8bf578d5a8692c"

INDEX = ("<!doctype html><html><head><meta charset='utf-8'><title>Test web client</title>"
         "<link href='main.0123456789abcdef0123.css' rel='stylesheet'></head>"
         "<body><script src='runtime.bundle.js?ad3898a0ee3999cd1b87'></script></body></html>")
BIG_JS = "".join(f"function f{i}(a,b){{return a*{i}+b;}}\n" for i in range(4000))  # ~130 KB, compressible


def make_dist(folder: Path, marker: str = "v1") -> Path:
    """A dist folder: index.html, hashed and unhashed assets of every type the server maps."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(INDEX.replace("Test web client", f"Test web client {marker}"))
    (folder / "config.json").write_text('{"multiserver": false, "servers": []}')
    (folder / "runtime.bundle.js").write_text(BIG_JS)
    (folder / "main.0123456789abcdef0123.css").write_text("body{color:red}\n" * 200)
    (folder / "0d2b37694d352e7e4c59.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (folder / "fd4301fdc170fd202474.json").write_text('{"name": "x"}')
    (folder / "manifest.webmanifest").write_text('{"name": "x"}')
    (folder / "a1b2c3d4e5f6a7b8c9d0.woff2").write_bytes(os.urandom(2048))
    (folder / "touchicon.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(600))
    (folder / "favicon.ico").write_bytes(b"\x00\x00\x01\x00" + b"\x00" * 1000)
    (folder / "libraries").mkdir(exist_ok=True)
    (folder / "libraries" / "libarchive.wasm").write_bytes(b"\x00asm\x01\x00\x00\x00" + b"\x00" * 4000)
    (folder / "robots.txt").write_text("User-agent: *\nDisallow: /\n")
    return folder


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    return make_dist(tmp_path / "dist")


@pytest.fixture
def web_server(tmp_path: Path, dist: Path) -> Iterator[LiveServer]:
    live = start_server(tmp_path / "data", web_dir=dist)
    yield live
    stop_server(live)


def require_shared_dist() -> Path:
    if not SHARED_DIST.is_file():
        pytest.skip(f"the shared jellyfin-web dist is not here ({SHARED_DIST}); see ../shared/jellyfin-web/README.md")
    return SHARED_DIST
