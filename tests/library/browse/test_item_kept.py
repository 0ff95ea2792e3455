"""GET /Items/{id} answered from what is kept (ItemService.item_reply): the item's DTO without
UserData as a fragment while the library's content is unchanged, the viewer's may-see verdict
and UserData per (item, user, casing). The reply must equal the struct path (ItemService.item,
then encoding) for every kind of item in both casings, and nothing kept may outlive a change: a
played mark, an edit, a policy that takes the library away, parental rules, and the guard's
verdicts for other item routes (ItemService.check_path_items) likewise."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import msgspec
import pytest

from server.db.tables import Item
from server.library.catalog.query import ROOT_FOLDER_ID
from server.wire.casing import to_camel_builtins
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library.conftest import items
from tests.library_helpers import add_library_and_scan
from tests.mediagen import make_audio, make_video

CAMEL = {"Accept": 'application/json; profile="CamelCase"'}


def _struct_path(live: LiveServer, item_id: str, user_id: str, camel: bool) -> object:
    svc = live.ctx.items
    viewer = asyncio.run(svc.viewer(None, user_id))
    dto = asyncio.run(svc.item(item_id, viewer))
    return json.loads(msgspec.json.encode(to_camel_builtins(dto) if camel else dto))


@pytest.mark.parametrize("kind", ["Movie", "Episode", "Season", "Series", "Audio", "MusicAlbum", "MusicArtist"])
def test_the_reply_equals_the_struct_path(scanned: LiveServer, kind: str) -> None:
    live = scanned
    found = items(live, type=kind)
    found = found if kind == "Movie" else found[:2]  # (every movie: people, a trailer, versions)
    assert found, kind
    seen: set[str] = set()
    with live.admin() as c:
        for row in found:
            for camel in (False, True):
                first = c.get(f"/Items/{row.id}", params={"userId": live.admin_id}, headers=CAMEL if camel else {})
                assert first.status_code == 200, first.text
                assert first.headers["content-type"].startswith("application/json")
                again = c.get(f"/Items/{row.id}", params={"userId": live.admin_id}, headers=CAMEL if camel else {})
                assert again.json() == first.json()  # (the second from what was kept)
                assert first.json() == _struct_path(live, row.id, live.admin_id, camel), (kind, camel)
                body = first.json()
                seen |= {k for k in ("People", "people") if body.get(k)}
                seen |= {k for k in ("LocalTrailerCount", "localTrailerCount") if body.get(k)}
                seen |= {k for k in ("MediaSources", "mediaSources") if len(body.get(k) or ()) > 1}
        if kind == "Movie":
            assert seen == {"People", "people", "LocalTrailerCount", "localTrailerCount", "MediaSources",
                            "mediaSources"}, seen
        # the user root folder and a malformed id take the struct path still
        root = c.get(f"/Items/{ROOT_FOLDER_ID}", params={"userId": live.admin_id})
        assert root.status_code == 200 and root.json()["Type"] == "UserRootFolder"
        assert c.get("/Items/not-an-id", params={"userId": live.admin_id}).status_code == 404


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own (these tests change things): a rated movie and a song."""
    root = tmp_path_factory.mktemp("item-kept")
    film = make_video(root / "Movies" / "Film (2001)" / "Film (2001).mkv", seconds=1.0, width=160, height=120, fps=10)
    (film.parent / "movie.nfo").write_text("<movie><title>Film</title><mpaa>R</mpaa></movie>")
    make_audio(root / "Music" / "Band" / "Record" / "01 - Song.mp3",
               tags={"title": "Song", "artist": "Band", "album": "Record", "track": "1"})
    live = start_server(root / "data")
    complete_wizard(live)
    live.extra["movies"] = add_library_and_scan(live, "Movies", "movies", [root / "Movies"])
    live.extra["music"] = add_library_and_scan(live, "Music", "music", [root / "Music"])
    with live.admin() as c:
        uid = c.post("/Users/New", json={"Name": "viewer", "Password": "pw"}).json()["Id"]
    with live.client(device="viewer") as anon:
        token = anon.post("/Users/AuthenticateByName", json={"Username": "viewer", "Pw": "pw"}).json()["AccessToken"]
    live.extra["viewer"] = (uid, token)
    yield live
    stop_server(live)


def _get(c: httpx.Client, item_id: str, camel: bool = False) -> httpx.Response:
    return c.get(f"/Items/{item_id}", headers=CAMEL if camel else {})


