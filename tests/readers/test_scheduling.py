"""The reader pool's scheduling rules and CPU gate, deterministic: fake readers answering when the
test says, a fake clock, faked OS readings. No processes, no timing assertions."""

from __future__ import annotations

import asyncio
import collections
import ctypes
import itertools
import types
from typing import Any

import pytest

from server.readers import pool as pool_module
from server.readers import protocol
from server.readers.pool import (
    CpuGate,
    LoadAverageIdle,
    PoolStats,
    Reader,
    ReaderGone,
    ReaderPool,
    ReaderSettings,
    idle_source,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeReader(Reader):
    """A reader that answers its oldest page when the test calls ``answer``."""

    _pids = itertools.count(9000)

    def __init__(self) -> None:  # no process, no connection
        self.pid = next(self._pids)
        self._pending: dict[int, asyncio.Future[tuple[str, Any, Any]]] = {}
        self._ids = itertools.count(1)
        self.alive = True
        self.last_used = 0.0
        self.served = 0
        self.cpu = 0.0
        self.reserved = 0
        self.last_done = 0.0
        self.task = None
        self.raw = None  # (no connection: no hand-off)

    async def call(self, kind: str, generation: tuple[int, int], args: tuple[Any, ...],
                   hand: Any = None) -> tuple[str, Any, Any]:
        if not self.alive:
            raise ReaderGone
        future: asyncio.Future[tuple[str, Any, Any]] = asyncio.get_running_loop().create_future()
        request_id = next(self._ids)
        self._pending[request_id] = future
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    def answer(self) -> None:
        request_id = min(self._pending)
        self._pending[request_id].set_result((protocol.OK, f"reader {self.pid}".encode(), None))

    def die(self) -> None:
        self.alive = False
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ReaderGone())

    def stop(self) -> None:
        self.alive = False


class Owner:
    """The owner's ``local``: pages it answers, each finished when the test says."""

    def __init__(self) -> None:
        self.pages: collections.deque[asyncio.Future[bytes]] = collections.deque()
        self.answered = 0

    async def __call__(self, q: Any, opts: Any) -> bytes:
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.pages.append(future)
        reply = await future
        self.answered += 1
        return reply

    def finish(self) -> None:
        self.pages.popleft().set_result(b"owner")


def make_pool(readers: list[FakeReader], clock: Clock, **settings: Any) -> ReaderPool:
    options: dict[str, Any] = {"max_readers": len(readers), "busy": 0, "depth": 1, "local": 0} | settings
    pool = ReaderPool(types.SimpleNamespace(generations=(1, 1), url="sqlite://"),  # type: ignore[arg-type]
                      "server", ReaderSettings(**options))
    pool.readers = list(readers)
    pool.clock = clock
    return pool


def page(pool: ReaderPool, owner: Owner, name: str, order: list[str]) -> asyncio.Task[Any]:
    async def run() -> bytes:
        reply = await pool.items(types.SimpleNamespace(names=None), object(), owner)  # type: ignore[arg-type]
        order.append(name)
        return reply

    return asyncio.ensure_future(run())


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def test_pages_take_reader_slots_first_come_first_served() -> None:
    """A page that waited is not overtaken by one that came later, even when that one arrives in
    the same instant a slot comes free (before: a woken page went to the back of the line)."""

    async def run() -> None:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=False)
        tasks = [page(pool, owner, name, order) for name in "ABC"]
        await settle()
        assert reader.outstanding == 1 and len(pool._waiters) == 2  # A at the reader, B and C in line
        reader.answer()
        tasks.append(page(pool, owner, "D", order))  # arrives as A's slot comes free
        await settle()
        reader.answer()
        await settle()
        reader.answer()
        await settle()
        reader.answer()
        await asyncio.gather(*tasks)
        assert order == ["A", "B", "C", "D"] and owner.answered == 0 and pool.served == 4
        assert pool.stats.waited == 3 and len(pool.stats.waits) == 4 and pool.stats.queued == 4
        assert "3 of 4 waited for a slot" in pool.stats.summary()

    asyncio.run(run())


def test_the_pool_log_counts_every_page_in_line_beyond_the_waits_it_keeps(monkeypatch) -> None:
    """The log's "waited of" counts every page that went through the line; the percentiles are of
    the last ``KEEP`` waits (before: "22,891 of 20,000 waited")."""
    monkeypatch.setattr(PoolStats, "KEEP", 3)

    async def run() -> None:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=False)
        tasks = [page(pool, owner, name, order) for name in "ABCDE"]
        for _ in tasks:
            await settle()
            reader.answer()
        await asyncio.gather(*tasks)
        assert pool.stats.queued == 5 and len(pool.stats.waits) == 3 and pool.stats.waited == 4
        assert "4 of 5 waited for a slot; slot wait (the last 3)" in pool.stats.summary()

    asyncio.run(run())


