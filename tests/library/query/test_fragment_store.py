"""The fragment store (server/library/catalog/fragment_store.py): encoded item fragments on disk.

A page whose items all have a fragment of the current epoch is answered from those bytes; it must
give exactly the bytes the server builds without the store (every kind of item, several Fields
sets, both casings, with and without user data), and never a stale answer: an edit, a new image,
a parent's change, people, a played mark, a policy change, a configuration change, a rescan that
changes a file, and a write to the main database while the server was stopped all show on the
next page. The whole-reply cache is off on these servers, so every page is computed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from server.library.catalog.fragment_store import FragmentStore, Stored, StoreUse, item_key, item_keys
from server.wire import models as w
from tests.conftest import ON_POSTGRES, LiveServer, complete_wizard, sqlite_only, start_server, stop_server
from tests.library.conftest import items
from tests.library_helpers import (
    add_library_and_scan,
    open_store,
    refresh_and_wait,
    restarted,
    songs_movie_show_server,
    store_off,
    wait_for_artwork,
)
from tests.mediagen import make_audio, make_image

CAMEL = {"Accept": 'application/json; profile="CamelCase"'}
ISSUE_FIELDS = "PrimaryImageAspectRatio,MediaSources,Overview"


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own, whole replies not kept: songs, a movie, a show with episodes."""
    live = songs_movie_show_server(tmp_path_factory.mktemp("store"), reply_cache_mib=0)
    yield live
    stop_server(live)


def _page(c: httpx.Client, params: dict, camel: bool) -> bytes:
    r = c.get("/Items", params=params, headers=CAMEL if camel else {})
    assert r.status_code == 200, r.text
    return r.content


def _stored(live: LiveServer, c: httpx.Client, params: dict, camel: bool) -> bytes:
    """The page as the store answers it: asked until every item came from a stored fragment of
    the current epoch (a background write between the asks, e.g. the artwork run, starts a new
    epoch: then it is asked again)."""
    store = open_store(live)
    tries = []
    for _ in range(8):
        _page(c, params, camel)  # builds (or re-stamps) and stores
        store.flush()
        hits, generation = store.hits, live.ctx.db.content_generation
        body = _page(c, params, camel)
        n = len(_items(body, camel))
        if n and store.hits - hits == n:
            return body
        tries.append(f"{store.hits - hits} of {n} stored, content generation {generation} -> "
                     f"{live.ctx.db.content_generation}")
        wait_for_artwork(live)
    raise AssertionError(f"the page never came from the store: {tries}")


def _built(live: LiveServer, c: httpx.Client, params: dict, camel: bool) -> bytes:
    """The page as the server builds it without the store (and without kept fragments)."""
    with store_off(live):
        return _page(c, params, camel)


def _items(body: bytes, camel: bool) -> list[dict]:
    found: list[dict] = httpx.Response(200, content=body).json()["items" if camel else "Items"]
    return found


def _same(live: LiveServer, c: httpx.Client, params: dict, camel: bool) -> list[dict]:
    """The store's page is the built page, byte for byte; its items."""
    for _ in range(3):
        stored = _stored(live, c, params, camel)
        built = _built(live, c, params, camel)
        if stored == built:
            return _items(stored, camel)
        wait_for_artwork(live)  # (a background write landed between the two asks)
    assert hashlib.sha256(stored).hexdigest() == hashlib.sha256(built).hexdigest(), (stored[:400], built[:400])
    return []


def _id_of(live: LiveServer, **where: object) -> str:
    found = items(live, **where)
    assert len(found) == 1, where
    return found[0].id


KINDS = {"movies": "Movie", "episodes": "Episode", "series": "Series", "seasons": "Season", "songs": "Audio",
         "albums": "MusicAlbum"}


def test_the_store_serves_the_bytes_the_server_builds(own: LiveServer) -> None:
    live = own
    spec_fields = sorted(set(w.ENUMS["ItemFields"]))
    field_sets = ["", ISSUE_FIELDS, "PrimaryImageAspectRatio,MediaSourceCount,BasicSyncInfo,CanDelete",
                  "People,MediaSources,RecursiveItemCount,ChildCount,Genres,Studios,Path", ",".join(spec_fields)]
    song = _id_of(live, type="Audio", name="Alpha")
    episode = _id_of(live, type="Episode", index_number=1)
    checked = 0
    with live.admin() as c:
        assert c.post(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
        assert c.post(f"/UserFavoriteItems/{episode}", params={"userId": live.admin_id}).status_code == 200
        try:
            for kind in KINDS.values():
                for fields in field_sets:
                    for camel in (False, True):
                        for user_data in (True, False):
                            params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": kind,
                                      "sortBy": "SortName", "limit": "50", "fields": fields,
                                      "enableUserData": str(user_data).lower()}
                            assert _same(live, c, params, camel), (kind, fields, camel, user_data)
                            checked += 1
            # image options are part of the shape
            params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": "Movie,Episode,Audio",
                      "fields": "PrimaryImageAspectRatio", "imageTypeLimit": "1", "enableImageTypes": "Primary"}
            assert _same(live, c, params, False)
            assert _same(live, c, {**params, "enableImages": "false"}, True)
        finally:
            c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id})
            c.delete(f"/UserFavoriteItems/{episode}", params={"userId": live.admin_id})
    assert checked == len(KINDS) * len(field_sets) * 4


def _one(live: LiveServer, c: httpx.Client, item_id: str, fields: str, camel: bool = False,
         user_id: str | None = None) -> dict:
    """The item as a page of the store lists it, checked against the built page."""
    params = {"userId": user_id or live.admin_id, "ids": item_id, "fields": fields}
    found = _same(live, c, params, camel)
    assert len(found) == 1
    return found[0]


def test_an_edit_and_people_show_on_the_next_page(own: LiveServer) -> None:
    live = own
    film = _id_of(live, type="Movie")
    with live.admin() as c:
        before = _one(live, c, film, "Overview,Genres,People")
        item = c.get(f"/Items/{film}", params={"userId": live.admin_id}).json()
        item.update({"Name": "Film Stored", "Overview": "Other words.", "Genres": ["Western"],
                     "People": [{"Name": "Ann Actor", "Type": "Actor", "Role": "Lead"}]})
        assert c.post(f"/Items/{film}", json=item).status_code == 204
        after = _one(live, c, film, "Overview,Genres,People")
        assert (after["Name"], after["Overview"], after["Genres"]) == ("Film Stored", "Other words.", ["Western"])
        assert [p["Name"] for p in after["People"]] == ["Ann Actor"] and before["Name"] != after["Name"]


def test_images_of_the_item_and_of_its_parent_show_on_the_next_page(own: LiveServer, tmp_path: Path) -> None:
    live = own
    film = _id_of(live, type="Movie")
    series = _id_of(live, type="Series")
    episode = _id_of(live, type="Episode", index_number=2)
    with live.admin() as c:
        before = _one(live, c, film, "PrimaryImageAspectRatio")
        picture = make_image(tmp_path / "poster.jpg", 200, 300, "red").read_bytes()
        assert c.post(f"/Items/{film}/Images/Primary", content=picture,
                      headers={"Content-Type": "image/jpeg"}).status_code == 204
        after = _one(live, c, film, "PrimaryImageAspectRatio")
        assert after["ImageTags"].get("Primary") and after["ImageTags"] != before.get("ImageTags")
        assert after["PrimaryImageAspectRatio"] == pytest.approx(200 / 300)
        # an episode borrows its series' images: a new series image is on the episode's next page
        ep_before = _one(live, c, episode, "PrimaryImageAspectRatio", camel=True)
        art = make_image(tmp_path / "thumb.jpg", 320, 180, "blue").read_bytes()
        assert c.post(f"/Items/{series}/Images/Thumb", content=art,
                      headers={"Content-Type": "image/jpeg"}).status_code == 204
        ep_after = _one(live, c, episode, "PrimaryImageAspectRatio", camel=True)
        assert ep_after.get("seriesThumbImageTag") and ep_after != ep_before
        # and the parent's new name (a season's SeriesName follows the series row)
        item = c.get(f"/Items/{series}", params={"userId": live.admin_id}).json()
        item["Name"] = "Show Renamed"
        assert c.post(f"/Items/{series}", json=item).status_code == 204
        _one(live, c, episode, "PrimaryImageAspectRatio")  # (the built page, whatever the editor changed)
        _one(live, c, _id_of(live, type="Season"), "PrimaryImageAspectRatio,ChildCount")


