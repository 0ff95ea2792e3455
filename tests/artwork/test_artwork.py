"""Artwork made offline against a real server and real media (tests/mediagen.py): frames grabbed
from videos (black openings skipped), collages for libraries, views, playlists, collections and
genres, album covers for artists, PrimaryImageItemId on VirtualFolders only when the image
exists; the images are decoded with Pillow, and the DTOs carry the tags and BlurHashes."""

from __future__ import annotations

import base64
import io
import json
import os
import time

import pytest
from PIL import Image, ImageStat

from server.artwork.frames import dark_share
from tests.conftest import ON_POSTGRES, LiveServer, complete_wizard, outside_write, start_server, stop_server
from tests.library_helpers import (
    add_library_and_scan,
    allow_roots,
    refresh_and_wait,
    wait_for_artwork,
    wait_for_scan,
)
from tests.mediagen import make_audio, make_image, make_video, write_nfo


def run_artwork(live: LiveServer, timeout: float = 120) -> dict:
    """Have an artwork run that starts after now, wait until it (and any run it asks for) has
    ended, and return the task's result. A run a scan asked for that has not started yet
    (debounced: the task shows Idle meanwhile) is that run; a run already going may have read
    the state before now, so it ends first and a new one is started. Starting a second run
    while one is due would give two runs, and ``artwork.last`` the later one's."""
    art = live.ctx.artwork
    deadline = time.monotonic() + timeout

    def wait(condition) -> None:
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError("the artwork task did not finish")
            time.sleep(0.05)

    wait(lambda: not art.running)
    runs = art.runs
    if not art.due:
        with live.admin() as c:
            task = next(t for t in c.get("/ScheduledTasks").json() if t["Key"] == "RefreshArtwork")
            assert c.post(f"/ScheduledTasks/Running/{task['Id']}").status_code == 204
    wait(lambda: art.runs > runs and not art.pending)
    wait_for_artwork(live, timeout=max(deadline - time.monotonic(), 1))  # nothing more asked for
    with live.admin() as c:
        task = next(t for t in c.get("/ScheduledTasks").json() if t["Key"] == "RefreshArtwork")
    last = task.get("LastExecutionResult") or {}
    assert last.get("Status") == "Completed", last.get("ErrorMessage")
    return last


def decode(content: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(content))
    img.load()
    return img


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    root = tmp_path_factory.mktemp("artwork")
    movies = root / "Movies"
    make_video(movies / "Bright (2020)" / "Bright (2020).mkv", seconds=10, width=320, height=240, acodec=None)
    write_nfo(movies / "Bright (2020)" / "Bright (2020).nfo", "movie", title="Bright", genres=["Drama"])
    # black for the first 3.5 s: 10% (1 s) and 25% (2.5 s) are black, 40% (4 s) is not
    make_video(movies / "Dark Start (2021)" / "Dark Start (2021).mkv", seconds=10, width=320, height=240,
               acodec=None, black_seconds=3.5)
    make_video(movies / "Poster Movie (2019)" / "Poster Movie (2019).mkv", seconds=4, acodec=None)
    make_image(movies / "Poster Movie (2019)" / "poster.jpg", 300, 450, color="red")
    write_nfo(movies / "Poster Movie (2019)" / "Poster Movie (2019).nfo", "movie", title="Poster Movie",
              genres=["Drama"])
    music = root / "Music"
    cover = make_image(root / "cover.jpg", 500, 500, color="green")
    album = music / "Artist A" / "Album One"
    make_audio(album / "01 - First.mp3", cover=cover, tags={
        "title": "First", "artist": "Artist A", "album_artist": "Artist A", "album": "Album One", "track": "1",
        "genre": "Rock", "date": "2020"})
    make_audio(album / "02 - Second.mp3", cover=cover, tags={
        "title": "Second", "artist": "Guest B", "album_artist": "Artist A", "album": "Album One", "track": "2",
        "genre": "Rock", "date": "2020"})
    (root / "Empty").mkdir()
    server = start_server(root / "data")
    complete_wizard(server)
    server.extra.update(root=root, movies=movies, cover=cover)
    server.extra["movies_id"] = add_library_and_scan(server, "Movies", "movies", [movies])
    server.extra["music_id"] = add_library_and_scan(server, "Music", "music", [music])
    server.extra["empty_id"] = add_library_and_scan(server, "Empty", "homevideos", [root / "Empty"])
    server.extra["first_run"] = run_artwork(server)
    yield server
    stop_server(server)