def test_the_owner_takes_the_head_page_while_the_readers_queue_is_longer_than_its_own_time() -> None:
    """The adaptive share: a reader measured at 10 ms a page, the owner at 20 ms. With three pages
    in line (30 ms of the reader) the owner takes the first one itself, one at a time
    (``share_max``); with one page in line (10 ms) it leaves it to the reader."""

    async def run() -> None:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=True, share_max=1)
        first = page(pool, owner, "first", order)
        await settle()
        clock.now += 0.010
        reader.answer()  # the reader: 10 ms a page
        await first
        order.clear()
        assert pool.owner_page() == pytest.approx(0.020)  # a guess until the owner has answered one
        tasks = [page(pool, owner, name, order) for name in "ABCD"]
        await settle()
        # A at the reader; B, C, D in line: 4 pages of the reader's 10 ms = 40 ms > 20 ms: the
        # owner took B (the head), and only B (share_max 1); C and D wait
        assert len(owner.pages) == 1 and reader.outstanding == 1 and len(pool._waiters) == 2
        assert pool.expected_wait() == pytest.approx(0.030)
        clock.now += 0.020
        owner.finish()  # B took the owner 20 ms; C and D (30 ms) are still more than that
        await settle()
        assert order == ["B"] and len(owner.pages) == 1  # C to the owner
        assert pool.owner_page() == pytest.approx(0.020)
        clock.now += 0.010
        reader.answer()  # A; D goes to the reader; the line is empty
        await settle()
        assert order == ["B", "A"] and reader.outstanding == 1 and not pool._waiters
        clock.now += 0.010
        reader.answer()
        owner.finish()
        await asyncio.gather(*tasks)
        assert sorted(order) == ["A", "B", "C", "D"] and owner.answered == 2 and pool.served == 3

    asyncio.run(run())


async def five_pages(pool: ReaderPool, reader: FakeReader, owner: Owner, order: list[str]) -> int:
    """Five pages at once, each answered by the reader or the owner as it comes; how many the
    owner took at first."""
    tasks = [page(pool, owner, str(n), order) for n in range(5)]
    await settle()
    taken = len(owner.pages)
    await answer_all(tasks, reader, owner)
    return taken


async def answer_all(tasks: list[asyncio.Task[Any]], reader: FakeReader, owner: Owner) -> None:
    """The reader answers a page and the owner all its own, in turns, until every page is answered."""
    while not all(task.done() for task in tasks):
        if reader.outstanding - reader.reserved:
            reader.answer()
        while owner.pages:
            owner.finish()
        await settle()
    await asyncio.gather(*tasks)


def test_the_owner_leaves_pages_to_the_reader_when_it_is_slower_or_the_share_is_off() -> None:
    async def run(share: bool, owner_seconds: float) -> int:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=share, share_max=1)
        pool._reader_page, pool._local_page = 0.010, owner_seconds
        return await five_pages(pool, reader, owner, order)

    assert asyncio.run(run(True, 0.020)) == 1  # 40 ms of line > 20 ms: the owner takes one
    assert asyncio.run(run(True, 0.100)) == 0  # the owner measured at 100 ms a page: it waits
    assert asyncio.run(run(False, 0.001)) == 0  # share off
    assert ReaderSettings.resolve(environ={"REELROOM_READERS": "1", "REELROOM_READERS_SHARE": "0"}).share is False
    assert ReaderSettings.resolve(environ={"REELROOM_READERS": "1"}).share_max == 1


def test_one_slow_page_of_the_owners_does_not_keep_it_out_of_the_share_for_good() -> None:
    """The owner measured once at 200 ms a page (a pause, the load's first page): a line of 40 ms
    of the reader's leaves it out of the share. Only pages the owner answers update that figure,
    so before, it stayed out for good (seen under wrk: one page of 228 ms, then none of 25,528
    pages shared). Once the figure is ``OWNER_STALE_SECONDS`` old the guess (twice the reader's)
    stands again, the owner takes the head page, and that page is measured afresh."""

    async def run() -> None:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=True, share_max=1)
        pool._reader_page = 0.010
        clock.now += 0.200
        pool._note_local(0.200)
        assert pool.owner_page() == pytest.approx(0.200)
        assert await five_pages(pool, reader, owner, order) == 0  # 40 ms of line < 200 ms
        clock.now += 1.0
        assert await five_pages(pool, reader, owner, order) == 0  # a second later: still measured
        clock.now += 5.0  # OWNER_STALE_SECONDS
        pool._reader_page = 0.010  # (the fake reader answered in no time meanwhile)
        assert pool.owner_page() == pytest.approx(0.020)  # the measurement is old: the guess
        tasks = [page(pool, owner, str(n), order) for n in range(5)]
        await settle()
        assert len(owner.pages) == 1  # the owner takes the head page again
        clock.now += 0.015
        owner.finish()
        await settle()
        assert pool.owner_page() == pytest.approx(0.015)  # measured afresh, not smoothed into 200 ms
        await answer_all(tasks, reader, owner)
        assert len(order) == 15 and pool_module.OWNER_STALE_SECONDS == pytest.approx(5.0)

    asyncio.run(run())


