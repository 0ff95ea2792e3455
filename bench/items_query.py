"""Latency of an Items page on a synthetic library, against a real `reelroom-server` process.

For each size (10k and 100k items by default) the script migrates a fresh database, inserts a
synthetic library straight through SQL (movies with streams, images, genres; shows with
seasons and episodes; user data on a tenth of the items), starts the server and measures

    GET /Items?userId=..&parentId=<movies>&recursive=true&includeItemTypes=Movie
        &sortBy=SortName&limit=100&startIndex=<random>&fields=PrimaryImageAspectRatio,MediaSources

for one client (sequential, keep-alive) and for 32 concurrent clients (httpx, then `wrk` when it
is installed: an httpx client on this 2-core machine saturates before the server does). It prints
p50/p99 in ms, pages/s and the server's CPU per page. `--baseline DIR` measures another checkout
(e.g. the commit before a change: `git worktree add /tmp/base <commit>`) on the same library in
the same run and prints ratios.

`--readers 0,1` compares this checkout under each value of REELROOM_READERS (0: no reader
processes; N: up to N, server/readers/; with REELROOM_READERS_BUSY=0, so one client's pages go
to a reader too): one server per value, all started first, then one client's latency and the CPU
per page of the server process and of its readers, then `--rounds` wrk runs taking turns between
the servers (fair on a noisy machine), with the RSS of the server and its readers.

    python bench/items_query.py [--sizes 10000,100000] [--requests 300] [--first-page] [--baseline DIR]
                                [--camel] [--web] [--pages N]
                                [--sorts SortName,DateCreated,Random]
                                [--readers 0,1 [--rounds 3]] [--keep DIR] [--store as-is|cold|warm]

`--store` (server/library/catalog/fragment_store.py, in the data folder's cache): `as-is` leaves the
file as the last run left it (after a `warm` run: a restarted server, whose stored fragments are of
an older epoch and get re-stamped), `cold` deletes it, `warm` deletes it and makes a pass over every
page before measuring (printing the pass's time, CPU per page and the file's size).

`--camel` asks every page in camelCase (`Accept: application/json; profile="CamelCase"`); `--web`
asks what jellyfin-web's library tab asks (Fields=PrimaryImageAspectRatio,MediaSourceCount,
ImageTypeLimit=1, EnableImageTypes=Primary,Backdrop,Banner,Thumb) instead of the issue's Fields;
`--pages N` picks the random page among the first N pages (clients going back over the pages they
browsed) instead of anywhere in the library. After each run the server's RSS is printed.
`--sorts` measures each sort order in turn on the same library (SortName by default).
`--keep DIR` keeps the built library under DIR/<size> and reuses it on the next run (delete it
when done); every server then runs on a copy of it, so the kept folder stays as built. `--readers` values may carry the owner's local slots (`1l0`: one reader,
REELROOM_READERS_LOCAL=0) and its adaptive share (`1l0s0`: REELROOM_READERS_SHARE=0, off) and end
in `h0` (`1l0h0`: REELROOM_READERS_HANDOFF=0, the owner relays the readers' replies instead of
handing them the client's socket: the hand-off against the relay in one checkout), or be `auto`; with `--baseline` that checkout runs each value too
(`base:N`). Every server is measured only once the scheduled tasks its start runs are done.
`--lane on,off` also runs this checkout with the Items lane off (`REELROOM_ITEMS_LANE=0`, labelled
`N~off`). With `--readers`, the server's CPU per page is also given for its event loop's thread
alone (the main thread: what the lane and the readers' hand-off cost the loop).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import children, cpu_seconds, rss_mib, start_server, stop_server, thread_cpu_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.db import migrate  # noqa: E402
from server.db.database import Database, sqlite_url  # noqa: E402
from server.db.tables import Item, ItemValue, Library, UserData  # noqa: E402

try:  # the layout since the library split (catalog/), and before it (for baseline checkouts)
    from server.library.catalog import ids  # noqa: E402
except ImportError:
    from server.library import ids  # noqa: E402
try:
    from server.library.catalog.sorting import sort_name  # noqa: E402
except ImportError:
    from server.library.sorting import sort_name  # noqa: E402
from server.paths import ServerPaths  # noqa: E402

AUTH = 'MediaBrowser Client="bench", Device="bench", DeviceId="bench-{n}", Version="1.0"'
GENRES = ["Action", "Drama", "Comedy", "Thriller", "Science Fiction", "Horror", "Romance", "Documentary",
          "Animation", "Family", "Crime", "Fantasy"]
WORDS = ["the", "last", "night", "dark", "star", "river", "city", "dream", "blue", "storm", "king", "shadow",
         "secret", "road", "fire", "winter", "ghost", "island", "glass", "iron"]




def streams(i: int) -> str:
    return json.dumps([
        {"Index": 0, "Type": "Video", "Codec": "h264", "Width": 1920, "Height": 1080, "BitRate": 8_000_000,
         "AverageFrameRate": 23.976, "Profile": "High", "IsDefault": True, "Language": None,
         "DisplayTitle": "1080p H264 SDR", "VideoRange": "SDR", "PixelFormat": "yuv420p", "Level": 41},
        {"Index": 1, "Type": "Audio", "Codec": "aac", "Channels": 6, "SampleRate": 48000, "BitRate": 384000,
         "Language": "eng", "IsDefault": True, "DisplayTitle": "English - AAC - 5.1 - Default"},
        {"Index": 2, "Type": "Subtitle", "Codec": "subrip", "Language": "eng", "IsExternal": True,
         "Path": f"/media/movies/m{i}.en.srt", "DisplayTitle": "English - SUBRIP - External"},
    ])


def images(i: int) -> str:
    return json.dumps([
        {"Type": "Primary", "Path": f"/media/movies/m{i}/poster.jpg", "Tag": f"{i:032x}"[-32:], "Width": 680,
         "Height": 1000, "BlurHash": "WBF~Q+00?b_2M{%M00?b~q%MRjof"},
        {"Type": "Backdrop", "Path": f"/media/movies/m{i}/fanart.jpg", "Tag": f"{i + 7:032x}"[-32:],
         "Width": 1920, "Height": 1080, "BlurHash": "WHI#uc00?b_2M{%M00?b~q%MRjof"},
    ])


EPISODE_IMAGES = json.dumps([{"Type": "Primary", "Path": "/media/shows/thumb.jpg", "Tag": "e" * 32, "Width": 1920,
                              "Height": 1080}])


def insert_library(db: Database, lib: str, name: str, collection_type: str, now: datetime, rows: list[dict],
                   values: list[dict]) -> None:
    """A library row, then its ``items`` and ``item_values`` rows, in batches, in one transaction."""
    with db.engine.begin() as conn:
        conn.execute(Library.__table__.insert(), [{"id": lib, "name": name, "collection_type": collection_type,
                                                   "options_json": "{}", "date_created": now}])
        for s in range(0, len(rows), 5000):
            conn.execute(Item.__table__.insert(), rows[s:s + 5000])
        for s in range(0, len(values), 10000):
            conn.execute(ItemValue.__table__.insert(), values[s:s + 10000])


def item_row(now: datetime, item_id: str, **kw) -> dict:
    """An ``items`` row with every column the scanner would fill, defaults first, then ``kw``."""
    row = {c: None for c in Item.__table__.columns.keys()}
    row.update(id=item_id, media_type="Unknown", is_folder=False, name="", sort_name="", date_created=now,
               genres_json="[]", studios_json="[]", tags_json="[]", artists_json="[]", album_artists_json="[]",
               provider_ids_json="{}", media_streams_json="[]", chapters_json="[]", images_json="[]",
               is_locked=False, locked_fields_json="[]", is_virtual=False)
    row.update(kw)
    return row


def build(data_dir: Path, size: int) -> dict:
    """Migrate a database and fill it; returns ids the bench needs."""
    paths = ServerPaths(data_dir)
    paths.ensure()
    db = Database(sqlite_url(paths.database_file))
    migrate.upgrade(db.engine, db.url)
    rnd = random.Random(size)
    now = datetime.now(UTC)
    movies_lib = ids.library_id_for_name("Movies")
    shows_lib = ids.library_id_for_name("Shows")
    n_movies = size // 2
    n_series = max(1, size // 100)
    rows: list[dict] = []
    values: list[dict] = []

    def base(item_id: str, **kw) -> dict:
        return item_row(now, item_id, **kw)

    for lib_id, name in ((movies_lib, "Movies"), (shows_lib, "Shows")):
        rows.append(base(lib_id, type="CollectionFolder", is_folder=True, library_id=lib_id, name=name,
                         sort_name=name.lower(), path=f"/media/{name.lower()}"))
    for i in range(n_movies):
        title = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 4))).title() + f" {i}"
        path = f"/media/movies/{title} ({1950 + i % 70})/{title}.mkv"
        item_id = ids.item_id_for_path(path)
        genres = rnd.sample(GENRES, 2)
        rows.append(base(item_id, type="Movie", media_type="Video", library_id=movies_lib, parent_id=movies_lib,
                         path=path, name=title, sort_name=sort_name(title), production_year=1950 + i % 70,
                         premiere_date=now - timedelta(days=i), date_created=now - timedelta(minutes=i),
                         run_time_ticks=rnd.randint(60, 180) * 600_000_000, size=rnd.randint(10**9, 10**10),
                         container="mkv", bitrate=8_500_000, width=1920, height=1080, video_type="VideoFile",
                         community_rating=round(rnd.uniform(3, 9), 1), official_rating="PG-13",
                         overview="A synthetic movie. " * 5, genres_json=json.dumps(genres),
                         provider_ids_json=json.dumps({"Tmdb": str(i)}), media_streams_json=streams(i),
                         images_json=images(i), file_size=10**9, file_mtime=1.0))
        values.extend({"item_id": item_id, "kind": "Genre", "clean_value": g.lower(), "value": g} for g in genres)
    remaining = size - n_movies - 2
    per_series = max(1, remaining // n_series)
    for si in range(n_series):
        title = f"Show {si}"
        spath = f"/media/shows/{title}"
        sid = ids.item_id_for_path(spath)
        rows.append(base(sid, type="Series", is_folder=True, library_id=shows_lib, parent_id=shows_lib, path=spath,
                         name=title, sort_name=sort_name(title), images_json=images(10**7 + si)))
        seasons = max(1, per_series // 12)
        for season in range(1, seasons + 1):
            ppath = f"{spath}/Season {season:02d}"
            pid = ids.item_id_for_path(ppath)
            rows.append(base(pid, type="Season", is_folder=True, library_id=shows_lib, parent_id=sid, path=ppath,
                             name=f"Season {season}", sort_name=f"{season:010d}", index_number=season,
                             series_id=sid, series_name=title))
            for ep in range(1, 12):
                epath = f"{ppath}/{title} S{season:02d}E{ep:02d}.mkv"
                rows.append(base(ids.item_id_for_path(epath), type="Episode", media_type="Video",
                                 library_id=shows_lib, parent_id=pid, path=epath, name=f"Episode {ep}",
                                 sort_name=f"{season:03d}-{ep:04d}-episode", index_number=ep,
                                 parent_index_number=season, series_id=sid, series_name=title, season_id=pid,
                                 season_name=f"Season {season}", container="mkv", run_time_ticks=2_400_000_000,
                                 media_streams_json=streams(ep), width=1920, height=1080,
                                 # a thumb of its own: without one the artwork task would spend the
                                 # run spawning ffmpeg for frames of files that do not exist
                                 images_json=EPISODE_IMAGES))
    admin_id = None
    with db.engine.begin() as conn:
        conn.execute(Library.__table__.insert(), [
            {"id": movies_lib, "name": "Movies", "collection_type": "movies", "options_json": "{}",
             "date_created": now},
            {"id": shows_lib, "name": "Shows", "collection_type": "tvshows", "options_json": "{}",
             "date_created": now}])
        for start in range(0, len(rows), 5000):
            conn.execute(Item.__table__.insert(), rows[start:start + 5000])
        for start in range(0, len(values), 10000):
            conn.execute(ItemValue.__table__.insert(), values[start:start + 10000])
    db.close()
    return {"movies": movies_lib, "shows": shows_lib, "items": len(rows), "movie_count": n_movies,
            "admin": admin_id, "movie_ids": [r["id"] for r in rows if r["type"] == "Movie"]}


def add_user_data(data_dir: Path, user_id: str, movie_ids: list[str]) -> None:
    db = Database(sqlite_url(ServerPaths(data_dir).database_file))
    rnd = random.Random(1)
    now = datetime.now(UTC)
    chosen = rnd.sample(movie_ids, len(movie_ids) // 10)
    with db.engine.begin() as conn:
        conn.execute(UserData.__table__.insert(), [
            {"user_id": user_id, "item_id": i, "played": rnd.random() < 0.5, "play_count": rnd.randint(0, 3),
             "is_favorite": rnd.random() < 0.2, "playback_position_ticks": rnd.choice([0, 0, 12_000_000_000]),
             "last_played_date": now - timedelta(hours=rnd.randint(1, 1000))} for i in chosen])
    db.close()






def sign_in(url: str, timeout: float = 30) -> tuple[str, str]:
    with httpx.Client(base_url=url, headers={"Authorization": AUTH.format(n=0)}, timeout=timeout) as c:
        if not c.get("/System/Info/Public").json().get("StartupWizardCompleted"):
            c.post("/Startup/Configuration", json={"UICulture": "en-US", "MetadataCountryCode": "US",
                                                   "PreferredMetadataLanguage": "en"}).raise_for_status()
            c.get("/Startup/User").raise_for_status()
            c.post("/Startup/User", json={"Name": "bench", "Password": "bench"}).raise_for_status()
            c.post("/Startup/Complete").raise_for_status()
        r = c.post("/Users/AuthenticateByName", json={"Username": "bench", "Pw": "bench"})
        r.raise_for_status()
        token = r.json()["AccessToken"]
        settle(c, token)
        return token, r.json()["User"]["Id"]


def settle(c: httpx.Client, token: str, timeout: float = 600) -> None:
    """Wait for the scheduled tasks a start runs (library scan, artwork, ...) to finish: at 100k
    items the artwork run reads the whole items table for frame candidates in the server process
    for seconds, which would count as the pages' CPU."""
    headers = {"Authorization": AUTH.format(n=0) + f', Token="{token}"'}
    deadline = time.monotonic() + timeout
    t0 = time.monotonic()
    while time.monotonic() < deadline:
        tasks = c.get("/ScheduledTasks", headers=headers).json()
        running = [t["Name"] for t in tasks if t.get("State") != "Idle"]
        if not running:
            break
        time.sleep(0.2)
    waited = time.monotonic() - t0
    if waited > 0.5:
        print(f"  (waited {waited:.1f} s for the start's tasks: {', '.join(running) or 'done'})", flush=True)


