"""The official jellyfin-web 10.10.7, hosted by a real Reelroom server at /web/, driven in Debian's
Chromium: the startup wizard, sign-in, home, playing a movie directly and through HLS, subtitles,
an album, every dashboard, user-settings and browsing page, and sign-out.

One server and one browser page serve the whole module (the tests run in order and build on each
other; each one that needs an earlier step's state makes it itself when run alone). Every step
fails on any failed request (status >= 400 or a network error), console error, uncaught exception
or error toast it does not expect; webkit.ALWAYS_EXPECTED lists the few that jellyfin-web causes
itself, against real Jellyfin too."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import httpx
import pytest

from tests.conftest import LiveServer, auth_header
from tests.library_helpers import add_library_and_scan, wait_for_scan
from tests.web.browser import webkit
from tests.web.browser.webkit import NULL_IMAGE, Expected, PageWatch

pytestmark = pytest.mark.timeout(600)

ADMIN, PASSWORD = "admin", "s3cret!"

# Records every error toast jellyfin-web shows (they vanish after a few seconds).
TOAST_RECORDER = """
window.__reelroomToasts = [];
new MutationObserver((mutations) => {
  for (const m of mutations) for (const n of m.addedNodes) {
    if (n.nodeType !== 1) continue;
    const toasts = n.classList.contains('toast') ? [n] : [...n.querySelectorAll('.toast')];
    for (const t of toasts) window.__reelroomToasts.push(t.innerText);
  }
}).observe(document, {childList: true, subtree: true});
"""
OK_TOASTS = ("Settings saved.",)


@dataclass
class Web:
    live: LiveServer
    page: object
    watch: PageWatch
    server_id: str = ""
    ids: dict[str, str] = field(default_factory=dict)
    signed_in: bool = False

    @property
    def url(self) -> str:
        return self.live.url

    def api(self) -> httpx.Client:
        return self.live.admin()

    def goto_hash(self, route: str) -> None:
        """Navigate inside the single-page app, as a click on a link does."""
        self.page.evaluate("(h) => { window.location.hash = h; }", route)
        self.watch.settle(self.page)

    def toasts(self) -> list[str]:
        found = self.page.evaluate("() => { const t = window.__reelroomToasts || []; window.__reelroomToasts = []; return t; }")
        return [t for t in found if t.strip() not in OK_TOASTS]

    def check(self, where: str, expected: list[Expected] = ()) -> None:
        toasts = self.toasts()
        problems = self.watch.unexpected(list(expected))
        self.watch.problems.clear()
        lines = [str(p) for p in problems] + [f"toast: {t}" for t in toasts]
        assert not lines, f"{where}: unexpected problems:\n  " + "\n  ".join(lines)


@pytest.fixture(scope="module")
def web(fresh_web_server, browser) -> Web:
    browser.add_init_script(TOAST_RECORDER)
    page = browser.new_page()
    watch = PageWatch(fresh_web_server.url)
    watch.attach(page)
    yield Web(fresh_web_server, page, watch)
    page.close()


def _media(web: Web) -> dict:
    return web.live.extra["media"]


def _api_sign_in(web: Web) -> None:
    with web.live.client(device="web-tests-api") as c:
        r = c.post("/Users/AuthenticateByName", json={"Username": ADMIN, "Pw": PASSWORD})
        assert r.status_code == 200, r.text
        web.live.admin_token, web.live.admin_id = r.json()["AccessToken"], r.json()["User"]["Id"]


def ensure_set_up(web: Web) -> None:
    """The wizard done (through the API if test_startup_wizard did not run), the other two
    libraries added, and the ids the later tests use."""
    with httpx.Client(base_url=web.url, headers=auth_header()) as c:
        done = c.get("/System/Info/Public").json().get("StartupWizardCompleted")
    if not done:
        from tests.conftest import complete_wizard
        complete_wizard(web.live, ADMIN, PASSWORD)
    if not web.live.admin_token:
        _api_sign_in(web)
    with web.api() as c:
        names = {f["Name"] for f in c.get("/Library/VirtualFolders").json()}
    media = _media(web)
    for name, kind in (("Movies", "movies"), ("Shows", "tvshows"), ("Music", "music")):
        if name not in names:
            add_library_and_scan(web.live, name, kind, [media[kind if kind != "tvshows" else "shows"]])
    if web.ids:
        return
    with web.api() as c:
        web.server_id = c.get("/System/Info/Public").json()["Id"]
        items = c.get("/Items", params={"recursive": "true", "userId": web.live.admin_id}).json()["Items"]
        web.ids = {i["Name"]: i["Id"] for i in items}
        movie_ids = [web.ids[webkit.MOVIE_DIRECT], web.ids[webkit.MOVIE_HLS]]
        r = c.post("/Collections", params={"name": "Test Collection", "ids": ",".join(movie_ids)})
        assert r.status_code == 200, r.text
        web.ids["Test Collection"] = r.json()["Id"]
        songs = [web.ids["Song 1"], web.ids["Song 2"]]
        r = c.post("/Playlists", json={"Name": "Test Playlist", "Ids": songs, "UserId": web.live.admin_id,
                                       "MediaType": "Audio"})
        assert r.status_code == 200, r.text
        web.ids["Test Playlist"] = r.json()["Id"]
        for view in c.get("/UserViews", params={"userId": web.live.admin_id}).json()["Items"]:
            web.ids[f"view:{view['Name']}"] = view["Id"]
        web.ids["person"] = c.get("/Persons", params={"searchTerm": "Ada Actor"}).json()["Items"][0]["Id"]
        web.ids["artist"] = c.get("/Artists/AlbumArtists").json()["Items"][0]["Id"]
        web.ids["device"] = c.get("/Devices").json()["Items"][0]["Id"]
        web.ids["task"] = c.get("/ScheduledTasks").json()[0]["Id"]


def ensure_signed_in(web: Web) -> None:
    ensure_set_up(web)
    browser_sign_in(web)


def browser_sign_in(web: Web) -> None:
    """Sign the admin in through jellyfin-web's manual sign-in form (once per page)."""
    if web.signed_in:
        return
    page = web.page
    page.goto(f"{web.url}/web/")
    page.wait_for_selector("#txtManualName", state="visible")
    page.fill("#txtManualName", ADMIN)
    page.fill("#txtManualPassword", PASSWORD)
    page.click(".manualLoginForm .button-submit")
    page.wait_for_selector(".homePage:not(.hide) .section0 .card", state="visible")
    web.watch.settle(page)
    web.signed_in = True