def test_the_owner_leaves_the_share_to_the_reader_while_it_is_busier_and_a_core_idles() -> None:
    """The share (a line of 40 ms of the reader's, the owner at 20 ms a page: it would take one) is
    left to the reader while, over the last window, the owner used more CPU than a reader and a
    core had idle time: an owner busy with every other request leaves the page to the reader's
    core. A reader busier than the owner (a line of pages only), or no idle core (other work
    starves the reader), gets the owner's help as before; so does a pool before its first window,
    after a gap of more than three windows, or where the idle time cannot be read."""

    async def run(owner_cores: float | None, reader_cores: float = 0.0, idle_cores: float | None = 0.5,
                  gap: float = 0.5) -> tuple[int, ReaderPool]:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=True, share_max=1)
        own, idle = [5.0], [100.0]
        pool.own = lambda: own[0]
        pool.idle_source = lambda: None if idle_cores is None else idle[0]
        pool._reader_page, pool._local_page = 0.010, 0.020
        assert pool._owner_has_room()  # (the first reading: nothing to compare yet)
        if owner_cores is not None:
            clock.now += gap
            own[0] += gap * owner_cores
            reader.cpu += gap * reader_cores
            idle[0] += gap * (idle_cores or 0.0)
        taken = await five_pages(pool, reader, owner, order)
        assert sorted(order) == [str(n) for n in range(5)]
        return taken, pool

    taken, pool = asyncio.run(run(None))
    assert taken == 1 and pool.stats.share_declined == 0  # no window measured: the share as before
    taken, pool = asyncio.run(run(0.9, 0.4))
    assert taken == 0 and pool.stats.share_declined > 0  # the owner the busier side, a core idle
    assert list(pool.stats.balance) == [pytest.approx((0.9, 0.4, 0.5))]
    assert "share left to the readers" in pool.stats.summary()
    taken, pool = asyncio.run(run(0.4, 0.9))
    assert taken == 1 and pool.stats.share_declined == 0  # the reader the busier side: the owner helps
    taken, pool = asyncio.run(run(0.9, 0.4, idle_cores=0.0))
    assert taken == 1 and pool.stats.share_declined == 0  # no core idle: the reader is starved
    taken, pool = asyncio.run(run(0.9, 0.4, gap=2.0))
    assert taken == 1 and not pool.stats.balance  # four windows unasked: no reading of now
    taken, pool = asyncio.run(run(0.9, 0.4, idle_cores=None))
    assert taken == 1 and not pool.stats.balance  # the idle time unreadable: as before


def test_pages_spread_over_two_readers_and_a_reader_dying_fails_nothing() -> None:
    """Two readers with pages queued and pages in line; one dies: its page and the line go to
    the other reader; then the last one dies too: everything left is answered by the owner."""

    async def run() -> None:
        clock, one, two, owner, order = Clock(), FakeReader(), FakeReader(), Owner(), []
        pool = make_pool([one, two], clock, share=False)
        tasks = [page(pool, owner, str(n), order) for n in range(5)]
        await settle()
        assert one.outstanding == 1 and two.outstanding == 1 and len(pool._waiters) == 3
        one.die()
        pool._dispatch()  # as ReaderPool._run does when a reader's connection ends
        await settle()
        assert two.outstanding == 1 and len(pool._waiters) == 4  # one's page is back in line
        two.answer()
        await settle()
        two.die()
        pool._dispatch()
        await settle()
        while owner.pages:
            owner.finish()
            await settle()
        replies = await asyncio.gather(*tasks)
        assert len(replies) == 5 and replies.count(b"owner") == 4 and owner.answered == 4

    asyncio.run(run())


def test_a_page_given_a_slot_and_cancelled_gives_the_slot_back() -> None:
    async def run() -> None:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=False)
        a, b = page(pool, owner, "A", order), page(pool, owner, "B", order)
        await settle()
        reader.answer()
        await asyncio.sleep(0)  # A's reply wakes B's waiter with the reader's slot...
        b.cancel()  # ...and B's client leaves before it runs
        await settle()
        assert reader.reserved == 0 and reader.outstanding == 0
        c = page(pool, owner, "C", order)
        await settle()
        reader.answer()
        await asyncio.gather(a, c)
        assert b.cancelled() and order == ["A", "C"]

    asyncio.run(run())