FIELDS = "PrimaryImageAspectRatio,MediaSources,Overview"
WEB_FIELDS = "PrimaryImageAspectRatio,MediaSourceCount"
CAMEL = 'application/json; profile="CamelCase"'
MODE = {"camel": False, "web": False, "pages": 0}  # set from the command line


SORT = ["SortName"]  # the sortBy of the pages measured (--sorts sets it per run)


def params(info: dict, user_id: str, rnd: random.Random, first_page: bool) -> dict:
    if first_page:
        start_index = 0
    elif MODE["pages"]:
        start_index = 100 * rnd.randrange(0, MODE["pages"])
    else:
        start_index = rnd.randrange(0, max(1, info["movie_count"] - 100))
    p = {"userId": user_id, "parentId": info["movies"], "recursive": "true", "includeItemTypes": "Movie",
         "sortBy": SORT[0], "sortOrder": "Ascending", "limit": "100", "startIndex": str(start_index),
         "fields": FIELDS, "enableTotalRecordCount": "true"}
    if MODE["web"]:
        p.update(fields=WEB_FIELDS, imageTypeLimit="1", enableImageTypes="Primary,Backdrop,Banner,Thumb")
    return p


def extra_headers() -> dict:
    return {"Accept": CAMEL} if MODE["camel"] else {}




