"""README screenshots of jellyfin-web 10.10.7 served by Reelroom, against a generated library.

    .venv/bin/python docs/take_web_screenshots.py [--out docs/screenshots] [--web-dist PATH]

A real server on 127.0.0.1 hosts the shared jellyfin-web build (``../shared/jellyfin-web`` or
``--web-dist``/``REELROOM_WEB_DIST``); the library is made with ffmpeg (tests/web/browser/webkit.py);
Debian's Chromium takes the pictures: home, a movie's details, the player with subtitles, the
dashboard.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conftest import complete_wizard, start_server, stop_server  # noqa: E402
from tests.library_helpers import add_library_and_scan  # noqa: E402
from tests.web.browser import webkit  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--web-dist", type=Path)
    args = parser.parse_args()
    source = args.web_dist or webkit.find_web_tarball()
    if source is None or not webkit.chromium_available() or not webkit.playwright_available():
        print(webkit.skip_reason() or f"no jellyfin-web build at {source}")
        return 2
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    dist = webkit.unpack_web_dist(source)
    with tempfile.TemporaryDirectory(prefix="reelroom-shots-") as tmp:
        root = Path(tmp)
        media = webkit.make_web_media(root / "media")
        live = start_server(root / "data", web_dir=dist)
        try:
            complete_wizard(live)
            add_library_and_scan(live, "Movies", "movies", [media["movies"]])
            add_library_and_scan(live, "Shows", "tvshows", [media["shows"]])
            add_library_and_scan(live, "Music", "music", [media["music"]])
            with live.admin() as c:
                server_id = c.get("/System/Info/Public").json()["Id"]
                items = c.get("/Items", params={"recursive": "true", "userId": live.admin_id}).json()["Items"]
            ids = {i["Name"]: i["Id"] for i in items}
            with sync_playwright() as p:
                context = webkit.launch_browser(p, root / "profile")
                page = context.new_page()
                page.goto(f"{live.url}/web/")
                page.fill("#txtManualName", "admin")
                page.fill("#txtManualPassword", "s3cret!")
                page.click(".manualLoginForm .button-submit")
                page.wait_for_selector(".homePage:not(.hide) .section0 .card", state="visible")
                page.wait_for_function("() => [...document.querySelectorAll('.homePage:not(.hide) .cardImageContainer')]"
                                       ".some(e => (e.style.backgroundImage || '').includes('/Images/Primary'))")
                page.wait_for_timeout(1500)
                page.screenshot(path=str(args.out / "web-home.png"))

                page.evaluate("(h) => { window.location.hash = h; }",
                              f"#/details?id={ids[webkit.MOVIE_DIRECT]}&serverId={server_id}")
                page.wait_for_selector(".itemDetailPage:not(.hide) .btnPlay", state="visible")
                page.wait_for_timeout(1500)
                page.screenshot(path=str(args.out / "web-movie.png"))

                page.click(".itemDetailPage:not(.hide) .btnPlay")
                page.wait_for_function("() => { const v = document.querySelector('video.htmlvideoplayer');"
                                       " return v && v.currentTime > 0.5; }", timeout=60_000)
                page.mouse.move(640, 400)
                page.mouse.move(650, 420)
                page.click(".btnSubtitles")
                page.click(".actionSheet button:has-text('English')")
                page.wait_for_timeout(1200)
                page.mouse.move(660, 430)  # show the on-screen controls
                page.wait_for_timeout(500)
                page.screenshot(path=str(args.out / "web-player.png"))
                page.evaluate("() => window.history.back()")
                page.wait_for_timeout(1000)

                page.evaluate("() => { window.location.hash = '#/dashboard'; }")
                page.wait_for_selector(".page:not(.hide) .activeDevices, .page:not(.hide) .serverInfo",
                                       state="attached")
                page.wait_for_timeout(2000)
                page.screenshot(path=str(args.out / "web-dashboard.png"))
                context.close()
        finally:
            stop_server(live)
    for name in ("web-home", "web-movie", "web-player", "web-dashboard"):
        print(args.out / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
