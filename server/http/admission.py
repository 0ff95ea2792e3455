"""Admission: browsing requests are let in first come first served, with a bound on how many
are in flight at once, so that under load every request waits about as long as any other.

Why. Under a load of many closed-loop clients the server's throughput is set by its busiest core,
and the time a request spends in the server is, on average, clients / throughput (Little's law):
200 browsing clients at 1,000 requests/s spend 200 ms per request whatever the server does. What
the server decides is *how that waiting is spread*. Without admission every light request (views,
an item, an image from the disk cache) is answered at once, in 2-3 ms, and the heavy ones (an
Items page of 100 items, in the readers' line) absorb all of the waiting: their p50 was 600-700 ms,
and the p99 of all requests (1.0-1.1 s) was theirs. With admission a request that finds
``limit`` requests already in flight waits in one line, first come first served, whatever its
kind; the line is where the waiting happens, shared by every request, and the pages' own line
(at most ``limit`` of them) stays short.

What is in flight: a request from its admission until its response *starts* (its handler's work
is done then; sending the body is the transport's), for ``HOLD_SECONDS`` at most (a GET that waits
on something slow, a remote lookup or a sleeping disk, then runs on without its slot: a few of
them never stall browsing). So a direct stream, a download or a long reply holds no slot while
its body goes out. And some requests are never held back (``held_back``):
anything but GET and HEAD (sign-ins, playback reports, session and SyncPlay posts, edits), and
every path under a playback root (``/Videos``, ``/Audio``, HLS, ``/LiveTv``, ``/Sessions``,
``/SyncPlay``, downloads, PlaybackInfo): playback never queues behind browsing. A client alone
never waits: the line forms only while ``limit`` requests are in flight.

A request whose client went away while it waited is not run (the cycle says it is disconnected).
``REELROOM_ADMIT`` sets the limit (``0`` or ``off``: no admission); the default is
``DEFAULT_LIMIT``. docs/architecture.md, "A request's path" (what); docs/performance.md (figures).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

#: Requests in flight (admitted, response not started) beyond which the next waits in line.
DEFAULT_LIMIT = 32  # (16 starved a reader in the quiet run: docs/performance.md)

#: Seconds a request holds its slot at most: one still without a response then runs on without it.
HOLD_SECONDS = 2.0

#: First path segments (lower case, after /emby or /mediabrowser) of requests never held back.
PLAYBACK_ROOTS = frozenset({"videos", "audio", "livetv", "sessions", "syncplay", "socket", "hls"})
#: Last path segments of requests never held back (a download, a file, playback's start).
PLAYBACK_LEAVES = frozenset({"download", "file", "playbackinfo", "universal"})

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


def limit_from_env(environ: dict[str, str] | None = None) -> int:
    """``REELROOM_ADMIT``: requests in flight before the line forms; 0 / ``off``: no admission."""
    text = (os.environ if environ is None else environ).get("REELROOM_ADMIT", "").strip().lower()
    if text in ("off", "no", "false"):
        return 0
    return int(text) if text.isdigit() else DEFAULT_LIMIT


def held_back(method: str, path: str) -> bool:
    """Whether a request of ``method`` on ``path`` goes through admission (browsing), or is never
    held back (playback, anything that is not a GET or HEAD)."""
    if method != "GET" and method != "HEAD":
        return False
    low = path.lower()
    first, _, rest = low.lstrip("/").partition("/")
    if first == "emby" or first == "mediabrowser":
        first = rest.partition("/")[0]
    return first not in PLAYBACK_ROOTS and low.rstrip("/").rpartition("/")[2] not in PLAYBACK_LEAVES


class AdmissionStats:
    """How long admitted requests waited (the last ``KEEP``), for the log at close and the bench."""

    KEEP = 20000

    def __init__(self) -> None:
        self.waits: collections.deque[float] = collections.deque(maxlen=self.KEEP)
        #: seconds from a request's arrival here to its response's start (its wait included)
        self.inside: collections.deque[float] = collections.deque(maxlen=self.KEEP)
        self.admitted = 0
        self.waited = 0
        self.overdue = 0  # requests that held their slot ``hold_seconds`` without a response

    def summary(self) -> str:
        def at(values: list[float], p: float) -> float:
            return values[min(len(values) - 1, int(len(values) * p))] * 1000 if values else 0.0

        waits, inside = sorted(self.waits), sorted(self.inside)
        return (f"{self.admitted} requests admitted, {self.waited} waited in line, {self.overdue} overdue; "
                f"wait of those p50 "
                f"{at(waits, 0.5):.1f} ms, p99 {at(waits, 0.99):.1f} ms, max {at(waits, 1.0):.1f} ms; "
                f"arrival to response start p50 {at(inside, 0.5):.1f} ms, p99 {at(inside, 0.99):.1f} ms, "
                f"max {at(inside, 1.0):.1f} ms")


class Admission:
    """At most ``limit`` held-back requests in flight; the rest wait in one line, first come first
    served. One per app (so per event loop); not thread-safe (the event loop's thread only).

    A slot is a token in ``_held`` (with when it was taken); ``leave`` gives it back (once: a
    token given back or let go is not given back again). While anyone waits, a watch looks every
    ``hold_seconds / 4`` for slots held longer than ``hold_seconds`` and lets them go (the request
    runs on without one). A request that finds a free slot and nobody waiting costs a dict entry,
    no future and no timer."""

    def __init__(self, limit: int = DEFAULT_LIMIT, clock: Callable[[], float] = time.monotonic,
                 hold_seconds: float = HOLD_SECONDS) -> None:
        self.limit = limit
        self.hold_seconds = hold_seconds
        self._held: dict[int, float] = {}  # slot token -> when it was taken
        self._tokens = itertools.count()
        self._line: collections.deque[asyncio.Future[int]] = collections.deque()
        self._watch: asyncio.TimerHandle | None = None
        self.clock = clock
        self.stats = AdmissionStats()

    @property
    def inflight(self) -> int:
        return len(self._held)

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._line if not f.done())

    def _slot(self) -> int:
        token = next(self._tokens)
        self._held[token] = self.clock()
        return token

    async def enter(self) -> int:
        """Take a slot (its token, for ``leave``): at once while fewer than ``limit`` are in flight
        and nobody waits, else in turn. A caller cancelled while waiting leaves the line (or hands
        on a slot it was given)."""
        self.stats.admitted += 1
        if len(self._held) < self.limit and not self._line:
            return self._slot()
        self.stats.waited += 1
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._line.append(waiter)
        if self._watch is None:
            self._watch = asyncio.get_running_loop().call_later(self.hold_seconds / 4, self._overdue)
        t0 = self.clock()
        try:
            token = await waiter  # handed over by ``leave``
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.leave(waiter.result())
            else:
                waiter.cancel()  # ``leave`` skips it
            raise
        self.stats.waits.append(self.clock() - t0)
        return token

    def leave(self, token: int) -> None:
        """Give the slot ``token`` back (nothing if it was already): to the first in line, else free it."""
        if self._held.pop(token, None) is None:
            return
        self._hand_on()

    def _hand_on(self) -> None:
        while self._line:
            waiter = self._line.popleft()
            if not waiter.done():
                waiter.set_result(self._slot())
                return

    def _overdue(self) -> None:
        """Let go of slots held past ``hold_seconds`` (each to the next in line); look again later
        while anyone waits."""
        self._watch = None
        limit = self.clock() - self.hold_seconds
        for token, since in list(self._held.items()):
            if since <= limit:
                del self._held[token]
                self.stats.overdue += 1
                self._hand_on()
        if any(not f.done() for f in self._line):
            self._watch = asyncio.get_running_loop().call_later(self.hold_seconds / 4, self._overdue)

    def wrap(self, app: ASGIApp, cycle: Any) -> ASGIApp:
        """``app`` run for one request (uvicorn's ``cycle``) once admitted; its slot is given back
        when the response starts, or when the app returns without one. (Lean: this runs for every
        browsing request; one that finds a free slot costs about a microsecond here.)"""
        held, clock, inside = self._held, self.clock, self.stats.inside

        async def admitted(scope: Any, receive: Any, send: Any) -> None:
            arrived = clock()
            if len(held) < self.limit and not self._line:  # ``enter``'s first case, inline
                self.stats.admitted += 1
                token = next(self._tokens)
                held[token] = arrived
            else:
                token = await self.enter()

            async def sending(message: Any) -> None:
                if token in held and message["type"] == "http.response.start":
                    self.leave(token)
                    inside.append(clock() - arrived)
                await send(message)

            try:
                if not cycle.disconnected:  # (else the client left while it waited: nothing to answer)
                    await app(scope, receive, sending)
            finally:
                if token in held:
                    self.leave(token)

        return admitted
