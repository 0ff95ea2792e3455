"""What an Items page keeps between requests (server/library/catalog/query.py CountCache: totals,
ordered id lists, page statements) is never served stale: change the library, a user's data or a
user's policy, ask again, see the change. Also: sortBy=Random draws from the scope, and what one
page costs the database (statements, thread hand-offs) is pinned."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import delete, event

from server.db.tables import ActivityLogEntry, Item
from server.library.catalog.query import _rating_level
from tests.conftest import ON_POSTGRES, complete_wizard, sqlite_only, start_server, stop_server
from tests.library.query.factory import Factory
from tests.library_helpers import wait_for_artwork

BIG = 1100  # more than DEEP_PAGE: deep pages read and cache the whole ordered id list


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    live = start_server(tmp_path_factory.mktemp("page-cache") / "data")
    complete_wizard(live)
    f = Factory(live)
    big = f.library("Big", "homevideos")
    small = f.library("Small", "movies")

    def fill(s) -> None:
        for n in range(BIG):
            s.add(Item(id=uuid.uuid4().hex, type="Video", media_type="Video", library_id=big, parent_id=big,
                       name=f"Clip {n:04d}", sort_name=f"clip {n:04d}", path=f"/v/{n}",
                       official_rating="R" if n % 2 else "PG"))

    live.ctx.db.write_sync(fill)
    movies = [f.item(small, "Movie", f"Movie {n:02d}", official_rating="PG") for n in range(60)]
    yield {"live": live, "f": f, "big": big, "small": small, "movies": movies}
    stop_server(live)


def admin(world: dict) -> httpx.Client:
    return world["live"].admin()


def page(c: httpx.Client, parent: str, **params) -> dict:
    r = c.get("/Items", params={"parentId": parent, "recursive": "true", "limit": 5, **params})
    assert r.status_code == 200, r.text
    return r.json()


def names(result: dict) -> list[str]:
    return [i["Name"] for i in result["Items"]]


def add_clip(world: dict, name: str) -> str:
    return world["f"].item(world["big"], "Video", name, sort_name=name.lower(), official_rating="PG")


def remove(world: dict, item_id: str) -> None:
    world["live"].ctx.db.write_sync(lambda s: s.execute(delete(Item.__table__).where(Item.__table__.c.id == item_id)))


# ---------------------------------------------------------------- library writes


def test_cached_lists_and_statements_follow_library_writes(world) -> None:
    with admin(world) as c:
        deep = page(c, world["big"], startIndex=1000)  # reads and caches the ordered id list
        assert names(deep) == [f"Clip {n:04d}" for n in range(1000, 1005)]
        assert deep["TotalRecordCount"] == BIG
        assert names(page(c, world["big"]))[:2] == ["Clip 0000", "Clip 0001"]  # a slice of that list
        assert page(c, world["big"], startIndex=1000, enableTotalRecordCount="false")["TotalRecordCount"] == 1005
        added = add_clip(world, "Clip 0000a")
        first = page(c, world["big"])
        assert names(first)[:3] == ["Clip 0000", "Clip 0000a", "Clip 0001"] and first["TotalRecordCount"] == BIG + 1
        assert names(page(c, world["big"], startIndex=1000))[0] == "Clip 0999"  # shifted by the new row
        # a shape served by its cached statement (page 2 of a filtered listing), then a write
        filtered = {"nameStartsWith": "Clip 00", "startIndex": 5}
        assert names(page(c, world["big"], **filtered)) == ["Clip 0004", "Clip 0005", "Clip 0006", "Clip 0007",
                                                            "Clip 0008"]
        assert page(c, world["big"], **filtered)["TotalRecordCount"] == 101
        remove(world, added)
        after = page(c, world["big"], **filtered)
        assert names(after) == ["Clip 0005", "Clip 0006", "Clip 0007", "Clip 0008", "Clip 0009"]
        assert after["TotalRecordCount"] == 100
        assert page(c, world["big"], startIndex=1000)["TotalRecordCount"] == BIG


# ---------------------------------------------------------------- sortBy=Random


def test_random_pages_draw_from_the_scope(world) -> None:
    movies = set(world["movies"])
    with admin(world) as c:
        drawn = [page(c, world["small"], sortBy="Random", limit=10) for _ in range(6)]
        for result in drawn:
            got = [i["Id"] for i in result["Items"]]
            assert len(got) == 10 and len(set(got)) == 10 and set(got) <= movies
            assert result["TotalRecordCount"] == 60
        assert len({tuple(i["Id"] for i in r["Items"]) for r in drawn}) > 1  # not the same page every time
        tail = page(c, world["small"], sortBy="Random", startIndex=55, limit=10)
        assert len(tail["Items"]) == 5 and tail["TotalRecordCount"] == 60
        assert page(c, world["small"], sortBy="Random", startIndex=60)["Items"] == []
        uncounted = page(c, world["small"], sortBy="Random", limit=10, enableTotalRecordCount="false")
        assert len(uncounted["Items"]) == 10 and uncounted["TotalRecordCount"] == 10  # as without the cache
        whole = c.get("/Items", params={"parentId": world["small"], "recursive": "true", "sortBy": "Random"}).json()
        assert {i["Id"] for i in whole["Items"]} == movies and len(whole["Items"]) == 60
        # the scope's list is cached: a new movie must be drawn from, a removed one never again
        new = world["f"].item(world["small"], "Movie", "Movie new", official_rating="PG")
        whole = c.get("/Items", params={"parentId": world["small"], "recursive": "true", "sortBy": "Random"}).json()
        assert new in {i["Id"] for i in whole["Items"]} and whole["TotalRecordCount"] == 61
        remove(world, new)
        whole = c.get("/Items", params={"parentId": world["small"], "recursive": "true", "sortBy": "Random"}).json()
        assert new not in {i["Id"] for i in whole["Items"]} and whole["TotalRecordCount"] == 60
        # filtered by user data: the draw follows the user's favourites
        uid = world["live"].admin_id
        fav = world["movies"][7]
        assert page(c, world["small"], sortBy="Random", isFavorite="true", userId=uid)["TotalRecordCount"] == 0
        assert c.post(f"/UserFavoriteItems/{fav}", params={"userId": uid}).status_code == 200
        favs = page(c, world["small"], sortBy="Random", isFavorite="true", userId=uid)
        assert [i["Id"] for i in favs["Items"]] == [fav] and favs["TotalRecordCount"] == 1
        assert c.delete(f"/UserFavoriteItems/{fav}", params={"userId": uid}).status_code == 200
        assert page(c, world["small"], sortBy="Random", isFavorite="true", userId=uid)["Items"] == []


# ---------------------------------------------------------------- user data


def test_user_data_changes_are_seen_at_once(world) -> None:
    live, uid = world["live"], world["live"].admin_id
    db = live.ctx.db
    clip = {n: i["Id"] for n, i in enumerate(page(admin(world), world["big"], limit=BIG)["Items"])}
    with admin(world) as c:
        unplayed = page(c, world["big"], userId=uid, isPlayed="false", startIndex=1000)
        assert unplayed["TotalRecordCount"] == BIG
        favs = page(c, world["big"], userId=uid, isFavorite="true")
        assert favs["TotalRecordCount"] == 0
        plain = page(c, world["big"], startIndex=1000)  # no user data in its SQL
        content, generation = db.content_generation, db.generation

        assert c.post(f"/UserPlayedItems/{clip[1003]}", params={"userId": uid}).status_code == 200
        assert c.post(f"/UserFavoriteItems/{clip[2]}", params={"userId": uid}).status_code == 200
        # user-data writes leave library-only answers cached, and only them
        assert db.content_generation == content and db.generation > generation
        unplayed = page(c, world["big"], userId=uid, isPlayed="false", startIndex=1000)
        assert unplayed["TotalRecordCount"] == BIG - 1 and "Clip 1003" not in names(unplayed)
        played = page(c, world["big"], userId=uid, isPlayed="true")
        assert names(played) == ["Clip 1003"] and played["TotalRecordCount"] == 1
        favs = page(c, world["big"], userId=uid, isFavorite="true")
        assert names(favs) == ["Clip 0002"] and favs["TotalRecordCount"] == 1
        again = page(c, world["big"], startIndex=1000)
        assert names(again) == names(plain) and again["TotalRecordCount"] == plain["TotalRecordCount"]
        assert [i["UserData"]["Played"] for i in again["Items"]] == [False, False, False, True, False]

        # sorted by user data: the latest played first, the most played first
        assert c.post(f"/UserPlayedItems/{clip[40]}", params={"userId": uid}).status_code == 200
        by_date = page(c, world["big"], userId=uid, sortBy="DatePlayed", sortOrder="Descending", limit=2,
                       isPlayed="true")  # (never played rows: NULL dates sort first on PostgreSQL)
        assert names(by_date) == ["Clip 0040", "Clip 1003"]
        r = c.post(f"/UserItems/{clip[7]}/UserData", params={"userId": uid}, json={"PlayCount": 9})
        assert r.status_code == 200
        by_count = page(c, world["big"], userId=uid, sortBy="PlayCount", sortOrder="Descending", limit=1)
        assert names(by_count) == ["Clip 0007"]
        assert page(c, world["big"], userId=uid, sortBy="PlayCount", sortOrder="Descending", limit=1,
                    startIndex=1000)["TotalRecordCount"] == BIG

        for n in (1003, 40):
            assert c.delete(f"/UserPlayedItems/{clip[n]}", params={"userId": uid}).status_code == 200
        assert c.delete(f"/UserFavoriteItems/{clip[2]}", params={"userId": uid}).status_code == 200
        c.post(f"/UserItems/{clip[7]}/UserData", params={"userId": uid}, json={"PlayCount": 0})
        assert page(c, world["big"], userId=uid, isPlayed="false", startIndex=1000)["TotalRecordCount"] == BIG
        assert page(c, world["big"], userId=uid, isFavorite="true")["TotalRecordCount"] == 0


def test_a_write_of_more_than_user_data_bumps_the_content_generation(world) -> None:
    db = world["live"].ctx.db
    content = db.content_generation
    world["f"].user_data(world["live"].admin_id, world["movies"][0], play_count=1)
    assert db.content_generation == content
    added = add_clip(world, "Clip gen")
    assert db.content_generation == content + 1
    remove(world, added)
    world["f"].user_data(world["live"].admin_id, world["movies"][0], play_count=0)


def test_log_writes_leave_the_content_generation(world) -> None:
    """The activity log and the tasks' results are read by no catalog answer: writing them keeps
    every cached page, total and stored fragment (fragment_store.py) of the library current."""
    live = world["live"]
    db = live.ctx.db
    content, generation = db.content_generation, db.generation
    db.write_sync(lambda s: s.add(ActivityLogEntry(name="A log line", type="Test")))  # (as ActivityLog.add)
    with live.admin() as c:
        assert c.get("/System/ActivityLog/Entries", params={"limit": "5"}).json()["Items"][0]["Name"] == "A log line"
    assert db.content_generation == content and db.generation > generation
    added = add_clip(world, "Clip after the log")
    assert db.content_generation == content + 1
    remove(world, added)


# ---------------------------------------------------------------- policy


def test_policy_changes_are_seen_at_once(world) -> None:
    live = world["live"]
    with live.admin() as c:
        r = c.post("/Users/New", json={"Name": "viewer", "Password": "pw"})
        assert r.status_code == 200, r.text
        user = r.json()["Id"]
    with live.client(device="viewer-device") as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "viewer", "Pw": "pw"}).json()["AccessToken"]

    def totals() -> tuple[int, int]:
        with live.client(token, "viewer-device") as v:
            deep = v.get("/Items", params={"recursive": "true", "includeItemTypes": "Video,Movie", "limit": 5,
                                           "startIndex": 1000}).json()
            small = v.get("/Items", params={"parentId": world["small"], "recursive": "true", "limit": 5}).json()
            return deep["TotalRecordCount"], small["TotalRecordCount"]

    def set_policy(**changes) -> None:
        with live.admin() as c:
            policy = c.get(f"/Users/{user}").json()["Policy"]
            policy.update(changes)
            assert c.post(f"/Users/{user}/Policy", json=policy).status_code == 204

    assert totals() == (BIG + 60, 60)
    set_policy(EnableAllFolders=False, EnabledFolders=[world["big"]])
    assert totals() == (BIG, 0)
    set_policy(EnableAllFolders=True, EnabledFolders=[])
    assert totals() == (BIG + 60, 60)
    level = _rating_level("PG", "US")
    assert level is not None and level < (_rating_level("R", "US") or 0)
    set_policy(MaxParentalRating=level)
    assert totals() == (BIG // 2 + 60, 60)  # the R-rated half of Big is gone
    set_policy(MaxParentalRating=_rating_level("R", "US"))  # (a null MaxParentalRating is not a change)
    assert totals() == (BIG + 60, 60)


# ---------------------------------------------------------------- cost


@sqlite_only
def test_what_a_page_costs(world) -> None:
    """A page with user data and MediaSources, its list and total cached: one thread hand-off to
    the readers; the rows and the user's data in one statement each, no page-ids or count
    statement, and at most two more from the DTO builder (which rows own versions, parents)."""
    live = world["live"]
    db = live.ctx.db
    statements: list[str] = []

    def trace(dbapi_conn: sqlite3.Connection, _record) -> None:
        dbapi_conn.set_trace_callback(statements.append)

    event.listen(db.engine, "connect", trace)
    db.engine.dispose()  # every connection from here on is traced
    hops = 0
    submit = db._readers.submit

    def counting_submit(*args, **kwargs):
        nonlocal hops
        hops += 1
        return submit(*args, **kwargs)

    params = {"userId": live.admin_id, "fields": "PrimaryImageAspectRatio,MediaSources,Overview",
              "startIndex": 1010, "limit": 100}
    svc = live.ctx.items
    store = svc.store
    try:
        for stored in (False, True):
            svc.store = store if stored else None  # (without the fragment store, then with it)
            for _ in range(3):
                live.ctx.replies.clear()  # (each round's second ask is computed, not a kept reply)
                with admin(world) as c:
                    page(c, world["big"], **params)  # fills the caches (and the store)
                    if store is not None:
                        store.flush()
                    content = db.content_generation
                    hops = 0
                    db._readers.submit = counting_submit  # type: ignore[method-assign]
                    statements.clear()
                    result = page(c, world["big"], **params)
                    db._readers.submit = submit  # type: ignore[method-assign]
                if db.content_generation == content:
                    break
                wait_for_artwork(live)  # (a background write between the asks: a new epoch)
            assert len(result["Items"]) == BIG - 1010 and result["TotalRecordCount"] == BIG
            reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
            rows = [s for s in reads if s.startswith('SELECT "id", "type"')]
            user_data = [s for s in reads if " FROM user_data " in s]
            # no page-ids statement, no count: both came from the cached list
            assert not [s for s in reads if "ORDER BY" in s or "count(" in s.lower()], reads
            assert len(user_data) == 1, reads
            if stored:  # every item's fragment came from the store: the user's data is all that is read
                assert rows == [] and len(reads) == 1, reads
            else:
                assert len(rows) == 1, reads
                # with the DTO batch lookups (here: which rows own versions, the parent's images)
                assert len(reads) <= 4, reads
            assert hops == 1
    finally:
        svc.store = store
        db._readers.submit = submit  # type: ignore[method-assign]
        event.remove(db.engine, "connect", trace)
        db.engine.dispose()


# ---------------------------------------------------------------- statements by shape


def test_a_parents_statement_is_its_shapes_with_its_id_bound(world, monkeypatch) -> None:
    """The episodes of one series (a season's, a folder's children) compile to the statement of
    any other of its type with only the parent's id bound differently (``query._parent_shape``):
    the first series of a content generation builds the select, the others bind their id in it,
    and each gets its own episodes and total, as when each built its own."""
    from server.library.catalog import query

    f, live = world["f"], world["live"]
    shows = f.library("Shape shows", "tvshows")
    series = [f.item(shows, "Series", f"Shape show {n}", parent_id=shows) for n in range(3)]
    seasons = [f.item(shows, "Season", "Season 1", parent_id=s, series_id=s, index_number=1) for s in series]
    episodes = {s: [f.item(shows, "Episode", f"Show {n} episode {e}", parent_id=seasons[n], series_id=s,
                           season_id=seasons[n], index_number=e + 1, parent_index_number=1)
                    for e in range(n + 2)] for n, s in enumerate(series)}
    built: list[str | None] = []
    unpaged = query._unpaged_ids

    def counting(s, q):  # type: ignore[no-untyped-def]
        built.append(q.parent_id)
        return unpaged(s, q)

    monkeypatch.setattr(query, "_unpaged_ids", counting)
    live.ctx.replies.clear()
    with admin(world) as c:
        for kind in ("series", "season"):
            built.clear()
            for n, s in enumerate(series):
                params = {"userId": live.admin_id} | ({"seasonId": seasons[n]} if kind == "season" else {})
                r = c.get(f"/Shows/{s}/Episodes", params=params)
                assert r.status_code == 200, r.text
                got = r.json()
                assert [i["Id"] for i in got["Items"]] == episodes[s], (kind, n)
                assert got["TotalRecordCount"] == n + 2
                past = c.get(f"/Shows/{s}/Episodes", params={**params, "startIndex": 10}).json()
                assert past["Items"] == [] and past["TotalRecordCount"] == n + 2  # (counted: nothing read)
            if not ON_POSTGRES:  # (SQLite: PostgreSQL's named parameters build each page's select)
                assert len([p for p in built if p is not None]) == 1, (kind, built)  # the first parent's only
