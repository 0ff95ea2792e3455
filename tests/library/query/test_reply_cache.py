"""Whole replies kept for repeated pages (server/http/reply_cache.py) are never stale and never
cross users: on a real server, each change (an edit, an image, played/favourite/progress, a policy's
libraries, parental rating and blocked tags, the configuration, a scan) shows on the very next
request of a page that was being answered from the cache; a user never gets another user's kept
page or user data; random sorts and viewers with parental controls are never kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from server.db.database import Database, sqlite_url
from server.db.tables import Device, DisplayPreferences, User, utcnow
from server.http.reply_cache import ReplyCache, Slot, pending, reply_cache_budget
from tests.conftest import LiveServer, auth_header, complete_wizard, start_server, stop_server
from tests.library.conftest import items
from tests.library_helpers import add_library_and_scan, new_user, refresh_and_wait, wait_for_artwork
from tests.mediagen import make_audio, make_image, make_video

CAMEL = {"Accept": 'application/json; profile="CamelCase"'}
PAGE = {"recursive": "true", "includeItemTypes": "Movie,Audio", "sortBy": "SortName",
        "fields": "PrimaryImageAspectRatio,MediaSources,Overview,Genres,Tags", "limit": "50"}


def _song(path: Path, title: str, n: int) -> None:
    make_audio(path, tags={"title": title, "artist": "Band", "album_artist": "Band", "album": "Record",
                           "track": str(n), "genre": "Rock"})


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own (these tests change things): three songs and a movie."""
    root = tmp_path_factory.mktemp("replies")
    music = root / "media" / "music"
    for n, title in enumerate(("Alpha", "Beta", "Gamma"), 1):
        _song(music / "Band" / "Record" / f"0{n} - {title}.mp3", title, n)
    movies = root / "media" / "movies"
    make_video(movies / "Film (2001)" / "Film (2001).mkv", seconds=1.0, width=160, height=120, fps=10)
    live = start_server(root / "data")
    complete_wizard(live)
    live.extra["music_dir"] = music
    live.extra["music"] = add_library_and_scan(live, "Music", "music", [music])
    live.extra["movies"] = add_library_and_scan(live, "Movies", "movies", [movies])
    wait_for_artwork(live)
    yield live
    stop_server(live)


def _get(c: httpx.Client, params: dict, camel: bool = False, path: str = "/Items") -> dict:
    r = c.get(path, params=params, headers=CAMEL if camel else {})
    assert r.status_code == 200, r.text
    return r.json()


def _kept(live: LiveServer, c: httpx.Client, params: dict, camel: bool = False, path: str = "/Items") -> dict:
    """The page asked until it comes from the kept replies (the second ask admits it); checks the
    kept bytes equal the freshly made ones."""
    replies, db = live.ctx.replies, live.ctx.db
    for _ in range(5):
        # a background write (the artwork run an earlier test's change asked for) between the asks
        # rightly empties the kept reply: wait for the background work and ask again
        wait_for_artwork(live)
        written = db.content_generation
        fresh = _get(c, params, camel, path)
        _get(c, params, camel, path)
        hits = replies.hits
        again = _get(c, params, camel, path)
        if db.content_generation != written:
            continue
        assert replies.hits == hits + 1 or not replies.enabled, "the third ask should be answered from the kept reply"
        assert again == fresh
        return again
    raise AssertionError("the database kept being written while the page was asked")


def _served_fresh(live: LiveServer, c: httpx.Client, params: dict, camel: bool = False, path: str = "/Items") -> dict:
    """The next reply, which must not come from the kept replies."""
    hits = live.ctx.replies.hits
    reply = _get(c, params, camel, path)
    assert live.ctx.replies.hits == hits, "a stale kept reply was served"
    return reply


def _by_name(reply: dict, camel: bool = False) -> dict[str, dict]:
    return {i["name" if camel else "Name"]: i for i in reply["items" if camel else "Items"]}


def _id(live: LiveServer, **where: object) -> str:
    found = items(live, **where)
    assert len(found) == 1, where
    return found[0].id


