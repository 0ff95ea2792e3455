"""The SQL side of an Items page, in-process: what the page query, the total, the rows and the
viewer's user data cost, with the thread hand-off to the reader pool, without HTTP or DTOs.

On the library of bench/items_query.py (movies, shows, user data on a tenth of the movies) the
script runs, in a child process per checkout (this one and `--baseline DIR`, side by side on the
same database), for each sortBy: the first page (startIndex 0) and random pages (startIndex
anywhere in the 50k movies), limit 100, recursive under the movies library, as `ItemService.query`
reads them: `run_query` with the service's CountCache and the database generation, then the
user's data rows and the alternate-version owners of the page, all in one `Database.read`. It
prints the process CPU per page (time.process_time: event loop and reader thread) and the wall
time per page, and the ratios.

    python bench/items_sql.py [--size 100000] [--pages 300] [--sorts SortName,DateCreated,Random] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USER = "b" * 32

CHILD = r"""
import asyncio, json, random, sys, time
from pathlib import Path
from server.db.database import Database, sqlite_url
from server.library.catalog import dto
from server.library.catalog.query import CountCache, ItemQuery, run_query

db_file, info, sorts, pages = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3].split(","), int(sys.argv[4])
USER = "b" * 32
db = Database(sqlite_url(Path(db_file)))
cache = CountCache()


def generation():
    return getattr(db, "generations", db.generation)


def read(s, q):
    rows, total = run_query(s, q, cache, generation())
    page_ids = [r.id for r in rows]
    dto.user_data_rows(s, USER, page_ids)
    dto._owners_among(s, page_ids)
    return len(rows), total


async def run(sort, first):
    rnd = random.Random(7)

    def query():
        start = 0 if first else rnd.randrange(0, info["movie_count"] - 100)
        return ItemQuery(parent_id=info["movies"], recursive=True, include_types=["Movie"], sort_by=[sort],
                         sort_order=["Ascending"], start_index=start, limit=100, user_id=USER)

    for _ in range(20):
        await db.read(read, query())
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(pages):
        n, total = await db.read(read, query())
        assert n == 100 and total == info["movie_count"], (n, total)
    return (time.process_time() - cpu0) * 1000 / pages, (time.perf_counter() - wall0) * 1000 / pages


out = {}
for sort in sorts:
    for first in (True, False):
        out[f"{sort} {'first page' if first else 'random page'}"] = asyncio.run(run(sort, first))
print(json.dumps(out))
"""


def build_library(size: int) -> tuple[Path, Path, dict]:
    sys.path.insert(0, str(ROOT / "bench"))
    import items_query

    from server.paths import ServerPaths

    data = Path(tempfile.mkdtemp(prefix="reelroom-items-sql-"))
    info = items_query.build(data, size)
    db_file = ServerPaths(data).database_file
    with sqlite3.connect(db_file) as conn:  # the viewer whose user data the pages read
        conn.execute("INSERT INTO users (id, name, policy_json, configuration_json, date_created, "
                     "invalid_login_attempts) VALUES (?, 'bench', '{}', '{}', '2024-01-01 00:00:00', 0)", (USER,))
    items_query.add_user_data(data, USER, info["movie_ids"])
    info.pop("movie_ids")
    return data, db_file, info


def measure(root: Path, db_file: Path, info: dict, sorts: str, pages: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(db_file), json.dumps(info), sorts, str(pages)],
                         cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True,
                         timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"{root}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--sorts", default="SortName,DateCreated,Random")
    parser.add_argument("--baseline", type=Path, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    data, db_file, info = build_library(args.size)
    try:
        print(f"{info['items']} items, {info['movie_count']} movies in the scope; limit 100, user data; "
              f"load average {os.getloadavg()[0]:.1f}")
        runs = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
        results = {label: measure(root, db_file, info, args.sorts, args.pages) for label, root in runs}
        for case in results["this"]:
            line = f"  {case:<26}"
            for label in results:
                cpu, wall = results[label][case]
                line += f" {label} CPU {cpu:6.2f} ms/page, wall {wall:6.2f} ms |"
            if "baseline" in results:
                line += f" CPU x{results['baseline'][case][0] / results['this'][case][0]:.1f} less"
            print(line, flush=True)
        print(f"  load average after: {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
