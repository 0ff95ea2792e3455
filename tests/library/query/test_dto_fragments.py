"""Item lists assembled from per-item DTO fragments (server/library/catalog/fragments.py).

The fast reply must equal the dict path (build_dtos, then encoding the BaseItemDtoQueryResult)
after parsing, for every kind of item and every Fields value, in both casings; and a fragment
must never be served stale: an edit, a rescan that changes a tag, an image change, a played or
favourite mark and a policy change show up at once, in both casings.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest

from server.library.catalog.fragments import FragmentCache, splice
from server.library.catalog.items import ALL_FIELDS
from server.library.catalog.query import ItemQuery
from server.wire import models as w
from server.wire.casing import to_camel_builtins
from tests.conftest import LiveServer, stop_server
from tests.library.conftest import items
from tests.library_helpers import (
    refresh_and_wait,
    songs_movie_show_server,
    wait_for_artwork,
)
from tests.mediagen import make_audio, make_image

CAMEL = {"Accept": 'application/json; profile="CamelCase"'}
WEB_FIELDS = ["PrimaryImageAspectRatio", "MediaSourceCount", "BasicSyncInfo", "CanDelete"]


def _old_reply(live: LiveServer, q: ItemQuery, fields: list[str], camel: bool, **options) -> object:
    """The dict path: ItemService.query's BaseItemDtoQueryResult, encoded as the handler used to."""
    svc = live.ctx.items
    viewer = asyncio.run(svc.viewer(None, live.admin_id))
    svc.scoped(q, viewer)
    result = asyncio.run(svc.query(q, svc.options(viewer, fields, **options)))
    value = to_camel_builtins(result) if camel else result
    return json.loads(msgspec.json.encode(value))