def test_an_edit_and_an_image_show_at_once(own: LiveServer, tmp_path: Path) -> None:
    live = own
    film = _id(live, type="Movie")
    with live.admin() as c:
        for camel in (False, True):
            _kept(live, c, PAGE, camel)
        item = c.get(f"/Items/{film}", params={"userId": live.admin_id}).json()
        item.update({"Name": "Film Edited", "Overview": "New words.", "Genres": ["Western"]})
        assert c.post(f"/Items/{film}", json=item).status_code == 204
        for camel in (False, True):
            got = _by_name(_served_fresh(live, c, PAGE, camel), camel)["Film Edited"]
            assert got["Overview" if not camel else "overview"] == "New words."
            assert got["Genres" if not camel else "genres"] == ["Western"]
        before = _by_name(_kept(live, c, PAGE))["Film Edited"]["ImageTags"]
        picture = make_image(tmp_path / "poster.jpg", 200, 300, "red").read_bytes()
        assert c.post(f"/Items/{film}/Images/Primary", content=picture,
                      headers={"Content-Type": "image/jpeg"}).status_code == 204
        after = _by_name(_served_fresh(live, c, PAGE))["Film Edited"]
        assert after["ImageTags"].get("Primary") and after["ImageTags"] != before
        assert after["PrimaryImageAspectRatio"] == pytest.approx(200 / 300)