def details(web: Web, item_id: str) -> str:
    return f"#/details?id={item_id}&serverId={web.server_id}"


# -- 1. the startup wizard ---------------------------------------------------------------------

def test_startup_wizard(web):
    page = web.page
    page.goto(f"{web.url}/")  # the server's root leads to the web app
    page.wait_for_url("**/web/#/wizardstart.html")
    page.click(".wizardStartForm .button-submit")
    page.wait_for_selector("#txtUsername", state="visible")
    # The page fills the form from GET /Startup/User when that answers: wait, or it overwrites ours.
    web.watch.settle(page)
    page.fill("#txtUsername", ADMIN)
    page.fill("#txtManualPassword", PASSWORD)
    page.fill("#txtPasswordConfirm", PASSWORD)
    web.watch.settle(page)
    assert page.input_value("#txtUsername") == ADMIN and page.input_value("#txtManualPassword") == PASSWORD
    page.click(".wizardUserForm .button-submit")
    page.wait_for_url("**/wizardlibrary.html")
    web.check("wizard: language and user")

    # A Movies library, through the dialog and the folder picker.
    page.click("text=Add Media Library")
    page.wait_for_selector("#selectCollectionType", state="visible")
    page.select_option("#selectCollectionType", "movies")
    page.fill("#txtValue", "Movies")
    page.click(".btnAddFolder")
    page.wait_for_selector("#txtDirectoryPickerPath", state="visible")
    page.fill("#txtDirectoryPickerPath", str(_media(web)["movies"]))
    page.click(".dialog:has(#txtDirectoryPickerPath) .button-submit")
    page.wait_for_selector(".folderList .listItem", state="visible")
    started = time.time()
    page.click(".dialog:has(#selectCollectionType) .btnSubmit")
    page.wait_for_selector(".page:not(.hide) .card:has-text('Movies')", state="visible")
    web.watch.settle(page)
    web.check("wizard: library step")

    for step in ("wizardsettings.html", "wizardremoteaccess.html", "wizardfinish.html"):
        page.click(".page:not(.hide) .button-submit")
        page.wait_for_url(f"**/{step}", timeout=60_000)
        page.wait_for_selector(".page:not(.hide) .button-submit", state="visible")
        web.watch.settle(page)
    page.click(".page:not(.hide) .button-submit")
    page.wait_for_selector("#txtManualName", state="visible", timeout=60_000)  # the wizard hands over to sign-in
    web.check("wizard: metadata, remote access, finish")

    with httpx.Client(base_url=web.url) as c:
        assert c.get("/System/Info/Public").json()["StartupWizardCompleted"] is True
    _api_sign_in(web)
    with web.api() as c:
        folders = c.get("/Library/VirtualFolders").json()
    assert [(f["Name"], f["CollectionType"], f["Locations"]) for f in folders] == [
        ("Movies", "movies", [str(_media(web)["movies"])])]
    wait_for_scan(web.live, started - 5)


