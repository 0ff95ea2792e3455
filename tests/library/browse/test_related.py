"""Similar items, instant mixes, theme media, recommendations, suggestions, trailers and
critic reviews; the 404s Jellyfin's own tests expect for unknown items."""

from __future__ import annotations

import pytest

from tests.conftest import sqlite_only
from tests.library.browse.conftest import ids_by_name, new_user, one

MISSING = "0123456789abcdef0123456789abcdef"

SIMILAR_ROUTES = ("Items", "Albums", "Artists", "Movies", "Shows", "Trailers")


@pytest.mark.parametrize("route", SIMILAR_ROUTES)
def test_similar_unknown_item_is_404(browse_server, route):
    with browse_server.admin() as c:
        r = c.get(f"/{route}/{MISSING}/Similar")
        assert r.status_code == 404
        assert r.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize("route", ("ThemeMedia", "ThemeSongs", "ThemeVideos"))
def test_theme_unknown_item_is_404(browse_server, route):
    with browse_server.admin() as c:
        assert c.get(f"/Items/{MISSING}/{route}").status_code == 404


def test_similar_ranks_by_shared_values(browse_server):
    live = browse_server
    movies = ids_by_name(live, "Movie")
    with live.admin() as c:
        # Give Alien two of Inception's values and Heat one, through the metadata editor.
        for name, genres in (("Alien", ["Science Fiction", "Action"]), ("Heat", ["Action"])):
            item = c.get(f"/Items/{movies[name]}").json()
            item["Genres"] = genres
            assert c.post(f"/Items/{movies[name]}", json=item).status_code == 204
        r = c.get(f"/Items/{movies['Inception']}/Similar", params={"userId": live.admin_id})
        assert r.status_code == 200
        names = [i["Name"] for i in r.json()["Items"]]
        assert names[:2] == ["Alien", "Heat"] and "Inception" not in names and "Blade Runner" not in names
        assert [i["Name"] for i in c.get(f"/Movies/{movies['Inception']}/Similar",
                                          params={"limit": 1}).json()["Items"]] == ["Alien"]
        assert c.get(f"/Movies/{movies['Inception']}/Similar", params={"limit": -1}).status_code == 400
        # Albums by shared genre/artist; the seed album is never its own neighbour.
        albums = ids_by_name(live, "MusicAlbum")
        similar = c.get(f"/Albums/{albums['First Album']}/Similar").json()["Items"]
        assert [a["Name"] for a in similar][0] == "Second Album"  # same artist first, then shared genres
        band = one(live, type="MusicArtist", name="Band").id
        guest = c.get(f"/Artists/{band}/Similar").json()["Items"]
        assert all(a["Type"] == "MusicArtist" and a["Id"] != band for a in guest)
        assert [a["Name"] for a in guest] == ["Other Band"]  # shares the Pop genre
        # excludeArtistIds drops albums of that artist.
        rest = c.get(f"/Albums/{albums['Second Album']}/Similar", params={"excludeArtistIds": band}).json()
        assert [a["Name"] for a in rest["Items"]] == ["Third Album"]


def test_instant_mixes(browse_server):
    live = browse_server
    songs = ids_by_name(live, "Audio")
    albums = ids_by_name(live, "MusicAlbum")
    band = one(live, type="MusicArtist", name="Band").id
    with live.admin() as c:
        mix = c.get(f"/Songs/{songs['Tune 2']}/InstantMix", params={"userId": live.admin_id}).json()
        assert mix["Items"][0]["Id"] == songs["Tune 2"]  # the seed first
        assert all(i["Type"] == "Audio" for i in mix["Items"])
        # Band's 7 tracks (artist) and Other Band's Pop Song (genre).
        assert len(mix["Items"]) == mix["TotalRecordCount"] == 8
        assert len(c.get(f"/Items/{songs['Tune 2']}/InstantMix", params={"limit": 3}).json()["Items"]) == 3
        album_mix = c.get(f"/Albums/{albums['First Album']}/InstantMix").json()["Items"]
        assert {i["Name"] for i in album_mix} >= {"Song 1.1", "Tune 3"}
        assert len(c.get(f"/Artists/{band}/InstantMix").json()["Items"]) == 8
        assert len(c.get("/Artists/InstantMix", params={"id": band}).json()["Items"]) == 8
        rock = c.get("/MusicGenres/Rock/InstantMix").json()["Items"]
        assert sorted(i["Name"] for i in rock) == ["Song 1.1", "Song 1.2", "Song 2.1", "Song 2.2"]
        assert c.get("/MusicGenres/Polka/InstantMix").json()["Items"] == []
        genres = c.get("/MusicGenres", params={"userId": live.admin_id}).json()["Items"]
        pop = next(g["Id"] for g in genres if g["Name"] == "Pop")
        assert sorted(i["Name"] for i in c.get("/MusicGenres/InstantMix", params={"id": pop}).json()["Items"]) \
            == ["Pop Song", "Tune 1", "Tune 2", "Tune 3"]
        for path in (f"/Songs/{MISSING}/InstantMix", f"/Albums/{MISSING}/InstantMix", f"/Items/{MISSING}/InstantMix",
                     f"/Artists/{MISSING}/InstantMix", f"/Playlists/{MISSING}/InstantMix"):
            assert c.get(path).status_code == 404, path
        assert c.get("/MusicGenres/InstantMix", params={"id": MISSING}).status_code == 404
        assert c.get("/Artists/InstantMix", params={"id": "bad"}).status_code == 400
        assert c.get(f"/Songs/{songs['Tune 2']}/InstantMix", params={"limit": -5}).status_code == 400


