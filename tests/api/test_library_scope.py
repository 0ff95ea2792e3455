"""Library-scoped access on every item route: a user allowed only the Music library gets 404
(as Jellyfin answers) for a movie on every spec operation with an item in its path, with the
token in a header or as api_key in the query; the allowed item still works. Parental controls
(MaxParentalRating, BlockUnratedItems, BlockedTags, AllowedTags) hide items from queries and
from direct access alike."""

from __future__ import annotations

import re

import httpx
import pytest

from server.library.catalog.items import ITEM_PATH_PARAMS
from server.wire.operations import BY_ID
from tests.conftest import LiveServer, auth_header, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan
from tests.mediagen import make_audio, make_image, make_video

# Values for the other path parameters of the routes walked below.
OTHER_PARAMS = {
    "imageType": "Primary", "imageIndex": "0", "container": "mp4", "playlistId": "main", "segmentId": "0",
    "segmentContainer": "ts", "index": "0", "width": "320", "routeIndex": "0", "routeFormat": "srt",
    "routeStartPositionTicks": "0", "tag": "x", "format": "jpg", "maxWidth": "100", "maxHeight": "100",
    "percentPlayed": "0", "unplayedCount": "0", "newIndex": "0", "language": "eng", "lyricId": "x",
    "subtitleId": "x", "userId": None,
}


def _item_operations() -> list:
    ops = []
    for op in BY_ID.values():
        names = [n for n, where, *_ in op.params if where == "path"]
        if any(n in ITEM_PATH_PARAMS and n not in ("playlistId", "channelId", "programId", "recordingId")
               for n in names) or ("playlistId" in names and op.path.startswith("/Playlists/")):
            ops.append(op)
    return sorted(ops, key=lambda op: (op.method == "DELETE", op.operation_id))


def _path(op, item: str, user_id: str) -> str:
    values = {**OTHER_PARAMS, "userId": user_id}

    def fill(m: re.Match) -> str:
        name = m.group(1)
        return item if name in ITEM_PATH_PARAMS else values[name]

    return re.sub(r"\{(\w+)\}", fill, op.path)


@pytest.fixture(scope="module")
def scoped(tmp_path_factory) -> LiveServer:
    root = tmp_path_factory.mktemp("scope-media")
    movie = make_video(root / "Movies" / "Secret Film (2001)" / "Secret Film (2001).mkv", seconds=3)
    make_image(movie.parent / "poster.jpg")
    (movie.parent / "Secret Film (2001).en.srt").write_text("1\n00:00:00,000 --> 00:00:01,000\nHello\n")
    for title, rating, tag in (("Kids Film (2002)", "G", None), ("Adult Film (2003)", "R", "gore"),
                               ("Unrated Film (2004)", None, "family"), ("Odd Film (2005)", "Weird-Rating", None)):
        film = make_video(root / "Movies" / title / f"{title}.mkv", seconds=1)
        nfo = "<movie><title>" + title.split(" (")[0] + "</title>"
        nfo += f"<mpaa>{rating}</mpaa>" if rating else ""
        nfo += f"<tag>{tag}</tag>" if tag else ""
        (film.parent / "movie.nfo").write_text(nfo + "</movie>")
    make_audio(root / "Music" / "Band" / "Album" / "01 - Song.flac", seconds=2,
               tags={"title": "Song", "artist": "Band", "album": "Album", "track": "1"})
    live = start_server(tmp_path_factory.mktemp("scope-server") / "data")
    complete_wizard(live)
    movies = add_library_and_scan(live, "Movies", "movies", [root / "Movies"])
    music = add_library_and_scan(live, "Music", "music", [root / "Music"])
    with live.admin() as c:
        found = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie,Audio"}).json()["Items"]
        ids = {i["Type"]: i["Id"] for i in found if i["Name"] in ("Secret Film", "Song")}
        live.extra["films"] = {i["Name"]: i["Id"] for i in found if i["Type"] == "Movie"}
        for name, admin in (("musicfan", False), ("musicadmin", True)):
            uid = c.post("/Users/New", json={"Name": name, "Password": "pw"}).json()["Id"]
            policy = c.get(f"/Users/{uid}").json()["Policy"]
            policy.update(EnableAllFolders=False, EnabledFolders=[music], IsAdministrator=admin)
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            with live.client(device=name) as own:
                r = own.post("/Users/AuthenticateByName", json={"Username": name, "Pw": "pw"})
            live.extra[name] = (r.json()["AccessToken"], uid)
    live.extra.update(movie=ids["Movie"], song=ids["Audio"], movies_lib=movies, music_lib=music, root=root)
    yield live
    stop_server(live)


