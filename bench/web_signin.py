"""Time from pressing "Sign In" in jellyfin-web to a painted home screen, against Reelroom.

    .venv/bin/python bench/web_signin.py [--runs 5] [--web-dist PATH]

A real Reelroom server on 127.0.0.1 hosts the shared jellyfin-web 10.10.7 build (or
``--web-dist``/``REELROOM_WEB_DIST``) over a small ffmpeg-made library (movies, a show, an album);
Debian's Chromium (headless, through playwright) signs in. Each run measures in the page, from the
click on Sign In until the home screen's "My Media" tiles and the "Recently added" posters are
laid out and every card image in view has loaded, then two animation frames (so it is painted):

- cold: a fresh browser profile each run (nothing cached; the web app's files come from the server);
- warm: the same profile signing in again after signing out (files cached, as on a second visit).

It also prints the requests and bytes the sign-in itself caused, and the server-side time to
answer them (the sum of the API requests' durations).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conftest import complete_wizard, start_server, stop_server  # noqa: E402
from tests.library_helpers import add_library_and_scan  # noqa: E402
from tests.web.browser import webkit  # noqa: E402

PAINTED = """() => new Promise((resolve) => {
  const check = () => {
    const page = document.querySelector('.homePage:not(.hide)');
    const tiles = page ? page.querySelectorAll('.section0 .card') : [];
    const inView = page ? [...page.querySelectorAll('.cardImageContainer')].filter(e => {
      const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight && r.width > 0; }) : [];
    // jellyfin-web drops data-src from a lazy image once it has loaded it.
    const posters = inView.filter(e => (e.style.backgroundImage || '').includes('url('));
    const pending = inView.filter(e => e.hasAttribute('data-src'));
    if (tiles.length >= 3 && posters.length > 0 && pending.length === 0) {
      requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())));
    } else {
      setTimeout(check, 5);
    }
  };
  check();
})"""


def sign_in_once(page, url: str, counters: dict) -> float:
    page.goto(f"{url}/web/")
    page.wait_for_selector("#txtManualName", state="visible")
    page.fill("#txtManualName", "admin")
    page.fill("#txtManualPassword", "s3cret!")
    page.wait_for_timeout(300)  # let the login page finish its own requests
    counters.update(requests=0, bytes=0)
    t0 = page.evaluate("() => performance.now()")
    page.click(".manualLoginForm .button-submit")
    t1 = page.evaluate(PAINTED)
    return (t1 - t0) / 1000


def sign_out(page) -> None:
    page.evaluate("() => { window.location.hash = '#/mypreferencesmenu.html'; }")
    page.click(".page:not(.hide) .btnLogout")
    page.wait_for_selector("#txtManualName", state="visible")


def fmt(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    return (f"p50 {statistics.median(ms):7.0f} ms   min {ms[0]:7.0f} ms   max {ms[-1]:7.0f} ms   "
            f"(n={len(ms)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--web-dist", type=Path)
    args = parser.parse_args()
    source = args.web_dist or webkit.find_web_tarball()
    if source is None or not webkit.chromium_available() or not webkit.playwright_available():
        print(webkit.skip_reason() or f"no jellyfin-web build at {source}")
        return 2
    from playwright.sync_api import sync_playwright

    dist = webkit.unpack_web_dist(source)
    with tempfile.TemporaryDirectory(prefix="reelroom-bench-web-") as tmp:
        root = Path(tmp)
        media = webkit.make_web_media(root / "media")
        live = start_server(root / "data", web_dir=dist)
        try:
            complete_wizard(live)
            add_library_and_scan(live, "Movies", "movies", [media["movies"]])
            add_library_and_scan(live, "Shows", "tvshows", [media["shows"]])
            add_library_and_scan(live, "Music", "music", [media["music"]])
            cold: list[float] = []
            warm: list[float] = []
            counters = {"requests": 0, "bytes": 0}
            traffic: list[tuple[int, int]] = []
            with sync_playwright() as p:
                for run in range(args.runs):
                    context = webkit.launch_browser(p, root / f"profile-{run}")
                    page = context.new_page()

                    def on_finished(request, _counters=counters):
                        _counters["requests"] += 1
                        try:
                            _counters["bytes"] += request.sizes()["responseBodySize"]
                        except Exception:  # noqa: BLE001 - a request without sizes counts 0 bytes
                            pass

                    page.on("requestfinished", on_finished)
                    cold.append(sign_in_once(page, live.url, counters))
                    page.wait_for_timeout(500)
                    traffic.append((counters["requests"], counters["bytes"]))
                    sign_out(page)
                    warm.append(sign_in_once(page, live.url, counters))
                    context.close()
        finally:
            stop_server(live)
    print("jellyfin-web 10.10.7 on Reelroom: Sign In pressed -> home screen painted (headless Chromium, loopback)")
    print(f"  cold (fresh profile):      {fmt(cold)}")
    print(f"  warm (signed in before):   {fmt(warm)}")
    reqs = statistics.median(r for r, _ in traffic)
    kib = statistics.median(b for _, b in traffic) / 1024
    print(f"  sign-in traffic (cold):    {reqs:.0f} requests, {kib:.0f} KiB (median, up to 0.5 s after paint)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
