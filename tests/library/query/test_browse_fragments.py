"""The TV browse lists (Seasons, Episodes, Next Up) replied from per-item DTO
fragments (ItemService.rows_reply, server/library/catalog/fragments.py).

Each reply must equal the struct path (the service's BaseItemDtoQueryResult, encoded as the
handlers used to) after parsing, in both casings, with and without user data and Fields; and a
played mark or an edit must show at once in the next reply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator

import httpx
import msgspec
import pytest

from server.library.browse.tv import NextUpQuery
from server.library.catalog.dto import DtoOptions
from server.library.catalog.items import Viewer
from server.wire import models as w
from server.wire.casing import to_camel_builtins
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library.conftest import items
from tests.library_helpers import add_library_and_scan, wait_for_artwork
from tests.mediagen import make_audio, make_video

CAMEL = {"Accept": 'application/json; profile="CamelCase"'}

Old = Callable[[Viewer, DtoOptions], Awaitable[w.BaseItemDtoQueryResult]]


def _lists(live: LiveServer) -> list[tuple[str, dict[str, str], Old]]:
    """(path, params, the struct path for the same list) for every converted route."""
    tv = live.ctx.browse.tv
    series = items(live, type="Series")[0].id
    season = sorted(items(live, type="Season"), key=lambda r: r.index_number or 0)[-1].id
    first = sorted(items(live, type="Episode"), key=lambda r: (r.parent_index_number or 0, r.index_number or 0))[1].id
    return [
        (f"/Shows/{series}/Seasons", {}, lambda v, o: tv.seasons(series, v, o)),
        (f"/Shows/{series}/Seasons", {"isSpecialSeason": "false"},
         lambda v, o: tv.seasons(series, v, o, is_special=False)),
        (f"/Shows/{series}/Episodes", {}, lambda v, o: tv.episodes(series, v, o)),
        (f"/Shows/{series}/Episodes", {"seasonId": season}, lambda v, o: tv.episodes(series, v, o, season_id=season)),
        (f"/Shows/{series}/Episodes", {"startItemId": first, "limit": "2"},
         lambda v, o: tv.episodes(series, v, o, start_item_id=first, limit=2)),
        ("/Shows/NextUp", {}, lambda v, o: tv.next_up(v, NextUpQuery(), o)),
    ]


def _diff(a: object, b: object, path: str = "") -> str | None:
    """Where two parsed replies differ first (for the assertion message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return next((d for key in sorted(set(a) | set(b)) if (d := _diff(a.get(key), b.get(key), f"{path}.{key}"))),
                    None)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next((d for n, (x, y) in enumerate(zip(a, b, strict=True)) if (d := _diff(x, y, f"{path}[{n}]"))), None)
    return None if a == b else f"{path}: {a!r} != {b!r}"


OPTIONS: list[tuple[dict[str, str], dict[str, object]]] = [
    ({}, {}),
    ({"fields": "PrimaryImageAspectRatio,MediaSources,Overview,Path"},
     {"fields": ["PrimaryImageAspectRatio", "MediaSources", "Overview", "Path"]}),
    ({"enableUserData": "false", "fields": "Genres,People"},
     {"fields": ["Genres", "People"], "enable_user_data": False}),
    ({"enableImages": "false", "fields": "ItemCounts"}, {"fields": ["ItemCounts"], "enable_images": False}),
]


def test_browse_replies_equal_the_struct_path(scanned: LiveServer) -> None:
    live = scanned
    svc = live.ctx.items
    viewer = asyncio.run(svc.viewer(None, live.admin_id))
    episodes = sorted(items(live, type="Episode"), key=lambda r: (r.parent_index_number or 0, r.index_number or 0))
    with live.admin() as c:
        # (a played episode gives Next Up something to show, and played user data to compare)
        assert c.post(f"/UserPlayedItems/{episodes[1].id}", params={"userId": live.admin_id}).status_code == 200
        try:
            lists = _lists(live)
            seen: dict[str, int] = {}
            for path, params, old in lists:
                for wire_params, options in OPTIONS:
                    opts = svc.options(viewer, **options)  # type: ignore[arg-type]
                    result = asyncio.run(old(viewer, opts))
                    for camel in (False, True):
                        for _ in range(2):  # (the second reply from fragments)
                            r = c.get(path, params={"userId": live.admin_id, **params, **wire_params},
                                      headers=CAMEL if camel else {})
                            assert r.status_code == 200, (path, r.text)
                            assert r.headers["content-type"].startswith("application/json")
                            expected = json.loads(msgspec.json.encode(to_camel_builtins(result) if camel else result))
                            got = r.json()
                            assert got == expected, (_diff(got, expected), path, params, wire_params, camel)
                seen[path.split("/")[-1] + repr(sorted(params))] = len(result.Items or [])
            assert all(seen.values()), f"every list has items to compare: {seen}"
        finally:
            c.delete(f"/UserPlayedItems/{episodes[1].id}", params={"userId": live.admin_id})


# ---------------------------------------------------------------- never stale


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own (these tests change items): three songs, two movies, three episodes."""
    root = tmp_path_factory.mktemp("browse-fragments")
    music = root / "media" / "music"
    for n, title in enumerate(("Alpha", "Beta", "Gamma"), 1):
        make_audio(music / "Band" / "Record" / f"0{n} - {title}.mp3", tags={
            "title": title, "artist": "Band", "album_artist": "Band", "album": "Record", "track": str(n),
            "genre": "Rock"})
    movies = root / "media" / "movies"
    tiny = {"seconds": 1.0, "width": 160, "height": 120, "fps": 10}
    for name in ("Film (2001)", "Other Film (2002)"):
        make_video(movies / name / f"{name}.mkv", **tiny)  # type: ignore[arg-type]
    shows = root / "media" / "shows"
    for n in (1, 2, 3):
        make_video(shows / "Show (2020)" / "Season 01" / f"Show S01E0{n}.mkv", **tiny)  # type: ignore[arg-type]
    live = start_server(root / "data")
    complete_wizard(live)
    add_library_and_scan(live, "Music", "music", [music])
    add_library_and_scan(live, "Movies", "movies", [movies])
    add_library_and_scan(live, "Shows", "tvshows", [shows])
    wait_for_artwork(live)
    yield live
    stop_server(live)


def _get(c: httpx.Client, live: LiveServer, path: str, camel: bool, **params: str) -> list[dict]:
    """The list's items, asked twice (the second from fragments): both the same."""
    got = []
    for _ in range(2):
        r = c.get(path, params={"userId": live.admin_id, **params}, headers=CAMEL if camel else {})
        assert r.status_code == 200, r.text
        got.append(r.json()["items" if camel else "Items"])
    assert got[0] == got[1]
    return got[1]


def _edit(c: httpx.Client, live: LiveServer, item_id: str, **changes: object) -> None:
    item = c.get(f"/Items/{item_id}", params={"userId": live.admin_id}).json()
    item.update(changes)
    assert c.post(f"/Items/{item_id}", json=item).status_code == 204


def test_a_played_mark_shows_at_once_in_episodes_and_next_up(own: LiveServer) -> None:
    live = own
    series = items(live, type="Series")[0].id
    eps = sorted(items(live, type="Episode"), key=lambda r: r.index_number or 0)
    cache = live.ctx.items.fragments
    with live.admin() as c:
        for camel in (False, True):
            k = (lambda s: s[0].lower() + s[1:]) if camel else (lambda s: s)
            listed = _get(c, live, f"/Shows/{series}/Episodes", camel)
            assert [e[k("UserData")][k("Played")] for e in listed] == [False, False, False]
            wait_for_artwork(live)  # (a background write between the asks empties what is kept)
            hits, kept = cache.hits, live.ctx.replies.hits
            _get(c, live, f"/Shows/{series}/Episodes", camel)
            # it came from fragments, or (asked again) the whole reply kept (server/http/reply_cache.py)
            assert cache.hits > hits or live.ctx.replies.hits > kept
            assert c.post(f"/UserPlayedItems/{eps[0].id}", params={"userId": live.admin_id}).status_code == 200
            listed = _get(c, live, f"/Shows/{series}/Episodes", camel)
            assert [e[k("UserData")][k("Played")] for e in listed] == [True, False, False]
            assert [e[k("Id")] for e in _get(c, live, "/Shows/NextUp", camel)] == [eps[1].id.replace("-", "")]
            assert c.post(f"/UserPlayedItems/{eps[1].id}", params={"userId": live.admin_id}).status_code == 200
            assert [e[k("Id")] for e in _get(c, live, "/Shows/NextUp", camel)] == [eps[2].id.replace("-", "")]
            seasons = _get(c, live, f"/Shows/{series}/Seasons", camel)
            assert seasons[0][k("UserData")][k("UnplayedItemCount")] == 1
            for e in eps[:2]:
                assert c.delete(f"/UserPlayedItems/{e.id}", params={"userId": live.admin_id}).status_code == 200
            seasons = _get(c, live, f"/Shows/{series}/Seasons", camel)
            assert seasons[0][k("UserData")][k("UnplayedItemCount")] == 3


def test_an_edit_shows_at_once_in_episodes_and_seasons(own: LiveServer) -> None:
    live = own
    series = items(live, type="Series")[0].id
    episode = sorted(items(live, type="Episode"), key=lambda r: r.index_number or 0)[0].id
    season = items(live, type="Season")[0].id
    with live.admin() as c:
        for n, camel in enumerate((False, True)):
            k = (lambda s: s[0].lower() + s[1:]) if camel else (lambda s: s)
            named = f"Edited {n}"
            lists = [(f"/Shows/{series}/Episodes", episode, {"fields": "Overview"}),
                     (f"/Shows/{series}/Seasons", season, {})]
            for path, item_id, params in lists:
                before = {e[k("Id")]: e for e in _get(c, live, path, camel, **params)}
                assert item_id.replace("-", "") in before, path
                _edit(c, live, item_id, Name=f"{named} {path}", Overview="New words.")
                after = {e[k("Id")]: e for e in _get(c, live, path, camel, **params)}
                assert after[item_id.replace("-", "")][k("Name")] == f"{named} {path}", path
                if params:
                    assert after[item_id.replace("-", "")][k("Overview")] == "New words."


# ---------------------------------------------------------------- playlists


def _playlist(c: httpx.Client, live: LiveServer, songs: list[str]) -> str:
    r = c.post("/Playlists", json={"Name": "Frag list", "Ids": songs, "UserId": live.admin_id, "MediaType": "Audio"})
    assert r.status_code == 200, r.text
    return str(r.json()["Id"])


def test_playlist_items_equal_the_struct_path(own: LiveServer) -> None:
    """Playlists/{id}/Items (PlaylistService.items_reply, fragments with PlaylistItemId spliced
    in) equals PlaylistService.items encoded, in both casings, for each DTO option set, pages
    and a track listed twice included."""
    live = own
    svc = live.ctx.items
    viewer = asyncio.run(svc.viewer(None, live.admin_id))
    songs = sorted(items(live, type="Audio"), key=lambda r: r.name)
    with live.admin() as c:
        pid = _playlist(c, live, [s.id for s in songs] + [songs[0].id])
        try:
            assert c.post(f"/UserPlayedItems/{songs[1].id}", params={"userId": live.admin_id}).status_code == 200
            for paging in ({}, {"startIndex": "1", "limit": "2"}):
                start, limit = int(paging.get("startIndex", 0)), int(paging["limit"]) if "limit" in paging else None
                for wire_params, options in OPTIONS:
                    opts = svc.options(viewer, **options)  # type: ignore[arg-type]
                    result = asyncio.run(live.ctx.browse.playlists.items(pid, live.admin_id, opts, start, limit))
                    assert result.Items and all(i.PlaylistItemId for i in result.Items)
                    for camel in (False, True):
                        for _ in range(2):  # (the second reply from fragments)
                            r = c.get(f"/Playlists/{pid}/Items", params={"userId": live.admin_id, **paging,
                                                                          **wire_params},
                                      headers=CAMEL if camel else {})
                            assert r.status_code == 200, r.text
                            expected = json.loads(msgspec.json.encode(to_camel_builtins(result) if camel else result))
                            got = r.json()
                            assert got == expected, (_diff(got, expected), paging, wire_params, camel)
        finally:
            c.delete(f"/UserPlayedItems/{songs[1].id}", params={"userId": live.admin_id})
            c.delete(f"/Items/{pid}")


def test_a_playlist_page_follows_marks_edits_and_entry_changes_at_once(own: LiveServer) -> None:
    live = own
    songs = sorted(items(live, type="Audio"), key=lambda r: r.name)
    cache = live.ctx.items.fragments
    with live.admin() as c:
        pid = _playlist(c, live, [s.id for s in songs])
        try:
            for n, camel in enumerate((False, True)):
                k = (lambda s: s[0].lower() + s[1:]) if camel else (lambda s: s)
                path = f"/Playlists/{pid}/Items"
                listed = _get(c, live, path, camel)
                assert [e[k("UserData")][k("Played")] for e in listed] == [False, False, False]
                wait_for_artwork(live)  # (a background write between the asks empties what is kept)
                hits = cache.hits
                _get(c, live, path, camel)
                assert cache.hits > hits  # it came from fragments
                assert c.post(f"/UserPlayedItems/{songs[0].id}", params={"userId": live.admin_id}).status_code == 200
                assert [e[k("UserData")][k("Played")] for e in _get(c, live, path, camel)] == [True, False, False]
                assert c.delete(f"/UserPlayedItems/{songs[0].id}", params={"userId": live.admin_id}).status_code == 200
                _edit(c, live, songs[1].id, Name=f"Renamed {n}")
                assert _get(c, live, path, camel)[1][k("Name")] == f"Renamed {n}"
                # entry changes: moved, removed, added back
                entries = [e[k("PlaylistItemId")] for e in _get(c, live, path, camel)]
                assert c.post(f"{path}/{entries[2]}/Move/0").status_code == 204
                moved = _get(c, live, path, camel)
                assert [e[k("PlaylistItemId")] for e in moved] == [entries[2], entries[0], entries[1]]
                assert c.delete(path, params={"entryIds": entries[2]}).status_code == 204
                assert [e[k("PlaylistItemId")] for e in _get(c, live, path, camel)] == entries[:2]
                assert c.post(path, params={"ids": songs[2].id}).status_code == 204
                again = _get(c, live, path, camel)
                assert [e[k("Id")] for e in again] == [s.id.replace("-", "") for s in songs]
                assert again[2][k("PlaylistItemId")] not in entries
        finally:
            c.delete(f"/Items/{pid}")
