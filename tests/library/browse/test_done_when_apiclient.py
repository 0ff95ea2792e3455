"""Issue 3's "done when" with a real client: jellyfin-apiclient-python (the library behind the
Kodi add-on and jellyfin-mpv-shim) browses views → library → items → details on a real server
over a scanned ffmpeg-generated library, marks an episode played and a movie a favourite, sets
a resume point, and sees them in Resume, Latest and Next Up; the user data survives a rescan
and a server restart. The client uses Jellyfin's legacy ``Users/{userId}/...`` routes."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from jellyfin_apiclient_python import JellyfinClient

from tests.conftest import complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan, refresh_and_wait


def make_client(url: str, user: str, password: str, device: str) -> JellyfinClient:
    client = JellyfinClient()
    client.config.app("Reelroom Tests", "1.0.0", "pytest-machine", device)
    client.config.data["auth.ssl"] = False
    client.auth.connect_to_address(url)
    result = client.auth.login(url, user, password)
    assert result["User"]["Name"] == user
    return client


@pytest.fixture
def live_library(tmp_path, library_source):
    media = tmp_path / "media"
    shutil.copytree(library_source / "movies", media / "movies")
    shutil.copytree(library_source / "shows", media / "shows")
    live = start_server(tmp_path / "data")
    complete_wizard(live, "mira", "pa55word")
    add_library_and_scan(live, "Movies", "movies", [media / "movies"])
    add_library_and_scan(live, "Shows", "tvshows", [media / "shows"])
    live.extra["media"] = media
    state = {"live": live}
    yield state
    stop_server(state["live"])


def _check_user_data(api, movie_id: str, episode_id: str, resume_id: str, next_id: str, shows_view: str) -> None:
    movie = api.get_item(movie_id)
    assert movie["UserData"]["IsFavorite"] is True
    episode = api.get_item(episode_id)
    assert episode["UserData"]["Played"] is True and episode["UserData"]["PlayCount"] == 1
    resume = api.get_resume_items()
    assert [i["Id"] for i in resume["Items"]] == [resume_id]
    assert resume["Items"][0]["UserData"]["PlaybackPositionTicks"] == 5_000_000
    next_up = api.get_next(limit=5)
    assert [i["Id"] for i in next_up["Items"]] == [next_id]
    latest = api.get_recently_added(parent_id=shows_view, limit=10)
    assert latest, "Latest is empty"


def test_browse_mark_and_see_with_jellyfin_apiclient(live_library):
    live = live_library["live"]
    client = make_client(live.url, "mira", "pa55word", "apiclient-device")
    api = client.jellyfin

    # Views → library → items → details.
    views = api.get_views()["Items"]
    by_type = {v.get("CollectionType"): v for v in views}
    assert {"movies", "tvshows"} <= set(by_type)
    assert all(v["Type"] == "CollectionFolder" for v in views)
    movies_view, shows_view = by_type["movies"]["Id"], by_type["tvshows"]["Id"]
    movies = api.get_user_items(parent_id=movies_view, recursive=True, include_item_types="Movie",
                                sort_by="SortName", fields="Overview,Genres")["Items"]
    assert [m["Name"] for m in movies] == ["Alien", "Blade Runner", "Heat", "Inception"]
    inception = next(m for m in movies if m["Name"] == "Inception")
    details = api.get_item(inception["Id"])
    assert details["Overview"] == "Dreams within dreams." and details["ProductionYear"] == 2010
    assert "Science Fiction" in details["Genres"]
    assert details["MediaSources"] and details["MediaSources"][0]["Protocol"] == "File"
    series = api.get_user_items(parent_id=shows_view, recursive=True, include_item_types="Series")["Items"]
    assert [s["Name"] for s in series] == ["Show Name"]
    seasons = api.get_seasons(series[0]["Id"])["Items"]
    assert [s["IndexNumber"] for s in seasons] == [0, 1, 2]
    season1 = next(s for s in seasons if s["IndexNumber"] == 1)
    episodes = api.get_episodes(series[0]["Id"], season_id=season1["Id"])["Items"]
    assert [e["IndexNumber"] for e in episodes] == [1, 2]
    first, second = episodes

    # Mark: an episode played, a movie favourite, a resume point on another movie.
    played = api.item_played(first["Id"], True)
    assert played["Played"] is True
    favourite = api.favorite(inception["Id"])
    assert favourite["IsFavorite"] is True
    alien = next(m for m in movies if m["Name"] == "Alien")
    api.update_userdata_for_item(alien["Id"], {"PlaybackPositionTicks": 5_000_000})

    # See: Resume, Latest, Next Up, and the favourite in a favourites query.
    _check_user_data(api, inception["Id"], first["Id"], alien["Id"], second["Id"], shows_view)
    favourites = api.get_user_items(recursive=True, filters="IsFavorite")["Items"]
    assert [f["Id"] for f in favourites] == [inception["Id"]]
    latest_movies = api.get_recently_added(parent_id=movies_view, limit=10)
    assert inception["Id"] in [i["Id"] for i in latest_movies]
    assert next(i for i in latest_movies if i["Id"] == inception["Id"])["UserData"]["IsFavorite"] is True

    # A rescan keeps every bit of it, also for files that changed since the last scan.
    for path in (live.extra["media"] / "movies").rglob("*.m*"):
        os.utime(path, (time.time() + 5, time.time() + 5))
    for path in (live.extra["media"] / "shows").rglob("*.mkv"):
        os.utime(path, (time.time() + 5, time.time() + 5))
    refresh_and_wait(live)
    _check_user_data(api, inception["Id"], first["Id"], alien["Id"], second["Id"], shows_view)

    # So does a restart (same data folder, a new server and a new sign-in).
    data_dir = live.data_dir
    stop_server(live)
    live = start_server(data_dir)
    live_library["live"] = live
    client = make_client(live.url, "mira", "pa55word", "apiclient-device-2")
    _check_user_data(client.jellyfin, inception["Id"], first["Id"], alien["Id"], second["Id"], shows_view)
    # Unmarking works through the same client.
    assert client.jellyfin.item_played(first["Id"], False)["Played"] is False
    assert client.jellyfin.get_next(limit=5)["Items"] == []  # nothing of the series is played any more