def test_played_marks_and_policy_changes_show_on_the_next_page(own: LiveServer) -> None:
    live = own
    song = _id_of(live, type="Audio", name="Beta")
    series = _id_of(live, type="Series")
    episode = _id_of(live, type="Episode", index_number=1)
    with live.admin() as c:
        assert _one(live, c, song, "")["UserData"]["Played"] is False
        assert c.post(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
        assert _one(live, c, song, "")["UserData"]["Played"] is True
        assert c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
        assert _one(live, c, song, "", camel=True)["userData"]["played"] is False
        unplayed = _one(live, c, series, "RecursiveItemCount")["UserData"]["UnplayedItemCount"]
        assert c.post(f"/UserPlayedItems/{episode}", params={"userId": live.admin_id}).status_code == 200
        assert _one(live, c, series, "RecursiveItemCount")["UserData"]["UnplayedItemCount"] == unplayed - 1
        assert c.delete(f"/UserPlayedItems/{episode}", params={"userId": live.admin_id}).status_code == 200
        # CanDelete follows the user's policy
        r = c.post("/Users/New", json={"Name": "store-viewer", "Password": "pw"})
        assert r.status_code == 200, r.text
        user = r.json()
        policy = {**user["Policy"], "EnableContentDeletion": False}
        assert c.post(f"/Users/{user['Id']}/Policy", json=policy).status_code == 204
        assert _one(live, c, song, "CanDelete", user_id=user["Id"])["CanDelete"] is False
        policy["EnableContentDeletion"] = True
        assert c.post(f"/Users/{user['Id']}/Policy", json=policy).status_code == 204
        assert _one(live, c, song, "CanDelete", user_id=user["Id"])["CanDelete"] is True


@pytest.mark.parametrize("camel", [False, True])
def test_no_user_data_is_the_encoded_dto_for_any_id(camel: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The UserData of an item the viewer has no data on (the template with the id put in, for
    an id of 32 ASCII letters and digits; ``stored_reply`` checks the id's bytes) is byte for byte
    the encoded DTO; any other id (non-ASCII letters, another length, a quote) is encoded whole,
    and a page joined from stored fragments carries the same bytes as the DTO for each."""
    from server.library.catalog.dto import _user_data_bytes, _user_data_dto, stored_reply
    from server.library.catalog.fragment_store import Stored
    from server.wire.casing import encode_wire

    ids = ["0123456789abcdef0123456789abcdef", "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "\u00e9" * 32,
           "\u00e9" * 16 + "a" * 16, "a" * 31, 'a"' * 16, "a-" * 16]
    rows = [Stored(i, 1, None, "Movie", 0, 60_000_000, b'{"Id":"x"') for i in ids]
    expected = [encode_wire(_user_data_dto(r, None, None), camel) for r in rows]
    assert [_user_data_bytes(r, None, None, camel) for r in rows] == expected
    key = b',"userData":' if camel else b',"UserData":'

    class _NoUserData:
        pass

    from server.library.catalog import dto as dto_module

    monkeypatch.setattr(dto_module, "user_data_rows", lambda *args, **kwargs: {})  # (no database: no data)
    opts = dto_module.DtoOptions(user_id="u" * 32)
    joined = stored_reply(_NoUserData(), rows, opts, camel, b'{"Items":[],"TotalRecordCount":7}')  # type: ignore[arg-type]
    parts = [b'{"Id":"x"' + key + e + b"}" for e in expected]
    assert joined == b'{"Items":[' + b",".join(parts) + b'],"TotalRecordCount":7}'


def test_a_warm_page_with_user_data_is_the_built_page_in_one_join(own: LiveServer,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A page whose every item is a stored fragment of the epoch is joined once (dto.stored_reply)
    and read without a session when it needs none (LeanSession): with favourites, played marks and
    a series' played counts it is the built page byte for byte, in both casings, and a mark set or
    cleared shows on the very next page."""
    from server.db.database import LeanSession
    from server.library.catalog import items as items_module

    live = own
    joined: list[int] = []
    sessions: list[int] = []
    real_join, real_session = items_module.stored_reply, LeanSession._session

    def counted_join(*args, **kwargs):  # type: ignore[no-untyped-def]
        joined.append(1)
        return real_join(*args, **kwargs)

    def counted_session(self):  # type: ignore[no-untyped-def]
        sessions.append(1)
        return real_session(self)

    monkeypatch.setattr(items_module, "stored_reply", counted_join)
    monkeypatch.setattr(LeanSession, "_session", counted_session)
    song = _id_of(live, type="Audio", name="Beta")
    episode = _id_of(live, type="Episode", index_number=1)
    with live.admin() as c:
        try:
            assert c.post(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert c.post(f"/UserPlayedItems/{episode}", params={"userId": live.admin_id}).status_code == 200
            for kind in ("Audio", "Series", "Season", "Episode"):
                params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": kind,
                          "fields": ISSUE_FIELDS + ",RecursiveItemCount"}
                for camel in (False, True):
                    joined.clear()
                    assert _same(live, c, params, camel), kind
                    assert joined, f"a warm page of {kind} was not joined by stored_reply"
            songs = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": "Audio", "sortBy": "Random",
                     "fields": ISSUE_FIELDS}
            body = _stored(live, c, songs, False)
            assert [i for i in _items(body, False) if i["Id"] == song][0]["UserData"]["IsFavorite"] is True
            sessions.clear()
            _page(c, songs, False)  # (the ids cached, user data pooled: nothing needs a session)
            assert not sessions, "a warm page of cached ids made a session"
            assert c.delete(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            after = [i for i in _items(_page(c, songs, False), False) if i["Id"] == song]
            assert after and after[0]["UserData"]["IsFavorite"] is False
        finally:
            c.delete(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id})
            c.delete(f"/UserPlayedItems/{episode}", params={"userId": live.admin_id})


def test_a_stored_page_reads_user_data_on_a_pooled_connection_and_is_never_stale(
        own: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page made only of stored fragments whose ids were cached reads the viewer's user data on a pooled connection
    (query._pooled_user_data, no session transaction): a favorite and a played mark set or
    cleared show on the very next page, in both casings."""
    from server.library.catalog import query

    live = own
    pooled: list[int] = []
    real = query._pooled_user_data

    def counted(s, user_id, item_ids):  # type: ignore[no-untyped-def]
        found = real(s, user_id, item_ids)
        pooled.append(len(item_ids))
        return found

    monkeypatch.setattr(query, "_pooled_user_data", counted)
    # (sortBy=Random draws from the scope's cached id list, as a page from startIndex 1000 on
    # does: the read's first statement is the user data's)
    params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": "Audio", "sortBy": "Random",
              "fields": ISSUE_FIELDS}
    with live.admin() as c:
        body = _stored(live, c, params, False)
        assert pooled, "a page of stored fragments did not read its user data on a pooled connection"
        song = _items(body, False)[0]["Id"]

        def shown(camel: bool) -> dict:
            for item in _items(_stored(live, c, params, camel), camel):
                if item["id" if camel else "Id"] == song:
                    return item["userData" if camel else "UserData"]
            raise AssertionError("the song left the page")

        try:
            assert c.post(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert shown(False)["IsFavorite"] is True
            assert c.post(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert shown(True)["played"] is True
            assert c.delete(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
            after = shown(False)
            assert after["IsFavorite"] is False and after["Played"] is False
        finally:
            c.delete(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id})
            c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id})
    # the pooled read gives what the session's read gives
    with live.ctx.db.session() as s:
        ids = [i["Id"] for i in _items(body, False)]
        assert real(s, live.admin_id, ids) == query.get_user_data(s, live.admin_id, ids)


def test_kept_user_data_is_never_stale_nor_another_users(own: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's whole user data is kept per database generation (query.KeptUserData) for pages of
    stored fragments: a favourite and a played mark set or cleared show on the very next page,
    another user never gets them, and what is kept is what a read per page gives."""
    from server.library.catalog import query

    live = own
    monkeypatch.setattr(query.KeptUserData, "AFTER", 1)  # kept from the first page at a generation
    kept = query.kept_user_data(live.ctx.db.engine)
    params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": "Audio", "sortBy": "Random",
              "fields": ISSUE_FIELDS}
    with live.admin() as c:
        r = c.post("/Users/New", json={"Name": "kept-other", "Password": "other-pw"})
        assert r.status_code == 200, r.text
        other = r.json()["Id"]
        loads = kept.loads
        body = _stored(live, c, params, False)
        assert kept.loads > loads, "a page of stored fragments did not use the kept user data"
        song = _items(body, False)[0]["Id"]

        def shown(camel: bool, user: str = live.admin_id) -> dict:
            for item in _items(_stored(live, c, {**params, "userId": user}, camel), camel):
                if item["id" if camel else "Id"] == song:
                    return item["userData" if camel else "UserData"]
            raise AssertionError("the song left the page")

        try:
            for _ in range(3):  # (kept for this generation now)
                assert shown(False)["IsFavorite"] is False
            assert c.post(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert shown(False)["IsFavorite"] is True
            assert shown(False, other)["IsFavorite"] is False  # the other user's page: not the admin's mark
            assert c.post(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert shown(True)["played"] is True
            assert shown(True, other)["played"] is False
            assert c.delete(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
            after = shown(False)
            assert after["IsFavorite"] is False and after["Played"] is False
            assert c.post(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
            ids = [i["Id"] for i in _items(body, False)]
            with live.ctx.db.session() as s:  # what is kept is what a read per page gives
                kept_rows = kept.rows(live.ctx.db.engine, live.admin_id, ids, live.ctx.db.user_data_stamp(live.admin_id))
                assert kept_rows is not None and kept_rows[song].played
                assert kept_rows == query._pooled_user_data(s, live.admin_id, ids)
        finally:
            c.delete(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id})
            c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id})
            c.delete(f"/Users/{other}")


def test_a_configuration_change_starts_a_new_epoch(own: LiveServer) -> None:
    live = own
    film = _id_of(live, type="Movie")
    store = live.ctx.items.store
    assert store is not None
    with live.admin() as c:
        _one(live, c, film, ISSUE_FIELDS)
        config = c.get("/System/Configuration").json()
        use = live.ctx.items.store_use(live.ctx.items.options(_viewer(live)), False)
        assert use is not None
        config["ServerName"] = "Stored Server"
        assert c.post("/System/Configuration", json=config).status_code == 204
        after = live.ctx.items.store_use(live.ctx.items.options(_viewer(live)), False)
        assert after is not None and after.epoch != use.epoch  # nothing stored before is used as it is
        _one(live, c, film, ISSUE_FIELDS)


def _viewer(live: LiveServer):  # type: ignore[no-untyped-def]
    import asyncio

    return asyncio.run(live.ctx.items.viewer(None, live.admin_id))


def test_a_rescan_that_changes_a_file_shows_on_the_next_page(own: LiveServer) -> None:
    live = own
    song = _id_of(live, type="Audio", name="Alpha")
    path = Path(items(live, id=song)[0].path)
    with live.admin() as c:
        assert _one(live, c, song, "Genres,Path")["Genres"] == ["Rock"]
        scratch = path.with_name("scratch.mp3")
        make_audio(scratch, tags={"title": "Alpha", "artist": "Band", "album_artist": "Band", "album": "Record",
                                  "track": "1", "genre": "Blues"}, frequency=550)
        shutil.move(scratch, path)
        future = time.time() + 5
        os.utime(path, (future, future))
        refresh_and_wait(live)
        wait_for_artwork(live)
        assert _one(live, c, song, "Genres,Path")["Genres"] == ["Blues"]
        assert _one(live, c, song, "Genres,Path", camel=True)["genres"] == ["Blues"]


@sqlite_only
def test_a_write_to_the_database_while_the_server_was_stopped_shows_after_the_restart(
        tmp_path: Path) -> None:
    if ON_POSTGRES:
        pytest.skip("writes the SQLite file directly")
    music = tmp_path / "media" / "music"
    for n, title in enumerate(("Gamma", "Delta"), 1):
        make_audio(music / "Duo" / "Album" / f"0{n} - {title}.mp3", tags={
            "title": title, "artist": "Duo", "album_artist": "Duo", "album": "Album", "track": str(n)})
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        complete_wizard(live)
        add_library_and_scan(live, "Music", "music", [music])
        wait_for_artwork(live)
        params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": "Audio", "sortBy": "SortName",
                  "fields": ISSUE_FIELDS}
        with live.admin() as c:
            names = [i["Name"] for i in _items(_stored(live, c, params, False), False)]
        assert names == ["Delta", "Gamma"]
        gamma = _id_of(live, type="Audio", name="Gamma")
    finally:
        stop_server(live)
    database = next((tmp_path / "data").rglob("*.db"))
    with sqlite3.connect(database) as conn:  # a write no server saw
        assert conn.execute("UPDATE items SET name = 'Gamma Outside', overview = 'Written outside' WHERE id = ?",
                            (gamma,)).rowcount == 1
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        live.admin_token, live.admin_id = _sign_in(live)
        store = open_store(live)
        assert store.count() >= 2  # (the store was kept over the restart)
        assert store.adopted == 0  # the file is not as the last clean close left it: a new series of epochs
        with live.admin() as c:
            found = _items(_page(c, params, False), False)
            assert {i["Name"]: i.get("Overview") for i in found}["Gamma Outside"] == "Written outside"
            again = _items(_stored(live, c, params, False), False)
            assert [i["Name"] for i in again] == [i["Name"] for i in found]
            assert again == _items(_built(live, c, params, False), False)
    finally:
        stop_server(live)


def _music_server(tmp_path: Path) -> tuple[LiveServer, dict]:
    music = tmp_path / "media" / "music"
    for n, title in enumerate(("Gamma", "Delta"), 1):
        make_audio(music / "Duo" / "Album" / f"0{n} - {title}.mp3", tags={
            "title": title, "artist": "Duo", "album_artist": "Duo", "album": "Album", "track": str(n)})
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    complete_wizard(live)
    add_library_and_scan(live, "Music", "music", [music])
    wait_for_artwork(live)
    params = {"userId": live.admin_id, "recursive": "true", "includeItemTypes": "Audio", "sortBy": "SortName",
              "fields": ISSUE_FIELDS}
    return live, params


@sqlite_only
def test_a_clean_restart_takes_over_the_last_epoch_and_anything_else_starts_a_new_one(tmp_path: Path) -> None:
    """After a clean close with nothing written since, the first page after the restart is the
    stored fragments as they are (no digest re-check), the very bytes the server builds; a
    configuration file changed while stopped, or a crash (no clean close recorded), starts a new
    series (a write to the database while stopped: the test above)."""
    if ON_POSTGRES:
        pytest.skip("the state of the SQLite file")
    live, params = _music_server(tmp_path)
    try:
        with live.admin() as c:
            stored = _stored(live, c, params, False)
    finally:
        stop_server(live)
    live = restarted(tmp_path, live)
    try:
        store = live.ctx.items.store
        assert store is not None and store.adopted != 0
        wait_for_artwork(live)
        with live.admin() as c:
            for _ in range(3):
                use = live.ctx.items.store_use(live.ctx.items.options(_viewer(live)), False)
                hits = store.hits
                first = _page(c, params, False)
                if use is not None and use.epoch == store.adopted:
                    assert store.hits - hits == 2  # both songs from the store, as they are
                    break
                wait_for_artwork(live)  # (a background write after the start moved the epoch on)
            else:
                raise AssertionError("a write after every start moved the epoch on")
            assert first == stored == _built(live, c, params, False)
    finally:
        stop_server(live)
    config = next((tmp_path / "data").rglob("system.json"))
    config.write_text(config.read_text().replace("\n", "\n ", 1) if "\n" in config.read_text()
                      else config.read_text() + " ")
    live = restarted(tmp_path, live)
    try:
        store = live.ctx.items.store
        assert store is not None and store.adopted == 0  # a configuration file changed while stopped
        with live.admin() as c:
            assert _stored(live, c, params, False) == _built(live, c, params, False)
    finally:
        stop_server(live)
    live = restarted(tmp_path, live)  # (after that clean close: taken over again)
    assert live.ctx.items.store is not None and live.ctx.items.store.adopted != 0
    live.ctx.items.store.record_clean = lambda *_: False  # type: ignore[method-assign]  # no clean close
    stop_server(live)
    live = restarted(tmp_path, live)
    try:
        store = live.ctx.items.store
        assert store is not None and store.adopted == 0  # the last run recorded no clean close
    finally:
        stop_server(live)


def _sign_in(live: LiveServer) -> tuple[str, str]:
    with httpx.Client(base_url=live.url, timeout=30, headers={
            "Authorization": 'MediaBrowser Client="t", Device="t", DeviceId="store-test", Version="1"'}) as c:
        r = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"})
        assert r.status_code == 200, r.text
        return r.json()["AccessToken"], r.json()["User"]["Id"]


# ---------------------------------------------------------------- the store itself


def _write(store: FragmentStore, shape: int, item_id: str, epoch: int, digest: bytes, body: bytes) -> None:
    store.put([(shape, item_id, epoch, digest, "Movie", 0, 10, body)])
    store.flush()


def test_epochs_are_new_at_every_start_and_per_stamp(tmp_path: Path) -> None:
    path = tmp_path / "fragments.sqlite3"
    first = FragmentStore(path)
    assert first.open()
    a, b = first.epoch((1, 0)), first.epoch((2, 0))
    assert a != b and first.epoch((1, 0)) == a and b > a
    first.close()
    second = FragmentStore(path)
    assert second.open() and second.boot == first.boot + 1
    assert second.epoch((1, 0)) not in (a, b)  # the same stamp after a restart is another epoch
    second.close()


def test_an_open_takes_over_the_last_epoch_only_after_a_clean_close_of_the_same_state(tmp_path: Path) -> None:
    path = tmp_path / "fragments.sqlite3"
    first = FragmentStore(path, stamp="build 1")
    assert first.open(("state A", (5, 0))) and first.adopted == 0  # nothing recorded yet
    shape = first.shape("s")
    older = first.epoch((6, 0))
    _write(first, shape, "b" * 32, older, b"e", b'{"Name":"B"')
    last = first.epoch((7, 1))  # (the newest: the epoch of the close)
    _write(first, shape, "a" * 32, last, b"d", b'{"Name":"A"')
    first.mark_valid(last, shape, [b"e"])  # an older fragment found to hold in the last epoch
    first.close()
    assert first.record_clean("state A", (7, 1))

    def reopened(state: str, stamp: object = (0, 0), code: str = "build 1") -> FragmentStore:
        store = FragmentStore(path, stamp=code)
        assert store.open((state, stamp))  # type: ignore[arg-type]
        return store

    same = reopened("state A")
    assert same.adopted == last and same.epoch((0, 0)) == last  # this start's stamp is the last epoch
    stored = same.fetch(shape, ["a" * 32])["a" * 32]
    assert same.is_current(stored, shape, same.epoch((0, 0)))
    kept_valid = same.fetch(shape, ["b" * 32])["b" * 32]
    assert same.is_current(kept_valid, shape, same.epoch((0, 0)))  # its mark was kept over the restart
    moved = same.epoch((1, 0))  # a write after the start: a new epoch, newer than the adopted one
    assert moved > last and not same.is_current(stored, shape, moved)
    same.close()
    # the record is used once: a run that ends without a clean close (a crash) leaves none
    crashed = reopened("state A")
    assert crashed.adopted == 0 and crashed.epoch((0, 0)) != last
    assert not crashed.is_current(kept_valid, shape, crashed.epoch((0, 0)))
    crashed.close()
    for state, code in (("state B", "build 1"), ("state A", "build 2")):  # another file state, another build
        recorder = FragmentStore(path, stamp="build 1")
        assert recorder.open()
        epoch = recorder.epoch((7, 1))
        recorder.close()
        assert recorder.record_clean("state A", (7, 1))
        other = reopened(state, code=code)
        assert other.adopted == 0 and other.epoch((0, 0)) != epoch
        other.close()


def test_the_files_state_changes_with_any_write(tmp_path: Path) -> None:
    from server.library.catalog.fragment_store import files_state

    database = tmp_path / "main.db"
    with sqlite3.connect(database) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    paths = [database, database.with_name("main.db-wal")]
    before = files_state(paths)
    assert files_state(paths) == before
    st = database.stat()
    time.sleep(0.01)
    conn = sqlite3.connect(database)
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    assert files_state(paths) != before  # in the WAL
    conn.close()
    os.utime(database, ns=(st.st_atime_ns, st.st_mtime_ns))  # the main file's time set back: the ctime moved
    assert files_state(paths) != before


def test_a_fragment_is_current_when_its_digest_holds(tmp_path: Path) -> None:
    store = FragmentStore(tmp_path / "fragments.sqlite3")
    assert store.open()
    shape = store.shape(("fields", True))
    old = store.epoch("old")
    _write(store, shape, "a" * 32, old, b"d1", b'{"Name":"A"')
    use = StoreUse(store, shape, old)
    assert list(use.fetch(None, ["a" * 32]).values())[0].body == b'{"Name":"A"'  # of its epoch: as it is
    new = store.epoch("new")
    stored = store.fetch(shape, ["a" * 32])["a" * 32]

    def used(epoch: int) -> bool:
        """Whether a page of ``epoch`` takes the fragment as it is (StoreUse.fetch, which tests
        what is_current tests inline), and is_current says the same."""
        page = StoreUse(store, shape, epoch)
        taken = page.fetch(None, ["a" * 32], {"a" * 32: "the row"})["a" * 32] != "the row"
        assert taken == store.is_current(stored, shape, epoch) and taken == ("a" * 32 not in page.stale)
        return taken

    assert not used(new)  # another epoch: not as it is
    store.mark_valid(new, shape, [b"other"])  # what a read found for the item differs: still not
    assert not used(new)
    store.mark_valid(new, store.shape(("other",)), [b"d1"])  # the same digest under another shape: not
    assert not used(new)
    store.mark_valid(new, shape, [b"d1"])
    assert used(new)
    newest = store.epoch("newest")
    assert not used(newest)  # marks hold for their epoch only
    store.mark_valid(new, shape, [b"d1"])  # (an epoch that is over is not marked: nothing asks for it)
    assert not used(newest)
    # an older epoch's fragment never replaces a newer one
    _write(store, shape, "a" * 32, newest, b"d2", b'{"Name":"B"')
    _write(store, shape, "a" * 32, old, b"d0", b'{"Name":"Old"')
    assert store.fetch(shape, ["a" * 32])["a" * 32].body == b'{"Name":"B"'
    assert store.fetch(store.shape(("other",)), ["a" * 32]) == {}
    store.close()


def test_ids_sharing_an_integer_key_never_answer_for_each_other(tmp_path: Path) -> None:
    """Rows are found by (shape, item_key(id)); two ids with one key share a slot, and a fetch
    gives each id its own fragment or none, never the other's."""
    store = FragmentStore(tmp_path / "fragments.sqlite3")
    assert store.open()
    shape, epoch = store.shape("s"), store.epoch("e")
    first, second = "0123456789abcdef" + "0" * 16, "0123456789abcdee" + "0" * 15 + "1"  # (one key)
    assert item_key(first) == item_key(second) and item_key(first) != item_key("f" * 32)
    assert item_key("not-a-hex-id") == item_key("not-a-hex-id") and item_key("x") != item_key("y")
    assert item_key("a" * 32) != item_key("b" * 32)  # (halves alike)
    assert len({item_key(f"{n:032d}") for n in range(10_000)}) == 10_000  # (ids alike but for a digit)
    assert item_keys(["f" * 32, first, "x" * 32]) == [item_key("f" * 32), item_key(first), item_key("x" * 32)]
    _write(store, shape, first, epoch, b"d1", b'{"Name":"First"')
    assert store.fetch(shape, [first])[first].body == b'{"Name":"First"'
    assert second not in store.fetch(shape, [second])  # the slot holds the other id: a miss
    _write(store, shape, second, epoch, b"d2", b'{"Name":"Second"')  # takes the slot
    assert first not in store.fetch(shape, [first])
    both = store.fetch(shape, [first, second])
    assert list(both) == [second] and both[second].body == b'{"Name":"Second"'
    use = StoreUse(store, shape, epoch)  # a page asking for the other id reads its row instead
    rows = {first: "the row"}
    assert use.fetch(None, [first], rows) == {first: "the row"} and not use.stale
    for odd in ("not-a-hex-id", "x" * 40):  # ids that are not 32-hex still have a key of their own
        _write(store, shape, odd, epoch, b"d", b'{"Name":"' + odd.encode() + b'"')
        assert store.fetch(shape, [odd])[odd].body == b'{"Name":"' + odd.encode() + b'"'
    store.close()


def test_wait_open_waits_for_an_open_on_another_thread_and_a_close_ends_it(tmp_path: Path) -> None:
    """``wait_open``: what the mix fill's resume waits on (the store opens on a thread of its own
    beside the start): True once that open is done, False when the time is up first, when the
    store could not be opened, or at once when the store closes or ``stop`` says so."""
    import threading

    store = FragmentStore(tmp_path / "fragments.sqlite3")
    started = time.monotonic()
    assert not store.wait_open(0.3) and 0.25 <= time.monotonic() - started < 5  # (never opened: the bound)
    opener = threading.Timer(0.5, store.open)
    opener.start()
    assert store.wait_open(30) and store.enabled  # (opened 0.5 s later, while waited for)
    opener.join()
    store.close()
    assert not store.wait_open(30)  # (closed: no wait)

    waiting = FragmentStore(tmp_path / "other.sqlite3")
    started = time.monotonic()
    threading.Timer(0.3, waiting.close).start()
    assert not waiting.wait_open(30) and time.monotonic() - started < 5  # (a close ends the wait)
    flag = FragmentStore(tmp_path / "third.sqlite3")
    started = time.monotonic()
    stop_at = started + 0.3
    assert not flag.wait_open(30, lambda: time.monotonic() > stop_at) and time.monotonic() - started < 5

    (tmp_path / "blocked").mkdir()
    broken = FragmentStore(tmp_path / "blocked" / "x" / "fragments.sqlite3")
    (tmp_path / "blocked" / "x").write_text("a file where the folder would be")
    assert not broken.open() and not broken.wait_open(30)  # (could not be opened: off, no wait)


def test_a_corrupt_or_deleted_file_is_started_over(tmp_path: Path) -> None:
    path = tmp_path / "fragments.sqlite3"
    path.write_bytes(b"this is no database" * 100)
    store = FragmentStore(path)
    assert store.open() and store.count() == 0
    shape = store.shape("s")
    _write(store, shape, "b" * 32, store.epoch(1), b"d", b"{}")
    assert store.count() == 1
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(b"garbage" * 1000)  # damaged under a running store
    assert store.fetch(shape, ["b" * 32]) == {}  # a miss, not an error
    assert store.enabled and store.count() == 0
    store.close()
    # a file of another format (an older Reelroom's) is started over too
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version=1")
        conn.execute("INSERT INTO fragments (shape, key, id, epoch, meta, body) VALUES (1, 1, 'x', 1, x'00', x'00')")
    older = FragmentStore(path)
    assert older.open() and older.count() == 0
    older.close()


def _older_file(path: Path, page_size: int, version: int, table: str, boot: int) -> None:
    """A store file as an older build left it: its page size, format number and fragments table."""
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA page_size={page_size}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA user_version={version}")
        conn.execute(table)
        conn.execute("CREATE UNIQUE INDEX ux_fragments ON fragments (shape, key)")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('boot', ?)", (boot,))
    conn.close()


def test_a_format_3_file_is_started_over_once(tmp_path: Path) -> None:
    """The last layout (format 3: no rowid column of its own, 16 KiB pages) as that build left it:
    the first open starts it over in this layout, the next keeps what was written."""
    path = tmp_path / "fragments.sqlite3"
    _older_file(path, 16384, 3, "CREATE TABLE fragments (shape INTEGER NOT NULL, key INTEGER NOT NULL, "
                "id TEXT NOT NULL, epoch INTEGER NOT NULL, digest BLOB, type TEXT NOT NULL, is_folder INTEGER NOT NULL, "
                "run_time_ticks INTEGER, body BLOB NOT NULL)", 7)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO fragments VALUES (?, ?, ?, 1, NULL, 'Movie', 0, NULL, x'00')",
                     (5, item_key("a" * 32), "a" * 32))
    conn.close()
    store = FragmentStore(path)
    assert store.open() and store.count() == 0 and store.boot == 1  # started over: a new file
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 8192
        assert "n" in [r[1] for r in conn.execute("PRAGMA table_info(fragments)")]
    conn.close()
    _kept_once(store, path, store.shape("s"), store.epoch(1))


def _kept_once(store: FragmentStore, path: Path, shape: int, epoch: int) -> None:
    """A file started over in this layout: what is written in it is kept by the next open."""
    _write(store, shape, "b" * 32, epoch, b"d", b'{"Name":"B"')
    store.close()
    again = FragmentStore(path)
    assert again.open() and again.boot == 2 and again.count() == 1  # once: this layout is kept
    assert again.fetch(shape, ["b" * 32])["b" * 32].body == b'{"Name":"B"'
    again.close()


def test_a_format_4_file_is_started_over_never_misread(tmp_path: Path) -> None:
    """The last layout (format 4: seven columns a row, the digest, type, folder flag and run time
    each its own) as that build left it, with a fragment current in the epoch the new store's
    first one will have: the first open starts it over (nothing of it is read as format 5's three
    columns: its ``digest`` would be taken for the ``body``), the next keeps what was written; a
    reader process's store does not open it at all (the owner starts it over)."""
    from server.library.catalog import fragment_store
    from server.readers.store import ReaderStore

    path = tmp_path / "fragments.sqlite3"
    _older_file(path, 8192, 4, "CREATE TABLE fragments (n INTEGER PRIMARY KEY AUTOINCREMENT, shape INTEGER NOT NULL, "
                "key INTEGER NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL, digest BLOB, "
                "type TEXT NOT NULL, is_folder INTEGER NOT NULL, run_time_ticks INTEGER, body BLOB NOT NULL)", 0)
    probe = FragmentStore(tmp_path / "probe.sqlite3")  # (the shape and first epoch this build gives)
    assert probe.open()
    shape, epoch = probe.shape("s"), probe.epoch(1)
    probe.close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO fragments (shape, key, id, epoch, digest, type, is_folder, run_time_ticks, body) "
                     "VALUES (?, ?, ?, ?, x'0123', 'Movie', 0, NULL, ?)",
                     (shape, item_key("a" * 32), "a" * 32, epoch, b'{"Name":"old"'))
    conn.close()
    reader = ReaderStore(path, "")
    assert not reader.open()  # (another format: a reader waits for the owner's file)
    reader.close()
    store = FragmentStore(path)
    assert store.open() and store.boot == 1 and store.count() == 0  # started over: a new file
    assert store.epoch(1) == epoch and store.fetch(shape, ["a" * 32]) == {}
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == fragment_store.FORMAT
        assert [r[1] for r in conn.execute("PRAGMA table_info(fragments)")] == \
            ["n", "shape", "key", "id", "epoch", "meta", "body"]
    conn.close()
    _kept_once(store, path, shape, epoch)