# -- 2. sign in, 3. home -----------------------------------------------------------------------

def test_sign_in(web):
    ensure_set_up(web)
    ensure_signed_in(web)
    page = web.page
    assert "home.html" in page.url
    user = page.evaluate("() => window.ApiClient && window.ApiClient.getCurrentUserId()")
    assert user == web.live.admin_id
    web.check("sign-in and home")


def _wait_for_library_art(web: Web, timeout: float = 90) -> None:
    """Library tiles get their collage from the artwork task that follows a scan: wait until every
    library view has its Primary image, as a user who opens the app a little later sees it."""
    deadline = time.monotonic() + timeout
    with web.api() as c:
        while True:
            views = c.get("/UserViews", params={"userId": web.live.admin_id}).json()["Items"]
            bare = [v["Name"] for v in views if v.get("CollectionType") in ("movies", "music", "tvshows")
                    and "Primary" not in (v.get("ImageTags") or {})]
            if not bare:
                return
            assert time.monotonic() < deadline, f"no artwork for {bare} after {timeout} s"
            time.sleep(0.5)


def test_home_shows_libraries_with_images(web):
    ensure_signed_in(web)
    _wait_for_library_art(web)
    page = web.page
    page.reload()  # the home page shown at sign-in holds the views as they were then
    web.watch.settle(page)
    web.goto_hash("#/home.html")
    page.wait_for_selector(".homePage:not(.hide) .section0 .card", state="visible")
    tiles = page.evaluate("""() => [...document.querySelectorAll('.homePage:not(.hide) .section0 .card')].map(c => ({
        name: c.querySelector('.cardText') && c.querySelector('.cardText').innerText,
        image: (c.querySelector('.cardImageContainer') || {}).style && c.querySelector('.cardImageContainer').style.backgroundImage
            || (c.querySelector('.cardImageContainer') || {getAttribute: () => null}).getAttribute('data-src') }))""")
    assert {"Movies", "Music", "Shows"} <= {t["name"] for t in tiles}, tiles
    # Latest items: their posters load.
    page.wait_for_function("""() => [...document.querySelectorAll('.homePage:not(.hide) .cardImageContainer')]
        .some(e => (e.style.backgroundImage || '').includes('/Images/Primary'))""")
    posters = page.evaluate("""() => [...document.querySelectorAll('.homePage:not(.hide) .cardImageContainer')]
        .map(e => e.style.backgroundImage).filter(Boolean)""")
    assert any("/Images/Primary" in p for p in posters)
    missing = [t["name"] for t in tiles if t["name"] in ("Movies", "Music", "Shows")
               and (not t["image"] or "Images" not in t["image"])]
    assert not missing, f"library tiles without an image: {missing}"
    web.check("home")


# -- 4. play a movie, directly and through HLS ------------------------------------------------

VIDEO_STATE = """() => { const v = document.querySelector('video.htmlvideoplayer');
    return v && {t: v.currentTime, src: v.currentSrc || v.src, paused: v.paused, error: v.error && v.error.code}; }"""


def _play_from_details(web: Web, name: str) -> None:
    web.goto_hash(details(web, web.ids[name]))
    web.page.click(".itemDetailPage:not(.hide) .btnPlay")
    web.page.wait_for_function("() => { const v = document.querySelector('video.htmlvideoplayer'); "
                               "return v && v.currentTime > 0.3; }", timeout=60_000)


def _stop_video(web: Web) -> None:
    web.page.evaluate("() => window.history.back()")
    web.page.wait_for_selector(".itemDetailPage:not(.hide)", state="visible")
    web.watch.settle(web.page)


def _advances(web: Web, state_js: str, by: float = 1.5, timeout: float = 30) -> dict:
    start = web.page.evaluate(state_js)
    return webkit.wait_until(lambda: (s := web.page.evaluate(state_js)) and s["t"] >= start["t"] + by and s,
                             timeout=timeout, message=f"playback to advance by {by} s from {start}")