def _diff(a: object, b: object, path: str = "") -> str | None:
    """Where two parsed replies differ first (for the assertion message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            found = _diff(a.get(key), b.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} != {len(b)} entries"
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _diff(x, y, f"{path}[{n}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


def _fast(c: httpx.Client, params: dict, camel: bool) -> dict:
    r = c.get("/Items", params=params, headers=CAMEL if camel else {})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    return r.json()


KINDS = {"movies": ["Movie"], "episodes": ["Episode"], "songs": ["Audio"],
         "folders": ["Series", "Season", "MusicAlbum", "MusicArtist", "BoxSet", "Folder"]}


@pytest.mark.parametrize("kind", list(KINDS))
def test_fast_reply_equals_the_dict_path(scanned: LiveServer, kind: str) -> None:
    live = scanned
    spec_fields = set(w.ENUMS["ItemFields"])  # (what the wire layer lets through)
    singles = sorted((ALL_FIELDS | {"Settings", "Trickplay", "ScreenshotImageTags", "ItemCounts"}) & spec_fields)
    field_sets = [[], sorted(spec_fields), WEB_FIELDS, ["PrimaryImageAspectRatio", "MediaSources", "Overview"],
                  *([f] for f in singles)]
    # the user has data on some items: played, favourite, a position
    some = [i.id for i in items(live, type=KINDS[kind][0])][:3]
    with live.admin() as c:
        for n, item_id in enumerate(some):
            if n == 0:
                assert c.post(f"/UserPlayedItems/{item_id}", params={"userId": live.admin_id}).status_code == 200
            if n == 1:
                assert c.post(f"/UserFavoriteItems/{item_id}", params={"userId": live.admin_id}).status_code == 200
        try:
            checked = 0
            for fields in field_sets:
                for camel in (False, True):
                    for user_data in (True, False):
                        params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": KINDS[kind],
                                  "sortBy": "SortName", "limit": "50", "enableUserData": str(user_data).lower()}
                        if fields:
                            params["fields"] = ",".join(fields)
                        fast = _fast(c, params, camel)
                        for _ in range(2):  # again: from the fragments now
                            assert _fast(c, params, camel) == fast
                        q = ItemQuery(recursive=True, include_types=list(KINDS[kind]), sort_by=["SortName"], limit=50)
                        old = _old_reply(live, q, fields, camel, enable_user_data=user_data)
                        assert fast == old, (kind, fields, camel, user_data, _diff(fast, old))
                        assert fast["Items" if not camel else "items"], "the library has items of this kind"
                        checked += 1
            # image options shape the fragment too
            for options in ({"enable_images": False}, {"image_type_limit": 1, "enable_image_types": ["Primary"]}):
                params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": KINDS[kind],
                          "sortBy": "SortName", "limit": "50", "fields": "PrimaryImageAspectRatio",
                          "enableImages": str(options.get("enable_images", True)).lower()}
                if "image_type_limit" in options:
                    params["imageTypeLimit"] = "1"
                    params["enableImageTypes"] = "Primary"
                for camel in (False, True):
                    q = ItemQuery(recursive=True, include_types=list(KINDS[kind]), sort_by=["SortName"], limit=50)
                    assert _fast(c, params, camel) == _old_reply(live, q, ["PrimaryImageAspectRatio"], camel,
                                                                  **options)
            assert checked == len(field_sets) * 4
        finally:
            for item_id in some:
                c.delete(f"/UserPlayedItems/{item_id}", params={"userId": live.admin_id})
                c.delete(f"/UserFavoriteItems/{item_id}", params={"userId": live.admin_id})


def test_latest_and_resume_equal_the_dict_path(scanned: LiveServer) -> None:
    live = scanned
    svc = live.ctx.items
    with live.admin() as c:
        for camel in (False, True):
            for parent in live.extra["libraries"].values():
                params = {"userId": live.admin_id, "parentId": parent, "fields": "PrimaryImageAspectRatio,Path"}
                r = c.get("/Items/Latest", params=params, headers=CAMEL if camel else {})
                assert r.status_code == 200, r.text
                q = ItemQuery(parent_id=parent, recursive=True)
                viewer = asyncio.run(svc.viewer(None, live.admin_id))
                # (the handler's own choices of types and played filter: ask it the same way)
                from server.api.user_library import _LATEST_TYPES
                ctype = asyncio.run(svc.collection_type_of(parent)) or ""
                q.include_types = list(_LATEST_TYPES.get(ctype, ()))
                q.is_played = False
                svc.scoped(q, viewer)
                dtos = asyncio.run(svc.latest(q, 20, True, svc.options(viewer, ["PrimaryImageAspectRatio", "Path"])))
                old = json.loads(msgspec.json.encode(to_camel_builtins(dtos) if camel else dtos))
                assert r.json() == old
                assert old, "Latest has items in every library"
            r = c.get("/UserItems/Resume", params={"userId": live.admin_id}, headers=CAMEL if camel else {})
            assert r.status_code == 200 and r.json()["totalRecordCount" if camel else "TotalRecordCount"] == 0


# ---------------------------------------------------------------- never stale


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own (these tests change items): two songs, a movie and two episodes."""
    live = songs_movie_show_server(tmp_path_factory.mktemp("fragments"))
    yield live
    stop_server(live)


def _one(c: httpx.Client, live: LiveServer, item_id: str, fields: str, camel: bool,
         user_id: str | None = None) -> dict:
    """The item as GET /Items lists it, asked twice (the second from its fragment)."""
    params = {"userId": user_id or live.admin_id, "ids": item_id, "fields": fields}
    first = _fast(c, params, camel)
    again = _fast(c, params, camel)
    assert first == again
    found = again["items" if camel else "Items"]
    assert len(found) == 1
    return found[0]


def _id_of(live: LiveServer, **where: object) -> str:
    found = items(live, **where)
    assert len(found) == 1, where
    return found[0].id