def test_a_format_5_file_is_started_over_with_the_catch_up_index(tmp_path: Path) -> None:
    """Format 5 (the same columns, no ``ix_fragments_n``) as that build left it: the first open
    starts it over (every row of it was made by other code anyway: another code stamp, another
    shape), and the new file has the index the catch-up reads; the next open keeps it."""
    from server.library.catalog import fragment_store

    path = tmp_path / "fragments.sqlite3"
    _older_file(path, 8192, 5, "CREATE TABLE fragments (n INTEGER PRIMARY KEY AUTOINCREMENT, shape INTEGER NOT NULL, "
                "key INTEGER NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL, meta BLOB NOT NULL, "
                "body BLOB NOT NULL)", 3)
    store = FragmentStore(path)
    assert store.open() and store.boot == 1 and store.count() == 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == fragment_store.FORMAT
        assert "ix_fragments_n" in {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    conn.close()
    shape, epoch = store.shape("s"), store.epoch(1)
    _kept_once(store, path, shape, epoch)


def test_a_format_6_file_is_started_over_without_the_random_key_index(tmp_path: Path) -> None:
    """Format 6 (the same columns, with the (shape, key) unique index every write dirtied a random
    page of) as that build left it, with a fragment in it: the first open starts it over in format
    7 (no ``ux_fragments``: a cold page's writes were half the writer's CPU there), a reader
    process's store does not open it at all, and the next open keeps what was written."""
    from server.library.catalog import fragment_store
    from server.readers.store import ReaderStore

    path = tmp_path / "fragments.sqlite3"
    _older_file(path, 8192, 6, "CREATE TABLE fragments (n INTEGER PRIMARY KEY AUTOINCREMENT, shape INTEGER NOT NULL, "
                "key INTEGER NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL, meta BLOB NOT NULL, "
                "body BLOB NOT NULL)", 3)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE INDEX ix_fragments_n ON fragments (n, shape, key)")
        conn.execute("INSERT INTO fragments (shape, key, id, epoch, meta, body) VALUES (5, ?, ?, 1, x'00', x'00')",
                     (item_key("a" * 32), "a" * 32))
    conn.close()
    assert not ReaderStore(path, "x").open()
    store = FragmentStore(path)
    assert store.open() and store.boot == 1 and store.count() == 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == fragment_store.FORMAT == 7
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "ux_fragments" not in indexes and "ix_fragments_n" in indexes, indexes
    conn.close()
    shape, epoch = store.shape("s"), store.epoch(1)
    _kept_once(store, path, shape, epoch)


def test_the_writer_keeps_one_row_a_key_without_a_key_index(tmp_path: Path) -> None:
    """Without a (shape, key) index the writer keeps one row per (shape, key) itself: a fragment
    written again (in the same batch or a later one, by its id or another sharing its key) is
    rewritten in place, never appended; an older epoch's write never replaces a newer row; a row
    gone (pruned) is written again; and a map read from the file agrees with the one kept in
    memory. Each write dirties no random index page: the rows and the catch-up index are appended."""
    from server.library.catalog import fragment_store

    path = tmp_path / "fragments.sqlite3"
    store = FragmentStore(path)
    assert store.open()
    shape, other = store.shape("s"), store.shape("t")
    old, new = store.epoch("old"), store.epoch("new")
    ids = [f"{n:032x}" for n in range(1, 201)]

    def rows() -> list[tuple[int, int, str, int, bytes]]:
        with sqlite3.connect(path) as conn:
            found = conn.execute("SELECT n, shape, key, id, epoch, body FROM fragments ORDER BY n").fetchall()
        conn.close()
        return found

    # (a batch holding one id twice: the last of one epoch wins, a later older epoch's never)
    store.put([(shape, i, new, b"d", "Movie", 0, None, b"first") for i in ids[:100]]
              + [(shape, ids[0], new, b"d", "Movie", 0, None, b"again"), (shape, ids[1], old, b"d", "Movie", 0, None, b"older")])
    store.put([(other, i, new, b"d", "Movie", 0, None, b"other") for i in ids[:10]])
    store.flush()
    assert len(rows()) == 110
    first_rowids = {r[3]: r[0] for r in rows() if r[1] == shape}
    # (the rows the writer appended are in the owner's maps already: no read of them back)
    assert store._located_high == 110
    assert store._located[shape].find(item_keys(ids[:100])) == [first_rowids[i] for i in ids[:100]]
    store.put([(shape, i, new, b"d", "Movie", 0, None, b"second") for i in ids[:50]]  # (rewritten)
              + [(shape, i, new, b"d", "Movie", 0, None, b"first") for i in ids[100:]])  # (new)
    store.put([(shape, ids[60], old, b"d", "Movie", 0, None, b"older")])  # (an older epoch: kept as it is)
    store.flush()
    twin = ids[70][:15] + format(int(ids[70][15], 16) ^ 1, "x") + ids[70][16:31] + format(int(ids[70][31], 16) ^ 1, "x")
    assert item_key(twin) == item_key(ids[70])
    store.put([(shape, twin, new, b"d", "Movie", 0, None, b"twin")])  # (its key's slot, in place)
    store.flush()
    found = rows()
    assert len(found) == 210 and len({(r[1], r[2]) for r in found}) == 210  # one row a (shape, key)
    by_id = {r[3]: r for r in found if r[1] == shape}
    assert all(by_id[i][0] == first_rowids[i] for i in ids[:50])  # in place
    assert [by_id[i][5] for i in ids[:3]] == [b"second"] * 3 and by_id[ids[60]][5] == b"first"
    assert by_id[twin][0] == first_rowids[ids[70]] and ids[70] not in by_id
    # a row pruned under the writer (its place still in the map) is written again
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM fragments WHERE id = ? AND shape = ?", (ids[5], shape))
    conn.close()
    store.put([(shape, ids[5], new, b"d", "Movie", 0, None, b"back")])
    store.flush()
    assert {i: f.body for i, f in store.fetch(shape, [ids[5], ids[6]]).items()} == {ids[5]: b"back", ids[6]: b"second"}
    assert len(rows()) == 210
    # the map kept in memory (merged past _RECENT rows) and one read from the file agree
    more = [f"{n:032x}" for n in range(1000, 1000 + fragment_store._RECENT + 10)]
    store.put([(shape, i, new, b"d", "Movie", 0, None, b"more") for i in more])
    store.flush()
    store.fetch(shape, more[:3])
    kept = store._located[shape]
    reader = FragmentStore(path)
    assert reader.open()
    reader.fetch(shape, more[:3])
    read = reader._located[shape]
    assert list(kept.keys) == list(read.keys) and list(kept.rowids) == list(read.rowids)
    assert len(kept.keys) == 200 + len(more) and not kept.recent
    # (the writer's statements touch no (shape, key) index: there is none)
    with sqlite3.connect(path) as conn:
        plan = " ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + fragment_store._UPDATE_SQL,
                                                          (b"", 1, b"", b"", 1, 1, 1, 1)))
    conn.close()
    assert "INTEGER PRIMARY KEY" in plan, plan
    reader.close()
    store.close()


