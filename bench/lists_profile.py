"""In-process CPU (and optionally a cProfile) of the related lists and search, without HTTP:
Similar (album, movie), InstantMix (song, album, artist), Search/Hints and a playlist's page,
each through its service (``ctx.browse.related``, ``ctx.items.search``, ``ctx.browse.playlists``)
on a server context opened over a built library, so what a request costs in the server's own
code is seen apart from HTTP.

    python bench/lists_profile.py DATA [--rounds 60] [--only NAME,...] [--profile NAME] [--cold] [--store-all]
                                  [--parental RATING]

``--fill``: one mix is asked and the mix fill's pass (server/library/browse/mix_fill.py) waited
for, with its time, its thread's CPU and the store writer's; ``--fill-again`` then writes to the
library (a track's name) and waits for the pass that checks every fragment again.

``--store-all``: every track's fragment of InstantMix's shape is stored first (with its time), so
the mixes come from the fragment store (``RelatedService.instant_mix_reply``); without it a mix
over 95k tracks finds few of its tracks stored.

``--parental RATING``: the viewer has parental rules (MaxParentalRating RATING; 12 hides every
movie of the bench library), as ``bench/lists.py --parental``; the by-name lists (Persons,
Genres, MusicGenres, Years, Artists) and Items/Filters are measured too, through
``ItemService.names`` and ``filter_values``. ``--partly-hidden`` (with ``--parental 13``):
every third movie and track of the copy is rated R, so those lists take their partly hidden
paths; mixes are seeded by tracks the viewer may see.

``--cold``: before every call (untimed) the user marks a track favourite or not, so what is kept
per write generation is computed again (what a list costs after watching something).

Also Seasons, Episodes, Next Up and Latest through their reply methods (no whole-reply cache: what
a first request, or one after a play-state write, costs).

``DATA``: a data folder of ``bench/lists.py --keep DATA`` (100k items, a signed-in user with a
5,000-entry playlist). It is copied first (the server writes to it). Prints CPU ms per call
(median and p99 of ``time.process_time``, all threads; background tasks are left to finish
first) and, with ``--profile NAME``, the top of a cProfile of that case (the reader thread's
work runs in the calling thread: ``Database.read`` and ``read_lean`` are patched to run inline).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


async def run(data: Path, rounds: int, only: list[str], profile: str | None, cold: bool = False,
              store_all: bool = False, parental: int | None = None, fill: bool = False,
              fill_again: bool = False) -> None:
    from sqlalchemy import text

    from server.context import ServerContext, ServerOptions
    from server.library.browse.tv import NextUpQuery
    from server.library.catalog.by_name import NameQuery
    from server.library.catalog.query import ItemQuery, ParentalRules, get_rows
    from server.library.catalog.search import SearchRequest

    ctx = ServerContext(ServerOptions(data_dir=data, port=0, host="127.0.0.1", enable_lan=False,
                                      enable_zeroconf=False, host_web=False, readers=0))
    await ctx.initialize()
    db = ctx.db

    async def inline_read(fn, *args):  # type: ignore[no-untyped-def]
        return db.read_sync(fn, *args)

    async def inline_read_lean(fn, *args):  # type: ignore[no-untyped-def]
        return db._run_read_lean(fn, args)

    def q(sql: str) -> list:
        with db.engine.connect() as c:
            return list(c.execute(text(sql)).all())

    user_id = q("SELECT id FROM users LIMIT 1")[0][0]
    # (--partly-hidden rates a third of the tracks R: a mix's seed is one the viewer may see)
    tracks = [r[0] for r in q("SELECT id FROM items WHERE type='Audio' AND owner_id IS NULL "
                              "AND coalesce(official_rating, '') <> 'R' LIMIT 20000")]
    found = q("SELECT id FROM playlists LIMIT 1")
    pid = found[0][0] if found else await ctx.browse.playlists.create(
        user_id, "Big", random.Random(3).sample(tracks, min(5000, len(tracks))), "Audio", [], None)
    albums = [r[0] for r in q("SELECT id FROM items WHERE type='MusicAlbum' LIMIT 2000")]
    movies = [r[0] for r in q("SELECT id FROM items WHERE type='Movie' AND owner_id IS NULL LIMIT 2000")]
    artists = [r[0] for r in q("SELECT id FROM items WHERE type='MusicArtist' LIMIT 300")]
    series = [r[0] for r in q("SELECT id FROM items WHERE type='Series' LIMIT 1000")]
    libraries = {r[1]: r[0] for r in q("SELECT id, name FROM items WHERE type='CollectionFolder'")}
    # let start-up tasks (the offline artwork run) finish: process_time counts every thread
    await asyncio.sleep(4)  # the artwork run's debounce after the playlist
    for _ in range(600):
        if all(t.State != "Running" for t in ctx.tasks.infos()):
            break
        await asyncio.sleep(1)
    await asyncio.sleep(3)
    viewer = await ctx.items.viewer(None, user_id)
    if parental is not None:  # --parental: the same user with a MaxParentalRating
        rules = ParentalRules(max_rating=parental, country=viewer.country)

        class Restricted(type(viewer)):  # type: ignore[misc]
            @property
            def parental(self) -> ParentalRules:
                return rules

        viewer = Restricted(viewer.user, viewer.country)
    rnd = random.Random(5)
    marks_rows = await db.read(lambda s: get_rows(s, tracks[5000:5050]))
    marks = list(marks_rows.values())
    favourite: dict[str, bool] = {}

    async def write() -> None:
        """The user marks a track favourite, or no longer (user data only)."""
        row = rnd.choice(marks)
        on = not favourite.get(row.id, False)
        favourite[row.id] = on
        await ctx.items.update_user_data(user_id, row, lambda d: setattr(d, "is_favorite", on))

    terms = ["star", "night", "track 12", "artist 001", "blue", "album 7"]

    def opts(fields: str, **kw):  # type: ignore[no-untyped-def]
        return ctx.items.options(viewer, [f for f in fields.split(",") if f], **kw)

    related, playlists, tv = ctx.browse.related, ctx.browse.playlists, ctx.browse.tv
    if store_all and ctx.items.store is not None:  # --store-all: every track's mix fragment stored first
        every = [r[0] for r in q("SELECT id FROM items WHERE type='Audio' AND owner_id IS NULL")]
        mix_opts = opts("PrimaryImageAspectRatio")
        t0, c0 = time.monotonic(), time.process_time()
        for start in range(0, len(every), 500):
            chunk = every[start:start + 500]
            use = ctx.items.store_use(mix_opts, False)

            def put(s, chunk=chunk, use=use):  # type: ignore[no-untyped-def]
                rows = get_rows(s, chunk)
                return ctx.items.item_fragments(s, [rows[i] for i in chunk if i in rows], mix_opts, False, use)

            await db.read(put)
            ctx.items.store.flush()
        print(f"    (stored {len(every)} tracks' fragments in {time.monotonic() - t0:.1f} s, "
              f"{time.process_time() - c0:.1f} s CPU)", flush=True)

    if fill and ctx.items.store is not None:  # --fill: the mix fill's passes (mix_fill.py), timed
        filler = related.mix_fill

        async def settle(label: str) -> None:
            passes, built, t0 = filler.passes, filler.built, time.monotonic()
            c0, w0 = filler.cpu, ctx.items.store.write_seconds
            while filler.passes == passes and time.monotonic() - t0 < 900:
                await asyncio.sleep(0.2)
            ctx.items.store.flush()
            print(f"    (mix fill {label}: {time.monotonic() - t0:.1f} s, fill thread {filler.cpu - c0:.1f} s "
                  f"CPU, store writer {ctx.items.store.write_seconds - w0:.1f} s, {filler.built - built} tracks "
                  f"read; store {ctx.items.store.used_bytes() / 2 ** 20:.0f} MiB)", flush=True)

        await related.instant_mix_reply(viewer, opts("PrimaryImageAspectRatio"), 200, False, item_id=tracks[0])
        await settle("first pass")
        if fill_again:  # a library write (a track's name): every fragment is checked again
            row = marks[0]
            await db.write(lambda s: s.execute(text("UPDATE items SET name = name || ' ' WHERE id = :i"),
                                               {"i": row.id}))
            await related.instant_mix_reply(viewer, opts("PrimaryImageAspectRatio"), 200, False, item_id=tracks[0])
            await settle("after a library write")

    def latest(parent: str):  # type: ignore[no-untyped-def]
        # as GetLatestMedia asks it: the library kind's types, played items hidden
        types = {"Music": ["Audio"], "Movies": ["Movie"], "Shows": ["Episode"]}[parent]
        query = ctx.items.scoped(ItemQuery(parent_id=libraries[parent], recursive=True, include_types=types,
                                           is_played=False), viewer)
        return ctx.items.latest_reply(query, 16, True, opts("PrimaryImageAspectRatio,Path", image_type_limit=1),
                                      False)

    def names(kind: str, parent: str | None = None, **kw):  # type: ignore[no-untyped-def]
        scope = ItemQuery(recursive=True, parent_id=libraries[parent] if parent else None,
                          include_types=["Movie"] if parent == "Movies" else [])
        return ctx.items.names(NameQuery(kind=kind, scope=ctx.items.scoped(scope, viewer), **kw),
                               opts("PrimaryImageAspectRatio,ItemCounts", image_type_limit=1))

    cases = {
        "Persons": lambda: names("Person", person_types=["Actor"], limit=100),
        "Genres (movies)": lambda: names("Genre", "Movies"),
        "MusicGenres": lambda: names("MusicGenre", "Music"),
        "Years (movies)": lambda: names("Year", "Movies", descending=True),
        "Artists (first 100)": lambda: names("MusicArtist", "Music", limit=100),
        "Artists (random page)": lambda: names("MusicArtist", "Music", limit=100,
                                               start_index=rnd.randrange(0, len(artists) * 6) // 100 * 100),
        # (GET /Items/Filters as jellyfin-web asks it in a library: its parent, recursive)
        "Items/Filters (movies)": lambda: ctx.items.filter_values(
            ItemQuery(parent_id=libraries["Movies"], recursive=True, include_types=["Movie"]), viewer),
        "Items/Filters (music)": lambda: ctx.items.filter_values(
            ItemQuery(parent_id=libraries["Music"], recursive=True, include_types=["Audio"]), viewer),
        "Shows/{id}/Seasons": lambda: tv.seasons_reply(
            rnd.choice(series), viewer, opts("ItemCounts,PrimaryImageAspectRatio,CanDelete,MediaSourceCount"), False),
        "Shows/{id}/Episodes (all)": lambda: tv.episodes_reply(
            rnd.choice(series), viewer, opts("PrimaryImageAspectRatio,MediaSourceCount"), False),
        "NextUp (24)": lambda: tv.next_up_reply(
            viewer, NextUpQuery(limit=24, enable_total_record_count=False),
            opts("PrimaryImageAspectRatio,DateCreated,Path,MediaSourceCount", image_type_limit=1), False),
        "Latest (music)": lambda: latest("Music"),
        "Latest (movies)": lambda: latest("Movies"),
        "Latest (shows)": lambda: latest("Shows"),
        "Search/Hints": lambda: ctx.items.search(
            SearchRequest(term=rnd.choice(terms), scope=ctx.items.scoped(ItemQuery(), viewer), limit=24),
            ctx.items.options(viewer, enable_user_data=False)),
        "Playlists/{id}/Items (100)": lambda: playlists.items(
            pid, user_id, opts("PrimaryImageAspectRatio", image_type_limit=1), rnd.randrange(0, 4900), 100,
            viewer.allowed_library_ids, viewer.parental),
        # (what GET /Playlists/{id}/Items answers: the page from fragments, PlaylistItemId spliced in)
        "Playlists/{id}/Items reply (100)": lambda: playlists.items_reply(
            pid, user_id, opts("PrimaryImageAspectRatio", image_type_limit=1), rnd.randrange(0, 4900), 100,
            viewer.allowed_library_ids, viewer.parental),
        "Items/{movie}/Similar (12)": lambda: related.similar(
            rnd.choice(movies), viewer, opts("PrimaryImageAspectRatio,CanDelete"), limit=12, exclude_artist_ids=[]),
        "Items/{album}/Similar (12)": lambda: related.similar(
            rnd.choice(albums), viewer, opts("PrimaryImageAspectRatio,CanDelete"), limit=12, exclude_artist_ids=[]),
        "InstantMix song (200)": lambda: related.instant_mix_reply(
            viewer, opts("PrimaryImageAspectRatio"), 200, False, item_id=rnd.choice(tracks)),
        "InstantMix album (200)": lambda: related.instant_mix_reply(
            viewer, opts("PrimaryImageAspectRatio"), 200, False, item_id=rnd.choice(albums)),
        "InstantMix artist (200)": lambda: related.instant_mix_reply(
            viewer, opts("PrimaryImageAspectRatio"), 200, False, item_id=rnd.choice(artists)),
        # (the DTO path, the reply's reference: instant_mix, then encoded as the HTTP layer does)
        "InstantMix DTOs song (200)": lambda: related.instant_mix(
            viewer, opts("PrimaryImageAspectRatio"), 200, item_id=rnd.choice(tracks)),
    }
    print(f"    {'case':<30} {'cpu p50':>9} {'cpu p99':>9}")
    for name, make in cases.items():
        if only and not any(name.startswith(o) for o in only):
            continue
        for _ in range(3):
            await make()
        cpu = []
        store = ctx.items.store
        written = (store.write_seconds, store.written) if store is not None else (0.0, 0)
        for _ in range(rounds):
            if cold:  # a play-state write first (untimed): what a list costs after watching something
                await write()
                await asyncio.sleep(0.01)  # the write's event handlers
            t0 = time.process_time()
            await make()
            cpu.append((time.process_time() - t0) * 1000)
        cpu.sort()
        writer = ""
        if store is not None:  # (the fragment store's writer thread: its CPU is in the figures above)
            store.flush()
            writer = (f"   store writer {(store.write_seconds - written[0]) * 1000 / rounds:.2f} ms/call, "
                      f"{(store.written - written[1]) / rounds:.0f} fragments/call")
        print(f"    {name:<30} {statistics.median(cpu):9.2f} {cpu[min(len(cpu) - 1, int(len(cpu) * 0.99))]:9.2f}"
              + writer, flush=True)
        if profile and name.startswith(profile):
            original, original_lean = db.read, db.read_lean
            db.read, db.read_lean = inline_read, inline_read_lean  # type: ignore[method-assign]
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(rounds):
                await make()
            prof.disable()
            db.read, db.read_lean = original, original_lean  # type: ignore[method-assign]
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats(os.environ.get("PROFILE_SORT", "cumulative")).print_stats(int(os.environ.get("PROFILE_LINES", "45")))
            print(out.getvalue())
    await ctx.close()


def rate_a_third(data: Path) -> None:
    """Rate every third movie and every third track (by rowid) R in the copy; the kept counts'
    triggers follow the update."""
    import sqlite3

    db = next(data.rglob("reelroom.db"))
    with sqlite3.connect(db) as conn:
        n = conn.execute("UPDATE items SET official_rating = 'R' WHERE type IN ('Movie', 'Audio') "
                         "AND owner_id IS NULL AND rowid % 3 = 0").rowcount
    print(f"    (--partly-hidden: rated {n} movies and tracks R)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--only", default="")
    parser.add_argument("--profile")
    parser.add_argument("--cold", action="store_true", help="a play-state write (untimed) before every call")
    parser.add_argument("--store-all", action="store_true",
                        help="store every track's fragment (InstantMix's shape) first: mixes from the store")
    parser.add_argument("--fill", action="store_true",
                        help="ask one mix and wait for the mix fill's pass (mix_fill.py), with its time and CPU")
    parser.add_argument("--fill-again", action="store_true",
                        help="--fill, then a library write and the pass that checks every fragment again")
    parser.add_argument("--parental", type=int, metavar="RATING", help="the viewer's MaxParentalRating")
    parser.add_argument("--partly-hidden", action="store_true",
                        help="in the copy: rate every third movie and every third track R (a library that "
                             "--parental 13 only partly hides; the same items every run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reelroom-lists-profile-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(args.data, data)
        if args.partly_hidden:
            rate_a_third(data)
        asyncio.run(run(data, args.rounds, [o for o in args.only.split(",") if o], args.profile, args.cold,
                        args.store_all, args.parental, args.fill or args.fill_again, args.fill_again))


if __name__ == "__main__":
    main()
