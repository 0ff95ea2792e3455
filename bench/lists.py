"""Latency of every list an app shows, at 10k and 100k items, against a real `reelroom-server`,
optionally side by side with a baseline checkout.

The library (built straight through SQL, the same content for every checkout): 95% music
tracks (albums of 10 tracks, album artists, featured artists, music genres, years, MusicArtist
rows as the scanner makes them) and 5% movies (genres, studios, people) plus shows with seasons
and episodes (bench/items_query.py's synthetic shows). The signed-in user watched part of a
third of the series, has resume points and favourites on some movies, and owns a 5,000-entry
playlist. Each list is asked the way jellyfin-web / Finamp ask it (Fields, ImageTypeLimit,
EnableImageTypes, userId, paging), one client, keep-alive; p50/p99 in ms.

    python bench/lists.py [--sizes 10000,100000] [--requests 60] [--baseline PATH [--interleave]] [--cold]
                          [--keep DIR] [--only NAME,...]

``--baseline PATH`` is another checkout (e.g. ``git worktree add`` or ``git archive main | tar
-x -C DIR``): its database is built by its own code and its server runs from it, and both
columns are printed with their ratio (``--interleave``: both servers run at once, each request
asked of one and then of the other, so a busy machine's load falls on both alike). With ``--keep DIR`` the library is built once (by this
checkout) into DIR and both servers run on copies of it (the checkouts must share the schema up
to migrations the baseline's server applies on start).

``--settle``: after each list's three warm-up asks, wait until every server is idle (under 3% of
a core in each of 10 seconds in a row) and print how long that took and the CPU used meanwhile: background work
the first asks started (InstantMix's fill of the fragment store, mix_fill.py) is done before the
timed requests, and its cost is printed apart.

``--parental RATING`` measures as a user with parental rules: the signed-in user's policy gets
MaxParentalRating RATING (12: every movie, rated PG-13, is hidden, music and shows stay), so the
by-name lists, filters and search hints take the viewer's parental conditions (the kept counts
cannot answer them) and a name is listed only with an item the user may see.

``--partly-hidden`` rates every third movie and track R in each server's copy before it starts;
with ``--parental 13`` every library is then partly hidden from the user (the lists' partly
hidden paths: the kept counts less the hidden items, the probes with the rules).

``--cold`` asks every list as a user sees it after watching something: before each request
(untimed) the user marks a track favourite or not, so the whole-reply cache, the kept totals and
the kept Next Up / Resume statements' results are stale and every request is computed again
(item fragments, unchanged by a user's data, stay). The default repeats each request as a client
does, so NextUp/Resume/Latest are mostly whole-reply hits after their second ask. Either way the
first request of each list after the server started is printed too (``first``: one sample, the
caches of that list cold). CPU is the server's (all its threads' run time from
/proc/PID/task/*/schedstat, ns) over the timed requests only.

Each list's line is printed as soon as it is measured (with the seconds it took), so a list that
hangs is the one after the last line; the table of all lists follows at the end. The waits are
bounded: the scheduled tasks' idle wait 120 s, ``--settle`` 120 s (both say when they gave up), a
request 60 s (then the bench stops with an error).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# The database is written by the code of the checkout under test (``--build-only`` runs in a
# subprocess with that checkout first on sys.path, before items_query imports ``server``).
if os.environ.get("REELROOM_BENCH_ROOT"):
    sys.path.insert(0, os.environ["REELROOM_BENCH_ROOT"])
    import server.db.migrate  # noqa: F401,E402  (pins that checkout's ``server`` package)
sys.path.insert(1, str(HERE))

from _server import start_server, stop_server  # noqa: E402
from items_query import AUTH, build, insert_library, item_row, pct, sign_in  # noqa: E402

from server.db.database import Database, sqlite_url  # noqa: E402
from server.db.tables import Item, ItemPerson, ItemValue, Person, UserData  # noqa: E402

try:  # the layout since the library split (catalog/), and before it (for baseline checkouts)
    from server.library.catalog import ids  # noqa: E402
except ImportError:
    from server.library import ids  # noqa: E402
from server.paths import ServerPaths  # noqa: E402

MUSIC_GENRES = ["Rock", "Pop", "Jazz", "Blues", "Classical", "Electronic", "Hip-Hop", "Folk", "Metal", "Punk",
                "Soul", "Reggae", "Country", "Ambient", "House", "Techno", "Funk", "Disco", "Gospel", "Latin",
                "Indie", "Grunge", "Ska", "Swing", "Opera", "Trance", "Dub", "Bossa Nova", "Chanson", "Afrobeat"]
STUDIOS = [f"Studio {i}" for i in range(60)]


def add_music(db: Database, tracks: int) -> None:
    """Albums of 10 tracks by ``tracks // 50`` album artists (MusicArtist rows in the library),
    a featured artist on every fifth track, a genre and a year per album."""
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    lib = ids.library_id_for_name("Music")
    rnd = random.Random(11)
    n_artists = max(10, tracks // 50)
    rows = [item_row(now, lib, type="CollectionFolder", is_folder=True, library_id=lib, name="Music", sort_name="music",
                  path="/media/music")]
    values: list[dict] = []

    def value(item_id: str, kind: str, v: str) -> None:
        values.append({"item_id": item_id, "kind": kind, "clean_value": v.lower(), "value": v})

    for a in range(n_artists):
        name = f"Artist {a:05d}"
        rows.append(item_row(now, ids.by_name_id("MusicArtist", name), type="MusicArtist", is_folder=True,
                          library_id=lib, parent_id=lib, path=f"/media/music/{name}", name=name,
                          sort_name=name.lower()))
    for al in range(tracks // 10):
        artist = f"Artist {al % n_artists:05d}"
        artist_id = ids.by_name_id("MusicArtist", artist)
        genre = MUSIC_GENRES[rnd.randrange(len(MUSIC_GENRES))]
        year = 1960 + rnd.randrange(65)
        album = f"Album {al}"
        apath = f"/media/music/{artist}/{album}"
        album_id = ids.item_id_for_path(apath)
        rows.append(item_row(now - timedelta(minutes=al), album_id, type="MusicAlbum", is_folder=True, library_id=lib,
                          parent_id=artist_id, path=apath, name=album, sort_name=album.lower(), production_year=year,
                          album_artists_json=json.dumps([artist]), artists_json=json.dumps([artist]),
                          genres_json=json.dumps([genre])))
        value(album_id, "AlbumArtist", artist)
        value(album_id, "Artist", artist)
        value(album_id, "Genre", genre)
        for t in range(10):
            i = al * 10 + t
            path = f"{apath}/{t + 1:02d} Track {i}.mp3"
            item_id = ids.item_id_for_path(path)
            artists = [artist] if i % 5 else [artist, f"Artist {rnd.randrange(n_artists):05d}"]
            artists = list(dict.fromkeys(artists))
            rows.append(item_row(now - timedelta(minutes=al), item_id, type="Audio", media_type="Audio",
                              library_id=lib, parent_id=album_id, album_id=album_id, album=album, path=path,
                              name=f"Track {i}", sort_name=f"track {i:07d}", index_number=t + 1,
                              production_year=year, run_time_ticks=2_000_000_000, container="mp3",
                              artists_json=json.dumps(artists), album_artists_json=json.dumps([artist]),
                              genres_json=json.dumps([genre])))
            for a in artists:
                value(item_id, "Artist", a)
            value(item_id, "AlbumArtist", artist)
            value(item_id, "Genre", genre)
    insert_library(db, lib, "Music", "music", now, rows, values)


def add_movie_facets(db: Database) -> None:
    """Studios and a cast (3 actors, a director) for every movie, from pools of 60 studios and
    movies/2 people."""
    rnd = random.Random(13)
    items = Item.__table__
    with db.engine.begin() as conn:
        movie_ids = [r[0] for r in conn.execute(items.select().with_only_columns(items.c.id)
                                                .where(items.c.type == "Movie").order_by(items.c.id)).all()]
        n_people = max(10, len(movie_ids) // 2)
        people = [{"id": ids.by_name_id("Person", f"Person {p}"), "name": f"Person {p}",
                   "sort_name": f"person {p}", "provider_ids_json": "{}"} for p in range(n_people)]
        links, values = [], []
        for m in movie_ids:
            studio = rnd.choice(STUDIOS)
            values.append({"item_id": m, "kind": "Studio", "clean_value": studio.lower(), "value": studio})
            conn.execute(items.update().where(items.c.id == m).values(studios_json=json.dumps([studio])))
            cast = rnd.sample(range(n_people), 4)
            for order, p in enumerate(cast):
                links.append({"item_id": m, "person_id": people[p]["id"], "kind": "Director" if order == 3 else "Actor",
                              "role": None, "sort_order": order})
        conn.execute(Person.__table__.insert(), people)
        for s in range(0, len(links), 10000):
            conn.execute(ItemPerson.__table__.insert(), links[s:s + 10000])
        conn.execute(ItemValue.__table__.insert(), values)


def add_user_state(data_dir: Path, user_id: str) -> None:
    """The user watched the first 1-5 episodes of every third series, stopped half-way in 40
    movies and favoured a few movies and tracks."""
    from datetime import UTC, datetime, timedelta

    db = Database(sqlite_url(ServerPaths(data_dir).database_file))
    items = Item.__table__
    now = datetime.now(UTC)
    rnd = random.Random(3)
    rows: dict[str, dict] = {}
    with db.engine.begin() as conn:
        series = [r[0] for r in conn.execute(items.select().with_only_columns(items.c.id)
                                             .where(items.c.type == "Series").order_by(items.c.id)).all()]
        for n, sid in enumerate(series[::3]):
            eps = conn.execute(items.select().with_only_columns(items.c.id).where(
                items.c.series_id == sid, items.c.type == "Episode")
                .order_by(items.c.parent_index_number, items.c.index_number).limit(rnd.randint(1, 5))).all()
            for (e,) in eps:
                rows[e] = {"user_id": user_id, "item_id": e, "played": True, "play_count": 1, "is_favorite": False,
                           "playback_position_ticks": 0, "last_played_date": now - timedelta(minutes=n)}
        movies = [r[0] for r in conn.execute(items.select().with_only_columns(items.c.id)
                                             .where(items.c.type == "Movie").order_by(items.c.id)).all()]
        tracks = [r[0] for r in conn.execute(items.select().with_only_columns(items.c.id)
                                             .where(items.c.type == "Audio").order_by(items.c.id).limit(5000)).all()]
        for k, m in enumerate(rnd.sample(movies, min(len(movies), 240))):
            rows[m] = {"user_id": user_id, "item_id": m, "played": False, "play_count": 0,
                       "is_favorite": k >= 40 and k < 140, "playback_position_ticks": 12_000_000_000 if k < 40 else 0,
                       "last_played_date": now - timedelta(hours=k)}
        for t in rnd.sample(tracks, min(len(tracks), 200)):
            rows[t] = {"user_id": user_id, "item_id": t, "played": True, "play_count": 2, "is_favorite": True,
                       "playback_position_ticks": 0, "last_played_date": now - timedelta(days=1)}
        conn.execute(UserData.__table__.insert(), list(rows.values()))
    db.close()


def build_library(data_dir: Path, size: int) -> None:
    """5% movies (and as many episodes), 95% tracks."""
    build(data_dir, max(200, size // 10))
    db = Database(sqlite_url(ServerPaths(data_dir).database_file))
    try:
        add_music(db, size * 95 // 100)
        add_movie_facets(db)
    finally:
        db.close()


# ------------------------------------------------------------------------------ the lists

IMG = {"ImageTypeLimit": "1", "EnableImageTypes": "Primary,Backdrop,Banner,Thumb"}


def lists(c: httpx.Client, user_id: str) -> list[tuple[str, callable]]:
    """(name, a function returning (path, params)) for every list, with the ids they need."""
    rnd = random.Random(5)
    views = {v["Name"]: v["Id"] for v in c.get("/UserViews", params={"userId": user_id}).json()["Items"]}
    music, movies, shows = views["Music"], views["Movies"], views["Shows"]

    def ids_of(**params) -> list[str]:
        r = c.get("/Items", params={"userId": user_id, "recursive": "true", "fields": "", "enableImages": "false",
                                    **params})
        r.raise_for_status()
        return [i["Id"] for i in r.json()["Items"]]

    series = ids_of(parentId=shows, includeItemTypes="Series", limit="1000")
    tracks = ids_of(parentId=music, includeItemTypes="Audio", limit="20000")
    albums = ids_of(parentId=music, includeItemTypes="MusicAlbum", limit="2000")
    artists = [a["Id"] for a in c.get("/Artists/AlbumArtists", params={"userId": user_id, "limit": "300",
                                                                       "parentId": music}).json()["Items"]]
    movie_ids = ids_of(parentId=movies, includeItemTypes="Movie", limit="2000")
    pid = c.post("/Playlists", json={"Name": "Big", "Ids": rnd.sample(tracks, min(5000, len(tracks))),
                                     "UserId": user_id, "MediaType": "Audio"}).json()["Id"]
    season_of = {}
    for s in series[:50]:
        season_of[s] = [x["Id"] for x in c.get(f"/Shows/{s}/Seasons", params={"userId": user_id}).json()["Items"]]
    with_seasons = [s for s in series[:50] if season_of[s]]
    artist_page = {"userId": user_id, "Fields": "PrimaryImageAspectRatio,SortName", "SortBy": "SortName",
                   "SortOrder": "Ascending", "Recursive": "true", "StartIndex": "0", "Limit": "100",
                   "ParentId": music, **IMG}
    genre_page = {"userId": user_id, "SortBy": "SortName", "SortOrder": "Ascending", "Recursive": "true",
                  "Fields": "PrimaryImageAspectRatio,ItemCounts", "StartIndex": "0", **IMG}
    terms = ["star", "night", "track 12", "artist 001", "blue", "album 7"]
    lists = [
        ("Artists (first 100)", lambda: ("/Artists", artist_page)),
        ("Artists (random page)", lambda: ("/Artists", {**artist_page, "StartIndex": str(
            rnd.randrange(0, max(1, len(artists) * 6)) // 100 * 100)})),
        ("AlbumArtists (first 100)", lambda: ("/Artists/AlbumArtists", artist_page)),
        ("Artists, no parent (Finamp)", lambda: ("/Artists", {
            "userId": user_id, "SortBy": "SortName", "SortOrder": "Ascending",
            "Fields": "SortName,Genres,ChildCount,DateCreated", "Recursive": "true", "StartIndex": "0",
            "Limit": "100", "EnableUserData": "true", **IMG})),
        ("Genres (movies)", lambda: ("/Genres", {**genre_page, "IncludeItemTypes": "Movie", "ParentId": movies})),
        ("MusicGenres", lambda: ("/MusicGenres", {**genre_page, "ParentId": music})),
        ("Genres (music parent)", lambda: ("/Genres", {**genre_page, "ParentId": music})),
        ("Studios", lambda: ("/Studios", {**genre_page, "IncludeItemTypes": "Movie", "ParentId": movies})),
        ("Persons", lambda: ("/Persons", {"userId": user_id, "Fields": "PrimaryImageAspectRatio", "Limit": "100",
                                          "StartIndex": "0", "PersonTypes": "Actor", **IMG})),
        ("Years (movies)", lambda: ("/Years", {"userId": user_id, "SortBy": "SortName", "SortOrder": "Descending",
                                               "Recursive": "true", "IncludeItemTypes": "Movie",
                                               "ParentId": movies, **IMG})),
        ("Years (music)", lambda: ("/Years", {"userId": user_id, "SortBy": "SortName", "SortOrder": "Descending",
                                              "Recursive": "true", "ParentId": music, **IMG})),
        ("NextUp (24)", lambda: ("/Shows/NextUp", {
            "userId": user_id, "Limit": "24", "Fields": "PrimaryImageAspectRatio,DateCreated,Path,MediaSourceCount",
            "EnableTotalRecordCount": "false", "DisableFirstEpisode": "false", "EnableRewatching": "false",
            "ImageTypeLimit": "1", "EnableImageTypes": "Primary,Backdrop,Banner,Thumb"})),
        ("Resume (video)", lambda: ("/UserItems/Resume", {
            "userId": user_id, "Limit": "12", "Fields": "PrimaryImageAspectRatio", "MediaTypes": "Video",
            "EnableTotalRecordCount": "false", "ImageTypeLimit": "1", "EnableImageTypes": "Primary,Backdrop,Thumb"})),
        ("Resume (audio)", lambda: ("/UserItems/Resume", {
            "userId": user_id, "Limit": "12", "Fields": "PrimaryImageAspectRatio", "MediaTypes": "Audio",
            "EnableTotalRecordCount": "false", "ImageTypeLimit": "1", "EnableImageTypes": "Primary,Backdrop,Thumb"})),
        ("Latest (music)", lambda: ("/Items/Latest", {
            "userId": user_id, "Limit": "16", "Fields": "PrimaryImageAspectRatio,Path", "ParentId": music,
            "ImageTypeLimit": "1", "EnableImageTypes": "Primary,Backdrop,Thumb"})),
        ("Latest (movies)", lambda: ("/Items/Latest", {
            "userId": user_id, "Limit": "16", "Fields": "PrimaryImageAspectRatio,Path", "ParentId": movies,
            "ImageTypeLimit": "1", "EnableImageTypes": "Primary,Backdrop,Thumb"})),
        ("Latest (shows)", lambda: ("/Items/Latest", {
            "userId": user_id, "Limit": "16", "Fields": "PrimaryImageAspectRatio,Path", "ParentId": shows,
            "ImageTypeLimit": "1", "EnableImageTypes": "Primary,Backdrop,Thumb"})),
        ("Search/Hints", lambda: ("/Search/Hints", {"userId": user_id, "searchTerm": rnd.choice(terms),
                                                    "limit": "24"})),
        ("Items/Filters (movies)", lambda: ("/Items/Filters", {"userId": user_id, "parentId": movies,
                                                               "includeItemTypes": "Movie"})),
        ("Items/Filters (music)", lambda: ("/Items/Filters", {"userId": user_id, "parentId": music,
                                                              "includeItemTypes": "MusicAlbum"})),
        ("Items/Filters2 (movies)", lambda: ("/Items/Filters2", {"userId": user_id, "parentId": movies,
                                                                 "includeItemTypes": "Movie"})),
        ("Items/Filters2 (music)", lambda: ("/Items/Filters2", {"userId": user_id, "parentId": music,
                                                                "includeItemTypes": "Audio"})),
        ("Shows/{id}/Seasons", lambda: (f"/Shows/{rnd.choice(series)}/Seasons", {
            "userId": user_id, "Fields": "ItemCounts,PrimaryImageAspectRatio,CanDelete,MediaSourceCount"})),
        ("Shows/{id}/Episodes (season)", lambda: (lambda s: (f"/Shows/{s}/Episodes", {
            "userId": user_id, "seasonId": rnd.choice(season_of[s]),
            "Fields": "ItemCounts,PrimaryImageAspectRatio,CanDelete,MediaSourceCount,Overview"}))(
            rnd.choice(with_seasons))),
        ("Shows/{id}/Episodes (all)", lambda: (f"/Shows/{rnd.choice(series)}/Episodes", {
            "userId": user_id, "Fields": "PrimaryImageAspectRatio,MediaSourceCount"})),
        ("Playlists/{id}/Items (100)", lambda: (f"/Playlists/{pid}/Items", {
            "userId": user_id, "StartIndex": str(rnd.randrange(0, 4900)), "Limit": "100",
            "Fields": "PrimaryImageAspectRatio", **IMG})),
        ("Items/{movie}/Similar (12)", lambda: (f"/Items/{rnd.choice(movie_ids)}/Similar", {
            "userId": user_id, "limit": "12", "fields": "PrimaryImageAspectRatio,CanDelete"})),
        ("Items/{album}/Similar (12)", lambda: (f"/Items/{rnd.choice(albums)}/Similar", {
            "userId": user_id, "limit": "12", "fields": "PrimaryImageAspectRatio,CanDelete"})),
        ("InstantMix song (200)", lambda: (f"/Songs/{rnd.choice(tracks)}/InstantMix", {
            "userId": user_id, "limit": "200", "fields": "PrimaryImageAspectRatio"})),
        ("InstantMix album (200)", lambda: (f"/Albums/{rnd.choice(albums)}/InstantMix", {
            "userId": user_id, "limit": "200", "fields": "PrimaryImageAspectRatio"})),
        ("InstantMix artist (200)", lambda: ("/Artists/InstantMix", {
            "id": rnd.choice(artists), "userId": user_id, "limit": "200", "fields": "PrimaryImageAspectRatio"})),
    ]
    # with --parental 12 the user sees no movie: no movie to ask Similar of
    return [entry for entry in lists if movie_ids or "{movie}" not in entry[0]]


ONLY: list[str] = []  # --only: name prefixes of the lists to measure (all when empty)
COLD = False  # --cold: a play-state write (untimed) before every request
PARENTAL: int | None = None  # --parental: the user's MaxParentalRating
PARTLY_HIDDEN = False  # --partly-hidden: a third of the movies and tracks rated R
SETTLE = False  # --settle: after each list's warm-up, wait until every server is idle
REQUEST_TIMEOUT = 60.0  # seconds a request may take before the bench stops with an error


def set_parental(url: str, token: str, user_id: str, rating: int) -> None:
    """The signed-in user's MaxParentalRating (--parental)."""
    headers = {"Authorization": AUTH.format(n=9) + f', Token="{token}"'}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
        policy = c.get(f"/Users/{user_id}").json()["Policy"]
        c.post(f"/Users/{user_id}/Policy", json={**policy, "MaxParentalRating": rating}).raise_for_status()