def _items(live: LiveServer, **params) -> list[dict]:
    with live.admin() as c:
        r = c.get("/Items", params={"recursive": "true", "userId": live.admin_id,
                                    "fields": "PrimaryImageAspectRatio,Path", **params})
        assert r.status_code == 200, r.text
        return r.json()["Items"]


def _movie(live: LiveServer, name: str) -> dict:
    return next(m for m in _items(live, includeItemTypes="Movie") if m["Name"] == name)


def _image(live: LiveServer, path: str, **params) -> Image.Image:
    with live.admin() as c:
        r = c.get(path, params=params)
        assert r.status_code == 200, (path, r.status_code, r.text[:200])
        return decode(r.content)


def _luma_mean(img: Image.Image) -> float:
    gray = img.convert("L")
    hist = gray.histogram()
    return sum(i * n for i, n in enumerate(hist)) / max(1, sum(hist))


def test_videos_without_art_get_a_frame_with_blurhash(live):
    for name in ("Bright", "Dark Start"):
        movie = _movie(live, name)
        tag = movie["ImageTags"]["Primary"]
        assert movie["ImageBlurHashes"]["Primary"][tag]
        assert movie["PrimaryImageAspectRatio"] == pytest.approx(320 / 240)
        img = _image(live, f"/Items/{movie['Id']}/Images/Primary", tag=tag)
        assert img.size == (320, 240)
        assert _luma_mean(img) > 40, f"{name}: the frame is (nearly) black"
    data = live.data_dir / "metadata" / "items"
    frames = list(data.rglob("frame-*.jpg"))
    assert len(frames) == 2
    # the dark opening was skipped: the stored frame is not near-black
    dark = _movie(live, "Dark Start")
    stored = next(p for p in frames if dark["Id"] in str(p))
    assert dark_share(stored)[0] < 0.98


def test_sidecar_art_is_kept_and_no_frame_grabbed(live):
    movie = _movie(live, "Poster Movie")
    img = _image(live, f"/Items/{movie['Id']}/Images/Primary")
    assert img.size == (300, 450)
    assert not list((live.data_dir / "metadata" / "items").rglob(f"{movie['Id']}/frame-*"))


def test_library_collage_and_virtual_folders(live):
    with live.admin() as c:
        folders = {f["Name"]: f for f in c.get("/Library/VirtualFolders").json()}
    assert folders["Movies"]["PrimaryImageItemId"] == live.extra["movies_id"]
    assert folders["Music"]["PrimaryImageItemId"] == live.extra["music_id"]
    assert "PrimaryImageItemId" not in folders["Empty"]  # nothing to show: no broken image
    img = _image(live, f"/Items/{live.extra['movies_id']}/Images/Primary")
    assert img.size == (960, 540)
    with live.admin() as c:
        views = c.get(f"/Users/{live.admin_id}/Views").json()["Items"]
    movies = next(v for v in views if v["Name"] == "Movies")
    tag = movies["ImageTags"]["Primary"]
    assert movies["ImageBlurHashes"]["Primary"][tag]
    assert "Primary" not in next(v for v in views if v["Name"] == "Empty").get("ImageTags", {})
    with live.admin() as c:
        assert c.get(f"/Items/{live.extra['empty_id']}/Images/Primary").status_code == 404