def test_the_walk_covers_the_item_routes():
    ids = {op.operation_id for op in _item_operations()}
    for expected in ("GetDownload", "GetFile", "GetItem", "GetVideoStream", "GetAudioStream", "GetItemImage",
                     "GetSubtitle", "GetPostedPlaybackInfo", "GetSimilarItems", "GetLyrics", "GetTrickplayTileImage",
                     "GetMasterHlsVideoPlaylist", "GetRemoteImages", "UpdateItem", "MarkFavoriteItem",
                     "GetItemUserData", "DeleteItem", "GetPlaylistItems", "GetEpisodes"):
        assert expected in ids
    assert len(ids) > 80


@pytest.mark.parametrize("who", ["musicfan", "musicadmin"])
def test_every_item_route_hides_a_movie_from_a_music_only_user(scoped, who):
    token, uid = scoped.extra[who]
    movie = scoped.extra["movie"]
    wrong = []
    with httpx.Client(base_url=scoped.url, headers=auth_header(token, who), timeout=60) as c:
        for op in _item_operations():
            path = _path(op, movie, uid)
            r = c.request(op.method, path, json={} if op.body_schema else None)
            # a permission the plain user lacks (elevation, collection/subtitle/lyric management)
            # is refused first, as Jellyfin's policies are
            needs_permission = set(op.scopes) - {"DefaultAuthorization"}
            allowed = {404} if who == "musicadmin" or not needs_permission else {403, 404}
            if r.status_code not in allowed:
                wrong.append(f"{op.operation_id} {op.method} {path}: {r.status_code}")
    assert wrong == [], "\n".join(wrong)
    with scoped.admin() as c:  # nothing was changed or deleted through the walk
        assert c.get(f"/Items/{movie}").status_code == 200


def test_a_shared_playlist_shows_only_what_the_user_may_see(scoped):
    _, fan_id = scoped.extra["musicfan"]
    with scoped.admin() as c:
        r = c.post("/Playlists", json={"Name": "Mixed", "Ids": [scoped.extra["movie"], scoped.extra["song"]],
                                       "UserId": scoped.admin_id, "IsPublic": True})
        assert r.status_code == 200, r.text
        playlist = r.json()["Id"]
        assert len(c.get(f"/Playlists/{playlist}/Items").json()["Items"]) == 2
    token, _ = scoped.extra["musicfan"]
    with httpx.Client(base_url=scoped.url, headers=auth_header(token, "musicfan"), timeout=60) as c:
        found = c.get(f"/Playlists/{playlist}/Items", params={"userId": fan_id}).json()
    assert [i["Id"] for i in found["Items"]] == [scoped.extra["song"]] and found["TotalRecordCount"] == 1


def test_delete_items_by_ids_is_scoped(scoped):
    token, _ = scoped.extra["musicadmin"]
    with httpx.Client(base_url=scoped.url, headers=auth_header(token, "musicadmin"), timeout=60) as c:
        assert c.delete("/Items", params={"ids": scoped.extra["movie"]}).status_code == 404
    with scoped.admin() as c:
        assert c.get(f"/Items/{scoped.extra['movie']}").status_code == 200


def test_api_key_in_the_query_is_scoped_too(scoped):
    token, uid = scoped.extra["musicfan"]
    movie, song = scoped.extra["movie"], scoped.extra["song"]
    with httpx.Client(base_url=scoped.url, timeout=60) as c:
        for path in (f"/Videos/{movie}/stream", f"/Videos/{movie}/stream.mkv", f"/Items/{movie}/Download",
                     f"/Items/{movie}/File", f"/Videos/{movie}/master.m3u8", f"/Items/{movie}/Images/Primary"):
            assert c.get(path, params={"api_key": token, "static": "true"}).status_code == 404, path
        assert c.get(f"/Audio/{song}/stream", params={"api_key": token, "static": "true"}).status_code == 200
        assert c.get(f"/Items/{song}/Download", params={"api_key": token}).status_code == 200


