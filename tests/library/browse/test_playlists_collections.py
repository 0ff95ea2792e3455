"""Playlists (entries, order, moves, removal, shares and their permissions, public playlists)
and collections (BoxSets listed in the Collections view, members as children)."""

from __future__ import annotations

from tests.library.browse.conftest import ids_by_name, new_user, one

MISSING = "0123456789abcdef0123456789abcdef"


def test_playlist_lifecycle_and_order(browse_server):
    live = browse_server
    uid, token = new_user(live, "listener")
    songs = ids_by_name(live, "Audio")
    album = one(live, type="MusicAlbum", name="Second Album").id
    with live.client(token, "listener-device") as c:
        r = c.post("/Playlists", json={"Name": "Road trip", "Ids": [songs["Song 1.1"], songs["Song 1.2"]],
                                       "UserId": uid, "MediaType": "Audio"})
        assert r.status_code == 200, r.text
        pid = r.json()["Id"]
        assert len(pid) == 32
        # Adding an album adds its tracks in order.
        assert c.post(f"/Playlists/{pid}/Items", params={"ids": album, "userId": uid}).status_code == 204
        listing = c.get(f"/Playlists/{pid}/Items", params={"userId": uid}).json()
        names = [i["Name"] for i in listing["Items"]]
        assert names == ["Song 1.1", "Song 1.2", "Tune 1", "Tune 2", "Tune 3"]
        assert listing["TotalRecordCount"] == 5
        entries = [i["PlaylistItemId"] for i in listing["Items"]]
        assert len(set(entries)) == 5
        # The same item twice gets two entries.
        assert c.post(f"/Playlists/{pid}/Items", params={"ids": songs["Song 1.1"]}).status_code == 204
        listing = c.get(f"/Playlists/{pid}/Items").json()
        assert [i["Name"] for i in listing["Items"]].count("Song 1.1") == 2
        last_entry = listing["Items"][-1]["PlaylistItemId"]
        # Move the last entry to the front, then an entry to an index past the end.
        assert c.post(f"/Playlists/{pid}/Items/{last_entry}/Move/0").status_code == 204
        listing = c.get(f"/Playlists/{pid}/Items").json()["Items"]
        assert listing[0]["PlaylistItemId"] == last_entry
        tune1 = next(i["PlaylistItemId"] for i in listing if i["Name"] == "Tune 1")
        assert c.post(f"/Playlists/{pid}/Items/{tune1}/Move/99").status_code == 204
        listing = c.get(f"/Playlists/{pid}/Items").json()["Items"]
        assert listing[-1]["Name"] == "Tune 1"
        # Paging keeps the playlist's order.
        page = c.get(f"/Playlists/{pid}/Items", params={"startIndex": 1, "limit": 2}).json()
        assert [i["PlaylistItemId"] for i in page["Items"]] == [i["PlaylistItemId"] for i in listing[1:3]]
        assert page["TotalRecordCount"] == 6
        # Remove two entries.
        gone = [listing[0]["PlaylistItemId"], listing[-1]["PlaylistItemId"]]
        assert c.delete(f"/Playlists/{pid}/Items", params={"entryIds": ",".join(gone)}).status_code == 204
        listing = c.get(f"/Playlists/{pid}/Items").json()["Items"]
        assert [i["Name"] for i in listing] == ["Song 1.1", "Song 1.2", "Tune 2", "Tune 3"]
        # The playlist itself: an item, a PlaylistDto, and listed under the Playlists folder.
        item = c.get(f"/Items/{pid}").json()
        assert item["Type"] == "Playlist" and item["Name"] == "Road trip" and item["MediaType"] == "Audio"
        dto = c.get(f"/Playlists/{pid}").json()
        assert dto["OpenAccess"] is False and dto["Shares"] == []
        assert dto["ItemIds"] == [i["Id"] for i in listing]
        found = c.get("/Items", params={"includeItemTypes": "Playlist", "recursive": "true"}).json()["Items"]
        assert pid in [i["Id"] for i in found]
        everything = c.get("/Items", params={"recursive": "true", "userId": uid}).json()["Items"]
        assert "ManualPlaylistsFolder" not in {i["Type"] for i in everything}  # structure, not content
        folder = c.get(f"/Items/{item['ParentId']}").json()
        assert folder["Type"] == "ManualPlaylistsFolder" and folder["CollectionType"] == "playlists"
        # Rename, make public, replace the items.
        r = c.post(f"/Playlists/{pid}", json={"Name": "Long trip", "IsPublic": True, "Ids": [songs["Tune 3"]]})
        assert r.status_code == 204, r.text
        assert c.get(f"/Items/{pid}").json()["Name"] == "Long trip"
        assert c.get(f"/Playlists/{pid}").json()["OpenAccess"] is True
        assert [i["Name"] for i in c.get(f"/Playlists/{pid}/Items").json()["Items"]] == ["Tune 3"]
        # Instant mix from the playlist: tracks sharing its genre (Pop) or artist (Band).
        mix = c.get(f"/Playlists/{pid}/InstantMix").json()["Items"]
        assert mix and all(i["Type"] == "Audio" for i in mix)
        # Delete it: the owner may.
        assert c.delete(f"/Items/{pid}").status_code == 204
        assert c.get(f"/Playlists/{pid}").status_code == 404