def test_a_second_reader_starts_when_the_lines_wait_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two readers allowed, one running at 10 ms a page, the share off: three pages queued or in
    line (30 ms) start none; six (60 ms, past GROW_WAIT) start the second."""

    async def run() -> list[int]:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=False, max_readers=2)
        pool._reader_page = 0.010
        starts: list[int] = []

        def spawn(coro: Any) -> None:
            coro.close()  # no process: count the start
            starts.append(len(pool._waiters))

        monkeypatch.setattr(pool, "_spawn_task", spawn)
        tasks = [page(pool, owner, str(n), order) for n in range(3)]
        await settle()
        assert starts == [] and pool.expected_wait() == pytest.approx(0.030)
        tasks += [page(pool, owner, str(n), order) for n in range(3, 6)]
        await settle()
        assert pool.expected_wait() == pytest.approx(0.060)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return starts

    starts = asyncio.run(run())
    assert len(starts) == 1  # one start at a time (``_starting``)
    assert pool_module.GROW_WAIT == pytest.approx(0.05)


# -- the CPU gate on every OS (readings faked) ----------------------------------------------


def test_the_gate_counts_idle_time_and_the_readers_own_cpu() -> None:
    clock, idle = Clock(), [50.0]
    gate = CpuGate(window=1.0, source=lambda: idle[0], clock=clock)
    assert gate.check(3.0, 0.5) and gate.free is None  # nothing measured yet: open
    clock.now += 2.0
    idle[0] += 0.2  # 0.1 core idle, the readers used nothing: closed
    assert not gate.check(3.0, 0.5) and gate.free == pytest.approx(0.1)
    clock.now += 0.5
    idle[0] += 5.0  # within the window: the last figure stands
    assert not gate.check(3.0, 0.5)
    clock.now += 1.5
    assert gate.check(3.0 + 1.6, 0.5) and gate.free == pytest.approx((5.0 + 1.6) / 2.0)  # the readers' 0.8 core
    nothing = CpuGate(window=0.0, source=lambda: None, clock=clock)
    assert nothing.check(0.0, 0.5) and nothing.check(0.0, 0.5) and nothing.free is None
    assert nothing.lasting()  # nothing can be read here: no gate at all


def test_auto_starts_a_reader_only_on_a_core_that_stays_free() -> None:
    clock, idle = Clock(), [0.0]
    gate = CpuGate(window=1.0, source=lambda: idle[0], clock=clock)
    assert not gate.lasting()  # nothing measured yet: the gate is open, but no reader starts
    assert gate.check(0.0, 0.5) and not gate.lasting()
    for free in (1.0, 0.0, 1.0, 1.0):
        clock.now += 1.0
        idle[0] += free
        gate.check(0.0, 0.5)
    assert gate.free == 1.0 and not gate.lasting()  # open, but only for two windows in a row
    clock.now += 1.0
    idle[0] += 1.0
    assert gate.check(0.0, 0.5) and gate.lasting()

    async def run() -> int:
        pool = make_pool([], clock, gate=True)
        pool.settings = ReaderSettings(max_readers=1, gate=True)
        pool.gate = CpuGate(window=1.0, source=lambda: idle[0], clock=clock, own=lambda: 0.0)
        pool.gate.check(0.0, 0.5)
        clock.now += 1.0
        idle[0] += 1.0
        assert pool.gate.check(0.0, 0.5)  # one window free: the gate is open, a start waits
        pool._grow()
        started = pool._starting
        pool._closed = True
        return started

    assert asyncio.run(run()) == 0


def test_the_gate_tells_a_saturated_owner_from_one_window() -> None:
    """One window with a free core and the owner busy (its own CPU, ``own``) is a saturated owner;
    an owner that is not busy, a window without a free core, or a reading over a long gap (the
    gate was not asked meanwhile) is not."""
    clock, idle, own = Clock(), [0.0], [0.0]
    gate = CpuGate(window=0.5, source=lambda: idle[0], clock=clock, own=lambda: own[0])
    assert gate.check(0.0, 0.5) and not gate.saturated()  # nothing measured yet

    def window(seconds: float, free: float, owner: float) -> bool:
        clock.now += seconds
        idle[0] += free * seconds
        own[0] += owner * seconds
        gate.check(0.0, 0.5)
        return gate.saturated()

    assert window(0.5, 1.0, 0.9) and gate.owner == pytest.approx(0.9) and not gate.lasting()
    assert not window(0.5, 1.0, 0.3)  # the owner is not busy
    assert not window(0.5, 0.2, 0.95)  # no core free for a reader
    assert window(0.5, 0.8, 0.7)
    assert not window(60.0, 1.0, 0.9) and gate.owner is None  # a minute unasked: not a reading of now
    assert window(0.5, 1.0, 0.9)
    assert pool_module.OWNER_BUSY == pytest.approx(0.6)
    # (the minute's gap is no reading: five)
    assert gate.summary(0.5).startswith("5 readings, 4 with 0.5 of a core free, 3 of them with the owner saturated;")


def test_auto_starts_a_reader_at_once_for_a_saturated_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto`` with pages in flight beyond ``busy``: a saturated owner and a free core start a
    reader after one window (0.5 s); an owner that is not busy waits for the core to stay free
    (``STEADY_SECONDS``); a server given no pages never looks at the gate and starts none."""

    async def run(owner_cpu: float, windows: int, pages: bool = True) -> tuple[list[float], CpuGate]:
        clock, owner, order = Clock(), Owner(), []
        idle, own = [0.0], [0.0]
        pool = make_pool([], clock, gate=True, max_readers=1, busy=1)
        pool.gate = CpuGate(window=0.5, source=lambda: idle[0], clock=clock, own=lambda: own[0])
        starts: list[float] = []

        def spawn(coro: Any) -> None:
            coro.close()  # no process (``_starting`` stays 1: one start at a time): note when
            starts.append(clock.now - 1000.0)

        monkeypatch.setattr(pool, "_spawn_task", spawn)
        tasks = []
        for _ in range(windows):
            if pages:  # two pages in flight each window (beyond busy=1): each asks the gate
                tasks += [page(pool, owner, str(len(tasks)), order), page(pool, owner, str(len(tasks) + 1), order)]
                await settle()
            clock.now += 0.5
            idle[0] += 0.5 * 1.0  # a whole core free
            own[0] += 0.5 * owner_cpu
        while owner.pages:
            owner.finish()
        await asyncio.gather(*tasks)
        assert owner.answered == len(tasks)  # (no reader ran: the owner answered every page)
        return starts, pool.gate

    starts, _ = asyncio.run(run(owner_cpu=0.9, windows=4))
    assert starts == [0.5]  # the first window measured: started (once)
    starts, gate = asyncio.run(run(owner_cpu=0.2, windows=8))
    assert starts == [3.0] and gate.lasting()  # not saturated: after 3 s of a free core, as before
    starts, gate = asyncio.run(run(owner_cpu=0.9, windows=8, pages=False))
    assert starts == [] and gate.free is None  # no pages: the gate was never asked
    assert pool_module.STEADY_SECONDS == pytest.approx(3.0)


