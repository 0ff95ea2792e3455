"""Latency of the browsing routes on a synthetic library, against a real `reelroom-server`.

Reuses bench/items_query.py's synthetic library (movies with genres; shows with seasons and
episodes), adds music tracks (genres, artists) and a user who watched part of a third of the
series, then measures p50/p99 (ms, one client, keep-alive) of:

- GET /Shows/NextUp?limit=24                  - GET /Shows/{id}/Episodes (one series)
- GET /Items/{movie}/Similar?limit=12         - GET /Songs/{id}/InstantMix?limit=200
- GET /Playlists/{id}/Items (100 at a random offset of a 5,000-entry playlist)
- POST then DELETE /UserPlayedItems/{series} (marks every episode)

    python bench/browse.py [--sizes 10000,100000] [--requests 100]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _server import start_server as start  # noqa: E402
from _server import stop_server as stop  # noqa: E402
from items_query import AUTH, GENRES, build, insert_library, item_row, pct, sign_in  # noqa: E402

from server.db.database import Database, sqlite_url  # noqa: E402
from server.db.tables import Item, UserData  # noqa: E402

try:  # the layout since the library split (catalog/), and before it (for baseline checkouts)
    from server.library.catalog import ids  # noqa: E402
except ImportError:
    from server.library import ids  # noqa: E402
from server.paths import ServerPaths  # noqa: E402


def add_music(data_dir: Path, tracks: int) -> list[str]:
    db = Database(sqlite_url(ServerPaths(data_dir).database_file))
    now = datetime.now(UTC)
    lib = ids.library_id_for_name("Music")
    rows, values, out = [], [], []

    def base(item_id: str, **kw) -> dict:
        return item_row(now, item_id, **kw)

    rows.append(base(lib, type="CollectionFolder", is_folder=True, library_id=lib, name="Music", sort_name="music",
                     path="/media/music"))
    for i in range(tracks):
        artist, genre = f"Artist {i % 500}", GENRES[i % len(GENRES)]
        path = f"/media/music/{artist}/Album {i // 10}/{i % 10:02d} Track {i}.mp3"
        item_id = ids.item_id_for_path(path)
        out.append(item_id)
        rows.append(base(item_id, type="Audio", media_type="Audio", library_id=lib, parent_id=lib, path=path,
                         name=f"Track {i}", sort_name=f"track {i:07d}", run_time_ticks=2_000_000_000,
                         artists_json=f'["{artist}"]', genres_json=f'["{genre}"]'))
        values.append({"item_id": item_id, "kind": "Genre", "clean_value": genre.lower(), "value": genre})
        values.append({"item_id": item_id, "kind": "Artist", "clean_value": artist.lower(), "value": artist})
    insert_library(db, lib, "Music", "music", now, rows, values)
    db.close()
    return out


def watch_series(data_dir: Path, user_id: str) -> tuple[list[str], int]:
    """The user watched the first 1-5 episodes of every third series; returns series ids."""
    db = Database(sqlite_url(ServerPaths(data_dir).database_file))
    now = datetime.now(UTC)
    rnd = random.Random(3)
    with db.engine.begin() as conn:
        series = [r[0] for r in conn.execute(Item.__table__.select().with_only_columns(Item.__table__.c.id)
                                             .where(Item.__table__.c.type == "Series")).all()]
        watched = series[::3]
        rows = []
        for n, sid in enumerate(watched):
            eps = conn.execute(Item.__table__.select().with_only_columns(Item.__table__.c.id).where(
                Item.__table__.c.series_id == sid, Item.__table__.c.type == "Episode")
                .order_by(Item.__table__.c.parent_index_number, Item.__table__.c.index_number)
                .limit(rnd.randint(1, 5))).all()
            rows += [{"user_id": user_id, "item_id": e[0], "played": True, "play_count": 1, "is_favorite": False,
                      "playback_position_ticks": 0, "last_played_date": now - timedelta(minutes=n)} for e in eps]
        if rows:
            conn.execute(UserData.__table__.insert(), rows)
    db.close()
    return series, len(watched)


def timed(c: httpx.Client, n: int, method: str, path_fn, params_fn=lambda: None) -> list[float]:
    out = []
    for i in range(n + 5):
        t0 = time.perf_counter()
        r = c.request(method, path_fn(), params=params_fn())
        dt = (time.perf_counter() - t0) * 1000
        r.raise_for_status()
        if i >= 5:  # warm-up
            out.append(dt)
    return out


def measure(url: str, token: str, user_id: str, info: dict, tracks: list[str], series: list[str],
            n: int) -> dict[str, list[float]]:
    rnd = random.Random(5)
    headers = {"Authorization": AUTH.format(n=9) + f', Token="{token}"'}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
        pid = c.post("/Playlists", json={"Name": "Big", "Ids": rnd.sample(tracks, min(5000, len(tracks))),
                                          "UserId": user_id}).json()["Id"]
        results = {
            "Items page (baseline, 100)": timed(c, n, "GET", lambda: "/Items", lambda: {
                "userId": user_id, "parentId": info["movies"], "recursive": "true", "includeItemTypes": "Movie",
                "sortBy": "SortName", "limit": 100, "startIndex": rnd.randrange(0, 1000)}),
            "NextUp (24)": timed(c, n, "GET", lambda: "/Shows/NextUp", lambda: {"userId": user_id, "limit": 24}),
            "Episodes of a series": timed(c, n, "GET", lambda: f"/Shows/{rnd.choice(series)}/Episodes",
                                          lambda: {"userId": user_id}),
            "Similar movies (12)": timed(c, n, "GET", lambda: f"/Items/{rnd.choice(info['movie_ids'])}/Similar",
                                         lambda: {"userId": user_id, "limit": 12}),
            "InstantMix (200)": timed(c, n, "GET", lambda: f"/Songs/{rnd.choice(tracks)}/InstantMix",
                                      lambda: {"userId": user_id, "limit": 200}),
            "Playlist page (100)": timed(c, n, "GET", lambda: f"/Playlists/{pid}/Items",
                                         lambda: {"userId": user_id, "limit": 100,
                                                  "startIndex": rnd.randrange(0, 4900)}),
        }
        target = rnd.choice(series)
        marks = []
        for _ in range(max(5, n // 5)):
            t0 = time.perf_counter()
            c.post(f"/UserPlayedItems/{target}").raise_for_status()
            c.delete(f"/UserPlayedItems/{target}").raise_for_status()
            marks.append((time.perf_counter() - t0) * 500)
        results["Mark series played+unplayed (each)"] = marks
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args()
    for size in (int(x) for x in args.sizes.split(",")):
        data = Path(tempfile.mkdtemp(prefix="reelroom-browse-bench-"))
        try:
            info = build(data, size)
            tracks = add_music(data, size // 5)
            proc, url = start(data)
            token, user_id = sign_in(url)
            stop(proc)
            series, watched = watch_series(data, user_id)
            proc, url = start(data)
            try:
                token, user_id = sign_in(url)
                time.sleep(2)  # planner statistics are refreshed a second after start-up
                results = measure(url, token, user_id, info, tracks, series, args.requests)
            finally:
                stop(proc)
            print(f"{info['items'] + len(tracks):>7} items ({len(series)} series, {watched} watched, "
                  f"{len(tracks)} tracks):")
            for name, values in results.items():
                print(f"    {name:<36} p50 {statistics.median(values):6.1f} ms   p99 {pct(values, 99):6.1f} ms")
        finally:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