#: per list: the timed latencies (ms), the server's CPU per timed request (ms) and the first
#: request's latency (ms)
Result = tuple[list[float], float, float]


class Server(NamedTuple):
    """A started server as the measuring functions take it (named: a positional tuple once put
    the server's pid where the request count went, so every list was asked ~pid times and the CPU
    read from another process)."""

    url: str
    token: str
    user_id: str
    pid: int


def cpu_ns(pid: int) -> int:
    """Run time of every thread of the process so far, in ns (/proc/PID/task/*/schedstat: exact,
    where /proc/PID/stat counts clock ticks of 10 ms)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            pass  # a thread that ended meanwhile
    return total


def _prepare_lists(c: httpx.Client, user_id: str) -> tuple[list[tuple[str, callable]], callable]:
    """The lists to ask (after the start's and the playlist's background runs) and the untimed
    play-state write of ``--cold``."""
    print(f"  (start-up tasks {_waited(*wait_quiet(c))})", flush=True)
    made = lists(c, user_id)
    # making the playlist starts the offline artwork run (collages, and every artist's cover
    # checked: 10-20 s at 100k); measuring during it would time that run, not the lists
    time.sleep(3)  # its debounce
    print(f"  (artwork run after the playlist {_waited(*wait_quiet(c))})", flush=True)
    music = next(v["Id"] for v in c.get("/UserViews", params={"userId": user_id}).json()["Items"]
                 if v["Name"] == "Music")
    marks = c.get("/Items", params={"userId": user_id, "parentId": music, "recursive": "true",
                                    "includeItemTypes": "Audio", "limit": "50", "startIndex": "5000",
                                    "fields": "", "enableImages": "false"}).json()["Items"]
    favourite: dict[str, bool] = {}
    wrnd = random.Random(17)

    def write() -> None:
        """A play-state write of this user: a track marked favourite, or no longer."""
        track = wrnd.choice(marks)["Id"]
        on = not favourite.get(track, False)
        r = (c.post if on else c.delete)(f"/UserFavoriteItems/{track}", params={"userId": user_id})
        r.raise_for_status()
        favourite[track] = on

    return [(name, make) for name, make in made if not ONLY or any(name.startswith(o) for o in ONLY)], write


def measure(server: Server, n: int) -> dict[str, Result]:
    """Per list: the latencies (ms), the server's CPU per request (ms, from /proc: steadier
    than latency on a busy machine) and the first request's latency."""
    return measure_interleaved([server], n)[0]


