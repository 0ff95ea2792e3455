"""Browsing a scanned library with jellyfin-apiclient-python (the client of the Kodi add-on and
jellyfin-mpv-shim), which still uses the /Users/{userId}/... routes: views -> library -> items
-> details, a favourite, Resume and Latest."""

from __future__ import annotations

from jellyfin_apiclient_python import JellyfinClient

from tests.conftest import LiveServer


def signed_in(live: LiveServer) -> JellyfinClient:
    client = JellyfinClient()
    client.config.app("Reelroom Tests", "1.0.0", "pytest-machine", "apiclient-browse")
    client.config.data["auth.ssl"] = False
    client.auth.connect_to_address(live.url)
    client.auth.login(live.url, "admin", "s3cret!")
    return client


def test_browse_views_library_items_details(scanned: LiveServer) -> None:
    api = signed_in(scanned).jellyfin
    views = api.get_views()["Items"]
    by_type = {v["CollectionType"]: v for v in views}
    assert set(by_type) == {"movies", "tvshows", "music"}
    assert all(v["Type"] == "CollectionFolder" for v in views)

    movies = api.get_user_items(parent_id=by_type["movies"]["Id"], include_item_types="Movie", recursive=True,
                                sort_by="SortName", fields="PrimaryImageAspectRatio,MediaSources,Genres")
    titles = [m["Name"] for m in movies["Items"]]
    assert titles == sorted(titles) and {"Alien", "Blade Runner", "Inception"} <= set(titles)
    inception = next(m for m in movies["Items"] if m["Name"] == "Inception")
    assert inception["Genres"] == ["Science Fiction", "Action"]
    assert inception["ImageTags"]["Primary"] and inception["BackdropImageTags"]

    details = api.get_item(inception["Id"])
    assert details["Id"] == inception["Id"] and details["ProductionYear"] == 2010
    assert details["Overview"] == "Dreams within dreams."
    assert {p["Name"] for p in details["People"]} >= {"Leonardo DiCaprio", "Christopher Nolan"}
    assert any(s["Type"] == "Subtitle" for s in details["MediaSources"][0]["MediaStreams"])
    assert [a["Type"] for a in api.get_ancestors(inception["Id"])][-2:] == ["CollectionFolder", "UserRootFolder"]

    # the show: series -> seasons -> episodes
    shows = api.get_user_items(parent_id=by_type["tvshows"]["Id"])
    series = shows["Items"][0]
    assert series["Type"] == "Series"
    seasons = api.get_user_items(parent_id=series["Id"])["Items"]
    assert [s["Name"] for s in seasons] == ["Specials", "Season 1", "Season 2"]
    episodes = api.get_user_items(parent_id=seasons[1]["Id"])["Items"]
    assert [e["IndexNumber"] for e in episodes] == [1, 2]

    # music: artist -> albums -> tracks
    letter = api.get_items_by_letter(parent_id=by_type["music"]["Id"], media="MusicAlbum", letter="F")
    assert [a["Name"] for a in letter["Items"]] == ["First Album"]
    hits = api.search_media_items(term="blade", media="Movie")
    assert [h["Name"] for h in hits["Items"]] == ["Blade Runner"]


def test_favourite_resume_latest(scanned: LiveServer) -> None:
    api = signed_in(scanned).jellyfin
    views = {v["CollectionType"]: v for v in api.get_views()["Items"]}
    alien = api.get_user_items(parent_id=views["movies"]["Id"], recursive=True, include_item_types="Movie",
                               search_term="alien")["Items"][0]
    try:
        api.favorite(alien["Id"], True)
        favs = api.get_user_items(recursive=True, is_favorite=True)["Items"]
        assert [f["Id"] for f in favs] == [alien["Id"]]
        assert api.get_item(alien["Id"])["UserData"]["IsFavorite"] is True

        api.update_userdata_for_item(alien["Id"], {"PlaybackPositionTicks": 5_000_000,
                                                   "LastPlayedDate": "2026-02-01T10:00:00Z"})
        resume = api.get_resume_items()["Items"]
        assert [r["Id"] for r in resume] == [alien["Id"]]
        assert resume[0]["UserData"]["PlaybackPositionTicks"] == 5_000_000

        latest = api.get_recently_added(parent_id=views["tvshows"]["Id"])
        assert [i["Type"] for i in latest] == ["Series"]
        latest_music = api.get_recently_added(parent_id=views["music"]["Id"])
        assert {i["Name"] for i in latest_music} == {"First Album", "Second Album"}
        everything = api.get_recently_added(limit=50)
        assert {"Movie", "Series", "MusicAlbum"} <= {i["Type"] for i in everything}
    finally:
        api.favorite(alien["Id"], False)
        api.update_userdata_for_item(alien["Id"], {"PlaybackPositionTicks": 0})
    assert api.get_resume_items()["Items"] == []
