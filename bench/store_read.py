"""The fragment store's read of a page (server/library/catalog/fragment_store.py): CPU per page of
100 ids, the ways of reading them side by side, on a store file a warm run left
(bench/items_query.py --keep DIR --store warm, or bench/items_read.py --keep DIR).

The rows of the file's main shape are copied into two layouts in a temporary folder (nothing is
written next to the kept file):

- ``format 3``: 16 KiB pages, rows found through the (shape, key) index (``key IN (...)``), as
  the store read before format 4;
- ``format 4`` (this build's layout: format 5 since, whose rows are three columns, ``Stored``):
  8 KiB pages, an AUTOINCREMENT rowid, rows read by rowid (``n IN (...)``) found
  in the process's map (``_Located``): what ``FragmentStore.fetch`` does now, measured through
  ``FragmentStore.fetch`` itself, and the parts: the keys, the map's lookups, the statement.

Two orders of ids: ``storage`` (100 neighbours in the order they were stored: what a client that
pages through a listing asks for, once the store was filled by the same listing) and ``random``
(100 ids anywhere: the worst case). Each connection keeps 1 MiB of SQLite page cache (the
store's); ``--caches`` adds the index read at other cache sizes. Rounds take turns.

    python bench/store_read.py --keep /tmp/me-lib [--size 100000] [--pages 1500] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.library.catalog.fragment_store import FragmentStore, Stored, _rowid_sql, item_keys  # noqa: E402

COLUMNS = "id, epoch, digest, type, is_folder, run_time_ticks, body"  # format 3's (Stored's parts)
OLD_TABLE = ("CREATE TABLE fragments (shape INTEGER NOT NULL, key INTEGER NOT NULL, id TEXT NOT NULL, "
             "epoch INTEGER NOT NULL, digest BLOB, type TEXT NOT NULL, is_folder INTEGER NOT NULL, "
             "run_time_ticks INTEGER, body BLOB NOT NULL)")


def copy_layout(src: Path, dst: Path, shape: int, old: bool) -> None:
    """The main shape's rows of ``src`` in ``dst``: format 3's layout (``old``) or this build's
    (made by ``FragmentStore.open``), in ``src``'s storage order."""
    if old:
        conn = sqlite3.connect(dst, isolation_level=None)
        conn.execute("PRAGMA page_size=16384")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(OLD_TABLE)
        conn.execute("CREATE UNIQUE INDEX ux_fragments ON fragments (shape, key)")
    else:
        store = FragmentStore(dst)
        assert store.open()
        store.close()
        conn = sqlite3.connect(dst, isolation_level=None)
    conn.execute("ATTACH ? AS src", (str(src),))
    conn.execute("BEGIN")
    if old:  # (the parts this build packs in ``meta``, each a column again)
        rows = conn.execute("SELECT shape, key, id, body, meta FROM src.fragments WHERE shape = ? ORDER BY rowid",
                            (shape,)).fetchall()
        conn.executemany(f"INSERT INTO fragments (shape, key, {COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         [(sh, k, f.id, f.epoch, f.digest, f.type, f.is_folder, f.run_time_ticks, f.body)
                          for sh, k, *row in rows for f in (tuple.__new__(Stored, row),)])
    else:
        conn.execute("INSERT INTO fragments (shape, key, id, epoch, meta, body) SELECT shape, key, id, epoch, meta, "
                     "body FROM src.fragments WHERE shape = ? ORDER BY rowid", (shape,))
    conn.execute("COMMIT")
    conn.execute("DETACH src")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def connect(path: Path, cache_kib: int) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True, isolation_level=None)
    conn.execute(f"PRAGMA cache_size=-{cache_kib}")
    return conn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="the --keep DIR of bench/items_query.py")
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--caches", default="", help="more cache sizes (KiB) for format 3's index read")
    args = parser.parse_args()
    path = args.keep / str(args.size) / "cache" / "fragments.sqlite3"
    if not path.exists():
        raise SystemExit(f"no store at {path}: run bench/items_query.py --keep {args.keep} --store warm first")
    probe = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    shape = probe.execute("SELECT shape, count(*) FROM fragments GROUP BY shape ORDER BY 2 DESC").fetchone()[0]
    probe.close()
    with tempfile.TemporaryDirectory(prefix="store-read-") as tmp:
        old, new = Path(tmp) / "format3.sqlite3", Path(tmp) / "format4.sqlite3"
        copy_layout(path, old, shape, True)
        copy_layout(path, new, shape, False)
        conn = connect(new, 1024)
        ids = [r[0] for r in conn.execute("SELECT id FROM fragments ORDER BY n")]
        conn.close()
        print(f"store {path.stat().st_size / 2**20:.0f} MiB, {len(ids)} fragments of the main shape; copies: "
              f"format 3 {old.stat().st_size / 2**20:.0f} MiB, format 4 {new.stat().st_size / 2**20:.0f} MiB; "
              f"load average {os.getloadavg()[0]:.1f}")
        if len(ids) < 200:
            raise SystemExit("too few fragments stored")
        measure_all(args, old, new, shape, ids)