def test_after_a_gap_the_gate_keeps_its_last_reading_until_a_fresh_window() -> None:
    """``auto`` with a reader running: a burst after a minute's gap (the gate not asked: no pages
    beyond ``busy``) is decided by the last fresh reading, not by the machine's average over the
    gap. Other work that ran meanwhile (0.1 of a core idle over the gap) does not keep the burst's
    first pages in the owner when the last window had a core free; a quiet gap does not open a gate
    that the last window found closed (the machine busy with other work). The next window
    decides. Through the pool's own dispatch (``items``), which counts the pages the closed gate
    kept in the owner."""

    async def run(before: float, during_gap: float, after: float) -> tuple[list[str], ReaderPool]:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, gate=True, share=False)
        idle = [0.0]
        pool.gate = CpuGate(window=0.5, source=lambda: idle[0], clock=clock, own=lambda: 0.0)

        def window(seconds: float, free: float) -> None:  # idle cores; the reader idles
            clock.now += seconds
            idle[0] += free * seconds

        async def one(name: str) -> str:
            task = page(pool, owner, name, order)
            await settle()
            if owner.pages:
                owner.finish()
            else:
                reader.answer()
            return (await task).decode()

        pool._cpu_free()  # the first look
        window(0.5, before)
        assert pool._cpu_free() == (before >= 0.5)
        window(60.0, during_gap)
        first = await one("after the gap")
        assert pool.gate.steady == 0 and not pool.gate.lasting()  # the gap counts for no start
        window(0.5, after)
        second = await one("a fresh window")
        return [first, second], pool

    answered, pool = asyncio.run(run(before=1.0, during_gap=0.1, after=0.1))
    assert answered == [f"reader {pool.readers[0].pid}", "owner"]  # open as before; then closed, fresh
    assert pool.stats.gate_local == 1 and "1 here with the CPU gate closed" in pool.stats.summary()
    answered, pool = asyncio.run(run(before=0.1, during_gap=2.0, after=1.0))
    assert answered == ["owner", f"reader {pool.readers[0].pid}"]  # closed as before; then open, fresh
    assert pool.stats.gate_local == 1