def _line(name: str, results: list[Result]) -> str:
    """One list's figures for every server: p50, p99, CPU per request, first request (ms)."""
    line = f"    {name:<30}"
    for v, cpu, first in results:
        line += f" {statistics.median(v):9.1f} {pct(v, 99):9.1f} {cpu:9.2f} {first:9.1f}"
    return line


def measure_interleaved(servers: list[Server], n: int) -> list[dict[str, Result]]:
    """``measure`` of several servers at once: each list's requests go to one server, then the
    same request to the next, and so on (the order turned each round), so that every server is
    timed under the same load of the machine. Each list's figures are printed as it ends (a list
    that hangs shows as the one after the last printed), with the seconds it took."""
    clients = [httpx.Client(base_url=s.url, headers={"Authorization": AUTH.format(n=9) + f', Token="{s.token}"'},
                            timeout=REQUEST_TIMEOUT) for s in servers]
    try:
        prepared = [_prepare_lists(c, s.user_id) for c, s in zip(clients, servers, strict=True)]
        outs: list[dict[str, Result]] = [{} for _ in servers]
        print(f"  ({len(prepared[0][0])} lists, {n} timed requests each after 3 warm-ups; per list: "
              f"p50 p99 cpu 1st per server, the list's seconds)", flush=True)
        for k, (name, _make) in enumerate(prepared[0][0]):
            started = time.monotonic()
            times: list[list[float]] = [[] for _ in servers]
            cpu = [0] * len(servers)
            first = [float("nan")] * len(servers)
            for i in range(n + 3):
                order = list(range(len(servers)))
                if i % 2:
                    order.reverse()
                asks = {}
                for j in range(len(servers)):  # (every server's own ids, drawn in the same order)
                    if COLD:
                        prepared[j][1]()
                    asks[j] = prepared[j][0][k][1]()
                for j in order:
                    path, params = asks[j]
                    pid = servers[j].pid
                    c0 = cpu_ns(pid)
                    t0 = time.perf_counter()
                    r = clients[j].get(path, params=params)
                    dt = (time.perf_counter() - t0) * 1000
                    c1 = cpu_ns(pid)
                    if r.status_code != 200:
                        raise RuntimeError(f"{name}: {path} {params} -> {r.status_code} {r.text[:300]}")
                    if i == 0:
                        first[j] = dt
                    if i >= 3:  # warm-up
                        times[j].append(dt)
                        cpu[j] += c1 - c0
                if i == 2 and SETTLE:  # --settle: what the server does after the warm-up, let finish
                    for j in range(len(servers)):
                        waited, used, calm = settle(servers[j].pid)
                        print(f"  ({name}: server {j} {'settled' if calm else 'NOT idle'} after {waited:.1f} s, "
                              f"{used:.2f} s of CPU meanwhile)", flush=True)
            for j in range(len(servers)):
                outs[j][name] = (times[j], cpu[j] / 1e6 / n, first[j])
            print(_line(name, [out[name] for out in outs]) + f"   ({time.monotonic() - started:.1f} s)", flush=True)
        return outs
    finally:
        for c in clients:
            c.close()


