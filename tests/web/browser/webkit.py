"""Helpers for driving the real jellyfin-web 10.10.7 in Debian's Chromium against a real
Reelroom server (tests/web/ and bench/web_signin.py).

- ``find_web_tarball()`` / ``unpack_web_dist()``: the shared jellyfin-web build, unpacked once
  into a cache folder keyed by the tarball's sha256 (never into the project).
- ``make_web_media()``: the library the browser tests play (ffmpeg).
- ``launch_browser()``: Chromium through playwright with ``executable_path`` (no downloads).
- ``PageWatch``: collects a page's failed requests (status >= 400, network failures), console
  errors, uncaught exceptions and error toasts, and fails on any a test did not expect.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.mediagen import ffmpeg_binary, make_audio, make_image, make_srt, make_video, write_nfo

REPO = Path(__file__).resolve().parents[3]
TARBALL_NAME = "jellyfin-web-10.10.7-dist.tar.xz"
CHROMIUM = os.environ.get("REELROOM_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--autoplay-policy=no-user-gesture-required", "--disable-dev-shm-usage"]


def find_web_tarball() -> Path | None:
    """``REELROOM_WEB_DIST`` (a tarball or an unpacked folder), else ../shared/jellyfin-web/."""
    env = os.environ.get("REELROOM_WEB_DIST")
    if env:
        return Path(env) if Path(env).exists() else None
    for base in (REPO.parent, REPO.parent.parent):
        candidate = base / "shared" / "jellyfin-web" / TARBALL_NAME
        if candidate.is_file():
            return candidate
    return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def unpack_web_dist(source: Path) -> Path:
    """The unpacked dist folder (with ``index.html`` at its top). A folder is used as it is; a
    tarball is unpacked once into ``~/.cache/reelroom-tests/jellyfin-web-<sha256>``."""
    if source.is_dir():
        return source
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "reelroom-tests"
    target = cache_root / f"jellyfin-web-{_sha256(source)[:16]}"
    if (target / "index.html").is_file():
        return target
    cache_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=cache_root))
    try:
        with tarfile.open(source) as tar:
            tar.extractall(tmp, filter="data")
        top = tmp if (tmp / "index.html").is_file() else next(p.parent for p in tmp.rglob("index.html"))
        try:
            top.rename(target)
        except OSError:  # another process won the race
            if not (target / "index.html").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def chromium_available() -> bool:
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


def playwright_available() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def skip_reason() -> str | None:
    if find_web_tarball() is None:
        return f"needs the shared jellyfin-web build (../shared/jellyfin-web/{TARBALL_NAME} or REELROOM_WEB_DIST)"
    if not chromium_available():
        return f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)"
    if not playwright_available():
        return "needs the playwright Python package (the test extra)"
    return None


# -- media -------------------------------------------------------------------------------------

MOVIE_DIRECT = "Direct Play Movie"
MOVIE_HLS = "Transcoded Movie"
SUBTITLE_TEXT = "Reelroom subtitle line"


def make_web_media(root: Path) -> dict[str, Path]:
    """Movies (an H.264/AAC MP4 Chromium plays directly, with an external SRT; an HEVC + AC-3 MKV
    it cannot, which must go through HLS), a show with two episodes, and an album of three
    tagged MP3s with cover art. Returns the library folders {"movies", "shows", "music"}."""
    movies, shows, music = root / "movies", root / "shows", root / "music"
    small = {"width": 320, "height": 180, "fps": 24}

    direct = movies / f"{MOVIE_DIRECT} (2021)"
    make_video(direct / f"{MOVIE_DIRECT} (2021).mp4", seconds=60, **small)
    make_srt(direct / f"{MOVIE_DIRECT} (2021).en.srt", [(0, 60, SUBTITLE_TEXT)])
    make_image(direct / "poster.jpg", 200, 300, color="red")
    make_image(direct / "fanart.jpg", 640, 360, color="green")
    write_nfo(direct / "movie.nfo", "movie", title=MOVIE_DIRECT, year=2021, plot="A movie the browser plays as it is.",
              genres=["Drama"], studio="Test Studio", actors=[("Ada Actor", "Lead")], director="Dee Rector",
              mpaa="PG")

    hls = movies / f"{MOVIE_HLS} (2019)"
    one_track = make_video(hls / ".one-audio.mkv", seconds=60, vcodec="libx265", acodec="ac3", **small)
    _add_audio_track(one_track, hls / f"{MOVIE_HLS} (2019).mkv", language="fre", frequency=880)
    one_track.unlink()
    make_image(hls / "poster.jpg", 200, 300, color="blue")
    write_nfo(hls / "movie.nfo", "movie", title=MOVIE_HLS, year=2019, plot="HEVC and AC-3: the browser needs HLS.",
              genres=["Drama"], actors=[("Ada Actor", "Villain")])

    show = shows / "Test Show (2020)"
    write_nfo(show / "tvshow.nfo", "tvshow", title="Test Show", year=2020, plot="A show.", genres=["Comedy"])
    make_image(show / "poster.jpg", 200, 300, color="yellow")
    for ep in (1, 2):
        make_video(show / "Season 01" / f"Test Show S01E0{ep}.mp4", seconds=3, **small)

    cover = make_image(root / "covers" / "cover.jpg", 300, 300, color="purple")
    album = music / "Test Band" / "Test Album"
    for track in (1, 2, 3):
        make_audio(album / f"0{track} - Song {track}.mp3", seconds=8, cover=cover, frequency=300 + 100 * track,
                   tags={"title": f"Song {track}", "artist": "Test Band", "album_artist": "Test Band",
                         "album": "Test Album", "track": f"{track}/3", "date": "2003", "genre": "Rock"})
    shutil.copy(cover, album / "folder.jpg")
    return {"movies": movies, "shows": shows, "music": music}


def _add_audio_track(source: Path, target: Path, language: str, frequency: int) -> None:
    """``source`` with a second (AC-3) audio track in ``language``: for switching audio tracks."""
    subprocess.run([ffmpeg_binary(), "-hide_banner", "-loglevel", "error", "-y", "-i", str(source), "-f", "lavfi",
                    "-i", f"sine=frequency={frequency}:sample_rate=48000:duration=60", "-map", "0", "-map", "1:a",
                    "-c", "copy", "-c:a:1", "ac3", "-metadata:s:a:1", f"language={language}", "-shortest",
                    str(target)], check=True, capture_output=True, timeout=300)


def allow_media_root(data_dir: Path, root: Path) -> None:
    """Let the folder picker (and so the wizard's library step) browse ``root``."""
    config = data_dir / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "filesystem.json").write_text(json.dumps({"AllowedRoots": [str(root)]}), encoding="utf-8")


