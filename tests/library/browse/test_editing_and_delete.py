"""The metadata editor (UpdateItem locks what it writes, so a rescan keeps it), editor info,
folder content types, and deleting items (policy, disk, rows, user data kept)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from server.db.tables import UserData
from tests.conftest import complete_wizard, start_server, stop_server
from tests.library.browse.conftest import items, new_user, one
from tests.library_helpers import add_library_and_scan, refresh_and_wait

MISSING = "0123456789abcdef0123456789abcdef"


def test_update_item_sticks_across_a_rescan(browse_server):
    live = browse_server
    blade = one(live, type="Movie", name="Blade Runner", owner_id=None).id
    with live.admin() as c:
        item = c.get(f"/Items/{blade}", params={"userId": live.admin_id}).json()
        item.update({"Name": "Blade Runner (Final Cut)", "Overview": "Replicants.", "Genres": ["Neo-noir"],
                     "Taglines": ["More human than human"], "ProductionYear": 1983, "OfficialRating": "R",
                     "People": [{"Name": "Ridley Scott", "Type": "Director"},
                                {"Name": "Harrison Ford", "Type": "Actor", "Role": "Deckard"}],
                     "ProviderIds": {"Imdb": "tt0083658"}})
        r = c.post(f"/Items/{blade}", json=item)
        assert r.status_code == 204, r.text
        for video in Path(one(live, id=blade).path).parent.glob("*.mkv"):  # make the scan re-read the movie
            os.utime(video, (time.time() + 5, time.time() + 5))
        refresh_and_wait(live)
        assert one(live, id=blade).file_mtime > time.time()  # it did
        after = c.get(f"/Items/{blade}", params={"userId": live.admin_id}).json()
        assert after["Name"] == "Blade Runner (Final Cut)" and after["Overview"] == "Replicants."
        assert after["Genres"] == ["Neo-noir"] and after["Taglines"] == ["More human than human"]
        assert after["ProductionYear"] == 1983 and after["OfficialRating"] == "R"
        assert after["ProviderIds"].get("Imdb") == "tt0083658"
        assert {(p["Name"], p["Type"]) for p in after["People"]} == {("Ridley Scott", "Director"),
                                                                     ("Harrison Ford", "Actor")}
        locked = set(after["LockedFields"])
        assert {"Name", "Overview", "Genres", "OfficialRating", "Cast"} <= locked
        assert all(not f.startswith("~") for f in after["LockedFields"])  # internal locks stay internal
        # The new genre is filterable at once.
        found = c.get("/Items", params={"recursive": "true", "genres": "Neo-noir"}).json()["Items"]
        assert [i["Id"] for i in found] == [blade]
        # Unlock everything and let the next scan take the NFO/file name values again.
        after["LockedFields"] = []
        assert c.post(f"/Items/{blade}", json={"LockedFields": [], "LockData": False}).status_code == 204
        again = c.get(f"/Items/{blade}").json()
        assert again["Name"] == "Blade Runner (Final Cut)"  # unlocking alone changes no value


def test_update_item_null_clears_as_jellyfin_does(browse_server):
    """A field sent as null is cleared where Jellyfin's editor clears it (it assigns the body's
    value as it is: OfficialRating, Overview, ProductionYear, dates, Genres, ...); the fields it
    guards with a null check (Studios, Taglines, People, ...) keep theirs; a field left out is
    never touched; a null LockData unlocks. Both casings of the field names count."""
    live = browse_server
    alien = one(live, type="Movie", name="Alien").id
    fields = {"fields": "Overview,Genres,Studios,Taglines,People,OriginalTitle,SortName"}
    with live.admin() as c:
        before = c.get(f"/Items/{alien}", params=fields).json()
        filled = {"OfficialRating": "R", "Overview": "In space.", "ProductionYear": 1979, "CommunityRating": 7.5,
                  "CriticRating": 90, "OriginalTitle": "Alien (original)", "ForcedSortName": "alien, the",
                  "PremiereDate": "1979-05-25T00:00:00Z", "EndDate": "1979-06-01T00:00:00Z",
                  "Genres": ["Horror"], "Studios": [{"Name": "Brandywine"}], "Taglines": ["In space no one..."],
                  "People": [{"Name": "Ridley Scott", "Type": "Director"}], "LockData": True}
        try:
            assert c.post(f"/Items/{alien}", json={**before, **filled}).status_code == 204
            full = c.get(f"/Items/{alien}", params=fields).json()
            assert full["OfficialRating"] == "R" and full["LockData"] is True and full["Genres"] == ["Horror"]
            # a partial body: what it leaves out stays, whatever the casing of what it sends
            assert c.post(f"/Items/{alien}", json={"overview": "Still in space."}).status_code == 204
            partial = c.get(f"/Items/{alien}", params=fields).json()
            assert partial["Overview"] == "Still in space." and partial["OfficialRating"] == "R"
            assert partial["ProductionYear"] == 1979 and partial["Genres"] == ["Horror"]
            cleared = {k: None for k in ("OfficialRating", "ProductionYear", "CommunityRating", "CriticRating",
                                         "OriginalTitle", "PremiereDate", "EndDate", "Genres", "Studios",
                                         "Taglines", "People", "LockData")}
            body = {**partial, **cleared, "overview": None}
            body.pop("Overview")
            assert c.post(f"/Items/{alien}", json=body).status_code == 204
            after = c.get(f"/Items/{alien}", params=fields).json()
            for key in ("OfficialRating", "ProductionYear", "CommunityRating", "CriticRating", "OriginalTitle",
                        "PremiereDate", "EndDate", "Overview"):
                assert after.get(key) is None, (key, after.get(key))
            assert after.get("Genres") in (None, [])
            assert after["LockData"] is False
            # kept on null, as in Jellyfin
            assert [s["Name"] for s in after["Studios"]] == ["Brandywine"]
            assert after["Taglines"] == ["In space no one..."]
            assert [p["Name"] for p in after["People"]] == ["Ridley Scott"]
            assert after["Name"] == before["Name"]  # Name left as it is (a null name is not cleared)
            # the cleared rating is seen by the queries at once (the R-rated filter has nothing)
            rated = c.get("/Items", params={"recursive": "true", "officialRatings": "R",
                                            "includeItemTypes": "Movie"}).json()["Items"]
            assert alien not in [i["Id"] for i in rated]
        finally:
            restore = {**before, "People": before.get("People") or [], "Studios": before.get("Studios") or [],
                       "Taglines": before.get("Taglines") or [], "Genres": before.get("Genres") or [],
                       "LockedFields": [], "LockData": False}
            assert c.post(f"/Items/{alien}", json=restore).status_code == 204


def test_a_rating_and_tags_go_down_from_an_album_or_series(browse_server):
    """As in Jellyfin's editor, an album's new rating and tags go to its tracks, a series' to its
    seasons and episodes (a child that locked the field keeps its own): parental rules read a
    track's own rating, so a restricted user no longer sees the tracks of an album rated above
    their limit. Clearing the rating clears it below too."""
    live = browse_server
    album = one(live, type="MusicAlbum", name="Third Album").id
    track = one(live, type="Audio", name="Pop Song").id
    series = one(live, type="Series", name="Other Show").id
    episodes = sorted((i for i in items(live, type="Episode") if "Other Show S01E0" in (i.path or "")),
                      key=lambda i: i.path)
    first, second = episodes[0].id, episodes[1].id
    kid, kid_token = new_user(live, "passed-down-kid", MaxParentalRating=10)

    def post(c, item_id: str, **changes) -> None:
        body = c.get(f"/Items/{item_id}", params={"fields": "Tags"}).json()
        assert c.post(f"/Items/{item_id}", json={**body, **changes}).status_code == 204

    def get(c, item_id: str) -> dict:
        return c.get(f"/Items/{item_id}", params={"fields": "Tags"}).json()

    def kid_tracks(k) -> list[str]:
        r = k.get("/Items", params={"userId": kid, "recursive": "true", "includeItemTypes": "Audio"})
        assert r.status_code == 200, r.text
        return [i["Id"] for i in r.json()["Items"]]

    with live.admin() as c, live.client(kid_token, "passed-down-kid") as k:
        assert track in kid_tracks(k)
        post(c, track, LockedFields=[])  # (an earlier edit of the track locked what it wrote)
        try:
            post(c, album, OfficialRating="R", Tags=["album-tag"])
            got = get(c, track)
            assert got.get("OfficialRating") == "R" and got["Tags"] == ["album-tag"], (got.get("AlbumId"), album, got.get("ParentId"), got.get("OfficialRating"), got.get("Tags"))
            assert track not in kid_tracks(k)  # hidden at once: no stale list
            post(c, album, Tags=[])  # a removed tag goes from the tracks too
            assert get(c, track)["Tags"] == []
            post(c, album, OfficialRating="")
            assert get(c, track).get("OfficialRating") is None and track in kid_tracks(k)

            post(c, second, LockedFields=["OfficialRating"])  # this episode keeps its own
            post(c, series, OfficialRating="TV-MA")
            assert get(c, first)["OfficialRating"] == "TV-MA"
            assert get(c, second).get("OfficialRating") is None
        finally:
            post(c, album, OfficialRating="", Tags=[], LockedFields=[])
            post(c, series, OfficialRating="", LockedFields=[])
            post(c, second, LockedFields=[])
            post(c, track, LockedFields=[])
        assert get(c, first).get("OfficialRating") is None


def test_update_item_errors(browse_server):
    live = browse_server
    alien = one(live, type="Movie", name="Alien").id
    _, token = new_user(live, "noteditor")
    with live.admin() as c:
        assert c.post(f"/Items/{MISSING}", json={"Name": "x"}).status_code == 404
        assert c.post(f"/Items/{alien}", json={"Name": "  "}).status_code == 400
        assert c.post(f"/Items/{alien}", json={"ProductionYear": -4}).status_code == 400
        assert c.post(f"/Items/{alien}", json={"CommunityRating": 11}).status_code == 400
        assert c.post(f"/Items/{alien}", content=b"{not json", headers={"content-type": "application/json"}
                      ).status_code == 400
    with live.client(token, "noteditor-device") as u:
        assert u.post(f"/Items/{alien}", json={"Name": "Mine"}).status_code == 403


def test_metadata_editor_info_and_content_type(browse_server):
    live = browse_server
    alien = one(live, type="Movie", name="Alien")
    with live.admin() as c:
        info = c.get(f"/Items/{alien.id}/MetadataEditor").json()
        assert any(r["Name"] == "PG-13" for r in info["ParentalRatingOptions"])
        assert len(info["Countries"]) > 100 and len(info["Cultures"]) > 100
        assert isinstance(info["ExternalIdInfos"], list)
        assert c.get(f"/Items/{MISSING}/MetadataEditor").status_code == 404
        r = c.post(f"/Items/{alien.id}/ContentType", params={"contentType": "homevideos"})
        assert r.status_code == 204, r.text
        types = c.get("/System/Configuration").json()["ContentTypes"]
        folder = str(Path(alien.path).parent)
        assert {"Name": folder, "Value": "homevideos"} in types
        assert c.post(f"/Items/{alien.id}/ContentType").status_code == 204  # empty: back to inherited
        assert all(t["Name"] != folder for t in c.get("/System/Configuration").json()["ContentTypes"])
        assert c.post(f"/Items/{alien.id}/ContentType", params={"contentType": "spaceships"}).status_code == 400
        assert c.post(f"/Items/{MISSING}/ContentType", params={"contentType": "movies"}).status_code == 404


@pytest.fixture(scope="module")
def deletable(tmp_path_factory, library_source):
    root = tmp_path_factory.mktemp("delete")
    media = root / "media"
    shutil.copytree(library_source / "movies", media / "movies")
    shutil.copytree(library_source / "shows", media / "shows")
    live = start_server(root / "data")
    complete_wizard(live)
    live.extra["media"] = media
    live.extra["movies"] = add_library_and_scan(live, "Movies", "movies", [media / "movies"])
    live.extra["shows"] = add_library_and_scan(live, "Shows", "tvshows", [media / "shows"])
    yield live
    stop_server(live)


def test_delete_needs_auth_and_known_ids(deletable):
    live = deletable
    alien = one(live, type="Movie", name="Alien").id
    with live.client() as anon:
        assert anon.delete(f"/Items/{alien}").status_code == 401
        assert anon.delete("/Items", params={"ids": alien}).status_code == 401
    with live.admin() as c:
        assert c.delete(f"/Items/{MISSING}").status_code == 404
        assert c.delete("/Items", params={"ids": MISSING}).status_code == 404
        assert c.delete("/Items").status_code == 400
        assert c.delete(f"/Items/{live.extra['movies']}").status_code == 401  # a library is not an item to delete
    assert Path(one(live, type="Movie", name="Alien").path).exists()


def test_delete_follows_the_policy(deletable):
    live = deletable
    media: Path = live.extra["media"]
    alien = one(live, type="Movie", name="Alien")
    heat = one(live, type="Movie", name="Heat")
    uid, token = new_user(live, "deleter")
    with live.client(token, "deleter-device") as u:
        assert u.post(f"/UserPlayedItems/{alien.id}").status_code == 200  # user data to keep
        assert u.delete(f"/Items/{alien.id}").status_code == 401
        assert u.delete("/Items", params={"ids": alien.id}).status_code == 403
        assert u.delete("/Items", params={"ids": f"{alien.id},{heat.id}"}).status_code == 401
        assert u.get(f"/Items/{alien.id}").json().get("CanDelete") is False
    assert Path(alien.path).exists()
    # Allowed for the movies library only.
    with live.admin() as c:
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        policy["EnableContentDeletionFromFolders"] = [live.extra["movies"]]
        assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
    with live.client(token, "deleter-device") as u:
        assert u.delete(f"/Items/{alien.id}").status_code == 204
        assert u.get(f"/Items/{alien.id}").status_code == 404
        show = one(live, type="Series", name="Show Name").id
        assert u.delete(f"/Items/{show}").status_code == 401  # not in an allowed library
    assert not Path(alien.path).exists()
    assert not (media / "movies" / "Alien (1979)-poster.jpg").exists()  # its sidecar went too
    assert (media / "movies" / "Heat (1995).mkv").exists()
    kept = live.ctx.db.read_sync(lambda s: s.execute(select(UserData).where(
        UserData.user_id == uid, UserData.item_id == alien.id)).scalar_one_or_none())
    assert kept is not None and kept.played  # user data is never deleted
    # The admin deletes a whole series: its folder, seasons and episodes.
    series = one(live, type="Series", name="Show Name")
    with live.admin() as c:
        assert c.delete("/Items", params={"ids": f"{series.id},{heat.id}"}).status_code == 204
    assert not Path(series.path).exists()
    assert items(live, type="Episode") == [] and items(live, type="Season") == []
    assert not (media / "movies" / "Heat (1995).mkv").exists()
    # A movie in its own folder: the folder goes with its art, subtitles, NFO and extras.
    blade = one(live, type="Movie", name="Blade Runner", owner_id=None)
    with live.admin() as c:
        assert c.delete(f"/Items/{blade.id}").status_code == 204
    assert not Path(blade.path).parent.exists()
    assert [m.name for m in items(live, type="Movie")] == ["Inception"]  # both versions went
    assert items(live, type="Trailer") == []
    refresh_and_wait(live)  # the scan agrees: nothing comes back
    assert {m.name for m in items(live, type="Movie")} == {"Inception"}
    assert (media / "movies" / "Inception (2010) [tmdbid-27205]" / "poster.jpg").exists()
