"""server/db/threads.py: the database readers' threads (results, errors, order, reuse, shutdown)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from server.db.threads import LoopThreads


def test_results_and_errors_reach_the_awaiting_task() -> None:
    pool = LoopThreads(2, "t")

    def boom() -> None:
        raise ValueError("bad")

    async def main() -> None:
        assert await pool.submit(lambda a, b: a + b, 2, 3) == 5
        with pytest.raises(ValueError, match="bad"):
            await pool.submit(boom)
        assert await asyncio.gather(*(pool.submit(lambda i=i: i * i) for i in range(50))) == [i * i for i in range(50)]

    asyncio.run(main())
    pool.shutdown()


def test_the_most_recently_idle_thread_takes_the_next_call() -> None:
    pool = LoopThreads(4, "t")

    async def main() -> set[str]:
        # four at once: every thread starts
        gate = threading.Barrier(4)
        await asyncio.gather(*(pool.submit(gate.wait, 5) for _ in range(4)))
        await asyncio.sleep(0.05)  # all idle again
        return {await pool.submit(lambda: threading.current_thread().name) for _ in range(20)}

    names = asyncio.run(main())
    pool.shutdown()
    assert len(names) == 1  # one after the other: always the same (warm) thread


def test_at_most_size_threads_and_queued_calls_run_in_order() -> None:
    pool = LoopThreads(2, "t")
    order: list[int] = []
    running = 0
    most = 0
    lock = threading.Lock()

    def work(i: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            order.append(i)
        time.sleep(0.01)
        with lock:
            running -= 1
        return i

    async def main() -> list[int]:
        return list(await asyncio.gather(*(pool.submit(work, i) for i in range(12))))

    assert asyncio.run(main()) == list(range(12))
    pool.shutdown()
    assert most == 2
    # (the pool's own threads: other tests' servers, alive in a full run, have threads of their own)
    assert len([t for t in threading.enumerate() if t.name.startswith("t_")]) <= 2
    # queued calls start in order (two threads take them, so two may be noted swapped)
    assert all(abs(order.index(i) - i) <= 1 for i in range(12))


def test_a_call_cancelled_before_it_ran_is_not_run() -> None:
    pool = LoopThreads(1, "t")
    ran: list[str] = []
    release = threading.Event()

    async def main() -> None:
        first = pool.submit(release.wait, 5)
        second = pool.submit(ran.append, "second")
        second.cancel()
        release.set()
        await first
        await pool.submit(ran.append, "third")

    asyncio.run(main())
    pool.shutdown()
    assert ran == ["third"]


def test_shutdown_runs_what_was_queued_then_refuses() -> None:
    pool = LoopThreads(1, "t")
    done: list[int] = []

    async def main() -> None:
        futures = [pool.submit(lambda i=i: (time.sleep(0.01), done.append(i))) for i in range(3)]
        await asyncio.sleep(0)
        threading.Thread(target=pool.shutdown).start()
        await asyncio.gather(*futures)
        with pytest.raises(RuntimeError):
            pool.submit(lambda: None)

    asyncio.run(main())
    pool.shutdown()
    assert done == [0, 1, 2]
    assert not [t for t in threading.enumerate() if t.name.startswith("t_")]
