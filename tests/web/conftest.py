"""Fixtures for the real-browser tests: the shared jellyfin-web build hosted by a real Reelroom
server on 127.0.0.1, media made with ffmpeg, and one Chromium per module (Debian's, driven by
playwright; never a downloaded browser). Everything skips with a message when the jellyfin-web
build, Chromium or playwright is missing."""

from __future__ import annotations

import dataclasses
import mimetypes
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LiveServer, start_server, stop_server
from tests.web import webkit

_reason = webkit.skip_reason()
if _reason:
    pytestmark = pytest.mark.skip(reason=_reason)


def pytest_collection_modifyitems(config, items):
    reason = webkit.skip_reason()
    if reason:
        for item in items:
            if "tests/web/" in str(item.fspath).replace("\\", "/"):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def web_dist() -> Path:
    return webkit.unpack_web_dist(webkit.find_web_tarball())


@pytest.fixture(scope="session")
def web_media(tmp_path_factory) -> dict[str, Path]:
    return webkit.make_web_media(tmp_path_factory.mktemp("webmedia"))


def _static_wrapper(app, web_dir: Path):
    """Test-only stand-in for the server's own web hosting (until ServerOptions has web_dir):
    /web/... files come from ``web_dir``; everything else goes to the app."""
    root = web_dir.resolve()

    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/web/") and scope["path"] != "/web/robots.txt":
            rel = scope["path"][len("/web/"):] or "index.html"
            target = (root / rel).resolve()
            if root in target.parents and target.is_file():
                body = target.read_bytes()
                ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", ctype.encode()),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)  # /web/ConfigurationPages and friends are API routes

    return wrapped


def start_web_server(data_dir: Path, web_dir: Path, monkeypatch=None) -> LiveServer:
    from server.context import ServerOptions

    fields = {f.name for f in dataclasses.fields(ServerOptions)}
    if "web_dir" in fields:
        return start_server(data_dir, web_dir=web_dir)
    import server.runner as runner_module

    original = runner_module.create_app
    runner_module.create_app = lambda ctx, _orig=original: _static_wrapper(_orig(ctx), web_dir)
    try:
        return start_server(data_dir)
    finally:
        runner_module.create_app = original


@pytest.fixture(scope="module")
def playwright_instance():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright_instance, tmp_path_factory):
    context = webkit.launch_browser(playwright_instance, tmp_path_factory.mktemp("chromium-profile"))
    context.set_default_timeout(20_000)
    yield context
    context.close()


@pytest.fixture(scope="module")
def fresh_web_server(tmp_path_factory, web_dist, web_media) -> Iterator[LiveServer]:
    """A server hosting jellyfin-web whose startup wizard has not run; its folder picker may
    browse the test media."""
    data = tmp_path_factory.mktemp("webserver") / "data"
    webkit.allow_media_root(data, web_media["movies"].parent)
    live = start_web_server(data, web_dist)
    live.extra["media"] = web_media
    yield live
    stop_server(live)
