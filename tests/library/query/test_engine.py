"""The query engine on rows written directly (tests/library/query/factory.py): filters,
sorting, paging, Fields projection, user data, library restrictions and bad input."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from server.library.catalog import ids
from tests.conftest import complete_wizard, start_server, stop_server
from tests.library.query.factory import BASE_TIME, Factory, video_streams

POSTER = {"Type": "Primary", "Path": "/p.jpg", "Tag": "a" * 32, "Width": 600, "Height": 900, "BlurHash": "LKO2?U"}
BACKDROPS = [{"Type": "Backdrop", "Path": f"/b{i}.jpg", "Tag": f"{i}" * 32, "Width": 1920, "Height": 1080}
             for i in range(1, 4)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    live = start_server(tmp_path_factory.mktemp("engine") / "data")
    complete_wizard(live)
    f = Factory(live)
    movies = f.library("Films", "movies")
    shows = f.library("Series Lib", "tvshows")
    w: dict = {"live": live, "f": f, "movies": movies, "shows": shows}
    w["alien"] = f.item(movies, "Movie", "Alien", production_year=1979, community_rating=8.5, official_rating="R",
                        genres=["Horror", "Science Fiction"], studios=["Fox"], tags=["space"],
                        premiere_date=datetime(1979, 5, 25, tzinfo=UTC), run_time_ticks=70_000_000_000,
                        media_streams=video_streams(subtitles=True, width=1920), width=1920, height=1080,
                        images=[POSTER, *BACKDROPS], overview="In space no one can hear you scream.",
                        people=[("Sigourney Weaver", "Actor"), ("Ridley Scott", "Director")],
                        provider_ids={"Imdb": "tt0078748"}, container="mkv")
    w["blade"] = f.item(movies, "Movie", "Blade Runner", production_year=1982, community_rating=8.1,
                        official_rating="R", genres=["Science Fiction"], studios=["Warner Bros."],
                        premiere_date=datetime(1982, 6, 25, tzinfo=UTC), run_time_ticks=60_000_000_000,
                        media_streams=video_streams(width=3840), width=3840, height=2160,
                        people=[("Ridley Scott", "Director"), ("Harrison Ford", "Actor")])
    w["blade_alt"] = f.item(movies, "Movie", "Blade Runner", owner_id=w["blade"], production_year=1982,
                            media_streams=video_streams(width=1280), width=1280, container="mp4")
    w["blade_trailer"] = f.item(movies, "Trailer", "Blade Runner Trailer", owner_id=w["blade"],
                                parent_id=w["blade"], extra_type="Trailer")
    w["blade_making"] = f.item(movies, "Video", "Making Of", owner_id=w["blade"], parent_id=w["blade"],
                               extra_type="BehindTheScenes")
    w["amelie"] = f.item(movies, "Movie", "The Fabulous Destiny of Amelie", production_year=2001,
                         community_rating=8.3, official_rating="R", genres=["Comedy", "Romance"],
                         premiere_date=datetime(2001, 4, 25, tzinfo=UTC), run_time_ticks=72_000_000_000,
                         media_streams=video_streams(width=720), width=720, height=576)
    w["zulu"] = f.item(movies, "Movie", "Zulu", production_year=1964, community_rating=7.7,
                       official_rating="PG", genres=["Drama", "War"], run_time_ticks=83_000_000_000,
                       media_streams=video_streams(width=1280), width=1280, height=720)
    w["series"] = f.item(shows, "Series", "Show", images=[POSTER], status="Continuing", genres=["Drama"])
    w["season"] = f.item(shows, "Season", "Season 1", parent_id=w["series"], series_id=w["series"],
                         series_name="Show", index_number=1, sort_name="0000000001")
    w["episodes"] = [f.item(shows, "Episode", f"Episode {n}", parent_id=w["season"], series_id=w["series"],
                            season_id=w["season"], series_name="Show", season_name="Season 1", index_number=n,
                            parent_index_number=1, sort_name=f"001-{n:04d}-episode", run_time_ticks=10_000_000_000,
                            media_streams=video_streams())
                     for n in (1, 2, 3)]
    yield w
    stop_server(live)


def client(w: dict) -> httpx.Client:
    return w["live"].admin()


def get(w: dict, path: str = "/Items", **params) -> dict:
    with client(w) as c:
        r = c.get(path, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def names(body: dict) -> list[str]:
    return [i["Name"] for i in body["Items"]]


def movies(w: dict, **params) -> list[str]:
    return names(get(w, parentId=w["movies"], recursive="true", includeItemTypes="Movie", **params))


# ---------------------------------------------------------------- filters


def test_owned_rows_never_listed(world) -> None:
    listed = get(world, parentId=world["movies"], recursive="true")
    assert names(listed) == ["Alien", "Blade Runner", "The Fabulous Destiny of Amelie", "Zulu"]
    assert listed["TotalRecordCount"] == 4
    non_recursive = get(world, parentId=world["blade"])
    assert non_recursive["Items"] == []  # extras and versions are not children in listings
    by_id = get(world, ids=world["blade_alt"])
    assert [i["Id"] for i in by_id["Items"]] == [world["blade_alt"]]  # but reachable by id


@pytest.mark.parametrize(("params", "expected"), [
    ({"genres": "Horror|Comedy"}, ["Alien", "The Fabulous Destiny of Amelie"]),
    ({"genres": "science fiction"}, ["Alien", "Blade Runner"]),
    ({"studios": "Fox"}, ["Alien"]),
    ({"tags": "space"}, ["Alien"]),
    ({"years": "1979,1964"}, ["Alien", "Zulu"]),
    ({"officialRatings": "PG"}, ["Zulu"]),
    ({"minCommunityRating": "8.2"}, ["Alien", "The Fabulous Destiny of Amelie"]),
    ({"nameStartsWith": "b"}, ["Blade Runner"]),
    ({"nameStartsWith": "f"}, ["The Fabulous Destiny of Amelie"]),  # sort name drops "The"
    ({"nameLessThan": "b"}, ["Alien"]),
    ({"nameStartsWithOrGreater": "f"}, ["The Fabulous Destiny of Amelie", "Zulu"]),
    ({"searchTerm": "RUNN"}, ["Blade Runner"]),
    ({"hasSubtitles": "true"}, ["Alien"]),
    ({"isHd": "true"}, ["Alien", "Blade Runner", "Zulu"]),
    ({"is4K": "true"}, ["Blade Runner"]),
    ({"hasImdbId": "true"}, ["Alien"]),
    ({"hasOverview": "false"}, ["Blade Runner", "The Fabulous Destiny of Amelie", "Zulu"]),
    ({"minPremiereDate": "1980-01-01T00:00:00Z", "maxPremiereDate": "1990-01-01T00:00:00Z"}, ["Blade Runner"]),
    ({"hasTrailer": "true"}, ["Blade Runner"]),
    ({"hasSpecialFeature": "true"}, ["Blade Runner"]),
    ({"imageTypes": "Backdrop"}, ["Alien"]),
    ({"videoTypes": "VideoFile"}, ["Alien", "Blade Runner", "The Fabulous Destiny of Amelie", "Zulu"]),
    ({"locationTypes": "Virtual"}, []),
    ({"excludeItemTypes": "Movie"}, []),
    ({"genres": "Drama", "years": "1964"}, ["Zulu"]),
    ({"genres": "Drama", "years": "2001"}, []),
])
def test_filters(world, params, expected) -> None:
    assert movies(world, **params) == expected


def test_id_filters(world) -> None:
    assert movies(world, genreIds=ids.by_name_id("Genre", "Horror")) == ["Alien"]
    assert movies(world, studioIds=ids.by_name_id("Studio", "Warner Bros.")) == ["Blade Runner"]
    ridley = ids.by_name_id("Person", "Ridley Scott")
    assert movies(world, personIds=ridley) == ["Alien", "Blade Runner"]
    assert movies(world, personIds=ridley, personTypes="Actor") == []
    assert movies(world, person="Harrison Ford") == ["Blade Runner"]
    assert movies(world, excludeItemIds=f"{world['alien']},{world['zulu']}") == [
        "Blade Runner", "The Fabulous Destiny of Amelie"]
    assert names(get(world, ids=f"{world['zulu']},{world['alien']}")) == ["Alien", "Zulu"]
    # by-name ids as parentId
    assert names(get(world, parentId=ids.by_name_id("Genre", "Drama"), recursive="true")) == ["Show", "Zulu"]
    assert names(get(world, parentId=ids.by_name_id("Year", "1982"))) == ["Blade Runner"]
    assert names(get(world, parentId=ridley, includeItemTypes="Movie")) == ["Alien", "Blade Runner"]


def test_show_hierarchy(world) -> None:
    assert names(get(world, parentId=world["series"])) == ["Season 1"]
    assert names(get(world, parentId=world["series"], recursive="true", includeItemTypes="Episode")) == [
        "Episode 1", "Episode 2", "Episode 3"]
    assert names(get(world, parentId=world["season"], sortBy="IndexNumber", sortOrder="Descending")) == [
        "Episode 3", "Episode 2", "Episode 1"]
    assert names(get(world, seriesStatus="Continuing", recursive="true")) == ["Show"]
    assert names(get(world, seriesStatus="Ended", recursive="true")) == []
    adjacent = get(world, adjacentTo=world["episodes"][1], parentId=world["season"])
    assert names(adjacent) == ["Episode 1", "Episode 2", "Episode 3"]
    # no parent, not recursive: the user's libraries
    assert names(get(world, userId=world["live"].admin_id)) == ["Films", "Series Lib"]


# ---------------------------------------------------------------- sorting and paging


def test_sorting(world) -> None:
    assert movies(world, sortBy="CommunityRating", sortOrder="Descending") == [
        "Alien", "The Fabulous Destiny of Amelie", "Blade Runner", "Zulu"]
    assert movies(world, sortBy="ProductionYear") == ["Zulu", "Alien", "Blade Runner",
                                                      "The Fabulous Destiny of Amelie"]
    assert movies(world, sortBy="Runtime") == ["Blade Runner", "Alien", "The Fabulous Destiny of Amelie", "Zulu"]
    assert movies(world, sortBy="Name", sortOrder="Descending") == [
        "Zulu", "The Fabulous Destiny of Amelie", "Blade Runner", "Alien"]
    # two keys, one order each: rating group descending, then name ascending
    assert movies(world, sortBy="OfficialRating,SortName", sortOrder="Descending,Ascending") == [
        "Alien", "Blade Runner", "The Fabulous Destiny of Amelie", "Zulu"]
    assert sorted(movies(world, sortBy="Random")) == ["Alien", "Blade Runner", "The Fabulous Destiny of Amelie",
                                                      "Zulu"]
    # unknown sort keys are dropped by the wire layer, not an error
    assert movies(world, sortBy="NoSuchKey") == ["Alien", "Blade Runner", "The Fabulous Destiny of Amelie", "Zulu"]


def test_paging(world) -> None:
    page = get(world, parentId=world["movies"], recursive="true", includeItemTypes="Movie", startIndex=1, limit=2)
    assert names(page) == ["Blade Runner", "The Fabulous Destiny of Amelie"]
    assert page["TotalRecordCount"] == 4 and page["StartIndex"] == 1
    beyond = get(world, parentId=world["movies"], recursive="true", includeItemTypes="Movie", startIndex=10)
    assert beyond["Items"] == [] and beyond["TotalRecordCount"] == 4
    no_count = get(world, parentId=world["movies"], recursive="true", includeItemTypes="Movie", limit=1,
                   enableTotalRecordCount="false")
    assert len(no_count["Items"]) == 1


def test_deep_pages_and_cache_invalidation(tmp_path) -> None:
    live = start_server(tmp_path / "data")
    try:
        complete_wizard(live)
        f = Factory(live)
        lib = f.library("Many", "homevideos")

        def write(s) -> None:
            from server.db.tables import Item
            for n in range(1500):
                s.add(Item(id=uuid.uuid4().hex, type="Video", media_type="Video", library_id=lib, parent_id=lib,
                           name=f"Clip {n:04d}", sort_name=f"clip {n:04d}", path=f"/v/{n}"))

        live.ctx.db.write_sync(write)
        with live.admin() as c:
            params = {"parentId": lib, "recursive": "true", "includeItemTypes": "Video", "limit": 5}
            deep = c.get("/Items", params={**params, "startIndex": 1200}).json()
            assert [i["Name"] for i in deep["Items"]] == [f"Clip {n:04d}" for n in range(1200, 1205)]
            assert deep["TotalRecordCount"] == 1500
            f.item(lib, "Video", "Clip 1200a", sort_name="clip 1200a")
            again = c.get("/Items", params={**params, "startIndex": 1200}).json()
            assert again["TotalRecordCount"] == 1501  # the write invalidated the cached list
            assert [i["Name"] for i in again["Items"]][:2] == ["Clip 1200", "Clip 1200a"]
            first = c.get("/Items", params={**params, "startIndex": 0}).json()
            assert first["TotalRecordCount"] == 1501
    finally:
        stop_server(live)


# ---------------------------------------------------------------- projection


def test_fields_projection_and_images(world) -> None:
    plain = get(world, ids=world["alien"])["Items"][0]
    for absent in ("Overview", "Path", "Genres", "MediaSources", "People", "ProviderIds", "DateCreated"):
        assert absent not in plain
    assert plain["ImageTags"] == {"Primary": "a" * 32}
    assert plain["BackdropImageTags"] == ["1" * 32, "2" * 32, "3" * 32]
    assert plain["ImageBlurHashes"]["Primary"] == {"a" * 32: "LKO2?U"}
    assert plain["HasSubtitles"] is True and plain["VideoType"] == "VideoFile"
    full = get(world, ids=world["alien"], fields="Overview,Path,Genres,People,ProviderIds,DateCreated,"
                                                  "PrimaryImageAspectRatio,Studios,MediaStreams,SortName")["Items"][0]
    assert full["Overview"].startswith("In space") and full["Path"]
    assert full["Genres"] == ["Horror", "Science Fiction"]
    assert full["GenreItems"][0] == {"Name": "Horror", "Id": ids.by_name_id("Genre", "Horror")}
    assert full["Studios"] == [{"Name": "Fox", "Id": ids.by_name_id("Studio", "Fox")}]
    assert [(p["Name"], p["Type"]) for p in full["People"]] == [("Sigourney Weaver", "Actor"),
                                                                 ("Ridley Scott", "Director")]
    assert full["ProviderIds"] == {"Imdb": "tt0078748"}
    assert full["PrimaryImageAspectRatio"] == pytest.approx(600 / 900)
    assert [s["Type"] for s in full["MediaStreams"]] == ["Video", "Audio", "Subtitle"]
    assert full["SortName"] == "alien"
    limited = get(world, ids=world["alien"], imageTypeLimit=1, enableImageTypes="Backdrop")["Items"][0]
    assert limited["ImageTags"] == {} and limited["BackdropImageTags"] == ["1" * 32]
    none = get(world, ids=world["alien"], enableImages="false", enableUserData="false",
               userId=world["live"].admin_id)["Items"][0]
    assert "ImageTags" not in none and "UserData" not in none


def test_media_sources_with_versions(world) -> None:
    blade = get(world, ids=world["blade"], fields="MediaSources,MediaSourceCount,LocalTrailerCount,"
                                                  "SpecialFeatureCount")["Items"][0]
    assert [s["Id"] for s in blade["MediaSources"]] == [world["blade"], world["blade_alt"]]
    assert blade["MediaSourceCount"] == 2
    assert blade["LocalTrailerCount"] == 1 and blade["SpecialFeatureCount"] == 1
    source = blade["MediaSources"][0]
    assert source["Protocol"] == "File" and source["DefaultAudioStreamIndex"] == 1
    alien = get(world, ids=world["alien"], fields="MediaSources")["Items"][0]
    assert alien["MediaSources"][0]["DefaultSubtitleStreamIndex"] == 2  # the forced track
    with client(world) as c:
        trailers = c.get(f"/Items/{world['blade']}/LocalTrailers").json()
        specials = c.get(f"/Items/{world['blade']}/SpecialFeatures").json()
        intros = c.get(f"/Items/{world['blade']}/Intros").json()
    assert [t["Id"] for t in trailers] == [world["blade_trailer"]]
    assert [t["Id"] for t in specials] == [world["blade_making"]]
    assert intros == {"Items": [], "TotalRecordCount": 0, "StartIndex": 0}


# ---------------------------------------------------------------- user data


def test_user_data_filters_and_series_counts(world) -> None:
    live, f = world["live"], world["f"]
    uid = live.admin_id
    f.user_data(uid, world["episodes"][0], played=True, play_count=1, last_played_date=BASE_TIME)
    f.user_data(uid, world["zulu"], playback_position_ticks=20_750_000_000,
                last_played_date=BASE_TIME + timedelta(days=2))
    f.user_data(uid, world["amelie"], playback_position_ticks=1_000_000_000,
                last_played_date=BASE_TIME + timedelta(days=3))
    f.user_data(uid, world["alien"], is_favorite=True, likes=True)
    series = get(world, ids=world["series"], userId=uid, fields="RecursiveItemCount,ChildCount")["Items"][0]
    assert series["UserData"]["UnplayedItemCount"] == 2
    assert series["UserData"]["PlayedPercentage"] == pytest.approx(100 / 3)
    assert series["UserData"]["Played"] is False
    assert series["RecursiveItemCount"] == 3 and series["ChildCount"] == 1
    zulu = get(world, ids=world["zulu"], userId=uid)["Items"][0]
    assert zulu["UserData"]["PlayedPercentage"] == pytest.approx(25.0)
    assert movies(world, userId=uid, isFavorite="true") == ["Alien"]
    assert movies(world, userId=uid, filters="IsResumable", sortBy="DatePlayed", sortOrder="Descending") == [
        "The Fabulous Destiny of Amelie", "Zulu"]
    assert movies(world, userId=uid, filters="Likes") == ["Alien"]
    played = get(world, userId=uid, parentId=world["season"], isPlayed="true")
    assert names(played) == ["Episode 1"]
    assert names(get(world, userId=uid, parentId=world["season"], filters="IsUnplayed")) == ["Episode 2", "Episode 3"]
    resume = get(world, "/UserItems/Resume", userId=uid)
    assert names(resume) == ["The Fabulous Destiny of Amelie", "Zulu"]
    # a fully played series counts as played
    for ep in world["episodes"][1:]:
        f.user_data(uid, ep, played=True)
    assert names(get(world, userId=uid, recursive="true", includeItemTypes="Series", isPlayed="true")) == ["Show"]
    for ep in world["episodes"][1:]:
        f.user_data(uid, ep, played=False)


def test_user_data_endpoints(world) -> None:
    uid = world["live"].admin_id
    with client(world) as c:
        r = c.post(f"/UserItems/{world['blade']}/Rating", params={"userId": uid, "likes": "false"})
        assert r.status_code == 200 and r.json()["Likes"] is False
        r = c.delete(f"/UserItems/{world['blade']}/Rating", params={"userId": uid})
        assert r.status_code == 200 and "Likes" not in r.json()
        r = c.post(f"/UserItems/{world['blade']}/UserData", params={"userId": uid},
                   json={"Played": True, "PlayCount": 2, "Rating": 7.5})
        assert r.json()["Played"] is True and r.json()["PlayCount"] == 2 and r.json()["Rating"] == 7.5
        got = c.get(f"/UserItems/{world['blade']}/UserData", params={"userId": uid}).json()
        assert got["Played"] is True and got["ItemId"] == world["blade"]
        assert c.post(f"/UserItems/{world['blade']}/UserData", params={"userId": uid},
                      json={"PlaybackPositionTicks": -5}).status_code == 400
        # favourites of by-name items
        genre = ids.by_name_id("Genre", "Horror")
        assert c.post(f"/UserFavoriteItems/{genre}", params={"userId": uid}).json()["IsFavorite"] is True
        favs = c.get("/Genres", params={"userId": uid, "isFavorite": "true"}).json()
        assert [g["Name"] for g in favs["Items"]] == ["Horror"]
        # unknown item / user
        assert c.post(f"/UserFavoriteItems/{uuid.uuid4().hex}", params={"userId": uid}).status_code == 404
        assert c.get(f"/UserItems/{world['blade']}/UserData",
                     params={"userId": uuid.uuid4().hex}).status_code == 404
        c.post(f"/UserItems/{world['blade']}/UserData", params={"userId": uid}, json={"Played": False})


# ---------------------------------------------------------------- restrictions and errors


def test_restricted_user_sees_only_enabled_folders(world) -> None:
    live = world["live"]
    with live.admin() as c:
        r = c.post("/Users/New", json={"Name": "kid", "Password": "pw"})
        assert r.status_code == 200, r.text
        kid = r.json()["Id"]
        policy = c.get(f"/Users/{kid}").json()["Policy"]
        policy.update(EnableAllFolders=False, EnabledFolders=[world["shows"]])
        assert c.post(f"/Users/{kid}/Policy", json=policy).status_code == 204
    with live.client(device="kid-device") as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "kid", "Pw": "pw"}).json()["AccessToken"]
    with live.client(token, "kid-device") as c:
        views = c.get("/UserViews").json()
        assert [v["Name"] for v in views["Items"]] == ["Series Lib"]
        everything = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie,Series"}).json()
        assert [i["Name"] for i in everything["Items"]] == ["Show"]
        assert c.get(f"/Items/{world['alien']}").status_code == 404
        assert c.get("/Items", params={"parentId": world["movies"], "recursive": "true"}).json()["Items"] == []
        assert c.get("/Items/Counts").json()["MovieCount"] == 0
        assert c.get("/Genres").json()["TotalRecordCount"] == 1  # Drama, from the show
        # another user's data is not theirs to read
        assert c.get("/Items", params={"userId": live.admin_id}).status_code == 403


@pytest.mark.parametrize(("path", "params", "status"), [
    ("/Items", {"startIndex": "-1"}, 400),
    ("/Items", {"limit": "-5"}, 400),
    ("/Items", {"parentId": uuid.uuid4().hex}, 404),
    ("/Items", {"parentId": "not-a-guid"}, 400),
    ("/Items", {"ids": "nope"}, 400),
    ("/Items", {"minPremiereDate": "yesterday"}, 400),
    ("/Items", {"userId": uuid.uuid4().hex}, 404),
    ("/Items/Latest", {"limit": "-1"}, 400),
    ("/Genres", {"startIndex": "-2"}, 400),
    ("/Years/0", {}, 400),
])
def test_bad_input(world, path, params, status) -> None:
    with client(world) as c:
        r = c.get(path, params=params)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
