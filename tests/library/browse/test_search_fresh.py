"""Search/Hints' artist, genre and studio names come from the kept values matched in Python
(by_name._matching_values, kept per write generation): a name written into the library is found
by the next search, a name edited away is gone at once, and a user's libraries still bound what
they find."""

from __future__ import annotations

from tests.library.browse.conftest import ids_by_name, new_user


def _hints(c, term: str, kind: str) -> list[str]:
    r = c.get("/Search/Hints", params={"searchTerm": term})
    assert r.status_code == 200, r.text
    return [h["Name"] for h in r.json()["SearchHints"] if h["Type"] == kind]


def _edit(c, item_id: str, **fields) -> dict:
    item = c.get(f"/Items/{item_id}").json()
    old = {k: item.get(k) for k in fields}
    assert c.post(f"/Items/{item_id}", json={**item, **fields}).status_code == 204
    return old


def test_search_finds_names_as_they_are_written(browse_server):
    live = browse_server
    songs = ids_by_name(live, "Audio")
    movies = ids_by_name(live, "Movie")
    movies_lib = next(f["ItemId"] for f in live.admin().get("/Library/VirtualFolders").json() if f["Name"] == "Movies")
    _, token = new_user(live, "moviesonly", EnableAllFolders=False, EnabledFolders=[movies_lib])
    with live.admin() as c, live.client(token, device="moviesonly") as viewer:
        assert "Band" in _hints(c, "band", "MusicArtist") and "Other Band" in _hints(c, "band", "MusicArtist")
        assert _hints(c, "zebra", "MusicArtist") == []
        old_song = _edit(c, songs["Pop Song"], ArtistItems=[{"Name": "Other Band"}, {"Name": "Zebra Quartet"}])
        old_movie = _edit(c, movies["Heat"], Genres=["Zebrafilm"], Studios=[{"Name": "Zebra Pictures"}])
        try:
            assert _hints(c, "zebra", "MusicArtist") == ["Zebra Quartet"]  # the next search sees the write
            assert _hints(c, "ZEBRA", "Genre") == ["Zebrafilm"]
            assert _hints(c, "zebra", "Studio") == ["Zebra Pictures"]
            # a movies-only user finds the movie's names, not the music library's artist
            assert _hints(viewer, "zebra", "MusicArtist") == []
            assert _hints(viewer, "zebra", "Genre") == ["Zebrafilm"]
            assert _hints(viewer, "band", "MusicArtist") == []
        finally:
            _edit(c, songs["Pop Song"], **old_song)
            _edit(c, movies["Heat"], **{k: v or [] for k, v in old_movie.items()})
        assert _hints(c, "zebra", "MusicArtist") == []  # edited away: gone at once
        assert _hints(c, "zebra", "Genre") == [] and _hints(c, "zebra", "Studio") == []


def test_search_kept_across_play_state_writes_follows_policy_and_edits(browse_server):
    """Search/Hints' totals and a kind's names are kept per content generation (a play-state
    write leaves them; CountCache): between searches a favourite mark changes nothing found,
    while the viewer's libraries (policy) and a rename show at once, totals included."""
    live = browse_server
    songs = ids_by_name(live, "Audio")
    heat = ids_by_name(live, "Movie")["Heat"]
    movies_lib = next(f["ItemId"] for f in live.admin().get("/Library/VirtualFolders").json() if f["Name"] == "Movies")
    uid, token = new_user(live, "searchwatcher", EnableAllFolders=False, EnabledFolders=[movies_lib])

    def search(c, term: str, **params: str) -> tuple[list[tuple[str, str]], int]:
        r = c.get("/Search/Hints", params={"searchTerm": term, **params})
        assert r.status_code == 200, r.text
        body = r.json()
        return sorted((h["Type"], h["Name"]) for h in body["SearchHints"]), body["TotalRecordCount"]

    def policy(**changes: object) -> None:
        with live.admin() as a:
            current = a.get(f"/Users/{uid}").json()["Policy"]
            assert a.post(f"/Users/{uid}/Policy", json={**current, **changes}).status_code == 204

    with live.admin() as admin, live.client(token, device="searchwatcher") as c:
        everything = search(admin, "song")  # the admin's own view: every library
        assert ("Audio", "Pop Song") in everything[0]
        restricted = search(c, "song")
        assert all(kind != "Audio" for kind, _ in restricted[0])  # music is outside their libraries
        for n in range(3):  # play-state writes between asks: the same answer each time
            verb = c.post if n % 2 == 0 else c.delete
            assert verb(f"/UserFavoriteItems/{heat}", params={"userId": uid}).status_code == 200
            assert search(c, "song") == restricted
        policy(EnableAllFolders=True, EnabledFolders=[])
        try:
            widened = search(c, "song")
            assert ("Audio", "Pop Song") in widened[0] and widened[1] > restricted[1]
            assert c.post(f"/UserFavoriteItems/{songs['Pop Song']}", params={"userId": uid}).status_code == 200
            assert search(c, "song") == widened
            old = _edit(admin, songs["Pop Song"], Name="Pop Tune")
            try:
                renamed = search(c, "song")
                assert ("Audio", "Pop Song") not in renamed[0] and renamed[1] == widened[1] - 1
            finally:
                _edit(admin, songs["Pop Song"], **old)
            assert search(c, "song") == widened
        finally:
            policy(EnableAllFolders=False, EnabledFolders=[movies_lib])
        assert search(c, "song") == restricted


def test_hints_are_kept_across_play_state_writes(browse_server):
    """Search/Hints' reply (no user data in it) is kept per content generation
    (ItemService.searches): a play-state write keeps it, and it equals one made afresh."""
    from server.library.catalog.generation_cache import GenerationCache

    live = browse_server
    ctx = live.ctx
    songs = ids_by_name(live, "Audio")
    with live.admin() as c:
        ctx.items.searches = GenerationCache(32)

        def ask() -> bytes:
            r = c.get("/Search/Hints", params={"searchTerm": "band"})
            assert r.status_code == 200, r.text
            return r.content

        song = songs["Pop Song"]
        for _ in range(10):  # (a background task's write between the asks starts the round again)
            content = ctx.db.content_generation
            first = ask()
            kept = [entry[1] for entry in ctx.items.searches._entries.values()]
            assert kept
            assert c.post(f"/UserFavoriteItems/{song}").status_code == 200
            try:
                again = ask()
                now = [entry[1] for entry in ctx.items.searches._entries.values()]
            finally:
                assert c.delete(f"/UserFavoriteItems/{song}").status_code == 200
            if ctx.db.content_generation == content:
                break
        else:
            raise AssertionError("the library was written between the asks every time")
        assert again == first
        assert now[-1] is kept[-1]  # the same kept reply: made once for the content generation
        ctx.items.searches = GenerationCache(32)
        assert ask() == first
