"""GET /Items and GET /Items/{id} on a real scanned library (tests/library/conftest.py)."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import LiveServer


@pytest.fixture
def c(scanned: LiveServer):
    with scanned.admin() as client:
        yield client


def names(reply) -> list[str]:
    assert reply.status_code == 200, reply.text
    return [i["Name"] for i in reply.json()["Items"]]


def test_items_without_user_is_200_and_unknown_user_is_404(scanned: LiveServer, c) -> None:
    r = c.get("/Items")
    assert r.status_code == 200
    body = r.json()
    assert set(body) >= {"Items", "TotalRecordCount", "StartIndex"}
    assert c.get("/Items", params={"userId": uuid.uuid4().hex}).status_code == 404
    r = c.get("/Items", params={"userId": scanned.admin_id})
    assert r.status_code == 200
    assert {i["Type"] for i in r.json()["Items"]} == {"CollectionFolder"}
    assert {i["CollectionType"] for i in r.json()["Items"]} == {"movies", "tvshows", "music"}


def test_recursive_movies_sorted_with_sources(scanned: LiveServer, c) -> None:
    lib = scanned.extra["libraries"]["movies"]
    r = c.get("/Items", params={"userId": scanned.admin_id, "parentId": lib, "recursive": "true",
                                "includeItemTypes": "Movie", "sortBy": "SortName",
                                "fields": "PrimaryImageAspectRatio,MediaSources"})
    body = r.json()
    assert names(r) == sorted(names(r), key=str.lower)
    assert body["TotalRecordCount"] == len(body["Items"]) >= 2
    movie = body["Items"][0]
    assert movie["Type"] == "Movie" and movie["MediaType"] == "Video" and movie["LocationType"] == "FileSystem"
    source = movie["MediaSources"][0]
    assert source["Id"] == movie["Id"] and source["Protocol"] == "File" and source["MediaStreams"]
    assert source["SupportsDirectPlay"] is True and source["ETag"]
    assert "Overview" not in movie and "Path" not in movie  # not asked for
    assert movie["UserData"]["Played"] is False
    # descending
    r2 = c.get("/Items", params={"parentId": lib, "recursive": "true", "includeItemTypes": "Movie",
                                 "sortBy": "SortName", "sortOrder": "Descending"})
    assert names(r2) == list(reversed(names(r)))


def test_get_item_full_and_unknown(scanned: LiveServer, c) -> None:
    lib = scanned.extra["libraries"]["shows"]
    r = c.get("/Items", params={"parentId": lib, "recursive": "true", "includeItemTypes": "Episode", "limit": 1})
    episode = r.json()["Items"][0]
    assert episode["SeriesId"] and episode["SeasonId"] and episode["SeriesName"]
    full = c.get(f"/Items/{episode['Id']}", params={"userId": scanned.admin_id})
    assert full.status_code == 200
    dto = full.json()
    assert dto["Id"] == episode["Id"] and dto["Path"] and "MediaSources" in dto and "UserData" in dto
    assert c.get(f"/Items/{uuid.uuid4().hex}").status_code == 404
    assert c.get("/Items/not-a-guid").status_code in (400, 404)


def test_views_latest_resume_favourite(scanned: LiveServer, c) -> None:
    uid = scanned.admin_id
    views = c.get("/UserViews", params={"userId": uid})
    assert views.status_code == 200, views.text
    assert [v["Type"] for v in views.json()["Items"]] == ["CollectionFolder"] * 3
    latest = c.get("/Items/Latest", params={"userId": uid, "parentId": scanned.extra["libraries"]["shows"]})
    assert latest.status_code == 200, latest.text
    kinds = [i["Type"] for i in latest.json()]
    assert kinds == ["Series"], kinds  # several new episodes of one show collapse into it
    assert latest.json()[0]["ChildCount"] >= 2
    music = c.get("/Items/Latest", params={"userId": uid, "parentId": scanned.extra["libraries"]["music"]}).json()
    assert music and all(i["Type"] == "MusicAlbum" for i in music)
    # favourite + resume
    movies = c.get("/Items", params={"parentId": scanned.extra["libraries"]["movies"], "recursive": "true",
                                     "includeItemTypes": "Movie"}).json()["Items"]
    movie = movies[0]
    r = c.post(f"/UserFavoriteItems/{movie['Id']}", params={"userId": uid})
    assert r.status_code == 200 and r.json()["IsFavorite"] is True
    favs = c.get("/Items", params={"userId": uid, "recursive": "true", "filters": "IsFavorite"}).json()
    assert [i["Id"] for i in favs["Items"]] == [movie["Id"]]
    r = c.post(f"/UserItems/{movie['Id']}/UserData", params={"userId": uid},
               json={"PlaybackPositionTicks": 10_000_000, "LastPlayedDate": "2026-01-01T00:00:00Z"})
    assert r.status_code == 200, r.text
    assert r.json()["PlaybackPositionTicks"] == 10_000_000 and r.json()["PlayedPercentage"] > 0
    resume = c.get("/UserItems/Resume", params={"userId": uid}).json()
    assert [i["Id"] for i in resume["Items"]] == [movie["Id"]]
    r = c.delete(f"/UserFavoriteItems/{movie['Id']}", params={"userId": uid})
    assert r.json()["IsFavorite"] is False
    c.post(f"/UserItems/{movie['Id']}/UserData", params={"userId": uid}, json={"PlaybackPositionTicks": 0})
    assert c.get("/UserItems/Resume", params={"userId": uid}).json()["Items"] == []


def test_ancestors_counts_media_folders(scanned: LiveServer, c) -> None:
    lib = scanned.extra["libraries"]["shows"]
    ep = c.get("/Items", params={"parentId": lib, "recursive": "true", "includeItemTypes": "Episode",
                                 "limit": 1}).json()["Items"][0]
    chain = c.get(f"/Items/{ep['Id']}/Ancestors", params={"userId": scanned.admin_id})
    assert chain.status_code == 200, chain.text
    assert [a["Type"] for a in chain.json()] == ["Season", "Series", "CollectionFolder", "UserRootFolder"]
    assert c.get(f"/Items/{uuid.uuid4().hex}/Ancestors").status_code == 404
    counts = c.get("/Items/Counts", params={"userId": scanned.admin_id}).json()
    assert counts["SeriesCount"] == 1 and counts["MovieCount"] >= 2 and counts["SongCount"] >= 4
    folders = c.get("/Library/MediaFolders").json()
    assert folders["TotalRecordCount"] == 3