def _set_policy(live: LiveServer, uid: str, **change: object) -> None:
    with live.admin() as c:
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        policy.update(change)
        assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204


def test_user_data_and_edits_show_at_once(own: LiveServer) -> None:
    live = own
    uid, token = live.extra["viewer"]
    film = next(r.id for r in items(live, type="Movie"))
    with live.client(token, device="viewer") as c:
        for camel, played, name in ((False, "Played", "Name"), (True, "played", "name")):
            ud = "userData" if camel else "UserData"
            assert _get(c, film, camel).json()[ud][played] is False
            assert _get(c, film, camel).json()[ud][played] is False  # kept
            assert c.post(f"/UserPlayedItems/{film}").status_code == 200
            assert _get(c, film, camel).json()[ud][played] is True
            assert c.delete(f"/UserPlayedItems/{film}").status_code == 200
            assert _get(c, film, camel).json()[ud][played] is False
            # an edit, written by anyone (here straight through the database writer)
            live.ctx.db.write_sync(lambda s, n=f"Film {camel}": setattr(s.get(Item, film), "name", n))
            assert _get(c, film, camel).json()[name] == f"Film {camel}"
        # another user's answer is their own
        with live.admin() as admin:
            assert admin.post(f"/UserPlayedItems/{film}", params={"userId": live.admin_id}).status_code == 200
            assert admin.get(f"/Items/{film}", params={"userId": live.admin_id}).json()["UserData"]["Played"] is True
            assert _get(c, film).json()["UserData"]["Played"] is False
            assert admin.delete(f"/UserPlayedItems/{film}", params={"userId": live.admin_id}).status_code == 200
            # a write of this user's data by someone else (an administrator acting for them)
            assert admin.post(f"/UserPlayedItems/{film}", params={"userId": uid}).status_code == 200
            assert _get(c, film).json()["UserData"]["Played"] is True
            assert admin.delete(f"/UserPlayedItems/{film}", params={"userId": uid}).status_code == 200
            assert _get(c, film).json()["UserData"]["Played"] is False


def test_a_policy_change_denies_at_once(own: LiveServer) -> None:
    live = own
    uid, token = live.extra["viewer"]
    film = next(r.id for r in items(live, type="Movie"))
    song = next(r.id for r in items(live, type="Audio"))
    with live.client(token, device="viewer") as c:
        try:
            for _ in range(2):  # asked again: from what was kept
                assert _get(c, film).status_code == 200 and _get(c, film, True).status_code == 200
                assert c.get(f"/Items/{film}/Download").status_code == 200  # (the guard's verdict)
            # the policy takes the library away: 404 on the very next request, every route
            _set_policy(live, uid, EnableAllFolders=False, EnabledFolders=[live.extra["music"]])
            for _ in range(2):
                assert _get(c, film).status_code == 404 and _get(c, film, True).status_code == 404
                assert c.get(f"/Items/{film}/Download").status_code == 404
                assert _get(c, song).status_code == 200
            # and gives it back
            _set_policy(live, uid, EnableAllFolders=True, EnabledFolders=[])
            assert _get(c, film).status_code == 200 and c.get(f"/Items/{film}/Download").status_code == 200
            # parental rules: R (17 in the US) is above 10
            _set_policy(live, uid, MaxParentalRating=10)
            for _ in range(2):
                assert _get(c, film).status_code == 404 and _get(c, film, True).status_code == 404
                assert c.get(f"/Items/{film}/Download").status_code == 404
                assert _get(c, song).status_code == 200
            _set_policy(live, uid, MaxParentalRating=1000)  # (a higher limit: R is allowed)
            assert _get(c, film).status_code == 200 and c.get(f"/Items/{film}/Download").status_code == 200
            # a rating that changes under kept verdicts (unrated items stay visible)
            _set_policy(live, uid, MaxParentalRating=10)
            assert _get(c, film).status_code == 404
            live.ctx.db.write_sync(lambda s: setattr(s.get(Item, film), "official_rating", None))
            assert _get(c, film).status_code == 200 and c.get(f"/Items/{film}/Download").status_code == 200
            live.ctx.db.write_sync(lambda s: setattr(s.get(Item, film), "official_rating", "R"))
            assert _get(c, film).status_code == 404 and c.get(f"/Items/{film}/Download").status_code == 404
        finally:
            _set_policy(live, uid, EnableAllFolders=True, EnabledFolders=[], MaxParentalRating=1000)
