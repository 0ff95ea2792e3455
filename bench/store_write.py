"""What keeping cold fragments costs (server/library/catalog/fragment_store.py), side by side with
another checkout (``--baseline DIR``), each run in its own process, the checkouts taking turns:

- ``writer``: the store's writer thread alone, batches of 100 fragments of ~2.3 KB with random ids
  (as a cold page's), on a store already holding ``--prefill`` of them: the writer's CPU
  (``FragmentStore.write_seconds``: its thread's, user and system) per 100 written;
- ``pages`` (with ``--library DIR``, a data folder of ``bench/items_query.py --keep``, e.g.
  /tmp/pages-lib/100000; its database is copied first): ``--pages`` fresh random pages of 100
  movies (the issue's Fields) through ``ItemService.query_reply_read`` with an empty store of its
  own, so the store grows to ``--pages`` x 100 fragments as in a first burst after a start: the
  process's CPU (all threads) and the writer's per page, and a hash of every reply's bytes (the
  same in both checkouts, or the line says so). ``--flush`` waits for the writer after each page
  (one batch a page, as under callgrind: no batch dropped).

Prints each run and the medians. Figures are CPU time: the writer's cost is partly the kernel's
(WAL frames written, checkpointed), which callgrind does not count.

    python bench/store_write.py [--prefill 50000] [--library /tmp/pages-lib/100000 --pages 400]
                                [--baseline /work/main] [--rounds 5] [--flush]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WRITER = r"""
import json, random, sys, tempfile, shutil
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from server.library.catalog.fragment_store import FragmentStore
prefill, batches = int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(3)
d = Path(tempfile.mkdtemp(prefix="store-write-"))
store = FragmentStore(d / "fragments.sqlite3")
store.open()
shape, epoch = store.shape(("bench",)), store.epoch(("bench", 1))
body = rnd.randbytes(2300)
def batch():
    return [(shape, "%032x" % rnd.getrandbits(128), epoch, rnd.randbytes(16), "Movie", 0, 72000000000, body)
            for _ in range(100)]
for _ in range(prefill // 100):
    store.put(batch())
    store.flush()
before = store.write_seconds
for _ in range(batches):
    store.put(batch())
    store.flush()
print(json.dumps({"writer ms/100": (store.write_seconds - before) * 1000 / batches}))
store.close()
shutil.rmtree(d, ignore_errors=True)
"""

PAGES = r"""
import hashlib, json, random, sys, tempfile, shutil, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from sqlalchemy.orm import Session
from server.db.database import Database, sqlite_url
from server.library.catalog import dto as D, items as I
from server.library.catalog.fragment_store import FragmentStore
from server.library.catalog.query import ItemQuery
db_path, parent, movies, npages, flush = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1"
db = Database(sqlite_url(db_path))
rnd = random.Random(7)
d = Path(tempfile.mkdtemp(prefix="store-write-pages-"))
store = FragmentStore(d / "fragments.sqlite3")
store.open()
service = I.ItemService(db, None, "s" * 32, store=store)
opts = D.DtoOptions(fields=frozenset(["PrimaryImageAspectRatio", "MediaSources", "Overview"]),
                    user_id="%032x" % rnd.getrandbits(128))
starts = rnd.sample(range(0, max(1, movies - 100), 100), min(npages + 2, movies // 100))
def page(s, start):
    q = ItemQuery(parent_id=parent, recursive=True, include_types=["Movie"], sort_by=["SortName"],
                  start_index=start, limit=100)
    return service.query_reply_read(q, opts, False)(s)
with Session(db.engine) as s:
    for start in starts[:2]:  # (the id list, compiled statements)
        page(s, start)
    store.flush()
    digest = hashlib.sha256()
    writer0, t0 = store.write_seconds, time.process_time()
    for start in starts[2:]:
        digest.update(page(s, start))
        if flush:
            store.flush()
    store.flush()
    whole = time.process_time() - t0
n = len(starts) - 2
print(json.dumps({"whole ms/page": whole * 1000 / n, "writer ms/page": (store.write_seconds - writer0) * 1000 / n,
                  "replies": digest.hexdigest()[:16], "fragments": store.count()}))
store.close()
shutil.rmtree(d, ignore_errors=True)
"""


def child(code: str, root: Path, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, str(root), *args], capture_output=True, text=True, cwd=root,
                         env={**os.environ, "PYTHONPATH": str(root)})
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    found: dict = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefill", type=int, default=50_000)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--library", type=Path, default=None)
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--flush", action="store_true")
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    a = parser.parse_args()
    runs = [("this", ROOT)] + ([("baseline", a.baseline.resolve())] if a.baseline else [])
    cases: list[tuple[str, str, tuple[str, ...]]] = [("writer", WRITER, (str(a.prefill), str(a.batches)))]
    data = None
    if a.library is not None:
        info = json.loads((a.library / "bench-info.json").read_text())
        data = Path(tempfile.mkdtemp(prefix="store-write-lib-"))
        for f in (a.library / "data").iterdir():
            if f.name.startswith("reelroom.db"):
                shutil.copy2(f, data / f.name)
        cases.append(("pages", PAGES, (str(data / "reelroom.db"), info["movies"], str(info["movie_count"]),
                                       str(a.pages), "1" if a.flush else "0")))
    print(f"load average {os.getloadavg()[0]:.1f}; writer: {a.batches} batches of 100 after {a.prefill} stored"
          + (f"; pages: {a.pages} cold pages of 100 movies" if data else ""))
    try:
        for name, code, args in cases:
            got: dict[str, list[dict]] = {}
            for turn in range(a.rounds):
                for label, root in (runs if turn % 2 == 0 else runs[::-1]):
                    result = child(code, root, *args)
                    got.setdefault(label, []).append(result)
                    print(f"  {name:<6} {label:<8} " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                                for k, v in result.items()))
            for key in got["this"][0]:
                if not isinstance(got["this"][0][key], float):
                    same = {str(r[key]) for rs in got.values() for r in rs}
                    print(f"  {name:<6} {key}: " + ("the same in every run" if len(same) == 1 else f"DIFFER: {same}"))
                    continue
                line = f"  {name:<6} median {key:<16}"
                for label in got:
                    line += f" {label} {statistics.median(r[key] for r in got[label]):7.3f}"
                print(line)
    finally:
        if data is not None:
            shutil.rmtree(data, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