def test_a_user_with_no_library_gets_empty_mixes_and_similar_lists(browse_server):
    """A user whose policy allows no library at all: a mix by genre name is empty and items of the
    libraries are 404, as /Items is -- never a 500 (its allowed set is never empty: the playlists
    folder and Live TV stay in it, so no SQL ``IN ()`` reaches PostgreSQL; this checks it on both)."""
    live = browse_server
    songs = ids_by_name(live, "Audio")
    movies = ids_by_name(live, "Movie")
    _, token = new_user(live, "nolibraries", EnableAllFolders=False, EnabledFolders=[])
    with live.client(token, device="nolibraries") as c:
        # (only playlists others shared or made public: everyone has the playlists folder)
        assert {i["Type"] for i in c.get("/Items", params={"recursive": "true"}).json()["Items"]} <= {"Playlist"}
        for genre in ("Rock", "Pop"):
            r = c.get(f"/MusicGenres/{genre}/InstantMix")
            assert r.status_code == 200, r.text
            assert r.json()["Items"] == [] and r.json()["TotalRecordCount"] == 0
        for path in (f"/Songs/{songs['Tune 2']}/InstantMix", f"/Items/{songs['Tune 2']}/InstantMix",
                     f"/Items/{movies['Inception']}/Similar"):
            r = c.get(path)
            assert r.status_code == 404, (path, r.text)
            assert r.headers["content-type"].startswith("application/problem+json")


def test_theme_media(browse_server):
    live = browse_server
    inception = one(live, type="Movie", name="Inception").id
    heat = one(live, type="Movie", name="Heat").id
    with live.admin() as c:
        songs = c.get(f"/Items/{inception}/ThemeSongs").json()
        assert songs["TotalRecordCount"] == 1 and songs["OwnerId"] == inception
        assert songs["Items"][0]["Name"] == "theme" or songs["Items"][0]["Type"] == "Audio"
        videos = c.get(f"/Items/{inception}/ThemeVideos").json()
        assert videos["TotalRecordCount"] == 1 and videos["Items"][0]["Name"] == "Dream"
        both = c.get(f"/Items/{inception}/ThemeMedia", params={"userId": live.admin_id}).json()
        assert both["ThemeSongsResult"]["TotalRecordCount"] == 1
        assert both["ThemeVideosResult"]["TotalRecordCount"] == 1
        assert both["SoundtrackSongsResult"]["Items"] == []
        empty = c.get(f"/Items/{heat}/ThemeMedia").json()
        assert empty["ThemeSongsResult"]["Items"] == [] and empty["ThemeVideosResult"]["Items"] == []
        # Theme files are extras: never listed as movies or songs.
        listed = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Audio",
                                         "searchTerm": "theme"}).json()["Items"]
        assert listed == []


def test_recommendations_suggestions_trailers_reviews(browse_server):
    live = browse_server
    uid, token = new_user(live, "recommend")
    movies = ids_by_name(live, "Movie")
    with live.client(token, "recommend-device") as c:
        assert c.get("/Movies/Recommendations", params={"userId": uid}).json() == []
        assert c.post(f"/UserPlayedItems/{movies['Inception']}").status_code == 200
        recs = c.get("/Movies/Recommendations", params={"userId": uid, "itemLimit": 3}).json()
        assert recs, "no recommendation after watching Inception"
        first = recs[0]
        assert first["RecommendationType"] == "SimilarToRecentlyPlayed" and first["BaselineItemName"] == "Inception"
        assert first["CategoryId"] == movies["Inception"]
        assert all(i["Type"] == "Movie" and i["Id"] != movies["Inception"] for i in first["Items"])
        assert len(first["Items"]) <= 3
        kinds = {r["RecommendationType"] for r in recs}
        assert kinds <= {"SimilarToRecentlyPlayed", "SimilarToLikedItem", "HasDirectorFromRecentlyPlayed",
                         "HasActorFromRecentlyPlayed"}
        assert c.get("/Movies/Recommendations", params={"categoryLimit": -1}).status_code == 400
        sugg = c.get("/Items/Suggestions", params={"userId": uid, "type": "Movie", "limit": 2}).json()
        assert len(sugg["Items"]) == 2 and all(i["Type"] == "Movie" for i in sugg["Items"])
        audio = c.get("/Items/Suggestions", params={"mediaType": "Audio", "limit": 50}).json()["Items"]
        assert audio and all(i["MediaType"] == "Audio" for i in audio)
        trailers = c.get("/Trailers", params={"userId": uid})
        assert trailers.status_code == 200
        assert all(i["Type"] == "Trailer" for i in trailers.json()["Items"])
        assert c.get("/Trailers", params={"limit": -1}).status_code == 400
        reviews = c.get(f"/Items/{movies['Inception']}/CriticReviews").json()
        assert reviews == {"Items": [], "TotalRecordCount": 0, "StartIndex": 0}


