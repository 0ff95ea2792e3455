"""The read side of a random Items page, in-process: ``ItemService.query_reply`` with the fragment
store warm, and the first visits after a restart, against a baseline checkout side by side.

On a library kept by bench/items_query.py (``--keep DIR``; pass a copy: the server's start writes
its data folder), a child process per checkout opens a ``ServerContext`` on DIR/<size> (readers
off, no HTTP), deletes the fragment store and fills it with a pass over every SortName page of the
movies, then prints the process CPU per page (``time.process_time``:
the event loop, the reader thread and the store's writer) of

- ``warm``: random pages anywhere (limit 100, Fields=PrimaryImageAspectRatio,MediaSources,Overview,
  the user's data), every fragment of the current epoch, for each sortBy (SortName, Random);
- ``restart``: the context closed and opened again on the same folder (a clean restart), then
  ``--pages`` random pages stored before it (their first visit), then the same pages again.

``--profile SORT`` prints a cProfile of the warm pages of that sort (this checkout only).
``--split`` (both checkouts) runs the warm pages of each sort once more with the read inline on the
event loop's thread and prints the thread's CPU per page part by part: the page's ids (the cached
id list and the store's per-page loop, less the store's read), the store's read of the fragments
(``FragmentStore.fetch``), the viewer's user data (``dto.user_data_rows``), the splice (the rest of
``rows_reply``: UserData put into the fragments, the reply joined), the read's session, the read in
all, what a page does around the read (the viewer, the query scoped, the options, the epoch and
the shape) and the page in all.

    python bench/items_read.py --keep /tmp/me-lib [--size 100000] [--pages 300] [--sorts SortName,Random]
                               [--baseline DIR] [--profile SortName] [--split]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIELDS = "PrimaryImageAspectRatio,MediaSources,Overview"

CHILD = r"""
import asyncio, cProfile, json, pstats, random, sys, time
from pathlib import Path

data, info, sorts, pages, profile, fields = (Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3].split(","),
                                            int(sys.argv[4]), sys.argv[5], sys.argv[6].split(","))
split = sys.argv[7] == "1"
skip_restart = sys.argv[8] == "1"


def split_parts(ctx):
    # the parts of a page's read wrapped with thread-CPU counters (ms, summed): the sums, and a
    # function undoing the wrapping
    from server.library.catalog import dto, items
    from server.library.catalog.fragment_store import FragmentStore

    sums = {}
    undo = []

    def wrap(owner, name, label):
        original = getattr(owner, name, None)
        if original is None:
            return

        def timed(*a, **k):
            t0 = time.thread_time()
            try:
                return original(*a, **k)
            finally:
                sums[label] = sums.get(label, 0.0) + (time.thread_time() - t0) * 1000

        setattr(owner, name, timed)
        undo.append(lambda: setattr(owner, name, original))

    wrap(FragmentStore, "fetch", "store")
    wrap(items, "run_query_with", "ids+store")
    wrap(dto, "user_data_rows", "user data")
    wrap(type(ctx.items), "rows_reply", "reply")
    wrap(ctx.db, "_run_read", "read")
    wrap(ctx.db, "_run_read_lean", "read")  # (a checkout whose GetItems reads without a session first)

    def done():
        for u in reversed(undo):
            u()
    return sums, done


def split_report(sums, n):
    ms = {k: v / n for k, v in sums.items()}
    parts = {
        "page ids": ms.get("ids+store", 0) - ms.get("store", 0),
        "store read": ms.get("store", 0),
        "user data": ms.get("user data", 0),
        "splice": ms.get("reply", 0) - ms.get("user data", 0),
        "session": ms.get("read", 0) - ms.get("ids+store", 0) - ms.get("reply", 0),
        "read": ms.get("read", 0),
        "around the read": ms.get("all", 0) - ms.get("read", 0),
        "page": ms.get("all", 0),
    }
    return {k: round(v, 4) for k, v in parts.items()}


async def open_ctx():
    from server.context import ServerContext, ServerOptions

    ctx = ServerContext(ServerOptions(data_dir=data, port=0, host="127.0.0.1", enable_lan=False,
                                      enable_zeroconf=False, host_web=False, readers=0))
    await ctx.initialize()
    for _ in range(600):  # the start's tasks (they would count in process_time)
        if all(t.State != "Running" for t in ctx.tasks.infos()):
            break
        await asyncio.sleep(0.5)
    return ctx


