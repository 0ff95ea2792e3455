"""server/memory.py: after a burst, freed heap memory goes back to the system (glibc on Linux)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from server import memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or memory._glibc() is None,
                                reason="malloc_trim is glibc's (Linux)")


def test_the_trimmer_hands_back_what_a_burst_freed():
    base = memory.rss_bytes()
    # ~60 MB of malloc'd blocks (over pymalloc's 512-byte limit), the last one kept so the heap's
    # top cannot shrink by itself: only malloc_trim returns the freed pages below it.
    blocks = [bytes(1000) + i.to_bytes(4, "little") for i in range(60_000)]
    keep = blocks[-1]
    peak = memory.rss_bytes()
    assert peak - base > 40 << 20
    del blocks
    trimmer = memory.MemoryTrimmer(threshold=8 << 20)
    after_free = memory.rss_bytes()
    reference = asyncio.run(trimmer.check(base))
    assert trimmer.trims == 1
    assert memory.rss_bytes() < after_free - (30 << 20), "malloc_trim gave nothing back"
    assert reference == memory.rss_bytes() or abs(reference - memory.rss_bytes()) < (4 << 20)
    # Nothing grew since: the next look does not trim again.
    asyncio.run(trimmer.check(reference))
    assert trimmer.trims == 1
    assert keep


def test_start_and_stop_on_a_running_loop():
    async def run():
        trimmer = memory.MemoryTrimmer(interval=0.01)
        trimmer.start()
        await asyncio.sleep(0.05)
        await trimmer.stop()
        return trimmer

    assert asyncio.run(run())._task is None


def test_arenas_are_limited_unless_the_user_chose(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.limit_arenas() is False  # the user's setting stands
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    assert memory.limit_arenas() is True


def test_the_collector_paused_for_start_up_collects_its_garbage_when_settled():
    """pause_collector (the entry points) turns the cyclic collector off; settle_collector (the
    runner, once ready) collects what start-up left in cycles, freezes the rest and turns it on."""
    import gc
    import weakref

    class Node:
        pass

    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    memory.pause_collector()
    try:
        assert not gc.isenabled()
        cycle = Node()
        cycle.self = cycle  # garbage only the cyclic collector can free
        dead = weakref.ref(cycle)
        del cycle
        kept = Node()
        assert dead() is not None  # nothing collected while paused
        memory.settle_collector()
        assert gc.isenabled()
        assert dead() is None  # start-up's garbage was collected before the freeze
        assert gc.get_freeze_count() > frozen_before and kept is not None
        memory.resume_collector()  # a no-op now
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


def test_a_failed_start_resumes_the_collector():
    import gc

    memory.pause_collector()
    try:
        memory.resume_collector()
        assert gc.isenabled()
    finally:
        gc.enable()
