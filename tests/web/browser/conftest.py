"""Fixtures for the real-browser tests: the shared jellyfin-web build hosted by a real Reelroom
server on 127.0.0.1, media made with ffmpeg, and one Chromium per module (Debian's, driven by
playwright; never a downloaded browser). Everything skips with a message when the jellyfin-web
build, Chromium or playwright is missing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LiveServer, start_server, stop_server
from tests.web.browser import webkit


def pytest_collection_modifyitems(config, items):
    reason = webkit.skip_reason()
    if reason:
        for item in items:
            if "tests/web/browser/" in str(item.fspath).replace("\\", "/"):
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def web_dist() -> Path:
    return webkit.unpack_web_dist(webkit.find_web_tarball())


@pytest.fixture(scope="session")
def web_media(tmp_path_factory) -> dict[str, Path]:
    return webkit.make_web_media(tmp_path_factory.mktemp("webmedia"))


def start_web_server(data_dir: Path, web_dir: Path) -> LiveServer:
    return start_server(data_dir, web_dir=web_dir)


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