def test_playlist_permissions(browse_server):
    live = browse_server
    owner_id, owner = new_user(live, "plowner", EnableAllFolders=False, EnabledFolders=[])  # no library at all
    friend_id, friend = new_user(live, "plfriend")
    stranger_id, stranger = new_user(live, "plstranger")
    songs = ids_by_name(live, "Audio")

    def listed(client) -> bool:
        found = client.get("/Items", params={"includeItemTypes": "Playlist", "recursive": "true"}).json()["Items"]
        return pid in [i["Id"] for i in found]

    with live.client(owner, "plowner-device") as c:
        pid = c.post("/Playlists", params={"name": "Mine", "ids": songs["Tune 1"], "userId": owner_id}).json()["Id"]
        assert c.get(f"/Playlists/{pid}/Users").json() == []
        # The owner is no share, yet may edit (jellyfin-web asks before offering to edit).
        assert c.get(f"/Playlists/{pid}/Users/{owner_id}").json() == {"UserId": owner_id, "CanEdit": True}
        assert listed(c)  # a user restricted to no library still has their playlists
        assert "playlists" in [v.get("CollectionType") for v in c.get("/UserViews").json()["Items"]]
    with live.client(stranger, "plstranger-device") as s:
        # Private: others do not even see it, in item listings neither.
        assert s.get(f"/Playlists/{pid}").status_code == 404
        assert not listed(s)
        assert s.get(f"/Items/{pid}").status_code == 404
        assert s.get(f"/Playlists/{pid}/Items").status_code == 403
        assert s.post(f"/Playlists/{pid}/Items", params={"ids": songs["Tune 2"]}).status_code == 404
    with live.client(owner, "plowner-device") as c:
        # Share read-only with the friend.
        assert c.post(f"/Playlists/{pid}/Users/{friend_id}", json={"CanEdit": False}).status_code == 204
        assert c.get(f"/Playlists/{pid}/Users").json() == [{"UserId": friend_id, "CanEdit": False}]
        assert c.get(f"/Playlists/{pid}/Users/{friend_id}").json() == {"UserId": friend_id, "CanEdit": False}
        assert c.get(f"/Playlists/{pid}/Users/{stranger_id}").status_code == 404
    with live.client(friend, "plfriend-device") as f:
        assert f.get(f"/Playlists/{pid}").status_code == 200
        assert listed(f)
        assert len(f.get(f"/Playlists/{pid}/Items").json()["Items"]) == 1
        assert f.post(f"/Playlists/{pid}/Items", params={"ids": songs["Tune 2"]}).status_code == 403
        assert f.get(f"/Playlists/{pid}/Users/{friend_id}").json()["CanEdit"] is False
        # Only the owner changes shares.
        assert f.post(f"/Playlists/{pid}/Users/{friend_id}", json={"CanEdit": True}).status_code == 403
        assert f.delete(f"/Items/{pid}").status_code == 401  # not the owner
    with live.client(owner, "plowner-device") as c:
        assert c.post(f"/Playlists/{pid}/Users/{friend_id}", json={"CanEdit": True}).status_code == 204
    with live.client(friend, "plfriend-device") as f:
        assert f.post(f"/Playlists/{pid}/Items", params={"ids": songs["Tune 2"]}).status_code == 204
        entry = f.get(f"/Playlists/{pid}/Items").json()["Items"][1]["PlaylistItemId"]
        assert f.post(f"/Playlists/{pid}/Items/{entry}/Move/0").status_code == 204
        assert f.post(f"/Playlists/{pid}", json={"Name": "Ours"}).status_code == 204
        assert [i["Name"] for i in f.get(f"/Playlists/{pid}/Items").json()["Items"]] == ["Tune 2", "Tune 1"]
    with live.client(owner, "plowner-device") as c:
        # The owner may see no library, so none of its songs: entries follow the library scope.
        assert c.get(f"/Playlists/{pid}/Items").json()["Items"] == []
        assert c.delete(f"/Playlists/{pid}/Users/{friend_id}").status_code == 204
        assert c.delete(f"/Playlists/{pid}/Users/{friend_id}").status_code == 404
    with live.client(friend, "plfriend-device") as f:
        # the share taken away shows at once on the pages the friend read before (the access a
        # page checks is kept per content generation)
        assert f.get(f"/Playlists/{pid}/Items").status_code == 403
    with live.client(stranger, "plstranger-device") as s:
        assert s.get(f"/Playlists/{pid}/Items").status_code == 403
    with live.client(owner, "plowner-device") as c:
        # Public: everyone may see it, still only the owner may edit.
        assert c.post(f"/Playlists/{pid}", json={"IsPublic": True}).status_code == 204
    with live.client(stranger, "plstranger-device") as s:
        assert s.get(f"/Playlists/{pid}").status_code == 200
        assert listed(s)
        assert s.get(f"/Items/{pid}").json()["Name"] == "Ours"
        assert s.get(f"/Playlists/{pid}/Items").status_code == 200
        assert s.post(f"/Playlists/{pid}/Items", params={"ids": songs["Tune 3"]}).status_code == 403
        assert s.get(f"/Playlists/{pid}/Users").status_code == 403