def test_the_allowed_item_still_answers(scoped):
    token, uid = scoped.extra["musicfan"]
    song = scoped.extra["song"]
    with httpx.Client(base_url=scoped.url, headers=auth_header(token, "musicfan"), timeout=60) as c:
        assert c.get(f"/Items/{song}").status_code == 200
        assert c.get(f"/Items/{song}/File").status_code == 200
        assert c.get(f"/Items/{song}/Download").status_code == 200
        assert c.post(f"/Items/{song}/PlaybackInfo", params={"userId": uid}, json={}).status_code == 200
        assert c.get(f"/Items/{song}/Similar").status_code == 200
        assert c.get(f"/Items/{song}/Ancestors").status_code == 200
        assert c.get(f"/UserItems/{song}/UserData").status_code == 200
        assert c.post(f"/UserFavoriteItems/{song}").status_code == 200
        assert c.post(f"/UserPlayedItems/{song}").status_code == 200
        items = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie,Audio"}).json()["Items"]
    assert [i["Type"] for i in items] == ["Audio"]


def test_an_api_key_without_user_sees_everything(scoped):
    with scoped.admin() as c:
        assert c.post("/Auth/Keys", params={"app": "scope-test"}).status_code == 204
        key = next(k for k in c.get("/Auth/Keys").json()["Items"] if k["AppName"] == "scope-test")["AccessToken"]
    r = httpx.get(f"{scoped.url}/Items/{scoped.extra['movie']}/File", params={"api_key": key})
    assert r.status_code == 200
    _, uid = scoped.extra["musicfan"]  # ... and acts for the user it names
    r = httpx.get(f"{scoped.url}/Items/{scoped.extra['movie']}", params={"api_key": key, "userId": uid})
    assert r.status_code == 404


def _parental_user(live: LiveServer, name: str, **policy) -> httpx.Client:
    with live.admin() as c:
        uid = c.post("/Users/New", json={"Name": name, "Password": "pw"}).json()["Id"]
        current = c.get(f"/Users/{uid}").json()["Policy"]
        assert c.post(f"/Users/{uid}/Policy", json={**current, **policy}).status_code == 204
    with live.client(device=name) as own:
        token = own.post("/Users/AuthenticateByName", json={"Username": name, "Pw": "pw"}).json()["AccessToken"]
    return live.client(token, device=name)


def _visible(c: httpx.Client, live: LiveServer) -> set[str]:
    found = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}).json()
    names = {i["Name"] for i in found["Items"]}
    assert found["TotalRecordCount"] == len(names)
    for name, item_id in live.extra["films"].items():  # direct access agrees with the query
        status = c.get(f"/Items/{item_id}").status_code
        assert status == (200 if name in names else 404), (name, status)
        if name not in names:
            assert c.get(f"/Items/{item_id}/Download").status_code == 404
    return names


def test_max_parental_rating_hides_higher_ratings_but_not_unrated(scoped):
    with _parental_user(scoped, "kid", MaxParentalRating=10) as c:  # US: G=0, PG=10, R=17
        assert _visible(c, scoped) == {"Kids Film", "Unrated Film", "Secret Film", "Odd Film"}


def test_a_null_max_parental_rating_lifts_the_limit_at_once(scoped):
    """Jellyfin's parental-control page saves "no limit" as MaxParentalRating null: the next
    query (no stale cached page) shows what the limit hid."""
    with _parental_user(scoped, "grown", MaxParentalRating=10) as c:
        limited = _visible(c, scoped)
        uid = c.get("/Users/Me").json()["Id"]
        with scoped.admin() as admin:
            current = admin.get(f"/Users/{uid}").json()["Policy"]
            assert admin.post(f"/Users/{uid}/Policy", json={**current, "MaxParentalRating": None}).status_code == 204
            assert "MaxParentalRating" not in admin.get(f"/Users/{uid}").json()["Policy"]
        lifted = _visible(c, scoped)
    assert lifted > limited and lifted == set(scoped.extra["films"])


def test_block_unrated_items_per_type(scoped):
    with _parental_user(scoped, "strict", MaxParentalRating=10, BlockUnratedItems=["Movie"]) as c:
        assert _visible(c, scoped) == {"Kids Film"}  # an unknown rating counts as unrated
    with _parental_user(scoped, "musicstrict", MaxParentalRating=10, BlockUnratedItems=["Music"]) as c:
        assert "Unrated Film" in _visible(c, scoped)


def test_blocked_and_allowed_tags(scoped):
    with _parental_user(scoped, "nogore", BlockedTags=["GORE"]) as c:
        assert "Adult Film" not in _visible(c, scoped)
    with _parental_user(scoped, "familyonly", AllowedTags=["family"]) as c:
        assert _visible(c, scoped) == {"Unrated Film"}
        views = c.get("/UserViews").json()["Items"]
    assert {v["Name"] for v in views} >= {"Movies"}  # libraries themselves are not hidden by tags