# -- browser -----------------------------------------------------------------------------------

def launch_browser(playwright, user_data_dir: Path):
    """A persistent Chromium context with a fresh profile folder (so nothing leaks between runs)."""
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
        viewport={"width": 1280, "height": 800}, locale="en-US", ignore_default_args=["--mute-audio"])


@dataclass
class Problem:
    kind: str
    text: str
    url: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.text} {self.url}".strip()


@dataclass
class Expected:
    """A problem a test expects, with the reason (e.g. "Jellyfin answers 404 here too")."""
    kind: str
    pattern: str
    reason: str

    def matches(self, p: Problem) -> bool:
        return p.kind == self.kind and re.search(self.pattern, f"{p.text} {p.url}") is not None


# What jellyfin-web 10.10.7 itself does wrong, the same against real Jellyfin 10.10.7: every page
# may show these. Anything else a page shows fails its test.
ALWAYS_EXPECTED = [
    Expected("requestfailed", r"net::ERR_ABORTED", "Chromium cancels media and image requests when the page moves on"),
    Expected("requestfailed", r"gstatic\.com/cv/js/sender", "jellyfin-web loads Google's Cast sender from the "
             "internet, which the tests do not have"),
    Expected("console", r"Failed to load resource: net::ERR_NAME_NOT_RESOLVED.*gstatic\.com/cv/js/sender",
             "the same Cast sender"),
    Expected("pageerror", r"Failed to execute 'scrollTo' on 'Element'.*ScrollBehavior",
             "jellyfin-web 10.10.7 passes behavior: null to scrollTo, which current Chromium rejects"),
    Expected("console", r"Translation key is missing from dictionary: (Music|Videos)\b",
             "jellyfin-web 10.10.7 asks its own dictionary for keys it does not have"),
]

# jellyfin-web's details page builds its poster card with data-src="null" when an item (a person,
# say) has no Primary image, and the browser fetches /web/null; Jellyfin answers 404 too.
NULL_IMAGE = [
    Expected("http", r"^404 GET .*/web/null$", "jellyfin-web requests 'null' for an item without an image"),
    Expected("console", r"status of 404 .*/web/null$", "the same request"),
]


@dataclass
class PageWatch:
    """Records what went wrong on a page since the last ``check()``."""
    base_url: str
    problems: list[Problem] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    inflight: int = 0
    last_activity: float = 0.0

    def attach(self, page) -> None:
        page.on("response", self._on_response)
        page.on("requestfailed", self._on_request_failed)
        page.on("requestfinished", self._on_request_done)
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.problems.append(Problem("pageerror", str(exc))))
        page.on("request", self._on_request)

    def _on_request(self, request) -> None:
        self.requests.append(request.url)
        if request.resource_type not in ("media", "websocket", "eventsource"):
            self.inflight += 1
        self.last_activity = time.monotonic()

    def _on_request_done(self, request) -> None:
        if request.resource_type not in ("media", "websocket", "eventsource"):
            self.inflight = max(0, self.inflight - 1)
        self.last_activity = time.monotonic()

    def settle(self, page, quiet: float = 0.6, timeout: float = 15.0) -> None:
        """Wait until the page made no request for ``quiet`` seconds and jellyfin-web's
        loading spinner is gone (or ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            page.wait_for_timeout(100)
            if self.inflight == 0 and time.monotonic() - self.last_activity >= quiet:
                busy = page.evaluate("() => !!document.querySelector('.docspinner.mdlSpinnerActive')")
                if not busy:
                    return

    def _on_response(self, response) -> None:
        if response.status >= 400:
            self.problems.append(Problem("http", f"{response.status} {response.request.method}", response.url))

    def _on_request_failed(self, request) -> None:
        self._on_request_done(request)
        self.problems.append(Problem("requestfailed", request.failure or "failed", request.url))

    def _on_console(self, msg) -> None:
        if msg.type == "error":
            loc = msg.location or {}
            self.problems.append(Problem("console", msg.text, loc.get("url", "")))

    def unexpected(self, expected: list[Expected] = ()) -> list[Problem]:
        allowed = [*ALWAYS_EXPECTED, *expected]
        return [p for p in self.problems if not any(e.matches(p) for e in allowed)]

    def check(self, where: str, expected: list[Expected] = ()) -> None:
        bad = self.unexpected(expected)
        self.problems.clear()
        assert not bad, f"{where}: unexpected problems:\n  " + "\n  ".join(map(str, bad))

    def reset(self) -> None:
        self.problems.clear()
        self.requests.clear()


def wait_until(predicate, timeout: float = 20, interval: float = 0.2, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {message}")
        time.sleep(interval)