def test_play_movie_directly(web):
    ensure_signed_in(web)
    _play_from_details(web, webkit.MOVIE_DIRECT)
    state = _advances(web, VIDEO_STATE)
    assert "/stream.mp4" in state["src"] and "Static=true" in state["src"], state["src"]
    assert state["error"] is None
    web.check("direct play")
    _stop_video(web)
    web.check("after direct play")


def test_play_movie_through_hls(web):
    ensure_signed_in(web)
    _play_from_details(web, webkit.MOVIE_HLS)
    state = _advances(web, VIDEO_STATE)
    assert "master.m3u8" in state["src"] or any("master.m3u8" in u for u in web.watch.requests), state["src"]
    # Seek far ahead (45 s of 60; a transcode not there yet restarts at the seek position).
    web.page.evaluate("() => { document.querySelector('video.htmlvideoplayer').currentTime = 45; }")
    webkit.wait_until(lambda: web.page.evaluate(VIDEO_STATE)["t"] > 46.5, timeout=45,
                      message="playback to continue after seeking to 45 s")
    assert web.page.evaluate(VIDEO_STATE)["error"] is None
    web.check("HLS play and seek")
    _stop_video(web)
    web.check("after HLS play")


# -- 5. subtitles --------------------------------------------------------------------------------

SUBTITLE_STATE = """() => { const v = document.querySelector('video.htmlvideoplayer');
    if (!v) return null;
    const shown = [...v.textTracks].filter(t => t.mode === 'showing');
    const cues = shown.flatMap(t => [...(t.activeCues || [])].map(c => c.text));
    const custom = document.querySelector('.videoSubtitles');
    return {cues: cues, custom: custom ? custom.innerText : ''}; }"""


def _osd_menu(web: Web, button: str, choice: str) -> None:
    page = web.page
    page.mouse.move(640, 400)
    page.mouse.move(650, 420)
    page.click(f"{button}:visible")  # an earlier player's OSD may still be in the page, hidden
    page.click(f".actionSheet button:has-text('{choice}')")


def test_subtitles_on_and_off(web):
    ensure_signed_in(web)
    _play_from_details(web, webkit.MOVIE_DIRECT)
    _osd_menu(web, ".btnSubtitles", "English")

    def shown():
        s = web.page.evaluate(SUBTITLE_STATE)
        return s and (any(webkit.SUBTITLE_TEXT in c for c in s["cues"]) or webkit.SUBTITLE_TEXT in s["custom"])

    webkit.wait_until(shown, timeout=20, message="the subtitle line to show")
    _osd_menu(web, ".btnSubtitles", "Off")
    webkit.wait_until(lambda: not shown(), timeout=10, message="the subtitle line to go away")
    web.check("subtitles on and off")
    _stop_video(web)
    web.check("after subtitles")


# -- 6. music --------------------------------------------------------------------------------------

AUDIO_STATE = """() => { const a = document.querySelector('audio');
    return a && {t: a.currentTime, src: a.currentSrc || a.src, paused: a.paused, error: a.error && a.error.code}; }"""


def test_album_track_then_next(web):
    ensure_signed_in(web)
    page = web.page
    web.goto_hash(details(web, web.ids["Test Album"]))
    page.click(".itemDetailPage:not(.hide) .btnPlay")
    page.wait_for_function("() => { const a = document.querySelector('audio'); return a && a.currentTime > 0.5; }",
                           timeout=30_000)
    state = _advances(web, AUDIO_STATE, by=1.0)
    assert f"/Audio/{web.ids['Song 1']}/" in state["src"], state["src"]
    assert page.inner_text(".nowPlayingBar .nowPlayingBarText").startswith("Song 1")
    page.click(".nowPlayingBar .nextTrackButton")
    webkit.wait_until(lambda: f"/Audio/{web.ids['Song 2']}/" in (page.evaluate(AUDIO_STATE) or {}).get("src", ""),
                      message="the next track to load")
    _advances(web, AUDIO_STATE, by=1.0)
    assert page.inner_text(".nowPlayingBar .nowPlayingBarText").startswith("Song 2")
    page.click(".nowPlayingBar .previousTrackButton")  # back to the start of Song 2, or to Song 1
    page.wait_for_timeout(500)
    page.click(".nowPlayingBar .playPauseButton")
    webkit.wait_until(lambda: page.evaluate(AUDIO_STATE)["paused"], message="the pause")
    web.watch.settle(page)
    web.check("album playback")


