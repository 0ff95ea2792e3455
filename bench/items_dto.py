"""CPU of the DTO half of an Items page: building the page's BaseItemDtos and encoding the reply,
measured in-process (``time.process_time``, so a busy machine inflates it less than wall time).

The library is bench/items_query.py's (movies with streams, images, genres; shows). The page
rows are read once per page (the SQL is not measured); then, per checkout (``--baseline DIR``
runs the other checkout's code in its own process on the same database):

- *dict*: ``build_dtos`` + encoding the BaseItemDtoQueryResult (PascalCase; camelCase as the
  handler does it: ``casing.encode_json`` with ``camel_case_requested`` set);
- *fragments, cold*: ``build_fragments`` with an empty cache (every item built and encoded);
- *fragments, warm*: the same pages again (every item from its fragment; UserData spliced).

Figures are ms of CPU per 100-item page, for the issue's Fields and for jellyfin-web's. Then the
*miss path* of the issue's page, part by part: its rows read as the server reads them (the page's
ids from the cached id list, then the rows), the batched lookups, the DTOs built, encoded, and
the UserData made and encoded (fresh random pages, so SQLite reads as a server browsing does).
Last, a cold page as the server answers it with its fragment store (an empty store of its own):
the whole page's CPU and its parts (the page's read with the store's, the rows, the lookups, the
DTOs built and encoded, the digests, the store's writer thread).

    python bench/items_dto.py [--size 20000] [--pages 30] [--baseline DIR] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, random, sys, time
sys.path.insert(0, sys.argv[1])
from sqlalchemy.orm import Session
from server.db.database import Database, sqlite_url
from server.library.catalog.query import ItemQuery, run_query
from server.library.catalog import dto as D
from server.wire import models as w
from server.wire import casing
args = json.loads(sys.argv[2])
db = Database(sqlite_url(args["db"]))
rnd = random.Random(5)
out = {}
with Session(db.engine) as s:
    pages = []
    for _ in range(args["pages"]):
        start = rnd.randrange(0, max(1, args["movies"] - 100))
        q = ItemQuery(parent_id=args["parent"], recursive=True, include_types=["Movie"], sort_by=["SortName"],
                      start_index=start, limit=100)
        rows, total = run_query(s, q)
        pages.append((rows, total, start))
    for label, fields, extra in (("issue", ["PrimaryImageAspectRatio", "MediaSources", "Overview"], {}),
                                 ("web", ["PrimaryImageAspectRatio", "MediaSourceCount"],
                                  {"image_type_limit": 1,
                                   "enable_image_types": frozenset(("Primary", "Backdrop", "Banner", "Thumb"))})):
        opts = D.DtoOptions(fields=frozenset(fields), user_id=args["user"], **extra)
        for camel in (False, True):
            token = casing.camel_case_requested.set(camel)
            t0 = time.process_time()
            for rows, total, start in pages:
                casing.encode_json(w.BaseItemDtoQueryResult(Items=D.build_dtos(s, rows, opts, "s" * 32),
                                                            TotalRecordCount=total, StartIndex=start))
            out[f"{label} {'camel ' if camel else 'pascal'} dict"] = (time.process_time() - t0) * 1000 / len(pages)
            casing.camel_case_requested.reset(token)
            if hasattr(D, "build_fragments"):
                from server.library.catalog.fragments import FragmentCache, splice
                cache = FragmentCache()
                for phase in ("cold", "warm"):
                    t0 = time.process_time()
                    for rows, total, start in pages:
                        shell = casing.encode_wire(w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=total,
                                                                            StartIndex=start), camel)
                        splice(shell, D.build_fragments(s, rows, opts, "s" * 32, cache, camel))
                    out[f"{label} {'camel ' if camel else 'pascal'} fragments {phase}"] = \
                        (time.process_time() - t0) * 1000 / len(pages)
                out[f"{label} {'camel ' if camel else 'pascal'} cache MB"] = cache.size / 2**20
    # the batched lookups alone (the same for both paths): what is left when every item is a hit
    opts = D.DtoOptions(fields=frozenset(["PrimaryImageAspectRatio", "MediaSources", "Overview"]), user_id=args["user"])
    if hasattr(D, "_gather"):
        t0 = time.process_time()
        for rows, total, start in pages:
            D._gather(s, rows, opts)
        out["issue batched queries"] = (time.process_time() - t0) * 1000 / len(pages)
    # the miss path of a page, part by part (what an Items page anywhere in a big library costs
    # when its items are not in the fragment cache): its rows as the server reads them (page ids
    # from the cached id list, then the rows), the batched lookups, the DTOs built, encoded, the
    # UserData made and encoded
    if hasattr(D, "_gather") and hasattr(D, "_build_one"):
        from server.library.catalog.query import CountCache
        counts = CountCache()
        generations = getattr(db, "generations", 0)
        starts = [rnd.randrange(0, max(1, args["movies"] - 100)) for _ in range(args["pages"] + 1)]

        def read(start):
            q = ItemQuery(parent_id=args["parent"], recursive=True, include_types=["Movie"], sort_by=["SortName"],
                          start_index=start, limit=100)
            return run_query(s, q, counts, generations)[0]

        read(starts.pop())  # (the id list read once, as the server does for the first deep page)
        t0 = time.process_time()
        fresh = [read(start) for start in starts]
        split = {"rows": time.process_time() - t0}
        t0 = time.process_time()
        batches = [D._gather(s, rows, opts) for rows in fresh]
        split["batched lookups"] = time.process_time() - t0
        t0 = time.process_time()
        built = [[D._build_one(r, opts, "s" * 32, None, b.counts.get(r.id), b.cast, b.versions, b.extras, b.parents,
                               b.ctypes, False) for r in rows] for rows, b in zip(fresh, batches)]
        split["DTOs built"] = time.process_time() - t0
        t0 = time.process_time()
        for dtos in built:
            for dto in dtos:
                casing.encode_wire(dto, False)
        split["DTOs encoded"] = time.process_time() - t0
        t0 = time.process_time()
        for rows, b in zip(fresh, batches):
            for r in rows:
                casing.encode_wire(D._user_data_dto(r, b.uds.get(r.id), b.counts.get(r.id)), False)
        split["UserData made+encoded"] = time.process_time() - t0
        for part, seconds in split.items():
            out[f"miss path: {part}"] = seconds * 1000 / len(fresh)
# a cold page as the server answers it with its fragment store (an empty store file of this run's):
# ItemService.query_reply_read (the page's ids, the store's read, the missing rows read), then
# build_fragments (the batched lookups, the DTOs built and encoded, the digests of what each was made
# from, UserData) and the store's writer thread keeping the page's fragments. Fresh random pages,
# none asked before; each part's CPU (its thread's) by wrapping the function, the whole by the
# process's (both threads)
try:
    import tempfile as _tempfile
    from pathlib import Path as _Path
    from server.library.catalog import fragment_store as FS, items as I, query as Q
    from server.library.catalog.fragment_store import FragmentStore
except ImportError:
    FragmentStore = None
if FragmentStore is not None and hasattr(I.ItemService, "query_reply_read"):
    tt = time.thread_time
    parts = {}

    def timed(owner, name, label):
        fn = getattr(owner, name)

        def wrapper(*a, **k):
            t0 = tt()
            try:
                return fn(*a, **k)
            finally:
                parts[label] = parts.get(label, 0.0) + tt() - t0
        setattr(owner, name, wrapper)

    store_dir = _Path(_tempfile.mkdtemp(prefix="items-dto-store-"))
    store = FragmentStore(store_dir / "fragments.sqlite3")
    store.open()
    service = I.ItemService(db, None, "s" * 32, store=store)
    for owner, name, label in ((I, "run_query_with", "ids, store read, rows"), (Q, "get_rows", "  rows read (get_rows)"),
                               (D, "_gather", "batched lookups"), (D, "_build_one", "DTOs built"),
                               (D, "encode_wire", "DTOs+UserData encoded"), (D, "_digest", "digests (store)"),
                               (I, "build_fragments", "build_fragments (all)")):
        if hasattr(owner, name):
            timed(owner, name, label)
    timed(store, "read", "  store read")
    store_starts = rnd.sample(range(0, max(1, args["movies"] - 100), 100), min(args["pages"] + 2, args["movies"] // 100))
    opts = D.DtoOptions(fields=frozenset(["PrimaryImageAspectRatio", "MediaSources", "Overview"]), user_id=args["user"])

    def cold_page(start):
        q = ItemQuery(parent_id=args["parent"], recursive=True, include_types=["Movie"], sort_by=["SortName"],
                      start_index=start, limit=100)
        return service.query_reply_read(q, opts, False)(s)

    with Session(db.engine) as s:
        for start in store_starts[:2]:  # (the id list, the store's map, compiled statements)
            cold_page(start)
        store.flush()
        parts.clear()
        written, writer0 = store.written, store.write_seconds
        timed_starts = store_starts[2:]
        t0 = time.process_time()
        for start in timed_starts:
            cold_page(start)
        store.flush()
        whole = time.process_time() - t0
    n = len(timed_starts)
    out["store, cold page: whole (all threads)"] = whole * 1000 / n
    for label, seconds in parts.items():
        out[f"store, cold page: {label}"] = seconds * 1000 / n
    out["store, cold page: the store's writer"] = (store.write_seconds - writer0) * 1000 / n
    store.close()
    import shutil as _shutil
    _shutil.rmtree(store_dir, ignore_errors=True)
print(json.dumps(out))
"""