def test_playlist_bad_input(browse_server):
    live = browse_server
    songs = ids_by_name(live, "Audio")
    with live.admin() as c:
        assert c.post("/Playlists", json={"Name": "  "}).status_code == 400
        assert c.post("/Playlists", json={"Name": "x", "Ids": ["not-a-guid"]}).status_code == 400
        assert c.post("/Playlists", json={"Name": "x", "UserId": MISSING}).status_code == 404
        assert c.post("/Playlists", json={"Name": "x", "MediaType": "Hologram"}).status_code == 400
        assert c.get(f"/Playlists/{MISSING}").status_code == 404
        assert c.get(f"/Playlists/{MISSING}/Items").status_code == 404
        assert c.post(f"/Playlists/{MISSING}/Items", params={"ids": songs["Tune 1"]}).status_code == 404
        assert c.delete(f"/Playlists/{MISSING}/Items", params={"entryIds": MISSING}).status_code == 404
        assert c.post(f"/Playlists/{MISSING}/Items/{MISSING}/Move/0").status_code == 404
        assert c.get(f"/Playlists/{MISSING}/Users").status_code == 404
        pid = c.post("/Playlists", json={"Name": "Edge", "Ids": [songs["Tune 1"]]}).json()["Id"]
        assert c.post(f"/Playlists/{pid}/Items/{MISSING}/Move/0").status_code == 404
        assert c.post(f"/Playlists/{pid}/Items/{songs['Tune 1']}/Move/-1").status_code in (400, 404)
        assert c.post(f"/Playlists/{pid}/Users/{MISSING}", json={"CanEdit": True}).status_code == 404
        assert c.post(f"/Playlists/{pid}", json={"Name": ""}).status_code == 400
        # An item id works for a move, as some clients send it.
        assert c.post(f"/Playlists/{pid}/Items/{songs['Tune 1']}/Move/0").status_code == 204
        assert c.delete(f"/Items/{pid}").status_code == 204


def test_collections(browse_server):
    live = browse_server
    movies = ids_by_name(live, "Movie")
    with live.admin() as c:
        r = c.post("/Collections", params={"name": "Sci-fi", "ids": f"{movies['Inception']},{movies['Alien']}"})
        assert r.status_code == 200, r.text
        cid = r.json()["Id"]
        box = c.get(f"/Items/{cid}", params={"userId": live.admin_id}).json()
        assert box["Type"] == "BoxSet" and box["Name"] == "Sci-fi" and box["IsFolder"] is True
        members = c.get("/Items", params={"parentId": cid, "userId": live.admin_id}).json()
        assert sorted(i["Name"] for i in members["Items"]) == ["Alien", "Inception"]
        # The Collections view: a CollectionFolder of type boxsets that lists the collection.
        views = c.get("/Items", params={"userId": live.admin_id}).json()["Items"]
        collections = next(v for v in views if v["Name"] == "Collections")
        assert collections["Type"] == "CollectionFolder" and collections["CollectionType"] == "boxsets"
        inside = c.get("/Items", params={"parentId": collections["Id"], "userId": live.admin_id}).json()["Items"]
        assert cid in [i["Id"] for i in inside]
        recursive = c.get("/Items", params={"parentId": collections["Id"], "recursive": "true",
                                            "includeItemTypes": "BoxSet"}).json()["Items"]
        assert cid in [i["Id"] for i in recursive]
        # Add (twice is harmless) and remove.
        assert c.post(f"/Collections/{cid}/Items", params={"ids": movies["Heat"]}).status_code == 204
        assert c.post(f"/Collections/{cid}/Items", params={"ids": movies["Heat"]}).status_code == 204
        assert c.delete(f"/Collections/{cid}/Items", params={"ids": movies["Alien"]}).status_code == 204
        members = c.get("/Items", params={"parentId": cid}).json()["Items"]
        assert sorted(i["Name"] for i in members) == ["Heat", "Inception"]
        # Errors.
        assert c.post(f"/Collections/{MISSING}/Items", params={"ids": movies["Heat"]}).status_code == 404
        assert c.delete(f"/Collections/{MISSING}/Items", params={"ids": movies["Heat"]}).status_code == 404
        assert c.post(f"/Collections/{movies['Heat']}/Items", params={"ids": movies["Alien"]}).status_code == 404
        assert c.post("/Collections", params={"name": " "}).status_code == 400
        assert c.post("/Collections", params={"name": "x", "ids": "zzz"}).status_code == 400
        # Collections survive a library rescan (they belong to no library).
        from tests.library_helpers import refresh_and_wait
        refresh_and_wait(live)
        members = c.get("/Items", params={"parentId": cid}).json()["Items"]
        assert sorted(i["Name"] for i in members) == ["Heat", "Inception"]
        assert c.delete(f"/Items/{cid}").status_code == 204
        assert c.get(f"/Items/{cid}").status_code == 404
    uid, token = new_user(live, "plainuser")
    with live.client(token, "plain-device") as u:
        assert u.post("/Collections", params={"name": "Mine"}).status_code == 403  # CollectionManagement