# -- 7. every page -------------------------------------------------------------------------------

def _pages(web: Web) -> list[tuple[str, str, list[Expected]]]:
    uid, ids = web.live.admin_id, web.ids
    movies, shows, music = ids["view:Movies"], ids["view:Shows"], ids["view:Music"]
    dashboard = [
        ("dashboard", "#/dashboard"),
        ("general (and branding)", "#/dashboard/settings"),
        ("users", "#/dashboard/users"),
        ("user profile", f"#/dashboard/users/profile?userId={uid}"),
        ("user access", f"#/dashboard/users/access?userId={uid}"),
        ("user parental control", f"#/dashboard/users/parentalcontrol?userId={uid}"),
        ("user password", f"#/dashboard/users/password?userId={uid}"),
        ("new user", "#/dashboard/users/add"),
        ("libraries", "#/dashboard/libraries"),
        ("library display", "#/dashboard/libraries/display"),
        ("library metadata", "#/dashboard/libraries/metadata"),
        ("NFO settings", "#/dashboard/libraries/nfo"),
        ("Live TV", "#/dashboard/livetv"),
        ("DVR", "#/dashboard/recordings"),
        ("networking", "#/dashboard/networking"),
        ("transcoding", "#/dashboard/playback/transcoding"),
        ("resume", "#/dashboard/playback/resume"),
        ("streaming", "#/dashboard/playback/streaming"),
        ("trickplay", "#/dashboard/playback/trickplay"),
        ("devices", "#/dashboard/devices"),
        ("device", f"#/dashboard/devices/edit?id={ids['device']}"),
        ("activity", "#/dashboard/activity"),
        ("API keys", "#/dashboard/keys"),
        ("logs", "#/dashboard/logs"),
        ("scheduled tasks", "#/dashboard/tasks"),
        ("scheduled task", f"#/dashboard/tasks/edit?id={ids['task']}"),
        ("plugins", "#/dashboard/plugins"),
        ("plugin catalog", "#/dashboard/plugins/catalog"),
        ("plugin repositories", "#/dashboard/plugins/repositories"),
    ]
    settings = [
        ("settings menu", "#/mypreferencesmenu.html"),
        ("display settings", f"#/mypreferencesdisplay.html?userId={uid}"),
        ("home screen settings", f"#/mypreferenceshome.html?userId={uid}"),
        ("playback settings", f"#/mypreferencesplayback.html?userId={uid}"),
        ("subtitle settings", f"#/mypreferencessubtitles.html?userId={uid}"),
        ("controls settings", "#/mypreferencescontrols.html"),
        ("profile", f"#/userprofile.html?userId={uid}"),
        ("quick connect", "#/quickconnect"),
    ]
    screens = [
        ("home", "#/home.html"),
        ("favourites", "#/home.html?tab=1"),
        ("movies", f"#/movies.html?topParentId={movies}"),
        ("movie suggestions", f"#/movies.html?topParentId={movies}&tab=1"),
        ("movie collections", f"#/movies.html?topParentId={movies}&tab=3"),
        ("movie genres", f"#/movies.html?topParentId={movies}&tab=4"),
        ("shows", f"#/tv.html?topParentId={shows}"),
        ("show suggestions", f"#/tv.html?topParentId={shows}&tab=1"),
        ("show genres", f"#/tv.html?topParentId={shows}&tab=4"),
        ("music", f"#/music.html?topParentId={music}"),
        ("albums", f"#/music.html?topParentId={music}&tab=1"),
        ("album artists", f"#/music.html?topParentId={music}&tab=2"),
        ("artists", f"#/music.html?topParentId={music}&tab=3"),
        ("playlists tab", f"#/music.html?topParentId={music}&tab=4"),
        ("songs", f"#/music.html?topParentId={music}&tab=5"),
        ("movie", details(web, ids[webkit.MOVIE_DIRECT])),
        ("show", details(web, ids["Test Show"])),
        ("season", details(web, ids["Season 1"])),
        ("episode", details(web, ids["Test Show S01E01"])),
        ("album", details(web, ids["Test Album"])),
        ("artist", details(web, ids["artist"])),
        ("person", details(web, ids["person"])),
        ("collection", details(web, ids["Test Collection"])),
        ("playlist", details(web, ids["Test Playlist"])),
        ("live TV", "#/livetv.html"),
        ("search", "#/search.html"),
        ("search results", "#/search.html?query=movie"),
    ]
    if "view:Playlists" in ids:
        screens.append(("playlists", f"#/list.html?parentId={ids['view:Playlists']}&serverId={web.server_id}"))
    if "view:Collections" in ids:
        screens.append(("collections", f"#/list.html?parentId={ids['view:Collections']}&serverId={web.server_id}"))
    no_image = {"person": NULL_IMAGE}
    return [(name, route, no_image.get(name, [])) for name, route in dashboard + settings + screens]


