"""InstantMix through the fragment store (RelatedService.instant_mix_reply).

A mix's reply is assembled from the picked tracks' stored fragments when they are current, and
built otherwise; it must be exactly the bytes the server builds without the store, for every mix route, several Fields sets, both casings, with and
without user data (and, parsed, the mix ``instant_mix`` makes of DTOs); and never stale: a played mark, a favourite and an edit of a track all show in
the next mix. A mix is random: the server's draw is seeded the same before each of the asks
compared (the server runs in this process). The whole-reply cache is off on this server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator

import httpx
import pytest

from server.library.browse import related
from server.wire.casing import encode_wire
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library.conftest import items
from tests.library_helpers import add_library_and_scan, open_store, wait_for_artwork
from tests.mediagen import make_audio

CAMEL = {"Accept": 'application/json; profile="CamelCase"'}
ISSUE_FIELDS = "PrimaryImageAspectRatio,MediaSources,Overview"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("mixstore")
    music = root / "media" / "music"
    tracks = [("Band", "Record", "Rock", "Alpha"), ("Band", "Record", "Rock", "Beta"),
              ("Band", "Record", "Rock;Jazz", "Gamma"), ("Other", "Second", "Jazz", "Delta"),
              ("Other", "Second", "Rock", "Epsilon"), ("Third", "Lone", "Polka", "Zeta")]
    for n, (artist, album, genre, title) in enumerate(tracks, 1):
        make_audio(music / artist / album / f"0{n} - {title}.mp3", tags={
            "title": title, "artist": artist, "album_artist": artist, "album": album, "track": str(n),
            "genre": genre})
    server = start_server(root / "data", reply_cache_mib=0)
    complete_wizard(server)
    add_library_and_scan(server, "Music", "music", [music])
    wait_for_artwork(server)
    yield server
    stop_server(server)


def _ask(c: httpx.Client, path: str, params: dict, camel: bool, seed: int) -> bytes:
    related._random.seed(seed)  # the same draw and shuffle for every ask compared
    r = c.get(path, params=params, headers=CAMEL if camel else {})
    assert r.status_code == 200, r.text
    return r.content


def _count(body: bytes, camel: bool) -> int:
    return len(httpx.Response(200, content=body).json()["items" if camel else "Items"])


def _stored(live: LiveServer, c: httpx.Client, path: str, params: dict, camel: bool, seed: int) -> bytes:
    """The mix with every track from a stored fragment of the current epoch (asked again when a
    background write started a new epoch between the asks)."""
    store = open_store(live)
    for _ in range(5):
        _ask(c, path, params, camel, seed)  # builds (or re-stamps) and stores
        store.flush()
        hits = store.hits
        body = _ask(c, path, params, camel, seed)
        n = _count(body, camel)
        if n and store.hits - hits == n:
            return body
        wait_for_artwork(live)
    raise AssertionError("the mix never came from the store")


def _built(live: LiveServer, c: httpx.Client, path: str, params: dict, camel: bool, seed: int) -> bytes:
    """The mix as the server builds it without the store (fragments built, none kept)."""
    svc = live.ctx.items
    store, svc.store = svc.store, None
    try:
        svc.fragments.clear()
        return _ask(c, path, params, camel, seed)
    finally:
        svc.store = store


def _same(live: LiveServer, c: httpx.Client, path: str, params: dict, camel: bool, seed: int = 7) -> dict:
    for _ in range(3):
        stored = _stored(live, c, path, params, camel, seed)
        built = _built(live, c, path, params, camel, seed)
        if stored == built:
            return httpx.Response(200, content=stored).json()
        wait_for_artwork(live)  # (a background write landed between the two asks)
    at = next((i for i, (a, b) in enumerate(zip(stored, built, strict=False)) if a != b), 0)
    assert hashlib.sha256(stored).hexdigest() == hashlib.sha256(built).hexdigest(), \
        (path, params, camel, stored[max(0, at - 200):at + 200], built[max(0, at - 200):at + 200])
    return {}


def _dtos(live: LiveServer, params: dict, camel: bool, seed: int, **seed_of: str) -> object:
    """The mix as DTOs (``RelatedService.instant_mix``, the reference), encoded and parsed."""
    svc = live.ctx.items
    viewer = asyncio.run(svc.viewer(None, live.admin_id))
    opts = svc.options(viewer, [f for f in params.get("fields", "").split(",") if f],
                       enable_user_data=params.get("enableUserData") != "false",
                       image_type_limit=int(params["imageTypeLimit"]) if "imageTypeLimit" in params else None,
                       enable_image_types=params["enableImageTypes"].split(",") if "enableImageTypes" in params
                       else None)
    related._random.seed(seed)
    limit = int(params["limit"]) if "limit" in params else None
    reply = asyncio.run(live.ctx.browse.related.instant_mix(viewer, opts, limit, **seed_of))
    return json.loads(encode_wire(reply, camel))


def _id(live: LiveServer, **where: object) -> str:
    found = items(live, **where)
    assert len(found) == 1, where
    return found[0].id


def test_a_mix_from_the_store_is_the_mix_the_server_builds(live: LiveServer) -> None:
    alpha = _id(live, type="Audio", name="Alpha")
    delta = _id(live, type="Audio", name="Delta")
    album = _id(live, type="MusicAlbum", name="Record")
    with live.admin() as c:
        band = c.get("/Artists/Band").json()["Id"]
        rock = c.get("/MusicGenres/Rock").json()["Id"]
        assert c.post(f"/UserPlayedItems/{alpha}", params={"userId": live.admin_id}).status_code == 200
        assert c.post(f"/UserFavoriteItems/{delta}", params={"userId": live.admin_id}).status_code == 200
        routes = [(f"/Songs/{alpha}/InstantMix", {}, {"item_id": alpha}),
                  (f"/Items/{delta}/InstantMix", {}, {"item_id": delta}),
                  (f"/Albums/{album}/InstantMix", {}, {"item_id": album}),
                  ("/Artists/InstantMix", {"id": band}, {"item_id": band}),
                  (f"/Artists/{band}/InstantMix", {}, {"item_id": band}),
                  ("/MusicGenres/InstantMix", {"id": rock}, {"genre_id": rock}),
                  ("/MusicGenres/Rock/InstantMix", {}, {"genre_name": "Rock"})]
        checked = 0
        try:
            for path, extra, seed_of in routes:
                for fields in ("", ISSUE_FIELDS, "People,Genres,Studios,Path,MediaSourceCount,CanDelete"):
                    for camel in (False, True):
                        for user_data in (True, False):
                            params = {**extra, "userId": live.admin_id, "fields": fields,
                                      "enableUserData": str(user_data).lower()}
                            got = _same(live, c, path, params, camel)
                            found = got["items" if camel else "Items"]
                            assert found and got["totalRecordCount" if camel else "TotalRecordCount"] == len(found)
                            assert got == _dtos(live, params, camel, 7, **seed_of), (path, params, camel)
                            checked += 1
            # a limit, image options
            params = {"userId": live.admin_id, "limit": "2", "imageTypeLimit": "1", "enableImageTypes": "Primary"}
            got = _same(live, c, f"/Albums/{album}/InstantMix", params, True)
            assert len(got["items"]) == 2 and got == _dtos(live, params, True, 7, item_id=album)
        finally:
            c.delete(f"/UserPlayedItems/{alpha}", params={"userId": live.admin_id})
            c.delete(f"/UserFavoriteItems/{delta}", params={"userId": live.admin_id})
    assert checked == len(routes) * 3 * 4


def test_marks_and_edits_show_in_the_next_mix(live: LiveServer) -> None:
    alpha = _id(live, type="Audio", name="Alpha")
    beta = _id(live, type="Audio", name="Beta")
    path = f"/Songs/{alpha}/InstantMix"
    params = {"userId": live.admin_id, "fields": ISSUE_FIELDS}

    def by_name(body: dict) -> dict[str, dict]:
        return {i["Name"]: i for i in body["Items"]}

    with live.admin() as c:
        before = by_name(_same(live, c, path, params, False))
        assert before["Beta"]["UserData"]["Played"] is False
        try:
            assert c.post(f"/UserPlayedItems/{beta}", params={"userId": live.admin_id}).status_code == 200
            after = by_name(httpx.Response(200, content=_ask(c, path, params, False, 7)).json())
            assert after["Beta"]["UserData"]["Played"] is True
            assert c.post(f"/UserFavoriteItems/{beta}", params={"userId": live.admin_id}).status_code == 200
            after = by_name(httpx.Response(200, content=_ask(c, path, params, False, 7)).json())
            assert after["Beta"]["UserData"]["IsFavorite"] is True
            item = c.get(f"/Items/{beta}", params={"userId": live.admin_id}).json()
            item.update({"Name": "Beta Renamed", "Overview": "New words."})
            assert c.post(f"/Items/{beta}", json=item).status_code == 204
            edited = by_name(httpx.Response(200, content=_ask(c, path, params, False, 7)).json())
            assert "Beta" not in edited and edited["Beta Renamed"]["Overview"] == "New words."
            by_name(_same(live, c, path, params, False))  # and the store's mix is the built one again
        finally:
            c.delete(f"/UserPlayedItems/{beta}", params={"userId": live.admin_id})
            c.delete(f"/UserFavoriteItems/{beta}", params={"userId": live.admin_id})


def test_mixes_that_rarely_find_their_tracks_stored_seldom_ask_the_store() -> None:
    policy = related._MixStore()
    assert all(policy.ask() for _ in range(3))  # a new server asks
    for _ in range(20):  # mixes over a big library: nothing found stored
        if policy.ask():
            policy.seen(0, 200)
    asked = sum(policy.ask() for _ in range(80))
    assert asked == 80 // policy.sample  # one mix in ``sample`` still asks
    while not policy.ask():
        pass
    policy.seen(200, 200)  # mixes start to repeat (all stored): every mix asks again
    assert all(policy.ask() for _ in range(10))
