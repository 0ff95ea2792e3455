"""Seasons, episodes, Next Up (Jellyfin's rules and ordering), upcoming episodes, and marking
items played / unplayed (user data, the UserDataChanged socket message, 404s)."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta

import pytest
import websockets

from tests.library.browse.conftest import new_user, one

MISSING = "0123456789abcdef0123456789abcdef"


def episode(live, name_part: str) -> str:
    from tests.library.browse.conftest import items
    found = [i for i in items(live, type="Episode") if name_part in (i.path or "")]
    assert len(found) == 1, [i.path for i in found]
    return found[0].id


def series_id(live, name: str) -> str:
    return one(live, type="Series", name=name).id


def test_seasons_and_episodes_in_order(browse_server):
    live = browse_server
    sid = series_id(live, "Show Name")
    with live.admin() as c:
        seasons = c.get(f"/Shows/{sid}/Seasons", params={"userId": live.admin_id}).json()
        assert [s["IndexNumber"] for s in seasons["Items"]] == [0, 1, 2]
        assert all(s["Type"] == "Season" and s["SeriesId"] == sid for s in seasons["Items"])
        specials = c.get(f"/Shows/{sid}/Seasons", params={"isSpecialSeason": "true"}).json()["Items"]
        assert [s["IndexNumber"] for s in specials] == [0]
        eps = c.get(f"/Shows/{sid}/Episodes", params={"userId": live.admin_id, "fields": "Path"}).json()
        order = [(e.get("ParentIndexNumber"), e.get("IndexNumber")) for e in eps["Items"]]
        assert order == [(0, 1), (1, 1), (1, 2), (2, 2), (2, 3)]
        assert eps["TotalRecordCount"] == 5
        season2 = c.get(f"/Shows/{sid}/Episodes", params={"season": 2}).json()["Items"]
        assert [e["IndexNumber"] for e in season2] == [2, 3]
        s1 = next(s["Id"] for s in seasons["Items"] if s["IndexNumber"] == 1)
        by_season = c.get(f"/Shows/{sid}/Episodes", params={"seasonId": s1}).json()["Items"]
        assert [e["IndexNumber"] for e in by_season] == [1, 2]
        start = episode(live, "Show Name S01E02")
        rest = c.get(f"/Shows/{sid}/Episodes", params={"startItemId": start, "limit": 2}).json()
        assert [e["Id"] for e in rest["Items"]][0] == start and len(rest["Items"]) == 2
        assert rest["TotalRecordCount"] == 3
        # Unknown series, a movie id as series, a malformed id: 404, 404, 404; bad paging: 400.
        assert c.get(f"/Shows/{MISSING}/Episodes").status_code == 404
        assert c.get(f"/Shows/{MISSING}/Seasons").status_code == 404
        movie = one(live, type="Movie", name="Alien").id
        assert c.get(f"/Shows/{movie}/Seasons").status_code == 404
        # (the series and season are checked in the page's read; any other id goes the way it
        # went before, to the same 404)
        not_series = c.get(f"/Shows/{movie}/Episodes")
        assert not_series.status_code == 404 and "Series" in not_series.text
        not_season = c.get(f"/Shows/{sid}/Episodes", params={"seasonId": movie})
        assert not_season.status_code == 404 and "Season" in not_season.text
        assert c.get(f"/Shows/{s1}/Episodes").status_code == 404  # a season is no series
        assert c.get(f"/Shows/{sid}/Episodes", params={"startIndex": -1}).status_code == 400
        assert c.get(f"/Shows/{sid}/Episodes", params={"seasonId": "nope"}).status_code == 400


def test_next_up_follows_the_last_watched_episode(browse_server):
    live = browse_server
    uid, token = new_user(live, "nextup")
    sid = series_id(live, "Show Name")
    with live.client(token, "nextup-device") as c:
        def next_up(**params):
            r = c.get("/Shows/NextUp", params={"userId": uid, **params})
            assert r.status_code == 200, r.text
            return [e["Id"] for e in r.json()["Items"]]

        def played(name_part, when):
            r = c.post(f"/UserPlayedItems/{episode(live, name_part)}", params={"userId": uid, "datePlayed": when})
            assert r.status_code == 200, r.text
            return r.json()

        assert next_up() == []  # nothing watched yet
        assert next_up(seriesId=sid) == [episode(live, "Show Name S01E01")]  # a named series offers its first episode
        assert next_up(seriesId=sid, disableFirstEpisode="true") == []
        data = played("Show Name S01E01", "2024-01-01T10:00:00Z")
        assert data["Played"] is True and data["PlayCount"] == 1 and data["LastPlayedDate"].startswith("2024-01-01")
        assert next_up() == [episode(live, "Show Name S01E02")]
        played("Show Name S01E02", "2024-01-02T10:00:00Z")
        assert next_up() == [episode(live, "2x02")]  # into the next season; specials are left out
        # Unplaying an earlier episode does not move Next Up back (the furthest played counts).
        r = c.delete(f"/UserPlayedItems/{episode(live, 'Show Name S01E01')}", params={"userId": uid})
        assert r.status_code == 200 and r.json()["Played"] is False and r.json()["PlayCount"] == 0
        assert next_up() == [episode(live, "2x02")]
        # A second series watched more recently comes first.
        played("Other Show S01E01", "2024-02-01T10:00:00Z")
        assert next_up() == [episode(live, "Other Show S01E02"), episode(live, "2x02")]
        assert next_up(limit=1) == [episode(live, "Other Show S01E02")]
        assert next_up(startIndex=1) == [episode(live, "2x02")]
        assert next_up(seriesId=sid) == [episode(live, "2x02")]
        # The cut-off date drops series last watched before it.
        assert next_up(nextUpDateCutoff="2024-01-15T00:00:00Z") == [episode(live, "Other Show S01E02")]
        # Rewatching: the most recently played episode decides, played or not.
        played("Show Name S01E01", "2024-03-01T10:00:00Z")
        assert next_up(seriesId=sid, enableRewatching="true") == [episode(live, "Show Name S01E02")]
        assert next_up(seriesId=sid) == [episode(live, "2x02")]
        # The series is played once all its episodes are.
        for part in ("2x02", "S02E03-E04", "S00E01"):
            played(part, "2024-03-02T10:00:00Z")
        assert next_up(seriesId=sid) == []
        series = c.get(f"/Items/{sid}", params={"userId": uid}).json()
        assert series["UserData"]["Played"] is True and series["UserData"]["UnplayedItemCount"] == 0


def test_marking_a_folder_marks_its_episodes(browse_server):
    live = browse_server
    uid, token = new_user(live, "folderplay")
    sid = series_id(live, "Other Show")
    with live.client(token, "folderplay-device") as c:
        r = c.post(f"/UserPlayedItems/{sid}", params={"userId": uid})
        assert r.status_code == 200, r.text
        assert r.json()["Played"] is True and r.json()["ItemId"] == sid
        eps = c.get(f"/Shows/{sid}/Episodes", params={"userId": uid}).json()["Items"]
        assert len(eps) == 2 and all(e["UserData"]["Played"] for e in eps)
        r = c.delete(f"/UserPlayedItems/{sid}", params={"userId": uid})
        assert r.json()["Played"] is False
        eps = c.get(f"/Shows/{sid}/Episodes", params={"userId": uid}).json()["Items"]
        assert not any(e["UserData"]["Played"] for e in eps)


def test_played_routes_404_and_permissions(browse_server):
    live = browse_server
    movie = one(live, type="Movie", name="Alien").id
    other_id, other_token = new_user(live, "nosy")
    with live.admin() as c:
        assert c.post(f"/UserPlayedItems/{MISSING}", params={"userId": live.admin_id}).status_code == 404
        assert c.delete(f"/UserPlayedItems/{MISSING}", params={"userId": live.admin_id}).status_code == 404
        assert c.post(f"/UserPlayedItems/{movie}", params={"userId": MISSING}).status_code == 404
        assert c.delete(f"/UserPlayedItems/{movie}", params={"userId": MISSING}).status_code == 404
        assert c.post(f"/UserPlayedItems/{movie}", params={"userId": "not-a-guid"}).status_code == 400
        assert c.post(f"/UserPlayedItems/{movie}", params={"datePlayed": "yesterday"}).status_code == 400
    with live.client(other_token, "nosy-device") as c:
        assert c.post(f"/UserPlayedItems/{movie}", params={"userId": live.admin_id}).status_code == 403
        assert c.post(f"/UserPlayedItems/{movie}").json()["Played"] is True  # the caller by default
        # As Jellyfin: a mark without a date counts at most one play; a dated one counts a play.
        assert c.post(f"/UserPlayedItems/{movie}").json()["PlayCount"] == 1
        dated = c.post(f"/UserPlayedItems/{movie}", params={"datePlayed": "2024-05-01T20:00:00Z"}).json()
        assert dated["PlayCount"] == 2 and dated["LastPlayedDate"].startswith("2024-05-01T20:00:00")
    with live.client() as c:
        assert c.post(f"/UserPlayedItems/{movie}").status_code == 401


def test_user_data_changed_reaches_the_socket(browse_server):
    live = browse_server
    uid, token = new_user(live, "socketuser")
    movie = one(live, type="Movie", name="Heat").id
    url = live.url.replace("http://", "ws://") + f"/socket?api_key={token}&deviceId=sock"

    async def run():
        async with websockets.connect(url) as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert first["MessageType"] == "ForceKeepAlive"
            with live.client(token, "socketuser-device") as c:
                assert (await asyncio.to_thread(c.post, f"/UserPlayedItems/{movie}")).status_code == 200
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if message["MessageType"] == "UserDataChanged":
                    return message["Data"]
            pytest.fail("no UserDataChanged message")

    data = asyncio.run(run())
    assert data["UserId"] == uid
    assert data["UserDataList"][0]["ItemId"] == movie and data["UserDataList"][0]["Played"] is True


def test_upcoming_episodes(browse_server):
    live = browse_server
    with live.admin() as c:
        r = c.get("/Shows/Upcoming", params={"userId": live.admin_id})
        assert r.status_code == 200
        # The generated episodes aired in the past (or have no date): nothing is upcoming.
        assert r.json()["Items"] == []
        # Give one episode an air date in three days (through the metadata editor).
        ep = episode(live, "Other Show S01E02")
        soon = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%S.0000000Z")
        assert c.post(f"/Items/{ep}", json={"PremiereDate": soon}).status_code == 204
        upcoming = c.get("/Shows/Upcoming", params={"userId": live.admin_id}).json()["Items"]
        assert [e["Id"] for e in upcoming] == [ep] and upcoming[0]["PremiereDate"].startswith(soon[:10])
        assert c.get("/Shows/Upcoming", params={"limit": -1}).status_code == 400


def test_next_up_bad_input(browse_server):
    with browse_server.admin() as c:
        assert c.get("/Shows/NextUp", params={"seriesId": "nope"}).status_code == 400
        assert c.get("/Shows/NextUp", params={"seriesId": MISSING}).status_code == 404
        assert c.get("/Shows/NextUp", params={"nextUpDateCutoff": "soon"}).status_code == 400
        assert c.get("/Shows/NextUp", params={"limit": -2}).status_code == 400
        assert c.get("/Shows/NextUp", params={"userId": MISSING}).status_code == 404


def test_next_up_keeps_to_the_viewers_parental_rules(browse_server):
    """An episode above a user's MaxParentalRating is never offered as Next Up (nor as the first
    episode of a series they have not started), and shows again once the limit is lifted."""
    live = browse_server
    sid = series_id(live, "Other Show")
    first, second = episode(live, "Other Show S01E01"), episode(live, "Other Show S01E02")
    watcher, token = new_user(live, "nextup-parental", MaxParentalRating=10)
    starter, starter_token = new_user(live, "nextup-parental-new", MaxParentalRating=10)

    def rate(item_id: str, rating: str | None) -> None:
        with live.admin() as a:
            item = a.get(f"/Items/{item_id}").json()
            # ("" clears a rating, as a null does)
            assert a.post(f"/Items/{item_id}", json={**item, "OfficialRating": rating or ""}).status_code == 204

    def next_up(c, uid: str, **params: str) -> list[str]:
        r = c.get("/Shows/NextUp", params={"userId": uid, "seriesId": sid, **params})
        assert r.status_code == 200, r.text
        return [e["Id"] for e in r.json()["Items"]]

    with live.client(token, "nextup-parental-device") as c, \
            live.client(starter_token, "nextup-parental-new-device") as n:
        assert c.post(f"/UserPlayedItems/{first}", params={"userId": watcher}).status_code == 200
        assert next_up(c, watcher) == [second]
        assert next_up(n, starter) == [first]  # nothing watched: the first episode
        rate(second, "R")  # above 10
        try:
            assert next_up(c, watcher) == []
            r = c.get("/Shows/NextUp", params={"userId": watcher})
            assert second not in [e["Id"] for e in r.json()["Items"]]
            rate(first, "R")
            rate(second, None)
            assert next_up(n, starter) == [second]  # the first one is hidden: the next one it may see
        finally:
            rate(first, None)
            rate(second, None)
        assert next_up(c, watcher) == [second]
        assert next_up(n, starter) == [first]
