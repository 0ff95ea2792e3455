"""The fragment store's read of a page (server/library/catalog/fragment_store.py): CPU per page of
100 ids for the ways of asking and the sizes of SQLite's page cache, on a store file a warm run
left (bench/items_query.py --keep DIR --store warm).

A page's ids are read as ``FragmentStore.fetch`` reads them (one statement, ``id IN (...)``).
Two orders of ids: ``storage`` (100 neighbours in the order they were stored: what a client that
pages through a listing asks for, once the store was filled by the same listing) and ``random``
(100 ids anywhere: the worst case). Per cache size the connection is warmed with pages first.
The file is opened read-only (``immutable``): nothing is written next to it.

    python bench/store_read.py --keep /tmp/me-lib [--size 100000] [--pages 1500]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

COLUMNS = "id, epoch, digest, type, is_folder, run_time_ticks, body"  # FragmentStore.fetch's


def connect(path: Path, cache_kib: int) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True, isolation_level=None)
    conn.execute(f"PRAGMA cache_size=-{cache_kib}")
    return conn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="the --keep DIR of bench/items_query.py")
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--caches", default="1024,2048,4096,8192", help="cache sizes (KiB) to compare")
    args = parser.parse_args()
    path = args.keep / str(args.size) / "cache" / "fragments.sqlite3"
    if not path.exists():
        raise SystemExit(f"no store at {path}: run bench/items_query.py --keep {args.keep} --store warm first")
    probe = connect(path, 1024)
    shape = probe.execute("SELECT shape, count(*) FROM fragments GROUP BY shape ORDER BY 2 DESC").fetchone()[0]
    ids = [r[0] for r in probe.execute("SELECT id FROM fragments WHERE shape = ? ORDER BY rowid", (shape,))]
    rowids = dict(probe.execute("SELECT id, rowid FROM fragments WHERE shape = ?", (shape,)).fetchall())
    index_pages = probe.execute("SELECT count(*) FROM dbstat WHERE name = 'ux_fragments'").fetchone()[0] \
        if probe.execute("SELECT 1 FROM pragma_module_list WHERE name = 'dbstat'").fetchone() else None
    page_size = probe.execute("PRAGMA page_size").fetchone()[0]
    probe.close()
    print(f"store {path.stat().st_size / 2**20:.0f} MiB, {len(ids)} fragments of the main shape, "
          f"{page_size // 1024} KiB pages, (shape, id) index "
          f"{'?' if index_pages is None else f'{index_pages * page_size / 2**20:.1f} MiB'}; "
          f"load average {os.getloadavg()[0]:.1f}")
    if len(ids) < 200:
        raise SystemExit("too few fragments stored")

    def pages(n: int, order: str, rnd: random.Random) -> Iterator[list[str]]:
        for _ in range(n):
            if order == "storage":
                start = rnd.randrange(0, len(ids) - 100)
                yield ids[start:start + 100]
            else:
                yield rnd.sample(ids, 100)

    def in_list(conn: sqlite3.Connection, page: list[str]) -> int:
        sql = f"SELECT {COLUMNS} FROM fragments WHERE shape = ? AND id IN (" + ",".join("?" * len(page)) + ")"
        return len(conn.execute(sql, (shape, *page)).fetchall())

    def by_rowid(conn: sqlite3.Connection, page: list[str]) -> int:  # (an id -> rowid map kept in memory)
        sql = f"SELECT {COLUMNS} FROM fragments WHERE rowid IN (" + ",".join("?" * len(page)) + ")"
        return len(conn.execute(sql, [rowids[i] for i in page]).fetchall())

    def one_by_one(conn: sqlite3.Connection, page: list[str]) -> int:
        sql = f"SELECT {COLUMNS} FROM fragments WHERE shape = ? AND id = ?"
        return sum(1 for i in page if conn.execute(sql, (shape, i)).fetchone() is not None)

    def measure(fn: Callable[[sqlite3.Connection, list[str]], int], cache_kib: int, order: str) -> float:
        conn = connect(path, cache_kib)
        rnd = random.Random(7)
        for page in pages(max(200, args.pages // 3), order, rnd):
            fn(conn, page)
        t0 = time.process_time()
        for page in pages(args.pages, order, rnd):
            assert fn(conn, page) == 100
        conn.close()
        return (time.process_time() - t0) * 1000 / args.pages

    caches = [int(x) for x in args.caches.split(",") if x]
    print("ms CPU per page of 100 fragments (ids in storage order / random):")
    for cache_kib in caches:
        row = [f"{measure(in_list, cache_kib, order):.3f}" for order in ("storage", "random")]
        print(f"  IN list, cache {cache_kib:>5} KiB: {' / '.join(row)}")
    for name, fn in (("by rowid", by_rowid), ("one by one", one_by_one)):
        row = [f"{measure(fn, caches[0], order):.3f}" for order in ("storage", "random")]
        print(f"  {name}, cache {caches[0]:>5} KiB: {' / '.join(row)}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