def test_the_gate_reads_linux_proc_stat() -> None:
    source = idle_source("linux")
    first = source()
    assert first is not None and first > 0
    assert CpuGate(window=0.0, source=source).check(0.0, 0.0)


def test_the_gate_reads_windows_get_system_times() -> None:
    class Kernel32:
        idle = 12_345_678_900  # 100 ns units: 1,234.56789 s

        def GetSystemTimes(self, idle: Any, kernel: Any, user: Any) -> int:  # noqa: N802
            idle._obj.low, idle._obj.high = self.idle & 0xFFFFFFFF, self.idle >> 32
            return 1

    k = Kernel32()
    assert pool_module._idle_windows(k) == pytest.approx(1234.56789)
    k.idle += 5 * 10**7 * 3  # 1.5 s of idle over a 1 s window on a 2-core machine... 5 s per core here
    assert pool_module._idle_windows(k) == pytest.approx(1234.56789 + 15.0)

    class Failing:
        def GetSystemTimes(self, *args: Any) -> int:  # noqa: N802
            return 0

    assert pool_module._idle_windows(Failing()) is None
    # on this machine there is no kernel32: the load average answers instead
    assert isinstance(idle_source("win32"), LoadAverageIdle) or not hasattr(ctypes, "WinDLL")


def test_the_gate_reads_macos_host_statistics() -> None:
    class Function:
        def __init__(self, fn: Any) -> None:
            self.fn, self.restype = fn, None

        def __call__(self, *args: Any) -> Any:
            return self.fn(*args)

    ticks = {"idle": 4200}

    def host_statistics(host: Any, flavor: int, info: Any, count: Any) -> int:
        assert flavor == pool_module.HOST_CPU_LOAD_INFO and count._obj.value == 4
        info._obj[:] = [100, 50, ticks["idle"], 0]  # user, system, idle, nice
        return 0

    libc = types.SimpleNamespace(mach_host_self=Function(lambda: 7), host_statistics=Function(host_statistics))
    assert pool_module._idle_macos(libc) == pytest.approx(4200 / pool_module._TICK)
    libc.host_statistics = Function(lambda *a: 5)  # KERN_FAILURE
    assert pool_module._idle_macos(libc) is None
    # (idle_source("darwin") itself is not called on this OS: after the tray tests loaded PySide,
    # its ctypes.util.find_library left shiboken's import hook failing tests/ui/test_pyside_imports.py)


def test_the_load_average_stands_in_where_no_counter_is_read() -> None:
    clock, load = Clock(), [0.5]
    source = LoadAverageIdle(clock=clock, loadavg=lambda: load[0], cores=2)
    gate = CpuGate(window=1.0, source=source, clock=clock)
    assert gate.check(0.0, 0.5)
    clock.now += 1.0
    assert gate.check(0.0, 0.5) and gate.free == pytest.approx(1.5)  # 2 cores, 0.5 runnable
    load[0] = 3.0
    clock.now += 1.0
    assert not gate.check(0.0, 0.5) and gate.free == 0.0  # more runnable than cores
    clock.now += 1.0
    assert gate.check(0.8, 0.5)  # the readers' own 0.8 core counts as free

    def no_load() -> float:
        raise OSError

    assert LoadAverageIdle(loadavg=no_load)() is None


# -- admission (server/http/admission.py): browsing requests first come first served -------------

def test_admission_lets_in_up_to_its_limit_then_first_come_first_served() -> None:
    """Past ``limit`` in flight, requests wait in one line and go in the order they came, one per
    slot given back, each waiting as long as the line before it (the fake clock's measure)."""
    from server.http.admission import Admission

    async def run() -> None:
        clock = Clock()
        gate = Admission(2, clock=clock)
        order: list[str] = []
        slots: dict[str, int] = {}

        async def request(name: str) -> None:
            slots[name] = await gate.enter()
            order.append(name)

        tasks = [asyncio.ensure_future(request(n)) for n in "abcde"]
        await settle()
        assert order == ["a", "b"] and gate.inflight == 2 and gate.waiting == 3
        clock.now += 0.2
        gate.leave(slots["a"])
        gate.leave(slots["a"])  # a slot given back twice is given back once
        await settle()
        assert order == ["a", "b", "c"] and gate.inflight == 2
        late = asyncio.ensure_future(request("f"))  # a newcomer does not pass the line
        await settle()
        assert order == ["a", "b", "c"]
        clock.now += 0.1
        gate.leave(slots["b"])
        gate.leave(slots["c"])
        await settle()
        assert order == ["a", "b", "c", "d", "e"] and gate.waiting == 1
        for name in "de":
            gate.leave(slots[name])
        await settle()
        assert order[-1] == "f" and gate.inflight == 1 and gate.waiting == 0
        gate.leave(slots["f"])
        assert gate.inflight == 0
        await asyncio.gather(*tasks, late)
        assert gate.stats.admitted == 6 and gate.stats.waited == 4
        assert sorted(round(w, 3) for w in gate.stats.waits) == [0.1, 0.2, 0.3, 0.3]  # f came at +0.2

    asyncio.run(run())