def settle(pid: int, quiet: int = 10, limit: float = 120.0) -> tuple[float, float, bool]:
    """Wait until the server used under 3% of a core in each of ``quiet`` seconds in a row
    (background work the first asks started, e.g. InstantMix's fill of the fragment store, which
    begins once the library was left alone 5 s), at most ``limit`` seconds; (seconds waited, CPU
    seconds meanwhile, whether it became idle)."""
    t0, c0 = time.monotonic(), cpu_ns(pid)
    calm = 0
    while time.monotonic() - t0 < limit and calm < quiet:
        c1 = cpu_ns(pid)
        time.sleep(1.0)
        calm = calm + 1 if cpu_ns(pid) - c1 < 0.03e9 else 0
    return time.monotonic() - t0, (cpu_ns(pid) - c0) / 1e9, calm >= quiet


def prepare(root: Path, size: int, data: Path) -> None:
    """Build the library with the checkout ``root``'s code, sign in once, add the user's state."""
    subprocess.run([sys.executable, str(HERE / "lists.py"), "--build-only", str(data), "--sizes", str(size)],
                   check=True, env={**os.environ, "REELROOM_BENCH_ROOT": str(root)})
    proc, url = start_server(data, root=root)
    try:
        token, user_id = sign_in(url)
    finally:
        stop_server(proc)
    add_user_state(data, user_id)


