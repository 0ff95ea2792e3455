"""The Items engine's cached orderings (deep paging) keep 32-character ids packed; slicing them
gives what slicing the list gave."""

from __future__ import annotations

import sys
import uuid

from server.library.catalog.query import CountCache, PackedIds


def test_packed_ids_slice_like_the_list():
    ids = [uuid.uuid4().hex for _ in range(2500)]
    packed = PackedIds(ids)
    assert len(packed) == len(ids)
    for start, stop in ((0, 100), (1200, 1300), (2450, 2600), (2600, 2700), (0, None), (5, 5)):
        assert packed[start:stop] == ids[start:stop]
    assert packed[10:20:3] == ids[10:20:3]


def test_the_cache_packs_ids_and_keeps_other_ids_as_they_are():
    cache = CountCache(id_lists=3)
    hex_ids = [uuid.uuid4().hex for _ in range(50)]
    cache.put_ids("a", 1, hex_ids)
    assert isinstance(cache.get_ids("a", 1), PackedIds)
    assert cache.get_ids("a", 1)[0:50] == hex_ids
    assert cache.get_ids("a", 2) is None  # written since
    odd = ["short", "é" * 32, *hex_ids]
    upper = [hex_ids[0].upper(), *hex_ids[1:]]  # (packed, it would come back lowercase)
    cache.put_ids("u", 1, upper)
    assert cache.get_ids("u", 1) == upper
    cache.put_ids("b", 1, odd)
    assert cache.get_ids("b", 1) == odd
    cache.put_ids("c", 1, hex_ids)
    assert cache.get_ids("a", 1) is None  # only three orderings are kept


def test_a_deep_page_reads_its_ordering_without_a_small_object_per_id(tmp_path):
    """The whole ordering of a listing (a deep page, startIndex >= DEEP_PAGE) is read a chunk at a
    time and packed as it comes: read as rows and a list of str, 40k ids made ~80k small objects
    at once (8.4 MB traced at the peak, against 2.8 read in chunks), and what was allocated around
    then kept some of those arenas for the process's life. The page is the same slice."""
    import tracemalloc

    from server.db import migrate
    from server.db.database import Database, sqlite_url
    from server.library.catalog.query import DEEP_PAGE, ItemQuery, run_query
    from tests.library.query.test_single_pass import FILL, ITEMS

    db = Database(sqlite_url(tmp_path / "reelroom.db"))
    try:
        migrate.upgrade(db.engine, db.url)
        with db.engine.begin() as c:
            c.execute(FILL, {"count": ITEMS})
        expected = [f"{i:032x}" for i in sorted(range(1, ITEMS + 1), key=lambda i: f"item {i}")]

        def page(start: int, counts: CountCache) -> tuple[list[str], int, int]:
            q = ItemQuery(recursive=True, sort_by=["SortName"], sort_order=["Ascending"], start_index=start, limit=20)
            tracemalloc.start()
            try:
                rows, total = db.read_sync(lambda s: run_query(s, q, counts, 1))
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            return [r.id for r in rows], total, peak

        counts = CountCache()
        ids, total, peak = page(DEEP_PAGE + 5, counts)
        assert (ids, total) == (expected[DEEP_PAGE + 5:DEEP_PAGE + 25], ITEMS)
        packed = counts.get_ids(counts.ids_key(ItemQuery(recursive=True, sort_by=["SortName"], sort_order=["Ascending"])), 1)
        assert isinstance(packed, PackedIds) and packed[0:ITEMS] == expected
        # the packed ordering (32 bytes an id) twice at most (its parts and the whole) and a chunk's
        # rows; the rows and str of every id were ~160 bytes an id
        assert peak < 2.5 * PackedIds.WIDTH * ITEMS + (1 << 20), peak
        ids, total, _ = page(ITEMS - 10, counts)  # (from the kept ordering)
        assert (ids, total) == (expected[ITEMS - 10:], ITEMS)
    finally:
        db.close()


def test_an_id_is_packed_into_sixteen_bytes():
    """Its binary value (16 bytes, not its 32 characters): a 100k ordering is 1.5 MiB, not 3."""
    ids = [uuid.uuid4().hex for _ in range(1000)]
    packed = PackedIds(ids)
    assert sys.getsizeof(packed._data) < 16 * len(ids) + 64
    assert packed[0:1000] == ids and packed.pick([999, 0, 500]) == [ids[999], ids[0], ids[500]]