def test_admission_a_request_cancelled_in_line_leaves_it_and_a_slot_given_is_handed_on() -> None:
    from server.http.admission import Admission

    async def run() -> None:
        gate = Admission(1)
        order: list[str] = []
        slots: dict[str, int] = {}

        async def request(name: str) -> None:
            slots[name] = await gate.enter()
            order.append(name)

        first = asyncio.ensure_future(request("a"))
        gone = asyncio.ensure_future(request("gone"))
        handed = asyncio.ensure_future(request("handed"))
        last = asyncio.ensure_future(request("last"))
        await settle()
        gone.cancel()  # left while waiting: skipped
        await settle()
        gate.leave(slots["a"])  # a's slot to the next still waiting: "handed"
        handed.cancel()  # cancelled after it was given the slot, before it ran: handed on
        await settle()
        assert order == ["a", "last"] and gate.inflight == 1 and gate.waiting == 0
        gate.leave(slots["last"])
        assert gate.inflight == 0
        await asyncio.gather(first, last)
        assert gone.cancelled() and handed.cancelled()

    asyncio.run(run())


def test_admission_lets_go_of_slots_held_too_long_while_anyone_waits() -> None:
    """A slot held past ``hold_seconds`` (a request waiting on something slow) goes to the next
    in line; its late ``leave`` gives nothing back twice."""
    from server.http.admission import Admission

    async def run() -> None:
        clock = Clock()
        gate = Admission(1, clock=clock, hold_seconds=0.04)
        slow = await gate.enter()
        waiting = asyncio.ensure_future(gate.enter())
        await settle()
        assert not waiting.done()
        clock.now += 0.05  # past hold_seconds; the watch looks every hold_seconds / 4 (real time)
        got = await asyncio.wait_for(waiting, 5)
        assert gate.stats.overdue == 1 and gate.inflight == 1
        gate.leave(slow)  # let go already: nothing given back
        assert gate.inflight == 1
        gate.leave(got)
        assert gate.inflight == 0

    asyncio.run(run())


def test_admission_holds_back_browsing_never_playback() -> None:
    from server.http.admission import DEFAULT_LIMIT, held_back, limit_from_env

    for method, path in [("GET", "/Items"), ("GET", "/Users/u/Items"), ("HEAD", "/emby/Items/1/Images/Primary"),
                         ("GET", "/UserViews"), ("GET", "/"), ("GET", "/web/index.html"), ("GET", "/Artists")]:
        assert held_back(method, path), (method, path)
    for method, path in [("POST", "/Items"), ("POST", "/Sessions/Playing/Progress"),
                         ("GET", "/Videos/1/stream"), ("GET", "/videos/1/master.m3u8"),
                         ("GET", "/emby/Audio/1/universal"), ("GET", "/mediabrowser/LiveTv/Channels"),
                         ("GET", "/Items/1/Download"), ("GET", "/Items/1/File"), ("GET", "/Items/1/PlaybackInfo"),
                         ("GET", "/Sessions"), ("GET", "/SyncPlay/List"), ("GET", "/socket"),
                         ("DELETE", "/Items/1"), ("OPTIONS", "/Items")]:
        assert not held_back(method, path), (method, path)
    assert limit_from_env({}) == DEFAULT_LIMIT == 32
    assert limit_from_env({"REELROOM_ADMIT": "0"}) == 0
    assert limit_from_env({"REELROOM_ADMIT": "off"}) == 0
    assert limit_from_env({"REELROOM_ADMIT": "40"}) == 40
    assert limit_from_env({"REELROOM_ADMIT": "junk"}) == DEFAULT_LIMIT