def test_artists_get_an_album_cover(live):
    artist = next(a for a in _items(live, includeItemTypes="MusicArtist") if a["Name"] == "Artist A")
    assert artist["ImageTags"]["Primary"] and artist["ImageBlurHashes"]["Primary"]
    img = _image(live, f"/Items/{artist['Id']}/Images/Primary")
    assert img.size == (500, 500)
    # an artist met only in a track's tags (no row of its own): by name
    with live.admin() as c:
        guest = c.get("/Artists/Guest B", params={"userId": live.admin_id})
        assert guest.status_code == 200, guest.text
        guest = guest.json()
    tag = guest["ImageTags"]["Primary"]
    assert guest["ImageBlurHashes"]["Primary"][tag]
    assert _image(live, "/Artists/Guest B/Images/Primary/0").size == (500, 500)
    assert _image(live, f"/Items/{guest['Id']}/Images/Primary").size == (500, 500)


def test_genre_collages(live):
    with live.admin() as c:
        drama = c.get("/Genres/Drama", params={"userId": live.admin_id}).json()
        rock = c.get("/MusicGenres/Rock", params={"userId": live.admin_id}).json()
        listed = c.get("/Genres", params={"userId": live.admin_id, "parentId": live.extra["movies_id"]}).json()
    assert drama["ImageTags"]["Primary"] and drama["ImageBlurHashes"]["Primary"]
    assert next(g for g in listed["Items"] if g["Name"] == "Drama")["ImageTags"]["Primary"] == drama["ImageTags"]["Primary"]
    assert _image(live, "/Genres/Drama/Images/Primary").size == (600, 600)
    assert _image(live, f"/Items/{drama['Id']}/Images/Primary").size == (600, 600)
    assert rock["ImageTags"]["Primary"]
    assert _image(live, "/MusicGenres/Rock/Images/Primary").size == (600, 600)


def test_playlist_and_collection_collages(live):
    bright, poster = _movie(live, "Bright"), _movie(live, "Poster Movie")
    with live.admin() as c:
        r = c.post("/Playlists", json={"Name": "Evening", "Ids": [bright["Id"], poster["Id"]],
                                       "UserId": live.admin_id, "MediaType": "Video", "IsPublic": True})
        assert r.status_code == 200, r.text
        playlist_id = r.json()["Id"]
        r = c.post("/Collections", params={"name": "Pair", "ids": f"{bright['Id']},{poster['Id']}"})
        assert r.status_code == 200, r.text
        collection_id = r.json()["Id"]
    run_artwork(live)
    with live.admin() as c:
        playlist = c.get(f"/Items/{playlist_id}", params={"userId": live.admin_id}).json()
        collection = c.get(f"/Items/{collection_id}", params={"userId": live.admin_id}).json()
        views = c.get(f"/Users/{live.admin_id}/Views").json()["Items"]
    assert playlist["ImageTags"]["Primary"] and collection["ImageTags"]["Primary"]
    square = _image(live, f"/Items/{playlist_id}/Images/Primary")
    assert square.size == (600, 600)
    # two sources in a 2x2 grid, repeated in turn: top-left = bottom-right != top-right = bottom-left
    def cell(x: int, y: int) -> tuple[float, ...]:
        return tuple(ImageStat.Stat(square.crop((x, y, x + 300, y + 300))).mean)

    def close(a, b) -> bool:
        return all(abs(p - q) < 6 for p, q in zip(a, b, strict=True))

    assert close(cell(0, 0), cell(300, 300)) and close(cell(300, 0), cell(0, 300))
    assert not close(cell(0, 0), cell(300, 0))
    assert _image(live, f"/Items/{collection_id}/Images/Primary").size == (600, 900)
    for view in views:
        if view["Name"] in ("Playlists", "Collections"):
            assert view["ImageTags"]["Primary"], view
            assert _image(live, f"/Items/{view['Id']}/Images/Primary").size == (960, 540)


def test_nothing_redone_when_nothing_changed(live):
    first = live.ctx.artwork.last
    run_artwork(live)
    again = live.ctx.artwork.last
    assert again.frames == 0 and again.collages == 0 and again.covers == 0
    assert again.collages_unchanged >= 4
    assert first is not again


