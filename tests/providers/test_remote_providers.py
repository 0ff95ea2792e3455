"""TVmaze, OpenSubtitles.com and LrcLib through the server's API, each against its local fake."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.library_helpers import wait_for_scan
from tests.metadata.conftest import add_item, get_item
from tests.metadata.fakes import closed_port, json_reply
from tests.providers.fakes import (
    LRC,
    OS_KEY,
    OS_PASSWORD,
    OS_USER,
    SHOW_ID,
    FakeLrcLib,
    FakeOpenSubtitles,
    FakeTvMaze,
)


@pytest.fixture
def fake_tvmaze() -> Iterator[FakeTvMaze]:
    fake = FakeTvMaze().start()
    yield fake
    fake.stop()


@pytest.fixture
def fake_os() -> Iterator[FakeOpenSubtitles]:
    fake = FakeOpenSubtitles().start()
    yield fake
    fake.stop()


@pytest.fixture
def fake_lrclib() -> Iterator[FakeLrcLib]:
    fake = FakeLrcLib().start()
    yield fake
    fake.stop()


def _offline(c) -> None:
    """Keyless providers this test does not exercise point where nothing listens."""
    closed = f"http://127.0.0.1:{closed_port()}"
    for section in ("tvmaze", "lrclib", "musicbrainz"):
        assert c.post(f"/System/Configuration/{section}", json={"BaseUrl": closed}).status_code == 204


def test_series_with_episodes_and_images_through_tvmaze(shared_server, fake_tvmaze):
    server = shared_server
    series = add_item(server, "/tv/got", kind="Series", is_folder=True, name="Game of Thrones")
    season = add_item(server, "/tv/got/Season 1", kind="Season", is_folder=True, name="Season 1", index_number=1,
                      series_id=series, parent_id=series)
    episodes = [add_item(server, f"/tv/got/Season 1/S01E0{n}.mkv", kind="Episode", name=f"S01E0{n}",
                         index_number=n, parent_index_number=1, series_id=series, season_id=season, parent_id=season)
                for n in (1, 2)]
    with server.admin() as c:
        _offline(c)
        assert c.post("/System/Configuration/tvmaze", json={"BaseUrl": fake_tvmaze.url}).status_code == 204
        results = c.post("/Items/RemoteSearch/Series", json={"SearchInfo": {"Name": "Game of Thrones", "Year": 2011},
                                                            "SearchProviderName": "TVmaze"}).json()
        assert len(results) == 1
        hit = results[0]
        assert hit["ProviderIds"] == {"TvMaze": str(SHOW_ID), "Imdb": "tt0944947", "Tvdb": "121361"}
        assert hit["ProductionYear"] == 2011 and hit["SearchProviderName"] == "TVmaze"
        assert hit["Overview"] == "Based on the bestselling book series A Song of Ice and Fire."

        assert c.post(f"/Items/RemoteSearch/Apply/{series}", json=hit).status_code == 204
        row = get_item(server, series)
        assert row.overview.startswith("Based on the bestselling") and row.community_rating == 8.9
        assert json.loads(row.provider_ids_json)["TvMaze"] == str(SHOW_ID)
        assert {"Drama", "Fantasy"} <= set(json.loads(row.genres_json))
        assert json.loads(row.studios_json) == ["HBO"]
        series_images = {i["Type"]: i for i in json.loads(row.images_json)}
        assert {"Primary", "Backdrop"} <= set(series_images) and series_images["Primary"]["Provider"] == "TVmaze"

        # the seasons and episodes followed, with their images
        season_row = get_item(server, season)
        assert season_row.premiere_date is not None and season_row.premiere_date.year == 2011
        assert [i["Type"] for i in json.loads(season_row.images_json)] == ["Primary"]
        first, second = (get_item(server, e) for e in episodes)
        assert (first.name, second.name) == ("Winter Is Coming", "The Kingsroad")
        assert first.overview == "Lord Ned Stark is troubled." and first.premiere_date.date().isoformat() == "2011-04-17"
        assert json.loads(first.provider_ids_json)["TvMaze"] == "4952"
        for row in (first, second):
            image = json.loads(row.images_json)[0]
            assert image["Type"] == "Primary" and Path(image["Path"]).is_file()
        assert f"/shows/{SHOW_ID}/episodes" in fake_tvmaze.paths()

        # remote images: the show's, and an episode's by its number
        images = c.get(f"/Items/{series}/RemoteImages", params={"providerName": "TVmaze"}).json()
        assert {(i["Type"], i["Url"]) for i in images["Images"]} == {
            ("Primary", fake_tvmaze.url + "/img/poster.jpg"), ("Backdrop", fake_tvmaze.url + "/img/bg.jpg"),
            ("Banner", fake_tvmaze.url + "/img/banner.jpg")}
        episode_images = c.get(f"/Items/{episodes[1]}/RemoteImages", params={"providerName": "TVmaze"}).json()
        assert [i["Url"] for i in episode_images["Images"]] == [fake_tvmaze.url + "/img/e2.jpg"]
        # a series known only by its IMDb id is found through TVmaze's lookup
        other = add_item(server, "/tv/got-imdb", kind="Series", is_folder=True, name="GoT",
                         provider_ids={"Imdb": "tt0944947"})
        found = c.get(f"/Items/{other}/RemoteImages", params={"providerName": "TVmaze"}).json()
        assert found["TotalRecordCount"] == 3
        assert any(r.path == "/lookup/shows" and r.query == {"imdb": "tt0944947"} for r in fake_tvmaze.requests)


def test_library_image_fetcher_order(shared_server, fake_tvmaze, tmp_path):
    """A library whose Series options leave TVmaze out does not use it."""
    server = shared_server
    media = tmp_path / "shows"
    media.mkdir()
    with server.admin() as c:
        _offline(c)
        assert c.post("/System/Configuration/tvmaze", json={"BaseUrl": fake_tvmaze.url}).status_code == 204
        assert c.post("/System/Configuration/tmdb", json={"BaseUrl": f"http://127.0.0.1:{closed_port()}",
                                                          "ApiKey": "some-key"}).status_code == 204
        c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(tmp_path)]})
        options = {"TypeOptions": [{"Type": "Series", "MetadataFetchers": ["TheMovieDb"],
                                    "ImageFetchers": ["TheMovieDb"], "ImageFetcherOrder": ["TheMovieDb"]}]}
        started = time.time()
        r = c.post("/Library/VirtualFolders", params={"name": "Shows", "collectionType": "tvshows",
                                                      "paths": [str(media)]}, json={"LibraryOptions": options})
        assert r.status_code == 204, r.text
        library_id = next(f["ItemId"] for f in c.get("/Library/VirtualFolders").json() if f["Name"] == "Shows")
        # a new library is scanned at once: the scan of the (empty) folder would remove an item
        # inserted under it before it ends (then the item is gone: a 404 ProblemDetails, not a list)
        wait_for_scan(server, started)
        series = add_item(server, str(media / "got"), kind="Series", is_folder=True, name="GoT",
                          provider_ids={"TvMaze": str(SHOW_ID)}, library_id=library_id)
        assert [p["Name"] for p in c.get(f"/Items/{series}/RemoteImages/Providers").json()] == ["TheMovieDb"]
        options["TypeOptions"][0]["ImageFetchers"] = ["TVmaze", "TheMovieDb"]
        options["TypeOptions"][0]["ImageFetcherOrder"] = ["TVmaze", "TheMovieDb"]
        assert c.post("/Library/VirtualFolders/LibraryOptions", json={"Id": library_id, "LibraryOptions": options}
                      ).status_code == 204
        r = c.get(f"/Items/{series}/RemoteImages/Providers")
        assert [p["Name"] for p in r.json()] == ["TVmaze", "TheMovieDb"], r.text


def _movie_file(tmp_path: Path) -> Path:
    folder = tmp_path / "movies" / "Fight Club (1999)"
    folder.mkdir(parents=True)
    path = folder / "Fight Club (1999).mkv"
    path.write_bytes(bytes(range(256)) * 1024)  # 256 KiB: enough for the OpenSubtitles hash
    return path


def test_subtitle_through_opensubtitles(shared_server, fake_os, tmp_path):
    server = shared_server
    path = _movie_file(tmp_path)
    movie = add_item(server, str(path), name="Fight Club", production_year=1999, media_type="Video",
                     provider_ids={"Imdb": "tt0137523", "Tmdb": "550"}, size=path.stat().st_size)
    with server.admin() as c:
        _offline(c)
        # not set up: no key, no search, nothing contacted
        assert c.get(f"/Items/{movie}/RemoteSearch/Subtitles/eng").json() == []
        assert fake_os.requests == []
        assert c.post("/System/Configuration/opensubtitles", json={
            "BaseUrl": fake_os.url, "ApiKey": OS_KEY, "Username": OS_USER, "Password": OS_PASSWORD}).status_code == 204
        assert "Password" not in server.client().get("/System/Configuration/opensubtitles").text

        found = c.get(f"/Items/{movie}/RemoteSearch/Subtitles/eng").json()
        assert [s["Id"] for s in found] == ["opensubtitles_srt_eng_1234", "opensubtitles_srt_eng_5678"]
        best = found[0]
        assert best["ProviderName"] == "Open Subtitles" and best["ThreeLetterISOLanguageName"] == "eng"
        assert best["Name"] == "Fight.Club.1999.1080p.BluRay" and best["DownloadCount"] == 12034
        assert found[1]["HearingImpaired"] is True
        search = [r for r in fake_os.requests if r.path == "/api/v1/subtitles"][-1]
        assert search.query["imdb_id"] == "137523" and len(search.query["moviehash"]) == 16
        assert search.headers["api-key"] == OS_KEY and search.headers["user-agent"].startswith("Reelroom/")
        assert c.get(f"/Items/{movie}/RemoteSearch/Subtitles/fre").json() == []

        # fetched directly, then downloaded beside the film and served like any sidecar
        direct = c.get(f"/Providers/Subtitles/Subtitles/{best['Id']}")
        assert direct.status_code == 200 and "Hello from OpenSubtitles." in direct.text
        assert c.post(f"/Items/{movie}/RemoteSearch/Subtitles/{best['Id']}").status_code == 204
        sidecar = path.with_name("Fight Club (1999).eng.srt")
        assert sidecar.read_text(encoding="utf-8").startswith("1\n00:00:01,000")
        streams = json.loads(get_item(server, movie).media_streams_json)
        sub = next(s for s in streams if s.get("Path") == str(sidecar))
        assert sub["Language"] == "eng" and sub["IsExternal"] is True
        served = c.get(f"/Videos/{movie}/{movie}/Subtitles/{sub['Index']}/Stream.vtt")
        assert served.status_code == 200 and "WEBVTT" in served.text and "Hello from OpenSubtitles." in served.text
        download = [r for r in fake_os.requests if r.path == "/api/v1/download"][-1]
        assert download.body == {"file_id": 1234, "sub_format": "srt"}
        assert download.headers["authorization"] == "Bearer os-token"

        # the quota runs out: the error says so, with when it renews
        fake_os.remaining = 0
        r = c.post(f"/Items/{movie}/RemoteSearch/Subtitles/{found[1]['Id']}")
        assert r.status_code == 429
        assert "quota" in r.json()["detail"] and "2026-11-26T03:00:00.000Z" in r.json()["detail"]
        assert "0 left" in r.json()["detail"]

        # a wrong login is named as such
        assert c.post("/System/Configuration/opensubtitles", json={
            "BaseUrl": fake_os.url, "ApiKey": OS_KEY, "Username": OS_USER, "Password": "nope"}).status_code == 204
        r = c.post(f"/Items/{movie}/RemoteSearch/Subtitles/{best['Id']}")
        assert r.status_code == 400 and "refused the login" in r.json()["detail"]
        assert c.post(f"/Items/{movie}/RemoteSearch/Subtitles/nonsense").status_code == 404


def test_synced_lyrics_through_lrclib(shared_server, fake_lrclib, tmp_path):
    server = shared_server
    folder = tmp_path / "music" / "Queen" / "A Night at the Opera"
    folder.mkdir(parents=True)
    path = folder / "11 Bohemian Rhapsody.mp3"
    path.write_bytes(b"ID3" + b"\0" * 64)
    track = add_item(server, str(path), kind="Audio", media_type="Audio", name="Bohemian Rhapsody",
                     artists_json=json.dumps(["Queen"]), album="A Night at the Opera", run_time_ticks=355 * 10_000_000)
    with server.admin() as c:
        _offline(c)
        assert c.post("/System/Configuration/lrclib", json={"BaseUrl": fake_lrclib.url}).status_code == 204
        found = c.get(f"/Audio/{track}/RemoteSearch/Lyrics").json()
        assert found[0]["Id"] == "lrclib_3396226" and found[0]["ProviderName"] == "LrcLib"
        lyrics = found[0]["Lyrics"]
        assert lyrics["Metadata"]["IsSynced"] is True and lyrics["Metadata"]["Artist"] == "Queen"
        assert [(line["Start"], line["Text"]) for line in lyrics["Lyrics"]] == [
            (120_000_000, "Is this the real life?"), (155_000_000, "Is this just fantasy?"),
            (190_000_000, "Caught in a landslide")]
        exact = [r for r in fake_lrclib.requests if r.path == "/api/get"][-1]
        assert exact.query == {"track_name": "Bohemian Rhapsody", "artist_name": "Queen",
                               "album_name": "A Night at the Opera", "duration": "355"}

        assert c.get("/Providers/Lyrics/lrclib_3396226").json()["Lyrics"][0]["Text"] == "Is this the real life?"
        saved = c.post(f"/Audio/{track}/RemoteSearch/Lyrics/lrclib_3396226")
        assert saved.status_code == 200 and saved.json()["Metadata"]["IsSynced"] is True
        assert path.with_suffix(".lrc").read_text(encoding="utf-8") == LRC
        served = c.get(f"/Audio/{track}/Lyrics").json()
        assert served["Lyrics"][1] == {"Text": "Is this just fantasy?", "Start": 155_000_000}

        # without an exact match the search falls back and puts synced lyrics first
        other = add_item(server, str(folder / "x.mp3"), kind="Audio", media_type="Audio",
                         name="Bohemian Rhapsody (Live)", run_time_ticks=354 * 10_000_000)
        found = c.get(f"/Audio/{other}/RemoteSearch/Lyrics").json()
        assert [f["Id"] for f in found] == ["lrclib_3396226", "lrclib_11"]
        assert found[1]["Lyrics"]["Metadata"]["IsSynced"] is False
        assert c.get("/Providers/Lyrics/lrclib_999").status_code == 404
        assert c.get("/Providers/Lyrics/bogus_1").status_code == 404


def test_fanart_images_need_a_key(shared_server):
    from tests.metadata.fakes import FakeService

    fake = FakeService()
    fake.routes["/v3/movies/550"] = lambda p, q: json_reply({
        "name": "Fight Club", "tmdb_id": "550", "imdb_id": "tt0137523",
        "hdmovielogo": [{"id": "1", "url": fake.url + "/fanart/movies/550/hdmovielogo/fc.png", "lang": "en",
                         "likes": "7"}],
        "moviebackground": [{"id": "2", "url": fake.url + "/fanart/movies/550/moviebackground/fc.jpg", "lang": "00",
                             "likes": "3"}]}) if q.get("api_key") == "fan-key" else json_reply(
        {"status": "error", "error message": "Not authorized"}, 401)
    fake.start()
    try:
        movie = add_item(shared_server, "/movies/fanart/fc.mkv", name="Fight Club", provider_ids={"Tmdb": "550"})
        with shared_server.admin() as c:
            _offline(c)
            assert c.post("/System/Configuration/fanart", json={"BaseUrl": fake.url}).status_code == 204
            names = [p["Name"] for p in c.get(f"/Items/{movie}/RemoteImages/Providers").json()]
            assert "Fanart.tv" not in names and fake.requests == []  # no key: off, nothing contacted
            assert c.post("/System/Configuration/fanart", json={"BaseUrl": fake.url, "ApiKey": "fan-key"}
                          ).status_code == 204
            images = c.get(f"/Items/{movie}/RemoteImages", params={"providerName": "Fanart.tv",
                                                                   "includeAllLanguages": "true"}).json()
            assert {(i["Type"], i["Url"].rsplit("/", 2)[-2]) for i in images["Images"]} == {
                ("Logo", "hdmovielogo"), ("Backdrop", "moviebackground")}
            assert "Fanart.tv" in images["Providers"]
    finally:
        fake.stop()
