"""By-name totals are kept per generation (by_name._keep_total, CountCache): one whose count
reads no user data stays across play-state writes, one that does (a scope filtered on played
items) is counted again after the viewer's next play-state write. ``limit=1`` so the total is
counted, not told by the page."""

from __future__ import annotations

from tests.library.browse.conftest import new_user


def test_artist_totals_follow_played_marks_and_policies(browse_server):
    live = browse_server
    uid, token = new_user(live, "nameswatcher")
    with live.admin() as a:
        songs = a.get("/Items", params={"recursive": "true", "includeItemTypes": "Audio",
                                         "fields": "AlbumArtists"}).json()["Items"]
    assert len(songs) >= 3

    def total(c, **params: str) -> int:
        r = c.get("/Artists", params={"userId": uid, "limit": "1", **params})
        assert r.status_code == 200, r.text
        return r.json()["TotalRecordCount"]

    def names(song: dict) -> set[str]:
        return {n.lower() for n in song.get("Artists") or []} | \
            {p["Name"].lower() for p in song.get("AlbumArtists") or []}

    with live.client(token, device="nameswatcher") as c:
        everyone = total(c)
        assert everyone >= 2
        played: list[dict] = []
        try:
            for song in songs:
                assert c.post(f"/UserPlayedItems/{song['Id']}", params={"userId": uid}).status_code == 200
                played.append(song)
                expected = len(set().union(*(names(x) for x in played)))
                if expected > 1:  # otherwise the page of one tells the total
                    assert total(c, filters="IsPlayed") == expected
                assert total(c) == everyone  # kept across the writes, still right
        finally:
            for song in played:
                c.delete(f"/UserPlayedItems/{song['Id']}", params={"userId": uid})
        assert total(c, filters="IsPlayed") == 0
        music = live.extra["libraries"]["music"]
        with live.admin() as a:
            policy = a.get(f"/Users/{uid}").json()["Policy"]
            assert a.post(f"/Users/{uid}/Policy", json={**policy, "EnableAllFolders": False,
                                                         "EnabledFolders": [live.extra["libraries"]["movies"]]}
                          ).status_code == 204
            try:
                assert total(c) < everyone  # no music library: no artists of it
            finally:
                assert a.post(f"/Users/{uid}/Policy", json={**policy, "EnabledFolders": [music]}).status_code == 204
        assert total(c) == everyone
