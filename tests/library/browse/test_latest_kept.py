"""Latest's batches run a statement compiled once per query shape and content generation
(server/library/catalog/home.py ``_batch``): what it reads is still evaluated per request, so a
played mark (user data: the statement is kept) hides an item at once, and the viewer's libraries
and parental rules (part of the shape, or not kept) follow their policy. Each ask uses another
``limit`` so the whole-reply cache is not what answers."""

from __future__ import annotations

import itertools

from tests.library.browse.conftest import ids_by_name, new_user

_limits = itertools.count(30)


def test_latest_follows_played_marks_policies_and_ratings(browse_server):
    live = browse_server
    libraries = live.extra["libraries"]
    movies = ids_by_name(live, "Movie")
    heat = movies["Heat"]
    uid, token = new_user(live, "latestwatcher")

    def latest(c, **params: str) -> list[str]:
        r = c.get("/Items/Latest", params={"userId": uid, "limit": str(next(_limits)), **params})
        assert r.status_code == 200, r.text
        return [i["Id"] for i in r.json()]

    def policy(**changes: object) -> None:
        with live.admin() as a:
            current = a.get(f"/Users/{uid}").json()["Policy"]
            assert a.post(f"/Users/{uid}/Policy", json={**current, **changes}).status_code == 204

    with live.client(token, device="latestwatcher") as c:
        shown = latest(c, parentId=libraries["movies"])
        assert heat in shown
        assert c.post(f"/UserPlayedItems/{heat}", params={"userId": uid}).status_code == 200
        try:
            assert heat not in latest(c, parentId=libraries["movies"])  # played: hidden (HidePlayedInLatest)
            assert heat in latest(c, parentId=libraries["movies"], isPlayed="true")
        finally:
            assert c.delete(f"/UserPlayedItems/{heat}", params={"userId": uid}).status_code == 200
        assert latest(c, parentId=libraries["movies"]) == shown
        everywhere = latest(c)
        assert heat in everywhere
        policy(EnableAllFolders=False, EnabledFolders=[libraries["music"]])
        try:
            music_only = latest(c)
            assert music_only and not set(music_only) & set(movies.values())
        finally:
            policy(EnableAllFolders=True, EnabledFolders=[])
        assert latest(c) == everywhere
        with live.admin() as a:
            item = a.get(f"/Items/{heat}").json()
            old_rating = item.get("OfficialRating")
            assert a.post(f"/Items/{heat}", json={**item, "OfficialRating": "R"}).status_code == 204
        try:
            policy(MaxParentalRating=10)  # R is above 10: hidden
            try:
                assert heat not in latest(c, parentId=libraries["movies"])
            finally:
                policy(MaxParentalRating=None)
            assert heat in latest(c, parentId=libraries["movies"])
        finally:
            with live.admin() as a:
                item = a.get(f"/Items/{heat}").json()
                assert a.post(f"/Items/{heat}", json={**item, "OfficialRating": old_rating}).status_code == 204
        assert latest(c, parentId=libraries["movies"]) == shown