def test_a_merged_map_is_the_map_read_again() -> None:
    """``_Located.merged``: the arrays with ``recent`` merged in (new keys, keys given a new place,
    places 0 dropped) find what a map made from the merged set finds, for every size."""
    import random
    from array import array

    from server.library.catalog.fragment_store import _Located

    rnd = random.Random(2)
    for n, extra in ((0, 0), (0, 5), (5, 0), (10, 10), (1000, 300), (20_000, 4096)):
        keys = sorted({rnd.randrange(-2**63, 2**63) for _ in range(n)})
        want = {k: i + 1 for i, k in enumerate(keys)}
        located = _Located(array("q", keys), array("q", [want[k] for k in keys]))
        for k in rnd.sample(keys, min(len(keys), extra // 3)):  # (moved)
            located.recent[k] = want[k] = rnd.randrange(1, 2**40)
        for k in rnd.sample(keys, min(len(keys), extra // 5)):  # (gone)
            located.recent[k] = 0
            del want[k]
        for _ in range(extra):  # (new, the ends of the range too)
            k = rnd.choice([-2**63, 2**63 - 1, rnd.randrange(-2**63, 2**63)])
            located.recent[k] = want[k] = rnd.randrange(1, 2**40)
        merged = located.merged()
        assert list(merged.keys) == sorted(want) and list(merged.rowids) == [want[k] for k in sorted(want)], n
        probes = list(want) + [rnd.randrange(-2**63, 2**63) for _ in range(500)]
        assert merged.find(probes) == [want.get(k, 0) for k in probes] == located.find(probes)


def test_a_stored_row_gives_back_what_was_written(tmp_path: Path) -> None:
    """A row is three columns (id, body, meta): every part written (an epoch past 32 bits, a digest
    or none, a folder or not, a run time, 0 or none, any type) reads back as it was, and a
    fragment is current exactly in its own epoch."""
    path = tmp_path / "fragments.sqlite3"
    store = FragmentStore(path)
    assert store.open()
    shape, epoch = store.shape("s"), store.epoch(1)
    cases = [(epoch, b"\x00" * 16, "Movie", 0, 72_000_000_000), (epoch, None, "Series", 1, None),
             ((9 << 32) | 7, b"\xff", "Season", 1, 0), (epoch, b"d" * 255, "M\u00fcsic\"Video", 0, -1)]
    ids = [f"{n:032x}" for n in range(1, len(cases) + 1)]
    store.put([(shape, i, e, d, t, f, r, b'{"Id":"' + i.encode() + b'"') for i, (e, d, t, f, r) in zip(ids, cases, strict=True)])
    store.flush()
    found = store.fetch(shape, ids)
    for i, (e, d, t, f, r) in zip(ids, cases, strict=True):
        got = found[i]
        assert (got.id, got.epoch, got.digest, got.type, got.is_folder, got.run_time_ticks, got.body) == \
            (i, e, d, t, f, r, b'{"Id":"' + i.encode() + b'"')
        assert got == Stored(i, e, d, t, f, r, got.body) and store.is_current(got, shape, e)
        assert not store.is_current(got, shape, e + 1)
    use = StoreUse(store, shape, epoch)
    assert set(use.fetch(None, ids, rows={})) == {ids[0], ids[1], ids[3]}  # (rows={}: no item row read)
    assert set(use.stale) == {ids[2]}
    store.close()


def test_the_located_read_sees_every_write_and_never_another_row(tmp_path: Path) -> None:
    """A page's fragments are read by rowid from a map kept per process (``_Located``): rows written
    after it was read (by this process's writer or another process's), rows rewritten in place,
    pruned, or taken by another id sharing the key, and a file started over, all read as they are
    now; a second reader (another process's view, its own map) agrees."""
    path = tmp_path / "fragments.sqlite3"
    store = FragmentStore(path)
    assert store.open()
    shape, other_shape, epoch = store.shape("s"), store.shape("t"), store.epoch("e")
    ids = [f"{n:032x}" for n in range(1, 301)]
    store.put([(shape, i, epoch, b"d", "Movie", 0, None, b'{"Id":"' + i.encode() + b'"') for i in ids[:200]])
    store.put([(other_shape, i, epoch, b"d", "Movie", 0, None, b'{"Other":"' + i.encode() + b'"') for i in ids[:50]])
    store.flush()
    reader = FragmentStore(path)  # (another process: its own connection and map; opened as a second start)
    assert reader.open()

    def check(expected: dict[str, bytes], *, shape: int = shape) -> None:
        for s in (store, reader):
            got = s.fetch(shape, ids)
            assert {i: f.body for i, f in got.items()} == expected
            assert all(f.id == i for i, f in got.items())
            assert s._located.get(shape) is not None  # (read through the map)

    expected = {i: b'{"Id":"' + i.encode() + b'"' for i in ids[:200]}
    check(expected)
    check({i: b'{"Other":"' + i.encode() + b'"' for i in ids[:50]}, shape=other_shape)
    # written after the maps were read: new rows, one rewritten in place (its rowid kept)
    store.put([(shape, i, epoch, b"d", "Movie", 0, None, b'{"New":"' + i.encode() + b'"') for i in ids[200:]])
    store.put([(shape, ids[0], epoch, b"d2", "Movie", 0, None, b'{"Edited"')])
    store.flush()
    expected.update({i: b'{"New":"' + i.encode() + b'"' for i in ids[200:]})
    expected[ids[0]] = b'{"Edited"'
    check(expected)
    # another id with the same key takes a row's slot: neither answers for the other
    twin = ids[1][:15] + format(int(ids[1][15], 16) ^ 1, "x") + ids[1][16:31] + format(int(ids[1][31], 16) ^ 1, "x")
    assert item_key(twin) == item_key(ids[1]) and twin != ids[1]
    store.put([(shape, twin, epoch, b"d", "Movie", 0, None, b'{"Twin"')])
    store.flush()
    del expected[ids[1]]
    check(expected)
    assert {i: f.body for i, f in store.fetch(shape, [twin]).items()} == {twin: b'{"Twin"'}
    # pruned rows are gone, and written again they are found at their new place
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM fragments WHERE id IN (?, ?)", (ids[2], ids[299]))
    conn.close()
    del expected[ids[2]], expected[ids[299]]
    check(expected)
    store.put([(shape, i, epoch, b"d", "Movie", 0, None, b'{"Back"') for i in (ids[2], ids[299])])
    store.flush()
    expected[ids[2]] = expected[ids[299]] = b'{"Back"'
    check(expected)
    # past _RECENT writes since the map was read it is read again, with the same answers
    from server.library.catalog import fragment_store

    more = [f"{n:032x}" for n in range(1000, 1000 + fragment_store._RECENT + 10)]
    store.put([(shape, i, epoch, b"d", "Movie", 0, None, b'{"More"') for i in more])
    store.flush()
    before = store._located[shape]
    got = store.fetch(shape, more[:5] + ids[:3])
    assert store._located[shape] is not before and not store._located[shape].recent
    assert {i: f.body for i, f in got.items()} == {**{i: b'{"More"' for i in more[:5]}, ids[0]: b'{"Edited"',
                                                     ids[2]: b'{"Back"'}
    # (the rowid statement looks each row up by its rowid: with the shape's index the planner
    # walked every row of the shape, 5 ms a page at 50k)
    from server.library.catalog.fragment_store import _rowid_sql

    with sqlite3.connect(path) as conn:
        plan = " ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + _rowid_sql(3), (1, 2, 3, shape)))
    conn.close()
    assert "INTEGER PRIMARY KEY" in plan and "ux_fragments" not in plan, plan
    reader.close()
    # the file started over (deleted under the store): nothing of the old map answers
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(b"garbage" * 1000)
    assert store.fetch(shape, ids) == {}  # (a miss; the store started over)
    writer = FragmentStore(path)  # (a second start writing the new file)
    assert writer.open()
    writer.put([(shape, ids[5], writer.epoch("f"), b"d", "Movie", 0, None, b'{"After"')])
    writer.flush()
    assert {i: f.body for i, f in store.fetch(shape, ids).items()} == {ids[5]: b'{"After"'}
    writer.close()
    store.close()


def test_the_rows_written_since_a_read_are_caught_up_from_an_index_alone(tmp_path: Path) -> None:
    """A page's read first catches its map up with the rows written since it last looked
    (``_locate``: rowid past the highest seen, in order, and the shape and key of each). Those come
    from an index of their own, read alone: a cold page writes ~100 fragments of ~2.5 KB, ~3 to a
    table page, and reading the three small columns from the table read ~33 pages of bodies per
    page, in the owner and in every reader process. The answers are those of the table."""
    path = tmp_path / "fragments.sqlite3"
    store = FragmentStore(path)
    assert store.open()
    shape, other_shape, epoch = store.shape("s"), store.shape("t"), store.epoch("e")
    ids = [f"{n:032x}" for n in range(1, 301)]
    store.put([(shape, i, epoch, b"d", "Movie", 0, None, b"x" * 2500) for i in ids[:100]])
    store.flush()
    assert len(store.fetch(shape, ids[:100])) == 100  # (the map read)
    store.put([(shape, i, epoch, b"d", "Movie", 0, None, b"y" * 2500) for i in ids[100:]])
    store.put([(other_shape, i, epoch, b"d", "Movie", 0, None, b"z" * 2500) for i in ids[:50]])
    store.flush()
    ran: list[str] = []
    store._conn().set_trace_callback(ran.append)
    got = store.fetch(shape, ids)  # (caught up: every row found by its place)
    assert {i: f.body for i, f in got.items()} == {i: b"x" * 2500 if k < 100 else b"y" * 2500 for k, i in enumerate(ids)}
    # (every row written since the map was made, empty, by the writer's first batch: the writer
    # brings the map up to date before each batch, format 7)
    assert len(store._located[shape].recent) == 300
    assert len(store.fetch(other_shape, ids)) == 50  # (another shape's first read: its map, the others caught up)
    store._conn().set_trace_callback(None)
    catch_ups = [sql for sql in ran if sql.startswith("SELECT n, shape, key FROM fragments WHERE n > ")]
    assert catch_ups, ran
    with sqlite3.connect(path) as conn:
        for sql in catch_ups:
            plan = " ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql))
            assert "COVERING INDEX ix_fragments_n" in plan, (sql, plan)
            # (the same rows as the table's, in rowid order)
            assert conn.execute(sql).fetchall() == conn.execute(sql.replace("FROM fragments", "FROM fragments NOT INDEXED")
                                                                ).fetchall()
    conn.close()
    store.close()


def _listing_stored(path: Path, n: int, every: int) -> tuple[FragmentStore, int, int, list[str]]:
    """A store holding ``n`` fragments of shape "s" written in one batch in their order (a listing
    stored as a client paged through it), one of shape "t" after every ``every``-th of them:
    the store, the shape "s", the epoch and the ids in order."""
    store = FragmentStore(path)
    assert store.open()
    shape, other_shape, epoch = store.shape("s"), store.shape("t"), store.epoch("e")
    ids = [f"{k:032x}" for k in range(1, n + 1)]
    rows = []
    for k, i in enumerate(ids):
        rows.append((shape, i, epoch, b"d", "Movie", 0, None, b'{"Id":"' + i.encode() + b'"'))
        if k % every == 0:
            rows.append((other_shape, i, epoch, b"d", "Movie", 0, None, b'{"Other"'))
    store.put(rows)  # (one batch: written in this order)
    store.flush()
    return store, shape, epoch, ids


def test_neighbours_are_read_as_one_range_with_the_same_answers(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A page whose rows are neighbours in the file is read as one range of rowids: the rows
    between them of another shape, of ids not asked, or rewritten by an id sharing a key are left
    out, exactly as the lookup of each rowid leaves them (``_RANGE_SLACK`` 0 forces that)."""
    from server.library.catalog import fragment_store

    store, shape, epoch, ids = _listing_stored(tmp_path / "fragments.sqlite3", 120, 5)
    twin = ids[7][:15] + format(int(ids[7][15], 16) ^ 1, "x") + ids[7][16:31] + format(int(ids[7][31], 16) ^ 1, "x")
    store.put([(shape, twin, epoch, b"d", "Movie", 0, None, b'{"Twin"')])  # (ids[7]'s row, now twin's)
    store.flush()
    ranges: list[str] = []
    real_sql = fragment_store._RANGE_SQL
    monkeypatch.setattr(fragment_store, "_RANGE_SQL", real_sql + " /* range */")

    def fetched(asked: list[str]) -> dict[str, bytes]:
        got = store.fetch(shape, asked)
        assert all(f.id == i for i, f in got.items())
        return {i: f.body for i, f in got.items()}

    conn = store._conn()
    conn.set_trace_callback(ranges.append)
    pages = [ids[10:90], ids[:100], ids[3:12] + [twin], ids[::7], [ids[50], "f" * 32, ids[52]], ["e" * 32]]
    as_range = [fetched(p) for p in pages]
    used = [any("/* range */" in q for q in ranges)]
    monkeypatch.setattr(fragment_store, "_RANGE_SLACK", 0)
    ranges.clear()
    assert [fetched(p) for p in pages] == as_range
    assert not any("/* range */" in q for q in ranges)
    conn.set_trace_callback(None)
    assert used == [True]
    assert as_range[0] == {i: b'{"Id":"' + i.encode() + b'"' for i in ids[10:90]}
    assert ids[7] not in as_range[1] and len(as_range[1]) == 99
    assert as_range[2][twin] == b'{"Twin"' and ids[7] not in as_range[2]
    assert list(as_range[4]) == [ids[50], ids[52]] and as_range[5] == {}
    store.close()


def test_a_listing_stored_in_its_order_is_read_from_its_ends_with_the_same_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page of more than ``_ENDS_FIRST`` ids whose first and last are close in the file is read
    as the range between their places (2 lookups in the map, not one per id), then only the ids
    that range did not hold are looked up: the same answers as the lookup of each id, with ids
    pruned and stored again elsewhere since, one pruned, a place in the range taken by an id
    sharing a key, ids never stored, another shape's rows in between, a page in descending order
    and ends that are not stored. A stored listing's page is one statement, its range."""
    from server.library.catalog import fragment_store

    path = tmp_path / "fragments.sqlite3"
    store, shape, epoch, ids = _listing_stored(path, 200, 9)
    assert store.fetch(shape, ids[:1])  # (the map is read)
    # since: two ids of the listing pruned and stored again past its end, one pruned, one place
    # in it taken by an id sharing its key, and an id stored only now
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM fragments WHERE id IN (?, ?, ?)", (ids[30], ids[60], ids[45]))
    db.close()
    twin = ids[40][:15] + format(int(ids[40][15], 16) ^ 1, "x") + ids[40][16:31] + format(int(ids[40][31], 16) ^ 1, "x")
    late = "a" * 32
    store.put([(shape, i, epoch, b"d", "Movie", 0, None, b'{"Moved"') for i in (ids[30], ids[60])]
              + [(shape, twin, epoch, b"d", "Movie", 0, None, b'{"Twin"'),
                 (shape, late, epoch, b"d", "Movie", 0, None, b'{"Late"')])
    store.flush()

    def fetched(asked: list[str]) -> dict[str, bytes]:
        got = store.fetch(shape, asked)
        assert all(f.id == i for i, f in got.items())
        return {i: f.body for i, f in got.items()}

    def reads(asked: list[str]) -> list[str]:  # (the page's statements, not the map's catch-up)
        seen: list[str] = []
        conn = store._conn()
        conn.set_trace_callback(seen.append)
        fetched(asked)
        conn.set_trace_callback(None)
        return [q for q in seen if "FROM fragments WHERE n" in q and "n >" not in q]

    pages = [ids[100:200], ids[20:120], ids[35:45] + [twin], ids[20:70][::-1], ids[50:60] + [late] + ids[61:70],
             ["f" * 32] + ids[10:20] + ["e" * 32], ids[::3], ids[:5]]
    from_ends = [fetched(p) for p in pages]
    assert len(reads(pages[0])) == 1 and "BETWEEN" in reads(pages[0])[0]
    assert len(reads(pages[1])) == 2  # (the range, then the two ids stored elsewhere since)
    monkeypatch.setattr(fragment_store, "_ENDS_FIRST", 10**9)  # each id looked up, as before
    assert [fetched(p) for p in pages] == from_ends
    monkeypatch.setattr(fragment_store, "_RANGE_SLACK", 0)  # and each read by its rowid
    assert [fetched(p) for p in pages] == from_ends
    body = {i: b'{"Id":"' + i.encode() + b'"' for i in ids} | {ids[30]: b'{"Moved"', ids[60]: b'{"Moved"'}
    assert from_ends[0] == {i: body[i] for i in ids[100:200]}
    assert from_ends[1] == {i: body[i] for i in ids[20:120] if i not in (ids[40], ids[45])}
    assert from_ends[2] == {**{i: body[i] for i in ids[35:40] + ids[41:45]}, twin: b'{"Twin"'}
    assert from_ends[3] == {i: body[i] for i in ids[20:70] if i not in (ids[40], ids[45])}
    assert from_ends[4] == {**{i: body[i] for i in ids[50:60] + ids[61:70]}, late: b'{"Late"'}
    assert from_ends[5] == {i: body[i] for i in ids[10:20]}
    assert from_ends[6] == {i: body[i] for i in ids[::3] if i not in (ids[45],)}
    assert from_ends[7] == {i: body[i] for i in ids[:5]}
    store.close()


def test_a_warm_page_is_the_stores_rows_in_order_with_the_same_answers(tmp_path: Path) -> None:
    """``StoreUse.page`` (a GetItems page's read): a page whose rows are one range of the file,
    all of the epoch, in the page's order or its reverse, is the rows as SQLite gives them, a
    list in the page's order (``whole``); any other page (a row of another epoch, marked valid or
    not, a row between them of an id not asked, an id not stored, ids out of the file's order) is
    ``fetch``'s answer, and each entry the same fragment either way."""
    from server.library.catalog import fragment_store

    store, shape, old, ids = _listing_stored(tmp_path / "fragments.sqlite3", 150, 7)
    # (two rows left of an earlier epoch, in place: one whose digest is marked valid, one not)
    store.put([(shape, ids[120], old, b"m", "Movie", 0, None, b'{"Marked"'),
               (shape, ids[125], old, b"n", "Movie", 0, None, b'{"Old"')])
    store.flush()
    epoch = store.epoch("later")
    store.put([(shape, i, epoch, b"d", "Movie", 0, None, b'{"Id":"' + i.encode() + b'"')
               for i in ids if i not in (ids[120], ids[125])])
    store.flush()
    store.mark_valid(epoch, shape, [b"m"])

    def parts(entry: object) -> tuple[str, bytes, bytes] | str:
        return entry if isinstance(entry, str) else tuple(entry)  # type: ignore[arg-type,return-value]

    rows = {i: "the row" for i in ids + ["f" * 32]}
    pages = [ids[10:90], ids[10:90][::-1], ids[:100], ids[100:119], ids[115:130], ids[:20] + ["f" * 32],
             ids[30:40] + ids[20:30], ids[::3]]
    wholes = []
    for page in pages:
        use, plain = StoreUse(store, shape, epoch), StoreUse(store, shape, epoch)
        got = use.page(None, page, rows)
        wholes.append(use.whole)
        expected = plain.fetch(None, page, rows)
        if use.whole:
            assert isinstance(got, list) and [r[0] for r in got] == page
            assert [parts(r) for r in got] == [parts(expected[i]) for i in page]
        else:
            assert isinstance(got, dict)
            assert {i: parts(e) for i, e in got.items()} == {i: parts(e) for i, e in expected.items()}
            assert set(use.stale) == set(plain.stale)
    assert wholes == [True, True, True, True, False, False, False, False]
    listed = StoreUse(store, shape, epoch).page(None, ids[110:124], rows)  # (the marked one: taken, not whole)
    assert isinstance(listed, dict) and listed[ids[120]].body == b'{"Marked"' and len(listed) == 14
    assert StoreUse(store, shape, epoch + 100).page(None, ids[10:90], {}) == {}  # (no row of that epoch)
    # a range with no row of the epoch (after a write: every fragment older, marked valid): fetch's
    # answer, the range's every row read in one statement after the epoch's (which found none);
    # the next ranges of that epoch skip the epoch's statement, every _EPOCH_RETRY-th asks again
    later = store.epoch("later still")
    store.mark_valid(later, shape, [b"d"])
    traced: list[str] = []
    conn = store._conn()
    conn.set_trace_callback(traced.append)
    firsts = []
    for k in range(fragment_store._EPOCH_RETRY + 2):
        traced.clear()
        stale, plain = StoreUse(store, shape, later), StoreUse(store, shape, later)
        got = stale.page(None, ids[k:k + 20], rows)
        reads = [t for t in traced if t.startswith("SELECT id, body, meta")]
        assert isinstance(got, dict) and not stale.whole and len(got) == 20
        assert all(isinstance(e, Stored) for e in got.values())
        assert {i: parts(e) for i, e in got.items()} == \
            {i: parts(e) for i, e in plain.fetch(None, ids[k:k + 20], rows).items()}
        assert "+epoch" not in reads[-1] and "BETWEEN" in reads[-1]
        firsts.append(len(reads) == 2 and "+epoch" in reads[0])
    conn.set_trace_callback(None)
    assert [k for k, asked in enumerate(firsts) if asked] == [0, fragment_store._EPOCH_RETRY]
    store.close()


def test_the_file_is_bounded(tmp_path: Path) -> None:
    store = FragmentStore(tmp_path / "fragments.sqlite3", max_bytes=512 * 1024)
    assert store.open()
    shape = store.shape("s")
    body = b'{"Name":"' + b"x" * 2000
    for k in range(15):  # 15 batches of 100 fragments of 2 KB, one epoch each
        store.put([(shape, f"{n:032d}", store.epoch(k), b"d", "Movie", 0, None, body)
                   for n in range(k * 100, k * 100 + 100)])
        store.flush()
    assert store.used_bytes() <= 512 * 1024 + 64 * 1024
    kept = store.fetch(shape, [f"{n:032d}" for n in range(1500)])
    assert all(f"{n:032d}" in kept for n in range(1400, 1500))  # the last batch is kept
    assert not any(f"{n:032d}" in kept for n in range(1000))  # the oldest went first
    store.close()


def test_shapes_are_the_same_in_every_process() -> None:
    code = ("from server.library.catalog.fragment_store import FragmentStore;"
            "s = FragmentStore('unused', stamp='x');"
            "print(s.shape((frozenset({'Overview', 'MediaSources', 'People', 'Genres'}), True, None, "
            "frozenset({'Primary', 'Backdrop'}), False, True, 'server', False)))")
    values = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout.strip() for seed in (1, 2, 3)}
    assert len(values) == 1


def test_the_rowid_map_finds_every_key_and_no_other() -> None:
    """``_Located.find`` (bisection within a bucket of the 64-bit range) against a dict, for maps
    of every size up to 50k keys, the range's ends and keys not in the map."""
    import random
    from array import array

    from server.library.catalog.fragment_store import _Located

    rnd = random.Random(1)
    for n in (0, 1, 2, 7, 8, 9, 100, 1000, 50_000):
        keys = sorted({rnd.randrange(-2**63, 2**63) for _ in range(n)} | ({-2**63, 2**63 - 1} if n > 5 else set()))
        located = _Located(array("q", keys), array("q", range(1, len(keys) + 1)))
        probes = keys + [rnd.randrange(-2**63, 2**63) for _ in range(2000)] + [-2**63, 2**63 - 1, 0, -1]
        want = {k: i + 1 for i, k in enumerate(keys)}
        assert located.find(probes) == [want.get(k, 0) for k in probes], n
        located.recent[probes[-1]] = 99  # written since: the recent place wins
        assert located.find([probes[-1]]) == [99]