def test_every_page_loads(web):
    ensure_signed_in(web)
    page = web.page
    failures: dict[str, str] = {}
    for name, route, expected in _pages(web):
        web.goto_hash(route)
        try:
            try:
                page.wait_for_function("() => !!document.querySelector('.page:not(.hide), .mainAnimatedPage:not(.hide)')",
                                       timeout=15_000)
            except Exception as exc:  # noqa: BLE001 - reported with the page's name below
                raise AssertionError(f"{name}: no page is showing") from exc
            web.watch.settle(page)
            web.check(name, expected)
        except AssertionError as exc:
            failures[name] = str(exc)
    assert not failures, "pages with problems:\n" + "\n".join(failures.values())


def test_library_options_dialog(web):
    ensure_signed_in(web)
    page = web.page
    web.goto_hash("#/dashboard/libraries")
    page.click(".page:not(.hide) .card:has-text('Movies') .btnCardMenu")
    page.click(".actionSheet button:has-text('Manage library')")
    page.wait_for_selector(".dialog .chkEnableRealtimeMonitor", state="attached")
    web.watch.settle(page)
    page.click(".dialog .btnSubmit")
    page.wait_for_selector(".dialog .chkEnableRealtimeMonitor", state="detached")
    web.watch.settle(page)
    web.check("library options dialog")


# After some saves jellyfin-web leaves a promise rejected with no reason at all (no request failed,
# no toast); Chromium reports it as an uncaught "undefined". Its cause was not found: it moves
# between pages from run to run. Listed here so that it cannot hide anything else.
SAVE_EXPECTED = [Expected("pageerror", r"^undefined $", "an unhandled rejection without a reason in "
                          "jellyfin-web's settings forms (no failed request goes with it)")]


def test_settings_pages_save(web):
    """Saving a settings form round-trips through the server without an error."""
    ensure_signed_in(web)
    page = web.page
    uid = web.live.admin_id
    for route in ("#/dashboard/settings", f"#/dashboard/users/profile?userId={uid}",
                  f"#/dashboard/users/access?userId={uid}", "#/dashboard/libraries/metadata",
                  "#/dashboard/networking", "#/dashboard/playback/resume",
                  f"#/mypreferencesdisplay.html?userId={uid}", f"#/mypreferenceshome.html?userId={uid}",
                  f"#/mypreferencesplayback.html?userId={uid}", f"#/mypreferencessubtitles.html?userId={uid}"):
        web.goto_hash(route)
        web.watch.settle(page)
        page.locator(".page:not(.hide) .button-submit:visible").first.click()
        web.watch.settle(page)
        web.check(f"saving {route}", SAVE_EXPECTED)


# -- 8. sign out -----------------------------------------------------------------------------------

def test_sign_out(web):
    ensure_signed_in(web)
    page = web.page
    token = page.evaluate("() => window.ApiClient.accessToken()")
    web.goto_hash("#/mypreferencesmenu.html")
    page.click(".page:not(.hide) .btnLogout")
    page.wait_for_selector("#txtManualName, .manualLoginForm, #divUsers", state="attached")
    web.watch.settle(page)
    web.signed_in = False
    # Dashboard pages visited before keep polling the scheduled tasks; after sign-out the poll has
    # no valid token any more and gets the 401 that Jellyfin gives too.
    web.check("sign-out", [
        Expected("http", r"^401 GET .*/ScheduledTasks\?IsEnabled=true", "a dashboard poll after sign-out"),
        Expected("console", r"status of 401 .*/ScheduledTasks\?IsEnabled=true", "the same poll"),
        Expected("pageerror", r"^Response $", "jellyfin-web does not catch that poll's 401"),
        Expected("http", r"^401 POST .*/Sessions/Playing", "a player's last report racing the sign-out"),
        Expected("console", r"status of 401 .*/Sessions/Playing", "the same report"),
    ])
    with httpx.Client(base_url=web.url, headers=auth_header(token)) as c:
        assert c.get("/Users/Me").status_code == 401  # the browser's token is gone