WRK_SCRIPT = """
math.randomseed(os.time())
local base = "%s"
local top = %d
request = function()
  local path = base .. "&startIndex=" .. %s
  return wrk.format("GET", path)
end
"""


def wrk_run(url: str, token: str, info: dict, user_id: str, clients: int, seconds: int, first_page: bool,
            pid: int) -> dict | None:
    """``wrk`` (C, one thread per core is too many here: 1 thread) against GET /Items with random
    pages: pages/s, latency percentiles and the server's CPU per page. None without wrk."""
    wrk = shutil.which("wrk")
    if wrk is None:
        return None
    import subprocess
    import urllib.parse
    p = params(info, user_id, random.Random(0), True)
    p.pop("startIndex")
    base = "/Items?" + urllib.parse.urlencode(p)
    top = max(1, info["movie_count"] - 100)
    start_expr = "0" if first_page else (f"100 * math.random(0, {MODE['pages'] - 1})" if MODE["pages"]
                                         else "math.random(0, top)")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(WRK_SCRIPT % (base, top, start_expr))
        script = f.name
    try:
        cpu0, own0, loop0 = cpu_with_children(pid), cpu_seconds(pid), thread_cpu_seconds(pid)
        out = subprocess.run([wrk, "-t1", f"-c{clients}", f"-d{seconds}s", "--latency", "--timeout", "10s",
                              "-s", script, "-H", "Authorization: " + AUTH.format(n=3) + f', Token="{token}"',
                              *(["-H", "Accept: " + CAMEL] if MODE["camel"] else []), url],
                             capture_output=True, text=True, timeout=seconds + 60).stdout
        cpu, own, loop = cpu_with_children(pid) - cpu0, cpu_seconds(pid) - own0, thread_cpu_seconds(pid) - loop0
        rss = rss_mib(pid), [rss_mib(c) for c in children(pid)]
    finally:
        os.unlink(script)

    def ms(label: str) -> float:
        m = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return float("nan")
        return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]

    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Socket errors: (.*)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), "p50": ms("50"),
            "p99": ms("99"), "requests": requests, "cpu_ms": cpu * 1000 / max(1, requests), "rss": rss,
            "owner_cpu_ms": own * 1000 / max(1, requests), "loop_cpu_ms": loop * 1000 / max(1, requests),
            "errors": (errors.group(1) if errors else "none") + (f", {non2xx.group(1)} non-2xx" if non2xx else "")}






