"""By-name lists (Genres, MusicGenres, Studios, Persons, Years, Artists, AlbumArtists), the
filter lists (/Items/Filters, /Items/Filters2) and Search/Hints' name kinds keep to the viewer's
parental rules: as in Jellyfin, a name is listed only when the viewer may see an item carrying
it. A policy change shows at once (the caches are keyed by the policy), and lifting the rule
brings the names back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.library.browse.conftest import items, new_user, one

SECRET = "Parental Secret"
GENRE, STUDIO, PERSON, TAG, YEAR = f"{SECRET} Genre", f"{SECRET} Studio", f"{SECRET} Person", "parental-secret", 1901
MUSIC = f"{SECRET} Music"


@contextmanager
def edited(live, item_id: str, **changes: Any) -> Iterator[None]:
    """The item edited (a whole body, as jellyfin-web sends it), then put back as it was."""
    with live.admin() as a:
        before = a.get(f"/Items/{item_id}", params={"fields": "People,Tags,Studios,Genres"}).json()
        r = a.post(f"/Items/{item_id}", json={**before, **changes})
        assert r.status_code == 204, r.text
        try:
            yield
        finally:
            restore = {**before, "People": before.get("People") or [], "Tags": before.get("Tags") or [],
                       "Genres": before.get("Genres") or [], "Studios": before.get("Studios") or [],
                       "OfficialRating": before.get("OfficialRating") or ""}
            assert a.post(f"/Items/{item_id}", json=restore).status_code == 204


def names(c, path: str, uid: str, **params: str) -> set[str]:
    r = c.get(path, params={"userId": uid, "recursive": "true", **params})
    assert r.status_code == 200, r.text
    body = r.json()
    return {i["Name"] for i in body["Items"]} | {f"#{body['TotalRecordCount']}"}


def secret_names(c, uid: str) -> dict[str, Any]:
    """Everything the viewer is shown that only the secret movie carries."""
    out: dict[str, Any] = {}
    for path in ("/Genres", "/Studios", "/Persons", "/Years", "/Artists", "/Artists/AlbumArtists",
                 "/MusicGenres"):
        listed = names(c, path, uid)
        out[path] = sorted(n for n in listed if (SECRET in n and "Shared" not in n) or n in (str(YEAR), "Secret Band"))
        found = names(c, path, uid, searchTerm="Secret")
        out[f"{path}?search"] = sorted(n for n in found if (SECRET in n and "Shared" not in n) or n == "Secret Band")
    legacy = c.get("/Items/Filters", params={"userId": uid}).json()
    out["Filters"] = sorted([g for g in legacy.get("Genres") or [] if SECRET in g and "Shared" not in g]
                            + [t for t in legacy.get("Tags") or [] if t == TAG]
                            + [str(y) for y in legacy.get("Years") or [] if y == YEAR])
    filters2 = c.get("/Items/Filters2", params={"userId": uid}).json()
    out["Filters2"] = sorted([g["Name"] for g in filters2.get("Genres") or [] if SECRET in g["Name"]
                              and "Shared" not in g["Name"]]
                             + [t for t in filters2.get("Tags") or [] if t == TAG])
    hints = c.get("/Search/Hints", params={"userId": uid, "searchTerm": SECRET}).json()
    out["Hints"] = sorted(h["Name"] for h in hints["SearchHints"] if "Shared" not in h["Name"])
    out["Hints#"] = len(out["Hints"])
    artist_hints = c.get("/Search/Hints", params={"userId": uid, "searchTerm": "Secret Band"}).json()
    out["ArtistHints"] = sorted(h["Name"] for h in artist_hints["SearchHints"])
    return out


NOTHING = {"/Genres": [], "/Genres?search": [], "/Studios": [], "/Studios?search": [], "/Persons": [],
           "/Persons?search": [], "/Years": [], "/Years?search": [], "/Artists": [], "/Artists?search": [],
           "/Artists/AlbumArtists": [], "/Artists/AlbumArtists?search": [], "/MusicGenres": [],
           "/MusicGenres?search": [], "Filters": [], "Filters2": [], "Hints": [], "Hints#": 0, "ArtistHints": []}


def test_names_keep_to_the_viewers_parental_rules(browse_server):
    live = browse_server
    alien = one(live, type="Movie", name="Alien").id
    song = one(live, type="Audio", name="Pop Song").id
    album = one(live, type="MusicAlbum", name="Third Album").id
    kid, kid_token = new_user(live, "names-parental-kid", MaxParentalRating=10)
    tagless, tagless_token = new_user(live, "names-parental-tags", BlockedTags=[TAG])
    # (by path: another test renames it)
    blade = next(i.id for i in items(live, type="Movie", owner_id=None) if "Blade Runner" in (i.path or ""))
    shared = f"{SECRET} Shared"
    with edited(live, alien, OfficialRating="R", Genres=[GENRE, shared], Tags=[TAG], ProductionYear=YEAR,
                Studios=[{"Name": STUDIO}], People=[{"Name": PERSON, "Type": "Actor"}]), \
            edited(live, song, OfficialRating="R", ArtistItems=[{"Name": "Secret Band"}],
                   AlbumArtists=[{"Name": "Secret Band"}], Genres=[MUSIC]), \
            edited(live, album, OfficialRating="R"), edited(live, blade, Genres=[shared], OfficialRating=""), \
            live.admin() as admin, live.client(kid_token, "names-parental-kid") as c, \
            live.client(tagless_token, "names-parental-tags") as t:
        seen = secret_names(admin, live.admin_id)
        # the admin sees every secret name: the edits landed and the lists do list them
        assert seen["/Genres"] == [GENRE] and seen["/Studios"] == [STUDIO] and seen["/Persons"] == [PERSON]
        assert seen["/Years"] == [str(YEAR)] and seen["/Artists"] == ["Secret Band"]
        assert seen["/Artists/AlbumArtists"] == ["Secret Band"]
        assert seen["/MusicGenres"] == seen["/MusicGenres?search"] == [MUSIC]
        assert seen["Filters"] == sorted([GENRE, MUSIC, TAG, str(YEAR)])
        assert seen["Filters2"] == sorted([GENRE, MUSIC, TAG])
        assert {GENRE, STUDIO, PERSON} <= set(seen["Hints"]) and seen["ArtistHints"] == ["Secret Band"]
        assert secret_names(c, kid) == NOTHING  # above the kid's rating limit
        # the tag rule hides the movie (the song carries no tag: its names stay)
        hidden = secret_names(t, tagless)
        assert hidden["/Genres"] == [] and hidden["/Studios"] == [] and hidden["/Persons"] == []
        assert hidden["/Years"] == [] and hidden["Filters"] == hidden["Filters2"] == [MUSIC]
        assert not {GENRE, STUDIO, PERSON} & set(hidden["Hints"])
        assert hidden["/Artists"] == ["Secret Band"] and hidden["ArtistHints"] == ["Secret Band"]
        # counts: a name carried by a hidden and a visible item counts only the visible one
        for fields in ("ItemCounts", "ChildCount"):
            kids = {i["Name"]: i for i in c.get("/Genres", params={"userId": kid, "fields": fields,
                                                                    "recursive": "true"}).json()["Items"]}
            everyone = {i["Name"]: i for i in admin.get("/Genres", params={"fields": fields, "recursive": "true"})
                        .json()["Items"]}
            assert shared in everyone, (fields, sorted(everyone), blade)
            assert everyone[shared]["ChildCount"] == 2 and kids[shared]["ChildCount"] == 1, (fields, kids[shared])
            if fields == "ItemCounts":
                assert everyone[shared]["MovieCount"] == 2 and kids[shared]["MovieCount"] == 1
        # a policy change shows at once: the limit lifted, the names are there; set again, gone
        policy = admin.get(f"/Users/{kid}").json()["Policy"]
        assert admin.post(f"/Users/{kid}/Policy", json={**policy, "MaxParentalRating": None}).status_code == 204
        lifted = secret_names(c, kid)
        assert lifted["/Genres"] == [GENRE] and lifted["/Persons"] == [PERSON] and lifted["/Years"] == [str(YEAR)]
        assert lifted["/Artists"] == ["Secret Band"] and {GENRE, STUDIO, PERSON} <= set(lifted["Hints"])
        assert admin.post(f"/Users/{kid}/Policy", json={**policy, "MaxParentalRating": 10}).status_code == 204
        assert secret_names(c, kid) == NOTHING
        # a content change shows at once too: the movie's rating lowered, its names are listed
        movie = admin.get(f"/Items/{alien}", params={"fields": "People,Tags,Studios,Genres"}).json()
        assert admin.post(f"/Items/{alien}", json={**movie, "OfficialRating": "G"}).status_code == 204
        assert GENRE in names(c, "/Genres", kid) and PERSON in names(c, "/Persons", kid, searchTerm="Secret")
        assert admin.post(f"/Items/{alien}", json={**movie, "OfficialRating": "R"}).status_code == 204
        assert GENRE not in names(c, "/Genres", kid) and secret_names(c, kid) == NOTHING
    # the edits undone: the rating is gone, the kid sees the movie's own names again
    with live.client(kid_token, "names-parental-kid") as c:
        assert GENRE not in names(c, "/Genres", kid)


ALLOW = "parental-allow-only"


def test_names_when_rules_hide_whole_kinds_of_items(browse_server):
    """A user with AllowedTags no item carries sees no movie, song or album: each (library, item
    type) the kept counts count is wholly hidden, and the lists come from the kept counts with
    those left out (no name probed). A policy change and a tag edit show at once: the tagged
    movie's names come back, counted over the visible items only, and go when it is untagged."""
    live = browse_server
    alien = one(live, type="Movie", name="Alien").id
    song = one(live, type="Audio", name="Pop Song").id
    allow, allow_token = new_user(live, "names-parental-allow", AllowedTags=[ALLOW])
    with edited(live, alien, Genres=[GENRE], ProductionYear=YEAR, Studios=[{"Name": STUDIO}], Tags=[],
                People=[{"Name": PERSON, "Type": "Actor"}]), \
            edited(live, song, ArtistItems=[{"Name": "Secret Band"}], AlbumArtists=[{"Name": "Secret Band"}],
                   Genres=[MUSIC]), \
            live.admin() as admin, live.client(allow_token, "names-parental-allow") as c:
        seen = secret_names(admin, live.admin_id)
        assert seen["/Genres"] == [GENRE] and seen["/Studios"] == [STUDIO] and seen["/Years"] == [str(YEAR)]
        assert seen["/Artists"] == seen["/Artists/AlbumArtists"] == ["Secret Band"] and seen["/MusicGenres"] == [MUSIC]
        assert seen["/Persons"] == seen["/Persons?search"] == [PERSON]
        for _ in range(2):  # the second ask is answered from the kept profile of the rules
            hidden = secret_names(c, allow)
            for path in ("/Genres", "/Studios", "/Years", "/Artists", "/Artists/AlbumArtists", "/MusicGenres"):
                assert hidden[path] == hidden[f"{path}?search"] == [], (path, hidden)
            assert names(c, "/Genres", allow) == {"#0"} and names(c, "/MusicGenres", allow) == {"#0"}
            assert names(c, "/Artists", allow) == {"#0"} and names(c, "/Years", allow) == {"#0"}
            # every linked item hidden: Persons answers from the people profile, nothing walked
            assert hidden["/Persons"] == hidden["/Persons?search"] == [] and names(c, "/Persons", allow) == {"#0"}
            assert hidden["Filters"] == hidden["Filters2"] == [] and hidden["Hints"] == []
        # the policy lifted: the names are there at once; set again: gone
        policy = admin.get(f"/Users/{allow}").json()["Policy"]
        assert admin.post(f"/Users/{allow}/Policy", json={**policy, "AllowedTags": []}).status_code == 204
        lifted = secret_names(c, allow)
        assert lifted["/Genres"] == [GENRE] and lifted["/Years"] == [str(YEAR)] and lifted["/MusicGenres"] == [MUSIC]
        assert lifted["/Artists"] == ["Secret Band"] and lifted["/Persons"] == [PERSON]
        assert admin.post(f"/Users/{allow}/Policy", json={**policy, "AllowedTags": [ALLOW]}).status_code == 204
        assert secret_names(c, allow)["/Genres"] == [] and names(c, "/Genres", allow) == {"#0"}
        assert names(c, "/Persons", allow) == {"#0"}
        # the movie tagged: visible, its names listed and counted (only it); untagged: gone again
        movie = admin.get(f"/Items/{alien}", params={"fields": "People,Tags,Studios,Genres"}).json()
        assert admin.post(f"/Items/{alien}", json={**movie, "Tags": [ALLOW]}).status_code == 204
        tagged = secret_names(c, allow)
        assert tagged["/Genres"] == [GENRE] and tagged["/Studios"] == [STUDIO] and tagged["/Years"] == [str(YEAR)]
        assert tagged["/MusicGenres"] == tagged["/Artists"] == []
        assert tagged["/Persons"] == tagged["/Persons?search"] == [PERSON]
        persons = c.get("/Persons", params={"userId": allow, "fields": "ItemCounts"}).json()
        assert [(p["Name"], p["ChildCount"]) for p in persons["Items"]] == [(PERSON, 1)]
        assert tagged["Filters"] == sorted([GENRE, str(YEAR)]) and tagged["Filters2"] == [GENRE]
        genres = c.get("/Genres", params={"userId": allow, "recursive": "true", "fields": "ItemCounts"}).json()
        assert [(g["Name"], g["ChildCount"], g["MovieCount"]) for g in genres["Items"]] == [(GENRE, 1, 1)]
        assert admin.post(f"/Items/{alien}", json={**movie, "Tags": []}).status_code == 204
        assert secret_names(c, allow)["/Genres"] == [] and names(c, "/Genres", allow) == {"#0"}
        assert names(c, "/Persons", allow) == {"#0"}