def wait_quiet(c: httpx.Client, limit: float = 120.0) -> tuple[float, bool]:
    """Wait until no scheduled task runs (the offline artwork run at start-up and after a
    playlist change checks every artist's cover: 10-20 s of CPU at 100k) for two polls in a
    row, at most ``limit`` seconds; a CPU threshold is not enough on a loaded machine. Returns
    the seconds waited and whether the tasks were idle."""
    t0 = time.monotonic()
    idle = 0
    while time.monotonic() - t0 < limit and idle < 2:
        tasks = c.get("/ScheduledTasks").json()
        idle = idle + 1 if all(t.get("State") != "Running" for t in tasks) else 0
        time.sleep(1.0)
    return time.monotonic() - t0, idle >= 2


def _waited(seconds: float, done: bool) -> str:
    return f"done after {seconds:.1f} s" if done else f"STILL RUNNING after {seconds:.1f} s (measuring anyway)"


def rate_a_third(data: Path) -> None:
    """--partly-hidden: every third movie and track (by rowid) of the copy rated R, before its
    server starts (the kept counts' triggers follow), so MaxParentalRating 13 hides part of each
    library: the lists take their partly hidden paths."""
    import sqlite3

    with sqlite3.connect(next(data.rglob("reelroom.db"))) as conn:
        n = conn.execute("UPDATE items SET official_rating = 'R' WHERE type IN ('Movie', 'Audio') "
                         "AND owner_id IS NULL AND rowid % 3 = 0").rowcount
    print(f"  (--partly-hidden: rated {n} movies and tracks R)", flush=True)