def cpu_with_children(pid: int) -> float:
    """CPU of the server and of its live children (reader processes) together."""
    return cpu_seconds(pid) + sum(cpu_seconds(c) for c in children(pid))




def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def single(url: str, token: str, info: dict, user_id: str, n: int, first_page: bool) -> tuple[list[float], int]:
    rnd = random.Random(7)
    out = []
    size = 0
    headers = {"Authorization": AUTH.format(n=1) + f', Token="{token}"', **extra_headers()}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as c:
        for _ in range(20):  # warm-up
            c.get("/Items", params=params(info, user_id, rnd, first_page)).raise_for_status()
        for _ in range(n):
            p = params(info, user_id, rnd, first_page)
            t0 = time.perf_counter()
            r = c.get("/Items", params=p)
            out.append((time.perf_counter() - t0) * 1000)
            r.raise_for_status()
            assert len(r.json()["items" if MODE["camel"] else "Items"]) == 100
            size = len(r.content)
    return out, size


async def concurrent(url: str, token: str, info: dict, user_id: str, n: int, clients: int,
                     first_page: bool) -> tuple[list[float], float]:
    out: list[float] = []
    headers = {"Authorization": AUTH.format(n=2) + f', Token="{token}"', **extra_headers()}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as c:
        async def worker(k: int) -> None:
            rnd = random.Random(k)
            for _ in range(n):
                t0 = time.perf_counter()
                r = await c.get("/Items", params=params(info, user_id, rnd, first_page))
                out.append((time.perf_counter() - t0) * 1000)
                r.raise_for_status()

        await asyncio.gather(*(worker(k) for k in range(clients)))  # warm-up of every connection
        out.clear()
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(clients)))
        elapsed = time.perf_counter() - t0
    return out, len(out) / elapsed