def test_frames_survive_rescans_and_are_redone_when_the_file_changes(live):
    bright = _movie(live, "Bright")
    tag = bright["ImageTags"]["Primary"]
    with live.admin() as c:  # a forced refresh re-resolves and rewrites the rows
        assert c.post(f"/Items/{live.extra['movies_id']}/Refresh").status_code == 204
    refresh_and_wait(live)  # the forced pass was queued on the same RefreshLibrary run
    assert _movie(live, "Bright")["ImageTags"]["Primary"] == tag
    path = live.extra["movies"] / "Bright (2020)" / "Bright (2020).mkv"
    make_video(path, seconds=6, width=400, height=300, acodec=None)
    refresh_and_wait(live)
    changed = _movie(live, "Bright")
    assert changed.get("ImageTags", {}).get("Primary") != tag  # the stale frame went with the old file
    run_artwork(live)
    changed = _movie(live, "Bright")
    assert changed["ImageTags"]["Primary"] != tag
    assert _image(live, f"/Items/{changed['Id']}/Images/Primary").size == (400, 300)
    assert len(list((live.data_dir / "metadata" / "items").rglob(f"{changed['Id']}/frame-*.jpg"))) == 1


def test_library_collage_redone_after_a_library_change(live):
    library = live.extra["movies_id"]
    with live.admin() as c:
        before = c.get(f"/Items/{library}", params={"userId": live.admin_id}).json()["ImageTags"]["Primary"]
    folder = live.extra["movies"] / "New Arrival (2024)"
    make_video(folder / "New Arrival (2024).mkv", seconds=3, acodec=None)
    make_image(folder / "poster.jpg", 300, 450, color="yellow")
    refresh_and_wait(live)
    run_artwork(live)
    with live.admin() as c:
        after = c.get(f"/Items/{library}", params={"userId": live.admin_id}).json()["ImageTags"]["Primary"]
    assert after != before
    assert len(list((live.data_dir / "metadata" / "items" / library[:2] / library).glob("collage-*.jpg"))) == 1


def test_user_upload_wins_and_stays(live):
    dark = _movie(live, "Dark Start")
    frame_tag = dark["ImageTags"]["Primary"]
    upload = io.BytesIO()
    Image.new("RGB", (200, 300), (10, 20, 250)).save(upload, "JPEG")
    with live.admin() as c:
        r = c.post(f"/Items/{dark['Id']}/Images/Primary", content=base64.b64encode(upload.getvalue()),
                   headers={"Content-Type": "image/jpeg"})
        assert r.status_code == 204, r.text
        lib = live.extra["music_id"]
        r = c.post(f"/Items/{lib}/Images/Primary", content=base64.b64encode(upload.getvalue()),
                   headers={"Content-Type": "image/jpeg"})
        assert r.status_code == 204, r.text
    run_artwork(live)
    refresh_and_wait(live)
    dark = _movie(live, "Dark Start")
    assert dark["ImageTags"]["Primary"] != frame_tag
    assert _image(live, f"/Items/{dark['Id']}/Images/Primary").size == (200, 300)
    assert _image(live, f"/Items/{live.extra['music_id']}/Images/Primary").size == (200, 300)
    assert not list((live.data_dir / "metadata" / "items").rglob(f"{dark['Id']}/frame-*.jpg"))
    assert not list((live.data_dir / "metadata" / "items").rglob(f"{live.extra['music_id']}/collage-*.jpg"))


def test_screen_grabber_can_be_turned_off(live, tmp_path):
    # The fetcher is off from the library's creation: the artwork run that follows the first
    # scan must already honour it (turning it off later keeps frames grabbed before, as in
    # Jellyfin, and would race that run).
    folder = tmp_path / "Clips"
    make_video(folder / "Clip One.mkv", seconds=3, acodec=None)
    off = {"TypeOptions": [{"Type": "Video", "ImageFetchers": [], "MetadataFetchers": []}]}
    library = add_library_and_scan(live, "Clips", "homevideos", [folder], options=off)
    with live.admin() as c:
        folders = c.get("/Library/VirtualFolders").json()
        stored = next(f for f in folders if f["Name"] == "Clips")["LibraryOptions"]
        available = c.get("/Libraries/AvailableOptions", params={"libraryContentType": "homevideos"}).json()
    assert [t for t in stored["TypeOptions"] if t["Type"] == "Video"][0]["ImageFetchers"] == []
    assert "Screen Grabber" in [f["Name"] for t in available["TypeOptions"] if t["Type"] == "Video"
                                for f in t["ImageFetchers"]]
    run_artwork(live)
    clip = next(i for i in _items(live, parentId=library) if i["Name"] == "Clip One")
    assert "Primary" not in (clip.get("ImageTags") or {})
    assert os.path.isdir(folder)


