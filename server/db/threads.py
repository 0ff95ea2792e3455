"""The database readers' threads: a small pool whose calls are awaited on the event loop.

What ``asyncio.wrap_future(ThreadPoolExecutor.submit(...))`` did, with less work per hop, which
every database read of a request pays (a page, an item, a check):

- **The most recently idle thread takes the next call** (a stack of idle threads, each woken on
  its own lock). ThreadPoolExecutor's threads all wait on one queue and take turns, so with a
  few requests at a time every call ran on the thread whose caches had gone coldest; here one
  or two threads do the work at light load and all of them under heavy load.
- **The result goes straight into an asyncio future**: no ``concurrent.futures.Future``, no
  chained callbacks copying its state across. Results that finish while the event loop has not
  yet taken the earlier ones share its wake-up: one ``call_soon_threadsafe`` (a write to the
  loop's self-pipe, after which the thread waits for the GIL again) for all of them, which under
  load is most of them.

Calls wait in order (first in, first out) while every thread is busy. A call whose awaiting task
was cancelled before a thread took it is not run. ``shutdown`` lets the threads finish the calls
already queued, then waits for them.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

_Call = tuple["_Results", "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


class _Results:
    """Finished calls waiting for their event loop, settled together on one wake-up."""

    __slots__ = ("__weakref__", "done", "lock", "loop", "woken")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.done: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        self.woken = False  # a settle_all is scheduled and has not taken the list yet

    def add(self, fut: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
        """From a thread: hand a result over; wakes the loop unless a wake-up is on its way."""
        with self.lock:
            self.done.append((fut, result, error))
            if self.woken:
                return
            self.woken = True
        try:
            self.loop.call_soon_threadsafe(self.settle_all)
        except RuntimeError:  # the loop is closed: nobody awaits these any more
            with self.lock:
                self.done.clear()
                self.woken = False

    def settle_all(self) -> None:
        """On the loop: settle every result handed over so far."""
        with self.lock:
            done, self.done = self.done, []
            self.woken = False
        for fut, result, error in done:
            _settle(fut, result, error)


class _Worker:
    __slots__ = ("call", "thread", "wake")

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()  # released to hand the thread a call (or to let it end)
        self.call: _Call | None = None
        self.thread: threading.Thread | None = None


def _settle(fut: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if fut.done():  # the awaiting task was cancelled meanwhile
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)


class LoopThreads:
    def __init__(self, size: int, name: str) -> None:
        self.size = max(1, size)
        self.name = name
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []  # a stack: the last to finish is the first woken
        self._workers: list[_Worker] = []
        self._pending: deque[_Call] = deque()
        self._closed = False
        self._results: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Results] = weakref.WeakKeyDictionary()

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Run ``fn(*args)`` on a thread; an asyncio future (of the running loop) for its result."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        results = self._results.get(loop)  # (only ever touched on the loop's own thread)
        if results is None:
            results = self._results[loop] = _Results(loop)
        call: _Call = (results, fut, fn, args)
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new calls after shutdown")
            if self._idle:
                worker = self._idle.pop()
                worker.call = call
                worker.wake.release()
                return fut
            if len(self._workers) < self.size:
                worker = _Worker()
                worker.call = call
                self._workers.append(worker)
                worker.thread = threading.Thread(target=self._run, args=(worker,), daemon=True,
                                                 name=f"{self.name}_{len(self._workers) - 1}")
                worker.thread.start()
                return fut
            self._pending.append(call)
        return fut

    def _run(self, worker: _Worker) -> None:
        call = worker.call
        while True:
            finished: tuple[_Results, asyncio.Future[Any], Any, BaseException | None] | None = None
            if call is not None:
                results, fut, fn, args = call
                call = worker.call = None
                if not fut.done():  # (not cancelled while it waited)
                    try:
                        finished = (results, fut, fn(*args), None)
                    except BaseException as exc:  # handed to the awaiting task, as an executor does
                        finished = (results, fut, None, exc)
                del results, fut, fn, args
            # idle (or on to the next queued call) before the result is handed over, so that the
            # call its awaiting task makes next finds this thread, warm, on top of the stack
            with self._lock:
                if self._pending:
                    call = self._pending.popleft()
                    wait = end = False
                elif self._closed:
                    wait, end = False, True
                else:
                    self._idle.append(worker)
                    wait, end = True, False
            if finished is not None:
                finished[0].add(finished[1], finished[2], finished[3])
                finished = None
            if end:
                return
            if wait:
                worker.wake.acquire()
                call = worker.call
                if call is None:  # woken by shutdown
                    return

    def shutdown(self, wait: bool = True) -> None:
        """No new calls; the queued ones still run. With ``wait``, returns when every thread ended."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            for worker in idle:
                worker.call = None
                worker.wake.release()
            threads = [w.thread for w in self._workers if w.thread is not None]
        if wait:
            current = threading.current_thread()
            for thread in threads:
                if thread is not current:
                    thread.join()