STORE_FILE = "cache/fragments.sqlite3"  # server/library/catalog/fragment_store.py (in the data folder)


def store_mib(data: Path) -> float:
    return sum(p.stat().st_size for p in data.glob(STORE_FILE + "*")) / 2**20


def warm_pass(url: str, token: str, info: dict, user_id: str, pid: int, data: Path) -> None:
    """Every page of the library once, in order (fills the fragment store; the baseline's
    in-memory caches get the same pass), with its time, CPU and the store's size after."""
    headers = {"Authorization": AUTH.format(n=1) + f', Token="{token}"', **extra_headers()}
    cpu0, t0, pages = cpu_with_children(pid), time.perf_counter(), 0
    rnd = random.Random(3)
    with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
        for start in range(0, info["movie_count"], 100):
            p = params(info, user_id, rnd, False)
            p.update(startIndex=str(start), sortBy="SortName")
            c.get("/Items", params=p).raise_for_status()
            pages += 1
    took, cpu = time.perf_counter() - t0, cpu_with_children(pid) - cpu0
    time.sleep(3)  # (the store's writer catches up)
    print(f"  warm pass: {pages} pages in {took:.1f} s, {cpu * 1000 / max(1, pages):.1f} ms CPU/page; "
          f"store file {store_mib(data):.0f} MiB", flush=True)