def test_a_picture_in_the_genre_folder_wins_over_the_collage(live):
    with live.admin() as c:
        drama = c.get("/Genres/Drama", params={"userId": live.admin_id}).json()
    collage_tag = drama["ImageTags"]["Primary"]
    generated = live.data_dir / "metadata" / "generated" / "Genre" / drama["Id"][:2] / drama["Id"]
    assert list(generated.glob("collage-*.jpg"))
    upload = io.BytesIO()
    Image.new("RGB", (123, 77), (200, 200, 0)).save(upload, "PNG")
    with live.admin() as c:
        r = c.post(f"/Items/{drama['Id']}/Images/Primary", content=base64.b64encode(upload.getvalue()),
                   headers={"Content-Type": "image/png"})
        assert r.status_code == 204, r.text
    assert _image(live, "/Genres/Drama/Images/Primary").size == (123, 77)  # served at once
    run_artwork(live)
    with live.admin() as c:
        drama = c.get("/Genres/Drama", params={"userId": live.admin_id}).json()
    tag = drama["ImageTags"]["Primary"]
    assert tag != collage_tag and drama["ImageBlurHashes"]["Primary"][tag]
    assert _image(live, f"/Items/{drama['Id']}/Images/Primary", tag=tag).size == (123, 77)
    assert not list(generated.glob("collage-*.jpg"))  # the replaced collage is gone from disk