def test_an_item_miss_goes_to_a_reader_with_room_or_while_the_owner_is_busier() -> None:
    """``ReaderPool.item``: a reader with room reads the item; while pages wait in line it does so
    only while the owner is the busier side with a core idle (the share rule's reading); never
    more than ``ITEM_DEPTH`` items at a reader; an item takes no page's slot; a reader that dies
    with an item, or leaves it to the owner, or no reader at all: the owner reads it (None)."""

    async def ask(pool: ReaderPool) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(pool.item("id", None, object(), False))  # type: ignore[arg-type]
        await settle()
        return task

    async def reply(reader: FakeReader, body: bytes, extra: Any) -> None:
        reader._pending[min(reader._pending)].set_result((protocol.OK, body, extra))
        await settle()

    async def run() -> None:
        clock, reader, owner, order = Clock(), FakeReader(), Owner(), []
        pool = make_pool([reader], clock, share=False, depth=1)
        assert await (await ask(make_pool([], clock))) is None  # no reader: the owner reads it
        # a reader with room: it reads the item, its two parts come back
        item = await ask(pool)
        assert reader.items_out == 1 and reader.outstanding == 0  # (not a page's slot)
        await reply(reader, b"{head}tail", 6)
        assert await item == (b"{head}", b"tail") and pool.stats.items == 1
        item = await ask(pool)
        await reply(reader, b"", True)  # the viewer may not see it
        assert await item is True
        item = await ask(pool)
        await reply(reader, b"", None)  # a kind the reader leaves to the owner
        assert await item is None and pool.stats.items_left == 1
        # a page at the reader, two in line: the owner reads items while it is not the busier side
        pages = [page(pool, owner, str(n), order) for n in range(3)]
        await settle()
        assert reader.outstanding == 1 and len(pool._waiters) == 2
        own, idle = [5.0], [100.0]
        pool.own = lambda: own[0]
        pool.idle_source = lambda: idle[0]
        assert await (await ask(pool)) is None  # (the first reading: nothing to compare)
        clock.now += 0.5
        own[0] += 0.5 * 0.4  # the owner 0.4 of a core, the reader 0.9, a core idle
        reader.cpu += 0.5 * 0.9
        idle[0] += 0.5 * 0.5
        assert await (await ask(pool)) is None and not reader.items_out
        clock.now += 0.5
        own[0] += 0.5 * 0.9  # now the owner is the busier side, a core idle: the reader reads
        reader.cpu += 0.5 * 0.4
        idle[0] += 0.5 * 0.5
        first, second = await ask(pool), await ask(pool)
        assert reader.items_out == pool_module.ITEM_DEPTH == 2
        assert await (await ask(pool)) is None  # two items queued there already
        reader.answer()  # the page first (in order), then the items
        await settle()
        assert reader.outstanding == 1 and len(pool._waiters) == 1  # the page's slot went to a page
        await reply(reader, b"{a}b", 3)
        await reply(reader, b"{c}d", 3)
        assert await first == (b"{a}", b"b") and await second == (b"{c}", b"d")
        dying = await ask(pool)
        reader.die()
        assert await dying is None  # the reader ended: the owner reads it
        await settle()
        while owner.pages:  # (the pages at the dead reader and in line are answered by the owner)
            owner.finish()
            await settle()
        await asyncio.gather(*pages)
        assert sorted(order) == ["0", "1", "2"]

    asyncio.run(run())


def test_a_short_first_window_reads_a_burst_soon_but_a_free_core_still_lasts_3_s() -> None:
    """``first_window``: the first reading (and the first after a gap) comes after it, the next
    ones after ``window``; ``lasting`` counts the seconds the free windows spanned, so a core must
    still stay free for ``STEADY_SECONDS`` before a reader starts for it alone."""
    clock, idle, own = Clock(), [0.0], [0.0]
    gate = CpuGate(window=0.5, source=lambda: idle[0], clock=clock, own=lambda: own[0], first_window=0.1)

    def window(seconds: float, free: float, owner: float) -> None:
        clock.now += seconds
        idle[0] += free * seconds
        own[0] += owner * seconds
        gate.check(0.0, 0.5)

    gate.check(0.0, 0.5)  # the burst's first look
    window(0.1, 1.0, 0.9)
    assert gate.saturated() and gate.quick and gate.owner == pytest.approx(0.9) and not gate.lasting()
    window(0.3, 0.0, 0.0)  # within the next (whole) window: no reading
    assert gate.looks == 2 and gate.free == pytest.approx(1.0)
    for _ in range(4):
        window(0.5, 1.0, 0.2)
    assert gate.steady_for == pytest.approx(2.4) and not gate.quick and not gate.lasting()  # (the 0.3 s joined the next window)
    window(0.6, 1.0, 0.2)
    assert gate.lasting()
    window(60.0, 1.0, 0.9)  # a gap: no reading, and the next one again after the short window
    assert gate.steady == 0 and not gate.lasting()
    window(0.11, 1.0, 0.9)
    assert gate.saturated()
