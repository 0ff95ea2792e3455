"""The Items engine's cached orderings (deep paging) keep 32-character ids packed; slicing them
gives what slicing the list gave."""

from __future__ import annotations

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
    cache = CountCache(id_lists=2)
    hex_ids = [uuid.uuid4().hex for _ in range(50)]
    cache.put_ids("a", 1, hex_ids)
    assert isinstance(cache.get_ids("a", 1), PackedIds)
    assert cache.get_ids("a", 1)[0:50] == hex_ids
    assert cache.get_ids("a", 2) is None  # written since
    odd = ["short", "é" * 32, *hex_ids]
    cache.put_ids("b", 1, odd)
    assert cache.get_ids("b", 1) == odd
    cache.put_ids("c", 1, hex_ids)
    assert cache.get_ids("a", 1) is None  # only two orderings are kept
