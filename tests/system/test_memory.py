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