def test_a_file_ffmpeg_cannot_read_is_not_tried_again_after_a_restart(tmp_path):
    """A frame grab that failed is remembered across restarts (data/metadata/generated), so a
    broken file does not cost an ffmpeg run at every start; a changed file is tried again."""
    folder = tmp_path / "Clips"
    clip = make_video(folder / "Broken Clip.mkv", seconds=3, acodec=None)
    server = start_server(tmp_path / "data")
    try:
        complete_wizard(server)
        allow_roots(server, folder)
        started = time.time()
        no_grabber = {"EnableRealtimeMonitor": False,
                      "TypeOptions": [{"Type": "Video", "ImageFetchers": [], "MetadataFetchers": []}]}
        with server.admin() as c:
            r = c.post("/Library/VirtualFolders", params={"name": "Clips", "collectionType": "homevideos",
                                                          "refreshLibrary": "true", "paths": [str(folder)]},
                       json={"LibraryOptions": no_grabber})
            assert r.status_code == 204, r.text
        wait_for_scan(server, started)
        wait_for_artwork(server)  # the run the scan asked for, before the options change under it
        # the file goes bad in place: same size and mtime, so the scan keeps its row as it is
        stat = clip.stat()
        clip.write_bytes(b"\x00not a video" * (stat.st_size // 12) + b"\x00" * (stat.st_size % 12))
        os.utime(clip, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        with server.admin() as c:
            library = next(f for f in c.get("/Library/VirtualFolders").json() if f["Name"] == "Clips")
            options = {**library["LibraryOptions"], "TypeOptions": []}  # the screen grabber back on
            r = c.post("/Library/VirtualFolders/LibraryOptions", json={"Id": library["ItemId"], "LibraryOptions": options})
            assert r.status_code == 204, r.text
        run_artwork(server)
        assert server.ctx.artwork.last.frames_failed == 1
        remembered = server.data_dir / "metadata" / "generated" / "frame-failures.json"
        assert len(json.loads(remembered.read_text())) == 1
        run_artwork(server)  # the same process: not tried again
        assert (server.ctx.artwork.last.frames_failed, server.ctx.artwork.last.frames_known_failed) == (0, 1)
    finally:
        stop_server(server)

    token, admin_id = server.admin_token, server.admin_id
    server = start_server(tmp_path / "data")
    server.admin_token, server.admin_id = token, admin_id  # tokens outlive a restart
    try:
        # the start's own run may skip (nothing changed since the last complete run); let it end,
        # or run_artwork below could take that skipped run for the one it asked for
        _startup_run(server)
        run_artwork(server)  # after a restart: still not tried again
        assert (server.ctx.artwork.last.frames_failed, server.ctx.artwork.last.frames_known_failed) == (0, 1)
        make_video(clip, seconds=5, width=400, height=300, acodec=None)  # a new file: tried again
        refresh_and_wait(server)
        run_artwork(server)
        last = server.ctx.artwork.last
        assert (last.frames, last.frames_failed, last.frames_known_failed) == (1, 0, 0)
        assert json.loads(remembered.read_text()) == {}
        with server.admin() as c:
            items = c.get("/Items", params={"recursive": "true", "userId": server.admin_id,
                                            "includeItemTypes": "Video"}).json()["Items"]
        assert "Primary" in next(i for i in items if i["Name"] == "Broken Clip")["ImageTags"]
    finally:
        stop_server(server)


def _startup_run(server: LiveServer, timeout: float = 120):
    """The run a start makes (and any a start's scan asks for), once ended: ``artwork.last``."""
    art = server.ctx.artwork
    deadline = time.monotonic() + timeout
    while art.runs < 1 or art.pending:
        if time.monotonic() > deadline:
            raise AssertionError("the start's artwork run did not end")
        time.sleep(0.05)
    wait_for_artwork(server, timeout=max(deadline - time.monotonic(), 1))
    return art.last


def test_a_restart_on_an_unchanged_library_does_no_work_and_a_change_is_still_picked_up(tmp_path):
    """A complete run remembers a cheap fingerprint of what it read (data/metadata/generated/
    last-run.json); the run a start makes on an unchanged library reads nothing more and says so
    in the log. A change the server made (an image deleted) drops what was remembered, so the
    next start works again; a change behind the server's back that the fingerprint sees (a
    by-name row gone) is redone too, and a new video found by the start's scan gets its frame."""
    folder = tmp_path / "Movies"
    make_video(folder / "Lone (2020)" / "Lone (2020).mkv", seconds=4, width=320, height=240, acodec=None)
    write_nfo(folder / "Lone (2020)" / "Lone (2020).nfo", "movie", title="Lone", genres=["Western"])
    data = tmp_path / "data"
    remembered = data / "metadata" / "generated" / "last-run.json"
    log_file = data / "log" / "reelroom.log"

    def restart(previous: LiveServer) -> LiveServer:
        token, admin_id = previous.admin_token, previous.admin_id
        stop_server(previous)
        server = start_server(data)
        server.admin_token, server.admin_id = token, admin_id  # tokens outlive a restart
        return server

    def lone(server: LiveServer) -> dict:
        with server.admin() as c:
            items = c.get("/Items", params={"recursive": "true", "userId": server.admin_id,
                                            "includeItemTypes": "Movie"}).json()["Items"]
        return next(i for i in items if i["Name"] == "Lone")

    server = start_server(data)
    try:
        complete_wizard(server)
        add_library_and_scan(server, "Movies", "movies", [folder])
        wait_for_artwork(server)
        assert server.ctx.artwork.last.frames == 1 and not server.ctx.artwork.last.skipped
        assert "Primary" in lone(server)["ImageTags"]
        assert remembered.is_file()

        # 1. unchanged: the start's run does nothing and says so
        server = restart(server)
        last = _startup_run(server)
        assert last.skipped and (last.frames, last.collages, last.collages_unchanged, last.covers) == (0, 0, 0, 0)
        assert "nothing changed since the last complete run" in log_file.read_text(encoding="utf-8")
        assert "Primary" in lone(server)["ImageTags"]
        assert remembered.is_file()  # the start's own work (its scan of the unchanged folder) kept it
        server = restart(server)  # and so the next start skips again
        assert _startup_run(server).skipped
        # a write of an input that asks for no run (a library's options) drops it too
        with server.admin() as c:
            library = next(f for f in c.get("/Library/VirtualFolders").json() if f["Name"] == "Movies")
            options = {**library["LibraryOptions"], "EnableRealtimeMonitor": False}
            r = c.post("/Library/VirtualFolders/LibraryOptions", json={"Id": library["ItemId"], "LibraryOptions": options})
            assert r.status_code == 204, r.text
        assert not remembered.exists()
        # a run asked for by hand still does everything (finds it all made)
        run_artwork(server)
        assert not server.ctx.artwork.last.skipped and server.ctx.artwork.last.collages_unchanged >= 1
        assert remembered.is_file()

        # 2. a change made through the server: the frame deleted; its run makes it again, and a
        # restart before that run could end would not skip (the remembered run is dropped)
        movie_id = lone(server)["Id"]
        server.ctx.artwork.DEBOUNCE = 30.0  # the run the delete asks for does not start before the restart
        with server.admin() as c:
            assert c.delete(f"/Items/{movie_id}/Images/Primary").status_code == 204
        deadline = time.monotonic() + 10
        while remembered.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not remembered.exists()
        server = restart(server)
        last = _startup_run(server)
        assert not last.skipped and last.frames == 1
        assert "Primary" in lone(server)["ImageTags"]
        assert remembered.is_file()

        # 3. behind the server's back: the genre's by-name row deleted while it is stopped
        token, admin_id = server.admin_token, server.admin_id
        stop_server(server)
        assert outside_write(data, "DELETE FROM byname_artwork WHERE kind = 'Genre'") == 1
        server = start_server(data)
        server.admin_token, server.admin_id = token, admin_id
        last = _startup_run(server)
        assert not last.skipped and last.collages == 1
        with server.admin() as c:
            genre = c.get("/Genres/Western", params={"userId": server.admin_id}).json()
        assert genre["ImageTags"].get("Primary"), genre

        # 3b. behind the server's back, a write no counted total sees: the movie's images emptied
        # with the sqlite3 shell (or a backup restored over the file); the file is not as the
        # server left it, so the start's run works and the frame comes back. SQLite only by
        # nature: the stamp of how the server left the database is the SQLite file's; a
        # PostgreSQL database has no such stamp (the skip there sees counted totals only)
        if not ON_POSTGRES:
            token, admin_id = server.admin_token, server.admin_id
            stop_server(server)
            assert "closed" in json.loads(remembered.read_text())  # how the server left the file
            assert outside_write(data, "UPDATE items SET images_json = '[]' WHERE name = 'Lone'") == 1
            server = start_server(data)
            server.admin_token, server.admin_id = token, admin_id
            last = _startup_run(server)
            assert not last.skipped and last.frames == 1
            assert "Primary" in lone(server)["ImageTags"]
            server = restart(server)  # and a clean stop and start skips again
            assert _startup_run(server).skipped

        # 4. a new video while stopped: the start's scan finds it and its run grabs the frame
        make_video(folder / "Second (2021)" / "Second (2021).mkv", seconds=4, width=320, height=240, acodec=None)
        server = restart(server)
        _startup_run(server)
        deadline = time.monotonic() + 60
        while True:
            with server.admin() as c:
                items = c.get("/Items", params={"recursive": "true", "userId": server.admin_id,
                                                "includeItemTypes": "Movie"}).json()["Items"]
            second = next((i for i in items if i["Name"].startswith("Second")), None)
            if second is not None and "Primary" in second["ImageTags"]:
                break
            assert time.monotonic() < deadline, items
            time.sleep(0.2)
            wait_for_artwork(server)
    finally:
        stop_server(server)


def test_a_scans_ask_for_a_run_is_pending_at_once(server):
    """A scan (on its worker thread) asks for a run through the loop; ``pending`` says so from
    the moment it asked, so a test (or anything) waiting for the artwork to settle never looks
    in the gap before the loop has taken the ask."""
    art = server.ctx.artwork
    wait_for_artwork(server)
    assert not art.pending
    art.after_scan("library", {"added": [], "updated": [], "removed": []})  # as the scanner's thread does
    assert art.pending
    wait_for_artwork(server)
    assert not art.pending and art.runs >= 1