def run(root: Path, args: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), json.dumps(args)], capture_output=True, text=True,
                         cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=1,
                        help="run each checkout this many times, taking turns (B T, T B, ...); the lowest figure of each")
    a = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT))
    import items_query  # noqa: E402

    from server.paths import ServerPaths  # noqa: E402

    data = Path(tempfile.mkdtemp(prefix="reelroom-items-dto-"))
    try:
        t0 = time.perf_counter()
        info = items_query.build(data, a.size)
        print(f"{info['items']} items (built in {time.perf_counter() - t0:.0f} s), {a.pages} random pages of 100 "
              f"movies, load average {os.getloadavg()[0]:.1f}; ms of CPU per page (process_time)")
        args = {"db": str(ServerPaths(data).database_file), "parent": info["movies"], "movies": info["movie_count"],
                "pages": a.pages, "user": f"{random.Random(1).getrandbits(128):032x}"}
        runs = ([("baseline", a.baseline.resolve())] if a.baseline else []) + [("this", ROOT)]
        results: dict[str, dict] = {}
        for turn in range(a.rounds):  # (the trees take turns, first one then the other: the lowest figure kept)
            for label, root in (runs if turn % 2 == 0 else runs[::-1]):
                got = run(root, args)
                kept = results.setdefault(label, got)
                for key, value in got.items():
                    kept[key] = min(kept.get(key, value), value)
        keys = list(results["this"])
        for key in keys:
            line = f"  {key:<34}"
            for label in results:
                value = results[label].get(key)
                line += f" {label} {value:7.2f}" if value is not None else f" {label}     -  "
            base = results.get("baseline", {}).get(key.replace("fragments cold", "dict").replace("fragments warm",
                                                                                                   "dict"))
            if base and key.startswith(("miss path", "store,")) and results["this"].get(key):
                line += f"  (x{base / results['this'][key]:.2f} less than the baseline)"
            elif base and "MB" not in key and "queries" not in key:
                line += f"  (x{base / results['this'][key]:.1f} less than the baseline's dict path)"
            print(line)
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