def test_an_edit_shows_at_once_in_both_casings(own: LiveServer) -> None:
    live = own
    film = _id_of(live, type="Movie")
    cache = live.ctx.items.fragments
    with live.admin() as c:
        for camel in (False, True):
            _one(c, live, film, "Overview,Genres", camel)
        wait_for_artwork(live)  # (a background write between the asks empties what is kept)
        hits, kept = cache.hits, live.ctx.replies.hits
        before = _one(c, live, film, "Overview,Genres", False)
        # it came from a fragment, or (asked again) the whole reply kept (server/http/reply_cache.py)
        assert cache.hits > hits or live.ctx.replies.hits > kept
        item = c.get(f"/Items/{film}", params={"userId": live.admin_id}).json()
        item.update({"Name": "Film Edited", "Overview": "New words.", "Genres": ["Western"]})
        assert c.post(f"/Items/{film}", json=item).status_code == 204
        after = _one(c, live, film, "Overview,Genres", False)
        assert (after["Name"], after["Overview"], after["Genres"]) == ("Film Edited", "New words.", ["Western"])
        assert before["Name"] != after["Name"]
        camel = _one(c, live, film, "Overview,Genres", True)
        assert (camel["name"], camel["overview"], camel["genres"]) == ("Film Edited", "New words.", ["Western"])