def measure_all(args: argparse.Namespace, old: Path, new: Path, shape: int, ids: list[str]) -> None:
    def pages(n: int, order: str, rnd: random.Random) -> Iterator[list[str]]:
        for _ in range(n):
            if order == "storage":
                start = rnd.randrange(0, len(ids) - 100)
                yield ids[start:start + 100]
            else:
                yield rnd.sample(ids, 100)

    old_sql = f"SELECT {COLUMNS} FROM fragments WHERE shape = ? AND key IN (" + ",".join("?" * 100) + ")"

    def format3(cache_kib: int) -> Callable[[list[str]], int]:
        conn = connect(old, cache_kib)
        return lambda page: len(conn.execute(old_sql, (shape, *item_keys(page))).fetchall())

    store = FragmentStore(new)  # (opened by hand: read-only use, no new start recorded in the copy)
    store._connect = lambda cache_kib=1024: connect(new, cache_kib)  # type: ignore[method-assign]
    store.enabled = True
    located_conn = connect(new, 1024)

    def format4_fetch(page: list[str]) -> int:
        return len(store.fetch(shape, page))

    def keys_only(page: list[str]) -> int:
        return len(item_keys(page))

    def map_only(page: list[str]) -> int:
        located = store._located[shape]
        return len(located.find(item_keys(page)))

    def statement_only(page: list[str]) -> int:  # (the rowids found beforehand: SQLite and the rows)
        located = store._located[shape]
        rowids = located.find(item_keys(page))
        t = time.process_time()
        n = len(located_conn.execute(_rowid_sql(100), (*rowids, shape)).fetchall())
        statement_only.outside += time.process_time() - t  # type: ignore[attr-defined]
        return n

    ways: list[tuple[str, Callable[[list[str]], int]]] = [("format 3, index, cache 1024 KiB", format3(1024))]
    ways += [(f"format 3, index, cache {c} KiB", format3(c)) for c in (int(x) for x in args.caches.split(",") if x)]
    ways += [("format 4, FragmentStore.fetch", format4_fetch), ("  its keys (item_keys)", keys_only),
             ("  its keys and the map's lookups", map_only)]
    results: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        for order in ("storage", "random"):
            for name, fn in ways + [("  its statement and rows (rowids given)", statement_only)]:
                rnd = random.Random(7 + round_)
                for page in pages(max(200, args.pages // 3), order, rnd):
                    fn(page)
                batch = list(pages(args.pages, order, rnd))
                statement_only.outside = 0.0  # type: ignore[attr-defined]
                t0 = time.process_time()
                for page in batch:
                    assert fn(page) == 100, name
                spent = time.process_time() - t0
                if fn is statement_only:
                    spent = statement_only.outside  # type: ignore[attr-defined]
                results.setdefault((name, order), []).append(spent * 1000 / args.pages)
    print(f"ms CPU per page of 100 fragments, best of {args.rounds} (ids in storage order / anywhere):")
    for name, _ in ways + [("  its statement and rows (rowids given)", statement_only)]:
        row = " / ".join(f"{min(results[(name, order)]):.3f}" for order in ("storage", "random"))
        print(f"  {name:<42} {row}")
    for order in ("storage", "random"):
        before, after = min(results[(ways[0][0], order)]), min(results[("format 4, FragmentStore.fetch", order)])
        print(f"  {order}: format 3 -> format 4 {before:.3f} -> {after:.3f} ms (x{before / after:.2f})")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