def test_playlist_pages_follow_every_change(browse_server):
    """A playlist's ordered entries are kept between requests (server/library/browse/playlists.py,
    per write generation): each kind of change is seen by the very next request, never a stale
    page: entries added, moved and removed, the viewer's libraries (policy) and parental rating
    changed after an item's rating was edited, another viewer with another policy."""
    live = browse_server
    uid, token = new_user(live, "pagewatcher")
    other_id, other = new_user(live, "pagewatcher2", EnableAllFolders=False,
                               EnabledFolders=[live.extra["libraries"]["music"]])
    songs = ids_by_name(live, "Audio")
    movie = one(live, type="Movie", name="Heat").id
    first, second = songs["Song 1.1"], songs["Song 1.2"]

    def listing(c, **params) -> list[str]:
        page = c.get(f"/Playlists/{pid}/Items", params=params).json()
        assert page["TotalRecordCount"] == len(c.get(f"/Playlists/{pid}/Items").json()["Items"])
        return [i["Id"] for i in page["Items"]]

    def policy(**changes: object) -> None:
        with live.admin() as a:
            current = a.get(f"/Users/{uid}").json()["Policy"]
            assert a.post(f"/Users/{uid}/Policy", json={**current, **changes}).status_code == 204

    with live.client(token, "pagewatcher-device") as c, live.client(other, "pagewatcher2-device") as o:
        r = c.post("/Playlists", json={"Name": "Watched", "Ids": [first, movie], "UserId": uid, "IsPublic": True})
        pid = r.json()["Id"]
        assert listing(c) == [first, movie]
        assert listing(o) == [first]  # the movie is outside the other viewer's libraries
        assert c.post(f"/Playlists/{pid}/Items", params={"ids": second}).status_code == 204
        assert listing(c) == [first, movie, second]
        assert listing(o) == [first, second]
        assert listing(c, startIndex=1, limit=1) == [movie]
        entry = c.get(f"/Playlists/{pid}/Items").json()["Items"][2]["PlaylistItemId"]
        assert c.post(f"/Playlists/{pid}/Items/{entry}/Move/0").status_code == 204
        assert listing(c) == [second, first, movie]
        policy(EnableAllFolders=False, EnabledFolders=[live.extra["libraries"]["music"]])
        assert listing(c) == [second, first]
        policy(EnableAllFolders=True, EnabledFolders=[])
        assert listing(c) == [second, first, movie]
        with live.admin() as a:
            item = a.get(f"/Items/{movie}").json()
            assert a.post(f"/Items/{movie}", json={**item, "OfficialRating": "R"}).status_code == 204
        policy(MaxParentalRating=10)  # R is above 10: hidden
        assert listing(c) == [second, first]
        policy(MaxParentalRating=18)  # R is not above 18
        assert listing(c) == [second, first, movie]
        gone = c.get(f"/Playlists/{pid}/Items").json()["Items"][0]["PlaylistItemId"]
        assert c.delete(f"/Playlists/{pid}/Items", params={"entryIds": gone}).status_code == 204
        assert listing(c) == [first, movie]
        assert listing(o) == [first]
        assert c.delete(f"/Items/{pid}").status_code == 204