def measure(root: Path, data: Path, info: dict, args: argparse.Namespace) -> dict:
    """One server (from the checkout ``root``) on the built library: 1 client, N clients (httpx),
    then wrk (if installed). ``--store cold`` deletes the fragment store first; ``warm`` deletes
    it and makes a pass over every page before measuring."""
    copy = None
    if args.keep:  # (a kept library is never served itself: its store, sign-ins and records stay as built)
        copy = Path(tempfile.mkdtemp(prefix="reelroom-items-bench-"))
        shutil.copytree(data, copy / data.name, symlinks=True,
                        ignore=shutil.ignore_patterns(Path(STORE_FILE).name + "*") if args.store in ("cold", "warm") else None)
        data = copy / data.name
    elif args.store in ("cold", "warm"):
        for p in data.glob(STORE_FILE + "*"):
            p.unlink()
    try:
        return _measure(root, data, info, args)
    finally:
        if copy is not None:
            shutil.rmtree(copy, ignore_errors=True)


def _measure(root: Path, data: Path, info: dict, args: argparse.Namespace) -> dict:
    proc, url = start_server(data, root=root)
    try:
        token, user_id = sign_in(url)
        if args.store == "warm":
            warm_pass(url, token, info, user_id, proc.pid, data)
        cpu0 = cpu_with_children(proc.pid)
        one, size = single(url, token, info, user_id, args.requests, args.first_page)
        cpu_per_request = (cpu_with_children(proc.pid) - cpu0) * 1000 / (args.requests + 20)
        many, rps = asyncio.run(concurrent(url, token, info, user_id, max(5, args.requests // args.clients),
                                           args.clients, args.first_page))
        wrk = wrk_run(url, token, info, user_id, args.clients, args.wrk_seconds, args.first_page, proc.pid) \
            if args.wrk_seconds else None
        rss = rss_mib(proc.pid)
    finally:
        stop_server(proc)
    return {"p50": statistics.median(one), "p99": pct(one, 99), "cpu": cpu_per_request, "bytes": size,
            "many_p50": statistics.median(many), "many_p99": pct(many, 99), "many_rps": rps, "wrk": wrk,
            "rss": rss}


def readers_compare(data: Path, info: dict, args: argparse.Namespace) -> None:
    """--readers: the same checkout with reader processes off and on, wrk runs taking turns.

    With ``--store cold|warm`` each server runs on a copy of the data folder of its own, without
    the fragment store file (a store is one server's: another's epochs are not its own), and
    ``warm`` makes each server's pass over every page (through its readers where they take pages)
    before measuring."""
    roots = ([("base:", args.baseline.resolve())] if args.baseline else []) + [("", ROOT)]
    lanes = args.lane.split(",")

    def variants(label: str) -> list[str]:  # this checkout: each --lane value ("~off": REELROOM_ITEMS_LANE=0)
        return [n + ("" if lane == "on" or label else "~off") for n in args.readers.split(",")
                for lane in (lanes if not label else lanes[:1])]

    values = [label + n for label, _ in roots for n in variants(label)]
    servers = {}
    copies: list[Path] = []
    try:
        for label, root in roots:
            for n in variants(label):
                # "1l0": one reader, the owner answers no page at once itself; "s0": nor by the
                # adaptive share (the owner's slot while the readers' queue is long); "~off": the lane off
                readers, local, share, handoff = re.fullmatch(  # type: ignore[union-attr]
                    r"([^lsh~]+)(?:l(\d+))?(?:s(\d+))?(?:h(\d+))?", n.partition("~")[0]).groups()
                env = {"REELROOM_READERS": readers} | ({"REELROOM_READERS_BUSY": "0"} if readers != "0" else {}) \
                    | ({"REELROOM_READERS_LOCAL": local} if local else {}) \
                    | ({"REELROOM_READERS_SHARE": share} if share else {}) \
                    | ({"REELROOM_READERS_HANDOFF": handoff} if handoff else {}) \
                    | ({"REELROOM_ITEMS_LANE": "0"} if n.endswith("~off") else {})
                where = data
                if args.store in ("cold", "warm") or args.keep:  # (a kept library is never served itself)
                    where = Path(tempfile.mkdtemp(prefix="reelroom-readers-bench-")) / data.name
                    copies.append(where.parent)
                    shutil.copytree(data, where, symlinks=True,
                                    ignore=shutil.ignore_patterns(Path(STORE_FILE).name + "*") if args.store in ("cold", "warm")
                                    else None)
                proc, url = start_server(where, root=root, env=env)
                servers[label + n] = (proc, url, *sign_in(url))
                if args.store == "warm":
                    print(f"  readers={label + n:<6}", end="", flush=True)
                    warm_pass(url, servers[label + n][2], info, servers[label + n][3], proc.pid, where)
        for n, (proc, url, token, user_id) in servers.items():
            single(url, token, info, user_id, 20, args.first_page)  # a reader starts
            deadline = time.monotonic() + (10 if "auto" in n else 60)  # auto: maybe no core is free
            while re.split("[lsh~]", n.rpartition(":")[2])[0] != "0" and not children(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            single(url, token, info, user_id, 20, args.first_page)  # and warms up (caches, SQLite pages)
            own0, loop0, kids = cpu_seconds(proc.pid), thread_cpu_seconds(proc.pid), children(proc.pid)
            kids0 = sum(cpu_seconds(k) for k in kids)
            one, _ = single(url, token, info, user_id, args.requests, args.first_page)
            pages = args.requests + 20
            own = (cpu_seconds(proc.pid) - own0) * 1000 / pages
            loop = (thread_cpu_seconds(proc.pid) - loop0) * 1000 / pages
            readers = (sum(cpu_seconds(k) for k in kids) - kids0) * 1000 / pages
            print(f"  readers={n:<6} 1 client p50 {statistics.median(one):.1f} ms, p99 {pct(one, 99):.1f} ms, "
                  f"CPU/page: server process {own:.2f} ms (event loop thread {loop:.2f}) + readers {readers:.2f} ms, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
        results: dict[str, list[dict]] = {n: [] for n in values}
        for k in range(args.rounds if shutil.which("wrk") else 0):
            for n, (proc, url, token, user_id) in servers.items():
                w = wrk_run(url, token, info, user_id, args.clients, args.wrk_seconds, args.first_page, proc.pid)
                if w is None:
                    print("  (wrk is not installed: apt-get install -y wrk)")
                    return
                results[n].append(w)
                owner, kids_rss = w["rss"]
                print(f"  round {k} readers={n:<6} wrk {args.clients} conns {w['rps']:.0f} pages/s, p50 {w['p50']:.0f} ms, "
                      f"p99 {w['p99']:.0f} ms, CPU/page {w['cpu_ms']:.2f} ms (server process {w['owner_cpu_ms']:.2f}, "
                      f"event loop thread {w['loop_cpu_ms']:.2f}), "
                      f"RSS {owner:.0f} MiB" + (f" + readers {' + '.join(f'{r:.0f}' for r in kids_rss)} MiB"
                                                if kids_rss else "")
                      + f", errors: {w['errors']}, load {os.getloadavg()[0]:.1f}", flush=True)
        for n in values if args.rounds and shutil.which("wrk") else ():
            rps = statistics.median(w["rps"] for w in results[n])
            p99 = statistics.median(w["p99"] for w in results[n])
            first = statistics.median(w["rps"] for w in results[values[0]])
            print(f"  readers={n:<6} median of {args.rounds}: {rps:.0f} pages/s (x{rps / first:.2f} of readers="
                  f"{values[0]}), p99 {p99:.0f} ms")
    finally:
        for proc, *_ in servers.values():
            stop_server(proc)
        for copy in copies:
            shutil.rmtree(copy, ignore_errors=True)


def report(label: str, r: dict, clients: int) -> str:
    line = (f"  {label:<9} 1 client p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, server CPU {r['cpu']:.2f} ms/page, "
            f"{r['bytes'] / 1024:.0f} KB/page | httpx {clients} clients p50 {r['many_p50']:.0f} ms, "
            f"p99 {r['many_p99']:.0f} ms, {r['many_rps']:.0f} pages/s")
    if r["wrk"]:
        w = r["wrk"]
        line += (f" | wrk {clients} conns {w['rps']:.0f} pages/s, p50 {w['p50']:.1f} ms, p99 {w['p99']:.1f} ms, "
                 f"server CPU {w['cpu_ms']:.2f} ms/page (owner process {w['owner_cpu_ms']:.2f}), "
                 f"errors: {w['errors']}")
        owner, readers = w["rss"]
        line += f" | RSS after wrk: server {owner:.0f} MiB" + (
            f" + {len(readers)} children {' + '.join(f'{r:.0f}' for r in readers)} MiB" if readers else "")
    return line + f" | RSS after {r['rss']:.0f} MB"


def ratios(b: dict, t: dict) -> str:
    line = (f"  ratios    1 client p50 x{b['p50'] / t['p50']:.1f} faster, CPU/page x{b['cpu'] / t['cpu']:.1f} "
            f"less, httpx pages/s x{t['many_rps'] / b['many_rps']:.1f}")
    if b["wrk"] and t["wrk"]:
        line += (f", wrk pages/s x{t['wrk']['rps'] / b['wrk']['rps']:.1f}, "
                 f"wrk p99 x{b['wrk']['p99'] / t['wrk']['p99']:.1f} lower")
    return line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--first-page", action="store_true", help="always startIndex=0 (else random pages)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. `git worktree add /tmp/base main`) measured on the same "
                             "library in the same run, for ratios")
    parser.add_argument("--wrk-seconds", type=int, default=10, help="0 skips the wrk run")
    parser.add_argument("--camel", action="store_true", help='Accept: application/json; profile="CamelCase"')
    parser.add_argument("--web", action="store_true", help="jellyfin-web's Fields and image options")
    parser.add_argument("--pages", type=int, default=0, help="random page among the first N (0: anywhere)")
    parser.add_argument("--sorts", default="SortName", help="sortBy values measured in turn, e.g. "
                                                             "SortName,DateCreated,Random")
    parser.add_argument("--readers", default=None,
                        help="comma-separated REELROOM_READERS values to compare this checkout under, e.g. 0,1 "
                             "(reader processes off, then at most one); with --baseline, that checkout too "
                             "(labelled base:N)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the built library under DIR/<size> and reuse it on the next run")
    parser.add_argument("--rounds", type=int, default=3, help="wrk runs per server with --readers")
    parser.add_argument("--lane", default="on", help="with --readers: on, off or on,off: this checkout with the "
                        "Items lane (server/http/items_lane.py) on and/or off (REELROOM_ITEMS_LANE=0, "
                        "labelled ~off)")
    parser.add_argument("--store", choices=("as-is", "cold", "warm"), default="as-is",
                        help="the fragment store in the data folder: left as it is, deleted (cold), or "
                             "deleted and filled by a pass over every page before measuring (warm)")
    args = parser.parse_args()
    sorts = [x for x in args.sorts.split(",") if x]
    MODE.update(camel=args.camel, web=args.web, pages=args.pages)
    where = "first page" if args.first_page else (f"random page of the first {args.pages}" if args.pages
                                                  else "random startIndex")
    print(f"cpus: {os.cpu_count()}; page: limit 100, sortBy {'/'.join(sorts)}, Fields={WEB_FIELDS if args.web else FIELDS}"
          f"{' (jellyfin-web: ImageTypeLimit=1)' if args.web else ''}, {'camelCase' if args.camel else 'PascalCase'}, "
          f"user data, {where}; "
          f"targets: >= 1000 pages/s at p99 <= 100 ms ({args.clients} clients), <= 1.5 ms CPU/page, "
          f"1 client p50 <= 4 ms, p99 <= 12 ms")
    runs = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
    for size in (int(x) for x in args.sizes.split(",")):
        data = (args.keep / str(size)) if args.keep else Path(tempfile.mkdtemp(prefix="reelroom-items-bench-"))
        kept = data / "bench-info.json"
        try:
            t0 = time.perf_counter()
            if args.keep and kept.exists():
                info = json.loads(kept.read_text())
            else:
                info = build(data, size)
                proc, url = start_server(data)
                token, user_id = sign_in(url)
                stop_server(proc)
                add_user_data(data, user_id, info["movie_ids"])
                if args.keep:
                    kept.write_text(json.dumps(info))
            built = time.perf_counter() - t0
            print(f"{info['items']:>7} items (built in {built:.1f} s), load average {os.getloadavg()[0]:.1f}")
            if args.readers:
                for sort in sorts:
                    SORT[0] = sort
                    print(f" sortBy={sort}, load average {os.getloadavg()[0]:.1f}")
                    readers_compare(data, info, args)
                continue
            for sort in sorts:
                SORT[0] = sort
                if len(sorts) > 1:
                    print(f" sortBy={sort}, load average {os.getloadavg()[0]:.1f}")
                results = {}
                for label, root in runs:
                    results[label] = measure(root, data, info, args)
                    print(report(label, results[label], args.clients), flush=True)
                if "baseline" in results:
                    print(ratios(results["baseline"], results["this"]))
        finally:
            if not args.keep:
                shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
