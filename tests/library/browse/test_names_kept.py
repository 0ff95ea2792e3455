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


def test_artist_pages_are_kept_across_play_state_writes_and_made_again_after_an_edit(browse_server):
    """A by-name page (its counted entries and DTOs without UserData: ItemService.name_pages) is
    kept while only user data is written, with the viewer's UserData read for each reply; an
    edit of an artist is seen at once. Each answer equals one made afresh (the pages dropped)."""
    from server.library.catalog.by_name import NamePages

    live = browse_server
    ctx = live.ctx
    uid, token = new_user(live, "namespages")
    params = {"userId": uid, "fields": "PrimaryImageAspectRatio,SortName,ChildCount", "limit": "50"}

    def page(c) -> bytes:
        r = c.get("/Artists", params=params)
        assert r.status_code == 200, r.text
        return r.content

    def afresh(c) -> bytes:
        ctx.items.name_pages = NamePages()
        return page(c)

    def kept_pages() -> list:
        return [entry[1] for entry in ctx.items.name_pages._entries.values()]

    with live.client(token, device="namespages") as c:
        ctx.items.name_pages = NamePages()  # (other tests' pages)
        first = page(c)
        items = httpx_json(first)["Items"]
        with_row = [i for i in items if i["Type"] == "MusicArtist" and i.get("UserData")]
        assert with_row, "the test library's artists come in the page"
        artist = with_row[0]["Id"]
        for _ in range(10):  # (a background task's write between the asks starts the round again)
            content = ctx.db.content_generation
            first = page(c)
            kept = kept_pages()
            repeat = page(c)
            repeated = kept_pages()
            assert c.post(f"/UserFavoriteItems/{artist}", params={"userId": uid}).status_code == 200
            try:
                again = page(c)
                now = kept_pages()
            finally:
                assert c.delete(f"/UserFavoriteItems/{artist}", params={"userId": uid}).status_code == 200
            if ctx.db.content_generation == content:
                break
        else:
            raise AssertionError("the library was written between the asks every time")
        assert repeat == first and repeated[-1] is kept[-1]
        assert now[-1] is kept[-1]  # kept across the play-state write
        shown = {i["Id"]: i for i in httpx_json(again)["Items"]}
        assert shown[artist]["UserData"]["IsFavorite"] is True
        assert c.post(f"/UserFavoriteItems/{artist}", params={"userId": uid}).status_code == 200
        try:
            assert page(c) == afresh(c)
        finally:
            assert c.delete(f"/UserFavoriteItems/{artist}", params={"userId": uid}).status_code == 200
        assert page(c) == first
        with live.admin() as a:
            before = a.get(f"/Items/{artist}", params={"userId": live.admin_id}).json()
            assert a.post(f"/Items/{artist}", json={**before, "ProductionYear": 1971}).status_code == 204
            try:
                edited = page(c)
                assert {i["Id"]: i for i in httpx_json(edited)["Items"]}[artist].get("ProductionYear") == 1971
                assert edited == afresh(c)
            finally:
                assert a.post(f"/Items/{artist}", json=before).status_code == 204
        assert page(c) == afresh(c)


def httpx_json(body: bytes) -> dict:
    import json

    found: dict = json.loads(body)
    return found