def _copy_library(root: Path, size: int, keep: Path | None, builder: Path | None) -> Path:
    data = Path(tempfile.mkdtemp(prefix="reelroom-lists-bench-"))
    if keep is not None:  # a library built once (by this checkout) and copied for every run
        if not (keep / "ready").exists():
            shutil.rmtree(keep, ignore_errors=True)
            keep.mkdir(parents=True)
            prepare(builder or root, size, keep)
            (keep / "ready").write_text("")
        shutil.rmtree(data)
        shutil.copytree(keep, data)
    else:
        prepare(root, size, data)
    if PARTLY_HIDDEN:
        rate_a_third(data)
    return data


def _started(root: Path, data: Path) -> tuple[subprocess.Popen, Server]:
    proc, url = start_server(data, root=root)
    try:
        token, user_id = sign_in(url)
        if PARENTAL is not None:
            set_parental(url, token, user_id, PARENTAL)
    except BaseException:
        stop_server(proc)
        raise
    return proc, Server(url, token, user_id, proc.pid)


def run_checkout(root: Path, size: int, n: int, keep: Path | None = None, builder: Path | None = None
                 ) -> dict[str, Result]:
    data = _copy_library(root, size, keep, builder)
    try:
        proc, server = _started(root, data)
        try:
            time.sleep(2)  # planner statistics are refreshed a second after start-up
            print(f"  ({root.name})", flush=True)
            return measure(server, n)
        finally:
            stop_server(proc)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def run_interleaved(roots: list[Path], size: int, n: int, keep: Path | None, builder: Path) -> list[dict[str, Result]]:
    """``run_checkout`` of every checkout at once, their requests interleaved (``--interleave``)."""
    datas = [_copy_library(root, size, keep, builder) for root in roots]
    procs: list[subprocess.Popen] = []
    try:
        servers = []
        for root, data in zip(roots, datas, strict=True):
            proc, server = _started(root, data)
            procs.append(proc)
            servers.append(server)
        time.sleep(2)
        print(f"  ({', '.join(r.name for r in roots)}: requests interleaved)", flush=True)
        return measure_interleaved(servers, n)
    finally:
        for proc in procs:
            stop_server(proc)
        for data in datas:
            shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--baseline", type=Path, help="another checkout to measure side by side")
    parser.add_argument("--only", help="comma-separated name prefixes of the lists to measure")
    parser.add_argument("--keep", type=Path, help="build the library once (this checkout's code) into this folder "
                        "and run every server on a copy of it (with --baseline too)")
    parser.add_argument("--cold", action="store_true", help="a play-state write (untimed) before every request, "
                        "as after watching something: no whole-reply or kept-total hits")
    parser.add_argument("--parental", type=int, metavar="RATING", help="the user's MaxParentalRating (12 hides "
                        "every movie): the lists as a user with parental rules sees them")
    parser.add_argument("--partly-hidden", action="store_true", help="rate every third movie and track R in "
                        "each server's copy (with --parental 13: libraries partly hidden from the user)")
    parser.add_argument("--interleave", action="store_true", help="with --baseline: both servers run at once and "
                        "each request goes to one, then the other (the machine's load the same for both)")
    parser.add_argument("--settle", action="store_true", help="after each list's warm-up asks, wait until every "
                        "server is idle (background work they started, e.g. InstantMix's fill: its time and CPU printed)")
    parser.add_argument("--build-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:
        build_library(args.build_only, int(args.sizes))
        return
    global COLD
    COLD = args.cold
    global PARENTAL
    PARENTAL = args.parental
    global PARTLY_HIDDEN
    PARTLY_HIDDEN = args.partly_hidden
    global SETTLE
    SETTLE = args.settle
    if args.only:
        ONLY.extend(o.strip() for o in args.only.split(",") if o.strip())
    print(f"cpus: {os.cpu_count()}; one client, keep-alive; {args.requests} requests per list; target p50 <= 10 ms, "
          f"p99 <= 30 ms at 100k; cpu = server CPU ms per request; "
          f"{'cold: a play-state write before each request' if COLD else 'warm: requests repeated as a client does'}"
          f"{f'; the user has MaxParentalRating {PARENTAL}' if PARENTAL is not None else ''}"
          f"{'; every third movie and track rated R' if PARTLY_HIDDEN else ''}")
    for size in (int(x) for x in args.sizes.split(",")):
        results = {}
        keep = args.keep / str(size) if args.keep is not None and args.keep.name != str(size) else args.keep
        if args.baseline and args.interleave:
            results["baseline"], results["this"] = run_interleaved([args.baseline.resolve(), ROOT], size,
                                                                   args.requests, keep, ROOT)
        else:
            if args.baseline:
                results["baseline"] = run_checkout(args.baseline.resolve(), size, args.requests, keep, ROOT)
            results["this"] = run_checkout(ROOT, size, args.requests, keep)
        print(f"\n{size} library items (+ albums, artists, seasons); ms:")
        head = f"    {'list':<30}"
        for label in results:
            label = "base" if label == "baseline" else label
            head += f" {label + ' p50':>9} {label + ' p99':>9} {label + ' cpu':>9} {label + ' 1st':>9}"
        print(head + ("   ratio p50   ratio cpu" if args.baseline else ""))
        for name in results["this"]:
            line = f"    {name:<30}"
            for values in results.values():
                v, cpu, first = values.get(name, ([float("nan")], float("nan"), float("nan")))
                line += f" {statistics.median(v):9.1f} {pct(v, 99):9.1f} {cpu:9.2f} {first:9.1f}"
            if args.baseline and name in results["baseline"]:
                base, this = results["baseline"][name], results["this"][name]
                line += f"   {statistics.median(base[0]) / statistics.median(this[0]):8.2f}x"
                line += f"   {base[1] / this[1]:8.2f}x" if this[1] > 0 else ""
            print(line)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