@sqlite_only
def test_planner_statistics_are_kept(browse_server):
    """ANALYZE runs after start-up and (debounced) after library changes, so SQLite picks the
    selective indexes (series_id, album_id) over the type index."""
    import time

    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError
    live = browse_server

    def indexed() -> list[tuple[str, str]]:
        try:
            rows = live.ctx.db.read_sync(lambda s: s.execute(text("SELECT tbl, idx FROM sqlite_stat1")).all())
        except OperationalError:  # no ANALYZE yet
            return []
        return [(r[0], r[1]) for r in rows]

    deadline = time.monotonic() + 30
    while ("items", "ix_items_series_id") not in indexed() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert live.ctx.planner_stats.last_run is not None
    assert ("items", "ix_items_series_id") in indexed()


def _edit(c, item_id: str, **fields) -> dict:
    """Change fields through the metadata editor; returns the old values."""
    item = c.get(f"/Items/{item_id}").json()
    old = {k: item.get(k) for k in fields}
    assert c.post(f"/Items/{item_id}", json={**item, **fields}).status_code == 204
    return old


def test_similar_and_mixes_follow_parental_rules_and_edits_at_once(browse_server):
    """A rating above the user's limit hides a movie from Similar and a song from instant mixes
    (as from /Items); a genre edited into or out of an item shows in the next answer."""
    live = browse_server
    movies = ids_by_name(live, "Movie")
    songs = ids_by_name(live, "Audio")
    _, token = new_user(live, "mixkid", MaxParentalRating=10)  # US: PG=10, R=17
    with live.admin() as c, live.client(token, device="mixkid") as kid:
        undo = {movies[n]: _edit(c, movies[n], Genres=["Mixtest"], OfficialRating=r)
                for n, r in (("Alien", "R"), ("Heat", "PG"))}
        undo[movies["Inception"]] = _edit(c, movies["Inception"], Genres=["Mixtest"])
        undo[songs["Song 1.1"]] = _edit(c, songs["Song 1.1"], OfficialRating="R")
        try:
            def similar(client) -> set[str]:
                r = client.get(f"/Items/{movies['Inception']}/Similar")
                assert r.status_code == 200
                return {i["Name"] for i in r.json()["Items"]}

            assert {"Alien", "Heat"} <= similar(c)
            assert "Heat" in similar(kid) and "Alien" not in similar(kid)

            def rock(client) -> list[str]:
                r = client.get("/MusicGenres/Rock/InstantMix")
                assert r.status_code == 200
                return sorted(i["Name"] for i in r.json()["Items"])

            assert rock(c) == ["Song 1.1", "Song 1.2", "Song 2.1", "Song 2.2"]
            assert rock(kid) == ["Song 1.2", "Song 2.1", "Song 2.2"]
            # an edit shows in the next mix and the next Similar
            undo.setdefault(songs["Pop Song"], _edit(c, songs["Pop Song"], Genres=["Rock"]))
            assert "Pop Song" in rock(c) and "Pop Song" in rock(kid)
            _edit(c, movies["Heat"], Genres=["Drama"])
            assert "Heat" not in similar(c)
        finally:
            for item_id, old in undo.items():
                _edit(c, item_id, **{k: (v if v is not None else ([] if k == "Genres" else "")) for k, v in old.items()})