def test_user_data_shows_at_once_and_stays_with_its_user(own: LiveServer) -> None:
    live = own
    song = _id(live, type="Audio", name="Alpha")
    film = _id(live, type="Movie")
    with live.admin() as c:
        other, token = new_user(c, live, "other")
        with live.client(token, "other-device") as oc:
            mine = _kept(live, c, PAGE)
            theirs = _kept(live, oc, PAGE)
            written = live.ctx.db.content_generation
            assert _by_name(mine)["Alpha"]["UserData"]["Played"] is False
            # the admin marks a song played and favourite: the admin's page changes at once ...
            assert c.post(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
            data = _by_name(_served_fresh(live, c, PAGE))["Alpha"]["UserData"]
            assert data["Played"] is True
            assert c.post(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert _by_name(_served_fresh(live, c, PAGE))["Alpha"]["UserData"]["IsFavorite"] is True
            # ... and the other user's kept page stays theirs (and kept: their user data did not change)
            for _ in range(5):
                hits = live.ctx.replies.hits
                still = _get(oc, PAGE)
                if live.ctx.db.content_generation == written:
                    break
                # a background write (not user data) between the asks rightly dropped it: keep
                # their page again, the admin writes user data again, ask again
                theirs = _kept(live, oc, PAGE)
                written = live.ctx.db.content_generation
                assert c.post(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
            assert live.ctx.replies.hits == hits + 1
            assert still == theirs
            assert _by_name(still)["Alpha"]["UserData"]["Played"] is False
            assert _by_name(still)["Alpha"]["UserData"]["IsFavorite"] is False
            # progress on the film (the playback's user data write) shows in the admin's Resume and Items
            _kept(live, c, PAGE)
            r = c.post(f"/UserItems/{film}/UserData", params={"userId": live.admin_id},
                       json={"PlaybackPositionTicks": 5_000_000})
            assert r.status_code == 200, r.text
            assert _by_name(_served_fresh(live, c, PAGE))[_film_name(live)][
                "UserData"]["PlaybackPositionTicks"] == 5_000_000
            # the other user's page through the admin's token names them explicitly: their own data
            as_other = _get(c, {**PAGE, "userId": other})
            assert _by_name(as_other)["Alpha"]["UserData"]["Played"] is False
            # the other user asking with the admin's userId is refused, kept page or not
            assert oc.get("/Items", params={**PAGE, "userId": live.admin_id}).status_code == 403
        # undo (other tests read the same songs)
        assert c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
        assert c.delete(f"/UserFavoriteItems/{song}", params={"userId": live.admin_id}).status_code == 200
        assert _by_name(_served_fresh(live, c, PAGE))["Alpha"]["UserData"]["Played"] is False


def _film_name(live: LiveServer) -> str:
    return items(live, type="Movie")[0].name


def test_resume_latest_and_item_pages_follow_user_data(own: LiveServer) -> None:
    live = own
    film = _id(live, type="Movie")
    resume = {"userId": live.admin_id, "fields": "Overview"}
    latest = {"userId": live.admin_id, "parentId": live.extra["music"], "includeItemTypes": "Audio",
              "groupItems": "false"}
    with live.admin() as c:
        _kept(live, c, resume, path="/UserItems/Resume")
        _kept(live, c, latest, path="/Items/Latest")
        r = c.post(f"/UserItems/{film}/UserData", params={"userId": live.admin_id},
                   json={"PlaybackPositionTicks": 7_000_000, "Played": False})
        assert r.status_code == 200, r.text
        got = _served_fresh(live, c, resume, path="/UserItems/Resume")
        assert [i["Id"] for i in got["Items"]] == [film]
        assert got["Items"][0]["UserData"]["PlaybackPositionTicks"] == 7_000_000
        song = _id(live, type="Audio", name="Gamma")
        assert c.post(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
        # Latest hides played items by default
        assert song not in [i["Id"] for i in _served_fresh(live, c, latest, path="/Items/Latest")]
        assert c.delete(f"/UserPlayedItems/{song}", params={"userId": live.admin_id}).status_code == 200
        assert song in [i["Id"] for i in _served_fresh(live, c, latest, path="/Items/Latest")]
        r = c.post(f"/UserItems/{film}/UserData", params={"userId": live.admin_id},
                   json={"PlaybackPositionTicks": 0})
        assert r.status_code == 200
        assert _served_fresh(live, c, resume, path="/UserItems/Resume")["Items"] == []


def test_policies_show_at_once_and_never_share_a_page(own: LiveServer) -> None:
    live = own
    film = _id(live, type="Movie")
    with live.admin() as c:
        everything = _kept(live, c, PAGE)
        assert _film_name(live) in _by_name(everything)
        _, token = new_user(c, live, "musiconly", EnableAllFolders=False, EnabledFolders=[live.extra["music"]])
        with live.client(token, "musiconly-device") as mc:
            # the same query string from a user who may not see the movies: never the admin's kept page
            page = _get(mc, PAGE)
            assert _film_name(live) not in _by_name(page) and "Alpha" in _by_name(page)
            assert _film_name(live) not in _by_name(_kept(live, mc, PAGE))
        uid, token = new_user(c, live, "limited")
        with live.client(token, "limited-device") as lc:
            assert _film_name(live) in _by_name(_kept(live, lc, PAGE))
            policy = c.get(f"/Users/{uid}").json()["Policy"]
            # blocked tags: the film tagged, then the tag blocked
            item = c.get(f"/Items/{film}", params={"userId": live.admin_id}).json()
            item["Tags"] = ["gore"]
            assert c.post(f"/Items/{film}", json=item).status_code == 204
            assert _by_name(_served_fresh(live, lc, PAGE))[_film_name(live)]["Tags"] == ["gore"]
            _kept(live, lc, PAGE)
            policy.update(BlockedTags=["gore"])
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            kept = len(live.ctx.replies)
            for _ in range(3):  # parental rules: never kept
                assert _film_name(live) not in _by_name(_served_fresh(live, lc, PAGE))
            assert len(live.ctx.replies) <= kept
            # a parental rating instead
            policy.update(BlockedTags=[], MaxParentalRating=10)
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            item["OfficialRating"] = "R"
            item["Tags"] = []
            assert c.post(f"/Items/{film}", json=item).status_code == 204
            assert _film_name(live) not in _by_name(_served_fresh(live, lc, PAGE))
            policy["MaxParentalRating"] = 1000  # (a policy save leaves out what is null: raised instead)
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            assert _film_name(live) in _by_name(_served_fresh(live, lc, PAGE))
            # a library taken away: gone at once
            policy.update(EnableAllFolders=False, EnabledFolders=[live.extra["music"]])
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            assert _film_name(live) not in _by_name(_served_fresh(live, lc, PAGE))
            # the user disabled: their token stops working, kept page or not
            policy["IsDisabled"] = True
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            assert lc.get("/Items", params=PAGE).status_code in (401, 403)


def test_configuration_and_scan_show_at_once(own: LiveServer) -> None:
    live = own
    with live.admin() as c:
        _kept(live, c, PAGE)
        config = c.get("/System/Configuration").json()
        assert c.post("/System/Configuration", json=config).status_code == 204
        _served_fresh(live, c, PAGE)  # any save: made again
        before = _kept(live, c, PAGE)
        _song(live.extra["music_dir"] / "Band" / "Record" / "04 - Delta.mp3", "Delta", 4)
        refresh_and_wait(live)
        after = _served_fresh(live, c, PAGE)
        assert after["TotalRecordCount"] == before["TotalRecordCount"] + 1
        assert "Delta" in _by_name(after)


def test_random_sorts_and_api_keys(own: LiveServer) -> None:
    live = own
    with live.admin() as c:
        random = {**PAGE, "sortBy": "Random"}
        kept = len(live.ctx.replies)
        hits = live.ctx.replies.hits
        for _ in range(4):
            _get(c, random)
        assert live.ctx.replies.hits == hits and len(live.ctx.replies) == kept
        assert c.post("/Auth/Keys", params={"app": "replies-test"}).status_code == 204
        key = next(k for k in c.get("/Auth/Keys").json()["Items"] if k["AppName"] == "replies-test")["AccessToken"]
    with httpx.Client(base_url=live.url, timeout=30) as kc:
        page = {**PAGE, "api_key": key}
        everything = _kept(live, kc, page)
        assert everything["TotalRecordCount"] >= 4
        uid = live.admin_id
        assert _by_name(_kept(live, kc, {**page, "userId": uid}))["Alpha"]["UserData"]["Played"] is False
    with live.client(device="x") as anon:
        assert anon.get("/Items", params=PAGE).status_code == 401  # no token: no kept page
        assert anon.get("/Items", params=PAGE, headers=auth_header("not-a-token")).status_code == 401


# ---------------------------------------------------------------- the parts


def test_device_activity_is_no_content_write_and_user_data_is_per_user(tmp_path: Path) -> None:
    from server.db.schema import metadata

    db = Database(sqlite_url(tmp_path / "t.db"))
    metadata.create_all(db.engine)
    try:
        db.write_sync(lambda s: s.add(User(id="u1", name="one")))
        db.write_sync(lambda s: s.add(Device(id=1, user_id="u1", access_token="t1", device_id="x",
                                             device_name="x", app_name="a", app_version="1")))
        content = db.content_generation
        from sqlmodel import select

        def touch(s) -> None:
            dev = s.scalars(select(Device).where(Device.access_token == "t1")).first()
            from server.db.tables import utcnow
            dev.date_last_activity = utcnow()
            s.add(dev)

        db.write_sync(touch)
        assert db.content_generation == content  # a last-activity update is no content write
        # nor is anything only sign-ins and sessions read: devices, display preferences, a user's
        # sign-in and activity dates written alone (UserService.sign_in_by_name, touch)
        db.write_sync(lambda s: setattr(s.get(Device, 1), "device_name", "renamed"))
        db.write_sync(lambda s: s.add(Device(id=2, user_id="u1", access_token="t2", device_id="y",
                                             device_name="y", app_name="a", app_version="1")))
        db.write_sync(lambda s: s.delete(s.get(Device, 2)))
        db.write_sync(lambda s: s.add(DisplayPreferences(user_id="u1", preferences_id="usersettings",
                                                         client="emby", data_json="{}")))

        def signed_in(s) -> None:
            user = s.get(User, "u1")
            user.last_login_date = utcnow()
            user.last_activity_date = user.last_login_date

        db.write_sync(signed_in)
        db.write_sync(lambda s: setattr(s.get(User, "u1"), "last_activity_date", utcnow()))
        assert db.content_generation == content
        # a user's name, policy or anything else written with those dates is content (views and
        # access follow it)
        def failed_then_signed_in(s) -> None:
            user = s.get(User, "u1")
            user.invalid_login_attempts = 3
            user.last_activity_date = utcnow()

        db.write_sync(failed_then_signed_in)
        assert db.content_generation == content + 1
        db.write_sync(lambda s: setattr(s.get(User, "u1"), "name", "renamed"))
        assert db.content_generation == content + 2
        content += 1  # (what follows compares with content + 1)
        import asyncio

        from sqlalchemy import text

        u1, u2 = db.user_generation("u1"), db.user_generation("u2")
        asyncio.run(db.write_user_data(("u1",), lambda s: s.execute(text(
            "UPDATE user_data SET played = 1 WHERE user_id = 'u1'"))))
        assert db.user_generation("u1") != u1 and db.user_generation("u2") == u2
        db.write_sync(lambda s: s.execute(text("UPDATE user_data SET played = 0")))  # whose? everyone's
        assert db.user_generation("u2") != u2
        assert db.content_generation == content + 1  # user data only
    finally:
        db.close()


class _Users:
    def __init__(self) -> None:
        self.records: dict[str, object] = {}

    def cached(self, user_id: str) -> object:
        return self.records.get(user_id)


class _Db:
    content_generation = 0

    def user_generation(self, _user_id: str | None) -> tuple[int, int]:
        return (0, 0)


def test_the_cache_is_bounded_and_admits_on_the_second_sight() -> None:
    users = _Users()
    cache = ReplyCache(_Db(), users, budget=64 * 1024)  # type: ignore[arg-type]
    users.records["u"] = record = object()

    def ask(n: int, size: int = 8000) -> bytes | None:
        key = ("GetItems", "u", "/Items", f"startIndex={n}".encode(), False)
        found = cache.lookup(key, "u", None)
        if found is None:
            cache.keep(b"x" * size, "u", record, False)  # type: ignore[arg-type]
        return found

    assert ask(1) is None and len(cache) == 0  # first sight: not kept
    assert ask(1) is None and len(cache) == 1
    assert ask(1) == b"x" * 8000
    for n in range(2, 40):
        ask(n)
        ask(n)
    assert cache.size <= cache.budget and len(cache) < 10
    assert ask(39) is not None  # the most recent stay
    assert ask(2, 30000) is None and ask(2, 30000) is None and len(cache) < 10  # a quarter of the budget: not kept
    users.records["u"] = object()  # the user's record changed: nothing of theirs is served
    assert ask(39) is None
    pending.set(None)
    cache.keep(b"y", "u", record, False)  # type: ignore[arg-type]  # no slot: nothing stored
    assert isinstance(Slot(("k",), None, (), None), tuple)
    assert reply_cache_budget(None, {"REELROOM_REPLY_CACHE_MIB": "0"}) == 0
    assert reply_cache_budget(None, {}) == 16 * 1024 * 1024
    assert reply_cache_budget(2, {"REELROOM_REPLY_CACHE_MIB": "0"}) == 2 * 1024 * 1024


def test_kept_replies_can_be_turned_off(tmp_path: Path) -> None:
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        complete_wizard(live)
        with live.admin() as c:
            for _ in range(3):
                _get(c, PAGE)
        assert live.ctx.replies.hits == 0 and len(live.ctx.replies) == 0
    finally:
        stop_server(live)



def test_pages_made_by_a_reader_are_kept_in_the_owner(tmp_path: Path) -> None:
    """With reader processes on (server/readers/), the owner keeps the reply a reader made: a
    repeated page is answered by the owner from it, the reader not asked again."""
    live = start_server(tmp_path / "data", readers=1, readers_busy=0)
    try:
        complete_wizard(live)
        pool = live.ctx.readers
        params = {"recursive": "true", "limit": "10"}
        with live.admin() as c:
            import time

            deadline = time.monotonic() + 60
            while not pool.pids() and time.monotonic() < deadline:  # the first busy page starts one
                assert c.get("/Items", params={**params, "startIndex": "1"}).status_code == 200
                time.sleep(0.2)
            assert pool.pids(), "no reader started"
            for attempt in range(5):
                # (a start-up task's write between the asks rightly drops the kept reply: again,
                # with a page not seen before)
                page = {**params, "limit": str(10 + attempt)}
                written = live.ctx.db.content_generation
                served = pool.served
                first = c.get("/Items", params=page)
                second = c.get("/Items", params=page)
                hits = live.ctx.replies.hits
                third = c.get("/Items", params=page)
                if live.ctx.db.content_generation == written:
                    break
            assert pool.served == served + 2  # made twice by the reader (the second ask admits it)
            assert live.ctx.replies.hits == hits + 1 and pool.served == served + 2
            assert first.content == second.content == third.content
    finally:
        stop_server(live)


@pytest.mark.parametrize("rated", [False, True], ids=["plain", "parental-limit"])
def test_a_granted_library_shows_at_once(own: LiveServer, rated: bool) -> None:
    """Access given (EnableAllFolders, or the library added to EnabledFolders) shows on the very next
    page, as access taken away does; with a parental limit too (those pages are never kept)."""
    live = own
    extra = {"MaxParentalRating": 1000} if rated else {}
    name = f"granted-{int(rated)}"
    with live.admin() as c:
        uid, token = new_user(c, live, name, EnableAllFolders=False, EnabledFolders=[live.extra["music"]], **extra)
        with live.client(token, f"{name}-device") as gc:
            first = _get(gc, PAGE) if rated else _kept(live, gc, PAGE)
            assert _film_name(live) not in _by_name(first)
            policy = c.get(f"/Users/{uid}").json()["Policy"]
            policy.update(EnabledFolders=[live.extra["music"], live.extra["movies"]])
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            granted = _served_fresh(live, gc, PAGE)
            assert _film_name(live) in _by_name(granted)
            assert granted["TotalRecordCount"] == first["TotalRecordCount"] + 1
            assert _film_name(live) in _by_name(_get(gc, PAGE) if rated else _kept(live, gc, PAGE))
            policy.update(EnableAllFolders=False, EnabledFolders=[live.extra["music"]])
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            assert _film_name(live) not in _by_name(_served_fresh(live, gc, PAGE))
            policy.update(EnableAllFolders=True, EnabledFolders=[])
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
            assert _film_name(live) in _by_name(_served_fresh(live, gc, PAGE))


def test_session_writes_are_told_apart_in_both_dialects_spellings() -> None:
    """``_SESSION_WRITE`` as SQLAlchemy spells the statements for SQLite and for PostgreSQL (its
    markers carry a ``::TYPE`` cast there): a user's sign-in dates alone are no content write; the
    same dates written with anything else of the user are."""
    from server.db.database import _SESSION_WRITE

    pg = "%(last_login_date)s::TIMESTAMP WITHOUT TIME ZONE"
    session = ["UPDATE users SET last_login_date=?, last_activity_date=? WHERE users.id = ?",
               "UPDATE users SET last_activity_date=? WHERE users.id = ?",
               f"UPDATE users SET last_login_date={pg}, last_activity_date={pg} WHERE users.id = %(id_1)s::VARCHAR",
               f"UPDATE users SET last_activity_date={pg} WHERE users.id = %(id_1)s::VARCHAR",
               "INSERT INTO devices (access_token, user_id) VALUES (%(a)s, %(b)s) RETURNING devices.id",
               "DELETE FROM devices WHERE devices.id = ?", "INSERT INTO display_preferences (user_id) VALUES (?)"]
    content = ["UPDATE users SET invalid_login_attempts=?, last_activity_date=? WHERE users.id = ?",
               "UPDATE users SET last_activity_date=?, invalid_login_attempts=? WHERE users.id = ?",
               "UPDATE users SET last_login_date=?, last_activity_date=?, name=? WHERE users.id = ?",
               f"UPDATE users SET last_activity_date={pg}, policy_json=%(p)s WHERE users.id = %(i)s",
               "UPDATE users SET name=? WHERE users.id = ?", "INSERT INTO users (id) VALUES (?)",
               "UPDATE items SET name=? WHERE items.id = ?"]
    assert [s for s in session if not _SESSION_WRITE.match(s)] == []
    assert [s for s in content if _SESSION_WRITE.match(s)] == []