async def main():
    from sqlalchemy import text
    for p in (data / "cache").glob("fragments.sqlite3*"):  # a store of this checkout's own, filled below
        p.unlink()
    from server.library.catalog.query import ItemQuery

    ctx = await open_ctx()
    with ctx.db.engine.connect() as c:
        user_id = c.execute(text("SELECT id FROM users ORDER BY id LIMIT 1")).scalar()

    async def page(ctx, start, sort):
        viewer = await ctx.items.viewer(None, user_id)
        q = ItemQuery(parent_id=info["movies"], recursive=True, include_types=["Movie"], sort_by=[sort],
                      sort_order=["Ascending"], start_index=start, limit=100)
        ctx.items.scoped(q, viewer)
        return await ctx.items.query_reply(q, ctx.items.options(viewer, fields), False)

    async def run(ctx, starts, sort):
        t0, w0 = time.process_time(), time.perf_counter()
        for s in starts:
            await page(ctx, s, sort)
        return (time.process_time() - t0) * 1000 / len(starts), (time.perf_counter() - w0) * 1000 / len(starts)

    n = info["movie_count"]
    t0 = time.perf_counter()
    await run(ctx, list(range(0, n, 100)), "SortName")  # fills the store
    ctx.items.store.flush()
    print(f"  fill: {n // 100} pages in {time.perf_counter() - t0:.1f} s", flush=True)
    rnd = random.Random(11)
    out = {}
    for sort in sorts:
        starts = [rnd.randrange(0, n - 100) for _ in range(pages)]
        await run(ctx, starts[:50], sort)  # warm-up (the Random sort's id list, SQLite's cache)
        if profile == sort:  # (the read inline, so the profile sees it)
            db_read = ctx.db.read
            async def inline(fn, *a):
                return ctx.db.read_sync(fn, *a)
            ctx.db.read = inline
            prof = cProfile.Profile()
            prof.enable()
        cpu, wall = await run(ctx, starts, sort)
        if profile == sort:
            prof.disable()
            ctx.db.read = db_read
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        out["warm " + sort] = (cpu, wall)
        if split:
            db_read, db_lean = ctx.db.read, getattr(ctx.db, "read_lean", None)
            async def inline(fn, *a):
                return ctx.db._run_read(fn, a)
            async def inline_lean(fn, *a):
                return ctx.db._run_read_lean(fn, a)
            ctx.db.read = inline
            if db_lean is not None:  # (GetItems reads through read_lean: inline too, so "page" holds it)
                ctx.db.read_lean = inline_lean
            sums, done = split_parts(ctx)
            t0 = time.thread_time()
            await run(ctx, starts, sort)
            sums["all"] = (time.thread_time() - t0) * 1000
            done()
            ctx.db.read = db_read
            if db_lean is not None:
                ctx.db.read_lean = db_lean
            out["split " + sort] = split_report(sums, len(starts))
    if skip_restart:
        await ctx.close()
        print("RESULT " + json.dumps(out), flush=True)
        return
    # a clean restart, then pages stored before it (first visits), then the same again
    stored = [100 * rnd.randrange(0, n // 100) for _ in range(pages)]
    await ctx.close()
    ctx = await open_ctx()
    out["restart: first visits"] = await run(ctx, stored, "SortName")
    ctx.items.store.flush()
    out["restart: again"] = await run(ctx, stored, "SortName")
    await ctx.close()
    print("RESULT " + json.dumps(out), flush=True)


asyncio.run(main())
"""


def run_child(root: Path, data: Path, info: dict, args: argparse.Namespace, profile: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root), "REELROOM_READERS": "0"}
    small = {"movies": info["movies"], "movie_count": info["movie_count"]}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(data), json.dumps(small), args.sorts, str(args.pages),
                           profile, FIELDS, "1" if args.split else "0",
                           "1" if args.skip_restart else "0"], cwd=root, env=env, capture_output=True, text=True)
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[7:])
        else:
            print(line)
    if result is None:
        print(proc.stderr[-4000:])
        raise SystemExit(f"the child of {root} failed")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="a copy of bench/items_query.py's --keep DIR")
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--sorts", default="SortName,Random")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout, measured in the same run")
    parser.add_argument("--profile", default="", help="cProfile the warm pages of this sortBy (this checkout)")
    parser.add_argument("--split", action="store_true", help="CPU per page part by part (both checkouts)")
    parser.add_argument("--skip-restart", action="store_true", help="no clean restart and first visits")
    args = parser.parse_args()
    data = args.keep / str(args.size)
    info = json.loads((data / "bench-info.json").read_text())
    runs = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
    results = {}
    for label, root in runs:
        print(f"{label} ({root}), load average {os.getloadavg()[0]:.1f}", flush=True)
        results[label] = run_child(root, data, info, args, args.profile if label == "this" else "")
        for name, value in results[label].items():
            if name.startswith("split "):
                print(f"  {name:<24} thread CPU ms/page: " + ", ".join(f"{k} {v:.3f}" for k, v in value.items()))
                continue
            cpu, wall = value
            print(f"  {name:<24} {cpu:.2f} ms CPU/page, {wall:.2f} ms wall/page", flush=True)
    if "baseline" in results:
        print(f"ratios (baseline / this), load average {os.getloadavg()[0]:.1f}")
        for name, value in results["this"].items():
            base = results["baseline"].get(name)
            if not base:
                continue
            if name.startswith("split "):
                print(f"  {name:<24} " + ", ".join(f"{k} {base.get(k, 0):.3f} -> {v:.3f}" for k, v in value.items()))
                continue
            print(f"  {name:<24} CPU/page {base[0]:.2f} -> {value[0]:.2f} ms (x{base[0] / value[0]:.2f})")


if __name__ == "__main__":
    main()