def test_a_rating_new_to_the_library_is_judged_on_the_next_request(browse_server):
    """The library's rating list is kept per content write, not for a few seconds: right after a
    user with a parental limit has been answered, an item edited to a rating no item had before
    shows (or hides) on that user's very next request. (The server is shared by the session's
    browse tests, so the movie starts unrated here and the ratings are ones no other test uses.)"""
    live = browse_server
    movies = ids_by_name(live, "Movie")
    _, token = new_user(live, "ratingkid", MaxParentalRating=10)  # US: TV-Y7-FV=7, NC-17=17
    params = {"recursive": "true", "includeItemTypes": "Movie"}
    with live.admin() as c, live.client(token, device="ratingkid") as kid:
        def names() -> set[str]:
            r = kid.get("/Items", params=params)
            assert r.status_code == 200, r.text
            return {i["Name"] for i in r.json()["Items"]}

        undo = _edit(c, movies["Heat"], OfficialRating="")
        try:
            assert "Heat" in names()  # unrated: shown; the rating list has just been read
            _edit(c, movies["Heat"], OfficialRating="NC-17")
            assert "Heat" not in names()
            _edit(c, movies["Heat"], OfficialRating="TV-Y7-FV")
            assert "Heat" in names()
            assert kid.get(f"/Items/{movies['Heat']}").status_code == 200
        finally:
            _edit(c, movies["Heat"], **undo)


def test_recommendations_keep_to_the_viewers_parental_rules(browse_server):
    """A movie above the user's MaxParentalRating is never recommended to them."""
    live = browse_server
    uid, token = new_user(live, "recommend-parental")
    movies = ids_by_name(live, "Movie")

    def policy(**changes: object) -> None:
        with live.admin() as a:
            current = a.get(f"/Users/{uid}").json()["Policy"]
            assert a.post(f"/Users/{uid}/Policy", json={**current, **changes}).status_code == 204

    def rate(item_id: str, rating: str) -> None:
        with live.admin() as a:
            item = a.get(f"/Items/{item_id}").json()
            assert a.post(f"/Items/{item_id}", json={**item, "OfficialRating": rating}).status_code == 204

    def recommended(c) -> set[str]:
        r = c.get("/Movies/Recommendations", params={"userId": uid, "itemLimit": 20, "categoryLimit": 5})
        assert r.status_code == 200, r.text
        return {i["Id"] for rec in r.json() for i in rec["Items"]}

    with live.client(token, "recommend-parental-device") as c:
        assert c.post(f"/UserPlayedItems/{movies['Inception']}", params={"userId": uid}).status_code == 200
        shown = recommended(c)
        assert shown, "no recommendation after watching Inception"
        hidden = sorted(shown)[0]
        rate(hidden, "R")
        try:
            policy(MaxParentalRating=10)  # R is above 10
            assert hidden not in recommended(c)
            policy(MaxParentalRating=None)
            assert hidden in recommended(c)
        finally:
            rate(hidden, "")
            policy(MaxParentalRating=None)


@pytest.mark.parametrize("shape", [
    {"fields": "PrimaryImageAspectRatio"},
    {"fields": "PrimaryImageAspectRatio,Genres,DateCreated,Path,MediaSourceCount,CanDelete,SortName",
     "ImageTypeLimit": "1", "EnableImageTypes": "Primary,Backdrop,Thumb"},
])
def test_each_track_of_a_mix_is_its_items_dto_and_an_edit_shows_in_the_next_mix(browse_server, shape):
    """Song, album and artist mixes, asked over and over (the first asks store their tracks'
    fragments, the later ones build them: dto._real_fragments, the parents' kept image plans):
    each track is the DTO GET /Items gives it with the same Fields and image options, in both
    casings; a track renamed shows in the next mix."""
    live = browse_server
    songs = ids_by_name(live, "Audio")
    albums = ids_by_name(live, "MusicAlbum")
    band = one(live, type="MusicArtist", name="Band").id
    paths = [f"/Songs/{songs['Tune 2']}/InstantMix", f"/Albums/{albums['First Album']}/InstantMix",
             f"/Artists/{band}/InstantMix"]
    with live.admin() as c:
        def check(path: str, camel: bool) -> list[dict]:
            headers = {"Accept": 'application/json; profile="CamelCase"'} if camel else {}
            mix = c.get(path, params={"userId": live.admin_id, **shape}, headers=headers)
            assert mix.status_code == 200
            got = mix.json()["items" if camel else "Items"]
            ids = [i["id" if camel else "Id"] for i in got]
            page = c.get("/Items", params={"userId": live.admin_id, "ids": ",".join(ids), **shape}, headers=headers)
            by_id = {i["id" if camel else "Id"]: i for i in page.json()["items" if camel else "Items"]}
            assert got and [by_id[i] for i in ids] == got, path
            return got

        for _ in range(3):
            for path in paths:
                for camel in (False, True):
                    check(path, camel)
        old = _edit(c, songs["Tune 3"], Name="Tune 3 (edited)")
        try:
            names = {i["Name"] for i in check(paths[0], False)}
            assert "Tune 3 (edited)" in names and "Tune 3" not in names
        finally:
            _edit(c, songs["Tune 3"], **old)
