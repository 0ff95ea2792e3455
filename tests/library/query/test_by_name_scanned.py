"""Genres, studios, persons, years, artists, filters and search hints on a scanned library."""

from __future__ import annotations

import pytest

from server.library.catalog import ids
from tests.conftest import LiveServer


@pytest.fixture
def c(scanned: LiveServer):
    with scanned.admin() as client:
        yield client


def ok(reply):
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_genres_and_music_genres(scanned: LiveServer, c) -> None:
    body = ok(c.get("/Genres", params={"userId": scanned.admin_id, "fields": "ItemCounts"}))
    names = [g["Name"] for g in body["Items"]]
    assert names == ["Action", "Drama", "Science Fiction"]  # no music genres here
    action = body["Items"][0]
    assert action["Type"] == "Genre" and action["Id"] == ids.by_name_id("Genre", "Action")
    assert action["MovieCount"] == 1 and body["TotalRecordCount"] == 3
    music = ok(c.get("/MusicGenres"))
    assert [g["Name"] for g in music["Items"]] == ["Pop", "Rock"]
    assert music["Items"][0]["Id"] == ids.by_name_id("MusicGenre", "Pop")
    # /Genres under the music library answers music genres
    under_music = ok(c.get("/Genres", params={"parentId": scanned.extra["libraries"]["music"]}))
    assert [g["Type"] for g in under_music["Items"]] == ["MusicGenre", "MusicGenre"]
    one = ok(c.get("/Genres/action"))
    assert one["Name"] == "Action" and one["ChildCount"] == 1
    assert c.get("/Genres/Nope").status_code == 404
    # the genre's id works as a parentId and as genreIds
    by_parent = ok(c.get("/Items", params={"parentId": action["Id"], "recursive": "true"}))
    assert [i["Name"] for i in by_parent["Items"]] == ["Inception"]
    by_ids = ok(c.get("/Items", params={"genreIds": action["Id"], "recursive": "true"}))
    assert [i["Name"] for i in by_ids["Items"]] == ["Inception"]
    assert ok(c.get(f"/Items/{action['Id']}"))["Type"] == "Genre"
    # paging
    page = ok(c.get("/Genres", params={"startIndex": 1, "limit": 1}))
    assert [g["Name"] for g in page["Items"]] == ["Drama"] and page["TotalRecordCount"] == 3


def test_studios_persons_years(scanned: LiveServer, c) -> None:
    studios = ok(c.get("/Studios"))
    assert [s["Name"] for s in studios["Items"]] == ["Warner Bros."]
    assert ok(c.get("/Studios/Warner Bros."))["Id"] == ids.by_name_id("Studio", "Warner Bros.")
    persons = ok(c.get("/Persons"))
    names = [p["Name"] for p in persons["Items"]]
    assert {"Leonardo DiCaprio", "Elliot Page", "Christopher Nolan"} <= set(names)
    actors = ok(c.get("/Persons", params={"personTypes": "Actor"}))
    assert "Christopher Nolan" not in [p["Name"] for p in actors["Items"]]
    # the same shapes with other values (statements are built once per shape, values bound per request)
    directors = ok(c.get("/Persons", params={"personTypes": "Director"}))
    assert "Christopher Nolan" in [p["Name"] for p in directors["Items"]]
    assert "Leonardo DiCaprio" not in [p["Name"] for p in directors["Items"]]
    for term, expected in (("leonardo", "Leonardo DiCaprio"), ("elliot", "Elliot Page")):
        found = ok(c.get("/Persons", params={"searchTerm": term}))
        assert [p["Name"] for p in found["Items"]] == [expected]
    for limit in (1, 2):  # (Jellyfin's /Persons takes a limit, no startIndex)
        page = ok(c.get("/Persons", params={"limit": limit}))
        assert [p["Name"] for p in page["Items"]] == names[:limit]
        assert page["TotalRecordCount"] == len(names)
    leo = ok(c.get("/Persons/Leonardo DiCaprio"))
    assert leo["Type"] == "Person"
    films = ok(c.get("/Items", params={"personIds": leo["Id"], "recursive": "true"}))
    assert [i["Name"] for i in films["Items"]] == ["Inception"]
    assert c.get("/Persons/Nobody Here").status_code == 404
    years = ok(c.get("/Years", params={"sortOrder": "Descending"}))
    values = [int(y["Name"]) for y in years["Items"]]
    assert values == sorted(values, reverse=True) and 2010 in values and 1979 in values
    assert ok(c.get("/Years/2010"))["ProductionYear"] == 2010


def test_artists(scanned: LiveServer, c) -> None:
    artists = ok(c.get("/Artists"))
    assert [a["Name"] for a in artists["Items"]] == ["Band", "Guest"]
    album_artists = ok(c.get("/Artists/AlbumArtists"))
    assert [a["Name"] for a in album_artists["Items"]] == ["Band"]
    band = album_artists["Items"][0]
    assert band["Id"] == ids.by_name_id("MusicArtist", "Band") and band["Type"] == "MusicArtist"
    albums = ok(c.get("/Items", params={"albumArtistIds": band["Id"], "includeItemTypes": "MusicAlbum",
                                        "recursive": "true"}))
    assert [a["Name"] for a in albums["Items"]] == ["First Album", "Second Album"]
    guest = ok(c.get("/Artists/Guest"))
    tracks = ok(c.get("/Items", params={"artistIds": guest["Id"], "recursive": "true",
                                        "includeItemTypes": "Audio"}))
    assert [t["Name"] for t in tracks["Items"]] == ["Tune 2"]


def test_filters_and_search(scanned: LiveServer, c) -> None:
    legacy = ok(c.get("/Items/Filters", params={"parentId": scanned.extra["libraries"]["movies"]}))
    assert legacy["Genres"] == ["Action", "Science Fiction"]
    assert 2010 in legacy["Years"] and 1982 in legacy["Years"]
    f2 = ok(c.get("/Items/Filters2", params={"parentId": scanned.extra["libraries"]["music"]}))
    assert [g["Name"] for g in f2["Genres"]] == ["Pop", "Rock"]
    assert f2["Genres"][0]["Id"] == ids.by_name_id("MusicGenre", "Pop")
    hints = ok(c.get("/Search/Hints", params={"searchTerm": "incep"}))
    assert hints["SearchHints"][0]["Name"] == "Inception" and hints["SearchHints"][0]["Type"] == "Movie"
    people = ok(c.get("/Search/Hints", params={"searchTerm": "dicap"}))
    assert [h["Type"] for h in people["SearchHints"]] == ["Person"]
    assert c.get("/Search/Hints").status_code == 400