def test_played_and_favourite_show_at_once(own: LiveServer) -> None:
    live = own
    song = _id_of(live, type="Audio", name="Alpha")
    episode = _id_of(live, type="Episode", index_number=1)
    series = _id_of(live, type="Series")
    with live.admin() as c:
        for camel, key in ((False, "UserData"), (True, "userData")):
            played, fav = ("Played", "IsFavorite") if not camel else ("played", "isFavorite")
            assert _one(c, live, song, "", camel)[key][played] is False
            assert c.post(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert _one(c, live, song, "", camel)[key][played] is True
            assert c.post(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert _one(c, live, song, "", camel)[key][fav] is True
            assert c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert c.delete(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            data = _one(c, live, song, "", camel)[key]
            assert data[played] is False and data[fav] is False
            # a series' counts follow its episodes' played state
            unplayed = "UnplayedItemCount" if not camel else "unplayedItemCount"
            assert _one(c, live, series, "RecursiveItemCount", camel)[key][unplayed] == 2
            assert c.post(f"/UserPlayedItems/{episode}", params={"userId": live.admin_id}).status_code == 200
            assert _one(c, live, series, "RecursiveItemCount", camel)[key][unplayed] == 1
            assert c.delete(f"/UserPlayedItems/{episode}", params={"userId": live.admin_id}).status_code == 200


def test_an_image_change_shows_at_once(own: LiveServer, tmp_path: Path) -> None:
    live = own
    film = _id_of(live, type="Movie")
    picture = make_image(tmp_path / "poster.jpg", 200, 300, "red").read_bytes()
    with live.admin() as c:
        before = {camel: _one(c, live, film, "PrimaryImageAspectRatio", camel) for camel in (False, True)}
        assert c.post(f"/Items/{film}/Images/Primary", content=picture,
                      headers={"Content-Type": "image/jpeg"}).status_code == 204
        after = _one(c, live, film, "PrimaryImageAspectRatio", False)
        assert after["ImageTags"].get("Primary") and after["ImageTags"] != before[False].get("ImageTags")
        assert after["PrimaryImageAspectRatio"] == pytest.approx(200 / 300)
        camel = _one(c, live, film, "PrimaryImageAspectRatio", True)
        assert camel["imageTags"]["Primary"] == after["ImageTags"]["Primary"]  # (dict keys keep their case)
        assert camel["primaryImageAspectRatio"] == pytest.approx(200 / 300)
        assert c.delete(f"/Items/{film}/Images/Primary").status_code == 204
        wait_for_artwork(live)  # (a movie without a Primary image may get a grabbed frame again)
        gone = _one(c, live, film, "PrimaryImageAspectRatio", False)
        assert gone["ImageTags"].get("Primary") != after["ImageTags"]["Primary"]  # the upload's tag is gone


def test_a_policy_change_shows_at_once(own: LiveServer) -> None:
    live = own
    film = _id_of(live, type="Movie")
    with live.admin() as c:
        r = c.post("/Users/New", json={"Name": "viewer", "Password": "pw"})
        assert r.status_code == 200, r.text
        user = r.json()
        policy = {**user["Policy"], "EnableContentDeletion": False}
        assert c.post(f"/Users/{user['Id']}/Policy", json=policy).status_code == 204
        for camel, key in ((False, "CanDelete"), (True, "canDelete")):
            assert _one(c, live, film, "CanDelete", camel, user["Id"])[key] is False
        policy["EnableContentDeletion"] = True
        assert c.post(f"/Users/{user['Id']}/Policy", json=policy).status_code == 204
        for camel, key in ((False, "CanDelete"), (True, "canDelete")):
            assert _one(c, live, film, "CanDelete", camel, user["Id"])[key] is True
        # and a library the policy takes away is gone from the list
        policy.update(EnableAllFolders=False, EnabledFolders=[live.extra["music"]])
        assert c.post(f"/Users/{user['Id']}/Policy", json=policy).status_code == 204
        params = {"userId": user["Id"], "ids": film, "fields": "CanDelete"}
        assert _fast(c, params, False)["Items"] == [] and _fast(c, params, True)["items"] == []


def test_a_rescan_that_changes_a_tag_shows_at_once(own: LiveServer) -> None:
    live = own
    song = _id_of(live, type="Audio", name="Beta")
    path = Path(items(live, id=song)[0].path)
    with live.admin() as c:
        for camel, genres in ((False, "Genres"), (True, "genres")):
            assert _one(c, live, song, "Genres,Path", camel)[genres] == ["Rock"]
        scratch = path.with_name("scratch.mp3")
        make_audio(scratch, tags={"title": "Beta", "artist": "Band", "album_artist": "Band", "album": "Record",
                                  "track": "2", "genre": "Jazz"}, frequency=660)
        shutil.move(scratch, path)
        future = time.time() + 5
        import os
        os.utime(path, (future, future))
        refresh_and_wait(live)
        wait_for_artwork(live)
        assert _one(c, live, song, "Genres,Path", False)["Genres"] == ["Jazz"]
        assert _one(c, live, song, "Genres,Path", True)["genres"] == ["Jazz"]


# ---------------------------------------------------------------- the cache itself


def test_the_cache_is_bounded_and_compares_what_a_fragment_was_made_from() -> None:
    cache = FragmentCache(budget=64 * 1024)
    shape = cache.shape(("fields", True))
    assert cache.shape(("fields", True)) == shape and cache.shape(("other", True)) != shape
    row = ("id-0", "name", 1, None)
    cache.put("id-0", shape, (row,), b'{"Name":"name"')
    assert cache.get("id-0", shape, (("id-0", "name", 1, None),)) == b'{"Name":"name"'  # equal, not the same object
    assert cache.get("id-0", shape, (("id-0", "renamed", 1, None),)) is None  # changed: a miss
    assert cache.get("id-0", cache.shape(("other", True)), (row,)) is None  # another shape
    for n in range(2000):
        cache.put(f"id-{n}", shape, ((f"id-{n}", "x" * 100),), b"{" + b"x" * 200)
        assert cache.size <= cache.budget
    assert 0 < len(cache) < 2000
    assert cache.get("id-1999", shape, (("id-1999", "x" * 100),)) is not None  # recent ones stay
    assert cache.get("id-1", shape, (("id-1", "x" * 100),)) is None  # the oldest went first
    assert splice(b'{"Items":[],"TotalRecordCount":2}', [b"{1}", b"{2}"]) == b'{"Items":[{1},{2}],"TotalRecordCount":2}'
    assert splice(b"[]", []) == b"[]"
