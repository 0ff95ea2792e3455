"""The owner's side: ``ReaderPool`` (``ctx.readers``) starts reader processes when the event loop
is busy with heavy reads, hands them requests and stops them when the load is gone.

A request the pool takes (``items``: a GET /Items page, already authorized and scoped by the
owner) joins one line, first come first served, and takes the first slot that comes free: the
least loaded reader's (``depth`` requests queued at most), or the owner's (``local``, and the
adaptive ``share``: while the readers would keep the line waiting longer than the owner takes for
a page, both measured). Readers are started lazily, one at a time, while more than ``busy`` such
requests are in flight (another only when the line's wait grows past ``GROW_WAIT``), up to
``max_readers``; ``auto`` starts them only on a core that stays free (``CpuGate``, every OS). A
reader that handled nothing for
``idle_seconds`` is stopped, so an idle server has none. A reader that dies (or fails on a
request) costs no request it had not started to write: what it held is answered by the owner
(a page whose client socket it held, the hand-off, may be partly written: that connection is
closed, ``handoff.Lost``), and the next busy moment starts a replacement. A single item that the owner does not keep (``item``: GET /Items/{id}'s
miss) goes to a reader that runs with room, or while the owner is the busier side; it never waits
in the line, takes no page's slot and starts no reader.

Readers are started through ``server/media/spawn.py`` (they die with the server on every OS) and
connect back over a Unix socket (loopback TCP on Windows), proving they know a per-process secret. Each request carries the
owner's ``Database.generations``, so a reader never answers from caches older than the owner's
last committed write, and its own read transaction starts after that write. An Items page also
carries the owner's fragment store epoch, taken before it is handed over (``ItemService.store_use``,
as for a page the owner answers): the reader reads the owner's store at that epoch (store.py) and
sends back what it built and the digests it found holding, which go to the owner's store writer
and marks.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import itertools
import logging
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from server.db.database import Database
from server.http import handoff
from server.library.catalog.dto import DtoOptions
from server.library.catalog.fragment_store import FragmentStore, StoreUse
from server.library.catalog.query import ItemQuery
from server.media import spawn
from server.readers import protocol
from server.wire.casing import camel_case_requested

if TYPE_CHECKING:
    from server.library.catalog.items import Viewer

log = logging.getLogger("reelroom.readers")
R = TypeVar("R")

START_TIMEOUT_SECONDS = 60.0
RETRY_AFTER_FAILURE_SECONDS = 30.0
STOP_GRACE_SECONDS = 2.0
STREAM_LIMIT = 4 * 1024 * 1024
#: A slot of the owner's (``ReaderPool._queue``), as opposed to a reader.
HERE = object()
#: The line's expected wait (seconds) past which another reader is started.
GROW_WAIT = 0.05
#: Weight of a new measurement in the smoothed seconds per page.
SMOOTHING = 0.1
#: The owner's seconds per page, as a multiple of a reader's, until it has answered one under load.
OWNER_GUESS = 2.0
#: Seconds after the owner's last page of the share from which its measured seconds per page give
#: way to the guess again, and its next page is measured afresh (not smoothed into the old figure):
#: only pages the owner answers update the figure, so one slow page (a pause, a busy moment, the
#: load's first page) would otherwise keep it out of the share for good.
OWNER_STALE_SECONDS = 5.0
#: Seconds over which the owner's CPU and a reader's are compared for the share (``_owner_has_room``).
BALANCE_WINDOW = 0.5
#: Idle cores (over that window) from which a reader counts as having time for the owner's page.
BALANCE_IDLE = 0.1
#: Single items (``ReaderPool.item``) queued at a reader at most; beyond that the owner reads them.
ITEM_DEPTH = 2


@dataclass(frozen=True)
class ReaderSettings:
    """``max_readers`` 0 turns the pool off. ``busy``: how many requests of a kind may be in
    flight before readers take them (0: always, once a reader runs; for tests). ``depth``: requests
    queued at a reader before the owner answers some itself; ``local``: how many the owner answers
    at once while readers run (beyond that they queue at the readers, so the owner's event loop
    stays free to feed them). ``idle_seconds``: a reader given nothing for this long stops."""

    max_readers: int
    busy: int = 2
    depth: int = 2
    local: int = 0
    idle_seconds: float = 60.0
    #: The owner also answers pages (at most ``share_max`` at once, beyond ``local``) while the
    #: readers would keep the queue waiting longer than the owner takes for a page.
    share: bool = True
    share_max: int = 1
    #: ``auto``: readers take pages only while the machine has ``free_cores`` of CPU the readers
    #: can use (idle time plus what the readers themselves use; Linux's /proc, else no gate).
    gate: bool = False
    free_cores: float = 0.5
    #: hand the client's socket to the reader with the page (it writes the reply itself) where
    #: the OS can (``protocol.FD_PASSING``) and the HTTP side offers it; else the relay
    handoff: bool = protocol.FD_PASSING

    @classmethod
    def resolve(cls, readers: int | None = None, busy: int | None = None,
                environ: dict[str, str] | None = None) -> ReaderSettings:
        """From the server options, else the environment (``REELROOM_READERS``: the most reader
        processes, 0 or ``off`` for none, ``auto`` for one per core beyond the first, at most two;
        ``REELROOM_READERS_BUSY``; ``REELROOM_READERS_IDLE`` seconds), else ``auto`` (see
        docs/architecture.md, "Reader processes", for why, and docs/performance.md for the figures)."""
        env = os.environ if environ is None else environ
        gate = False
        if readers is None:
            text = env.get("REELROOM_READERS", "").strip().lower()
            if text in ("off", "no", "false"):
                readers = 0
            elif text.isdigit():
                readers = int(text)
            else:  # "auto", and the default: readers only on a core the gate finds free
                readers, gate = auto_readers(), True
        if busy is None:
            text = env.get("REELROOM_READERS_BUSY", "").strip()
            busy = int(text) if text.isdigit() else cls.busy
        text = env.get("REELROOM_READERS_LOCAL", "").strip()
        local = int(text) if text.isdigit() else cls.local
        text = env.get("REELROOM_READERS_SHARE", "").strip()  # the owner's adaptive slots; 0: none
        share_max = int(text) if text.isdigit() else cls.share_max
        idle = cls.idle_seconds
        with contextlib.suppress(ValueError):
            idle = float(env.get("REELROOM_READERS_IDLE", "") or idle)
        return cls(max_readers=max(0, readers), busy=max(0, busy), local=local, idle_seconds=max(0.5, idle),
                   gate=gate, share=share_max > 0, share_max=share_max, handoff=protocol.handoff_enabled(env))


def auto_readers() -> int:
    return max(0, min(2, (os.cpu_count() or 1) - 1))


def reader_command() -> list[str]:
    """How to start a reader: this interpreter with the worker module, or the frozen executable
    with the flag its entry point (installer/entry_*.py) looks for before anything else."""
    if getattr(sys, "frozen", False):
        return [sys.executable, protocol.FROZEN_FLAG]
    return [sys.executable, "-m", "server.readers.worker"]


class CpuGate:
    """Whether the machine has CPU for the readers: over the last ``window`` seconds, the idle
    time of all cores plus the CPU the readers themselves used, in cores (a reader busy on a free
    core counts as free, so the gate does not close because the readers took the idle core). On a
    machine whose cores are taken (other work, a transcode) a reader gets only a slice of a core,
    each page then waits for two time slices, and the owner answers pages faster itself.

    The idle time comes from ``idle_source()``: Linux's /proc/stat, Windows' GetSystemTimes,
    macOS's host_statistics, else the load average; the readers' CPU is what they report with each
    reply (``Reader.cpu``), the same on every OS. Where nothing can be read ``free`` stays None
    and the gate open. Over the same window it measures the owner's own CPU (``own``: this
    process's, ``time.process_time``, every OS), which tells a saturated owner (``saturated``).
    A look after a gap of more than ``FRESH_WINDOWS`` windows makes no reading: the last one
    stands until the window it starts ends.

    ``first_window``: the length of the first window, and of the first after such a gap (a
    burst's first reading; ``window`` when None). The pool's gate takes ``FIRST_WINDOW``, so a
    burst that saturates the owner starts a reader after a tenth of a second, not half a second:
    the reader's start (~0.4 s of its own imports, on the free core) then overlaps the burst's
    first wave instead of following it. ``lasting`` counts seconds, not windows, so a short first
    window does not shorten the ``STEADY_SECONDS`` a core must stay free."""

    def __init__(self, window: float = 0.5, source: Callable[[], float | None] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 own: Callable[[], float] = time.process_time, first_window: float | None = None) -> None:
        self.window = window
        self.first_window = window if first_window is None else min(first_window, window)
        self._due = self.first_window  # seconds from ``_at`` to the next reading
        self.source = source  # found on the first check (a pool without ``auto`` never looks)
        self.clock = clock
        self.own = own
        self._at = 0.0
        self._idle = self._readers = self._own = 0.0
        self.free: float | None = None  # cores the readers could use, last measured
        self.owner: float | None = None  # cores the owner itself used over the last window (a fresh one)
        self.steady = 0  # windows in a row the last measurements found enough free
        self.steady_for = 0.0  # the seconds those windows spanned
        self.quick = False  # the last reading was over a window shorter than ``window`` (the first)
        self.unreadable = False  # the source answered None: no gate here
        #: the idle cores and the readers' cores (all of them) over the last window, a fresh one
        #: (None after a look that found none: unreadable, the first, or after a long gap)
        self.idle: float | None = None
        self.readers: float | None = None
        self.looks = 0  # windows looked at so far
        #: the last readings (free cores, the owner's cores or None; ~4 min of busy windows), for the log at close
        self.readings: collections.deque[tuple[float, float | None]] = collections.deque(maxlen=512)

    def check(self, readers_cpu: float, need: float) -> bool:
        """``readers_cpu``: the CPU seconds the running readers have used so far."""
        now = self.clock()
        if now - self._at >= self._due:
            if self.source is None:
                self.source = idle_source()
            idle, own = self.source(), self.own()
            self.unreadable = idle is None
            self.looks += 1
            self.idle = self.readers = self.owner = None
            span = now - self._at
            if idle is not None and self._at and 0 < self.window and FRESH_WINDOWS * self.window < span:
                # a gap (the gate was not asked: no pages beyond ``busy``) is no reading of now,
                # neither of the owner nor of the cores: the last fresh reading stands until the
                # window that starts here ends (the machine's average over a quiet minute, e.g.
                # other work that ran meanwhile, would close or open the gate for the burst's
                # first window); a core free before the gap does not count towards ``lasting``
                self.steady, self.steady_for = 0, 0.0
                self._due = self.first_window  # (a burst after the gap: its first reading soon)
            elif idle is not None and self._at and now > self._at:
                self.free = max(0.0, idle - self._idle + readers_cpu - self._readers) / span
                self.steady = self.steady + 1 if self.free >= need else 0
                self.steady_for = self.steady_for + span if self.steady else 0.0
                self.quick = span < self.window
                self._due = self.window
                self.owner = (own - self._own) / span
                # (a reader that ended or started makes the sum jump: not below 0)
                self.idle = max(0.0, idle - self._idle) / span
                self.readers = max(0.0, readers_cpu - self._readers) / span
                self.readings.append((self.free, self.owner))
            self._at, self._idle, self._readers, self._own = now, idle or 0.0, readers_cpu, own
        return self.free is None or self.free >= need

    def lasting(self) -> bool:
        """The core has been free for ``STEADY_SECONDS`` of measurements in a row (or nothing is
        measured): enough to start a reader. A moment's idle core on a busy machine would start
        one that then lives on ~75 MiB while the gate keeps its pages in the owner. Before the
        first measurements: not yet (the gate itself is open then)."""
        if self.window <= 0:
            return self.unreadable or self.steady >= 1
        return self.unreadable or self.steady_for >= STEADY_SECONDS - 1e-9

    def summary(self, need: float) -> str:
        """What the gate saw (for the log at close): its readings, how many found ``need`` free
        and the owner saturated, and the medians."""
        free = sorted(f for f, _ in self.readings)
        owner = sorted(o for _, o in self.readings if o is not None)
        saturated = sum(1 for f, o in self.readings if f >= need and o is not None and o >= OWNER_BUSY)
        return (f"{len(free)} readings, {sum(1 for f in free if f >= need)} with {need:g} of a core free, "
                f"{saturated} of them with the owner saturated; free p50 {free[len(free) // 2] if free else 0.0:.2f}, "
                f"the owner p50 {owner[len(owner) // 2] if owner else 0.0:.2f} of a core")

    def saturated(self) -> bool:
        """The last window (a fresh one) found the owner itself busy (``OWNER_BUSY`` of a core or
        more) and a core free for a reader: with pages in flight beyond ``busy`` (the caller's
        condition) that is a server the owner alone cannot keep up with, and a reader started at
        once (rather than after ``STEADY_SECONDS``) takes the load's first seconds off the owner."""
        return self.steady >= 1 and self.owner is not None and self.owner >= OWNER_BUSY


#: Seconds of measurements in a row with a free core before ``auto`` starts a reader (unless the
#: owner is saturated: ``CpuGate.saturated``).
STEADY_SECONDS = 3.0
#: The pool's gate's first window of a burst (``CpuGate.first_window``), seconds: long enough for
#: /proc/stat's 10 ms ticks (20 over two cores) to tell a free half core, short against the
#: burst's first wave (200 cold pages at ~10 ms each at 100k).
FIRST_WINDOW = 0.1
#: Pages in flight beyond which a reading over that short window may start a reader: more than a
#: browser has connections to one host (six), so one user's home screen (its sections asked at
#: once) never starts one from a tenth of a second's reading; it waits for a whole window, as before.
QUICK_PAGES = 6
#: The owner's own CPU over a window, in cores, from which it counts as saturated.
OWNER_BUSY = 0.6
#: A window longer than this many ``window`` s (the gate was not asked meanwhile) tells nothing
#: of now: neither the owner's CPU nor the cores free (``CpuGate.check`` keeps its last reading;
#: a gate of ``window`` 0 measures at every look, so it has no gap).
FRESH_WINDOWS = 3

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def idle_source(platform: str = sys.platform) -> Callable[[], float | None]:
    """How this OS tells the idle CPU seconds of all its cores since some start (the gate uses
    differences): Linux /proc/stat; Windows GetSystemTimes; macOS host_statistics
    (HOST_CPU_LOAD_INFO); else (or when those cannot be read) the load average."""
    if platform.startswith("linux") and _idle_linux() is not None:
        return _idle_linux
    if platform == "win32":
        with contextlib.suppress(Exception):
            import ctypes

            kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined,unused-ignore]
            if _idle_windows(kernel32) is not None:
                return lambda: _idle_windows(kernel32)
    if platform == "darwin":
        with contextlib.suppress(Exception):
            import ctypes
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libSystem.dylib")
            if _idle_macos(libc) is not None:
                return lambda: _idle_macos(libc)
    return LoadAverageIdle()


def _idle_linux() -> float | None:
    """Idle + iowait time of all cores since boot (Linux's /proc/stat), else None."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        return (int(fields[4]) + int(fields[5])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


def _idle_windows(kernel32: Any) -> float | None:
    """Idle time of all cores (GetSystemTimes: FILETIMEs in 100 ns units), else None."""
    import ctypes

    class FileTime(ctypes.Structure):
        _fields_ = [("low", ctypes.c_uint32), ("high", ctypes.c_uint32)]

    idle, kernel, user = FileTime(), FileTime(), FileTime()
    if not kernel32.GetSystemTimes(ctypes.byref(idle), ctypes.byref(kernel), ctypes.byref(user)):
        return None
    return ((int(idle.high) << 32) | int(idle.low)) / 1e7


HOST_CPU_LOAD_INFO = 3  # mach/host_info.h
CPU_STATE_IDLE = 2  # mach/machine.h: user, system, idle, nice


def _idle_macos(libc: Any) -> float | None:
    """Idle ticks of all cores (host_statistics(HOST_CPU_LOAD_INFO), at CLK_TCK), else None."""
    import ctypes

    ticks = (ctypes.c_uint32 * 4)()
    count = ctypes.c_uint32(4)  # HOST_CPU_LOAD_INFO_COUNT
    libc.mach_host_self.restype = ctypes.c_uint32
    host = libc.mach_host_self()
    if libc.host_statistics(ctypes.c_uint32(host), HOST_CPU_LOAD_INFO, ctypes.byref(ticks), ctypes.byref(count)) != 0:
        return None
    return ticks[CPU_STATE_IDLE] / _TICK


class LoadAverageIdle:
    """Where no idle counter can be read: the idle seconds the one-minute load average implies
    (cores minus runnable processes), summed over time. Coarse (the load average moves slowly),
    but it closes the gate on a machine whose cores stay taken."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 loadavg: Callable[[], float] | None = None, cores: int | None = None) -> None:
        self.clock = clock
        self.loadavg = loadavg or _load_one_minute
        self.cores = cores or os.cpu_count() or 1
        self._at: float | None = None
        self._idle = 0.0

    def __call__(self) -> float | None:
        try:
            load = self.loadavg()
        except OSError:
            return None
        now = self.clock()
        if self._at is not None:
            self._idle += max(0.0, self.cores - load) * (now - self._at)
        self._at = now
        return self._idle


def _load_one_minute() -> float:
    if not hasattr(os, "getloadavg"):
        raise OSError("no load average here")
    return os.getloadavg()[0]


class PoolStats:
    """What the pool's pages went through, for the log at close (and bench/load.py, which reads
    it there): how long pages waited for a slot, how long a reader and the owner took per page."""

    KEEP = 20000  # the last waits kept for the percentiles

    @property
    def activity(self) -> int:
        """Pages and items answered so far, by readers or the owner (a background fill waits while it moves)."""
        return self.reader_pages + self.local_pages + self.items + self.items_left + self.queued

    def __init__(self) -> None:
        self.waits: collections.deque[float] = collections.deque(maxlen=self.KEEP)
        self.waited = 0  # pages that found no free slot at once
        self.queued = 0  # pages that went through the line (``waits`` keeps only the last KEEP)
        self.reader_pages = 0
        self.reader_seconds = 0.0  # handed over to answered, summed
        self.local_pages = 0
        self.local_seconds = 0.0
        #: pages beyond ``busy`` the owner answered because the ``auto`` gate was closed (no reader
        #: took them, none was started for them)
        self.gate_local = 0
        #: times the share was left to the readers: the owner used more CPU than a reader, a core idled
        self.share_declined = 0
        #: single items (GET /Items/{id} misses) a reader read, and left to the owner (a kind it does
        #: not build); handed over to answered, summed
        self.items = 0
        self.items_left = 0
        self.item_seconds = 0.0
        #: the last balance readings (the owner's cores, a reader's, the idle cores), for the log at close
        self.balance: collections.deque[tuple[float, float, float]] = collections.deque(maxlen=512)

    def summary(self) -> str:
        waits = sorted(self.waits)

        def at(p: float) -> float:
            return waits[min(len(waits) - 1, int(len(waits) * p))] * 1000 if waits else 0.0

        return (f"{self.reader_pages} pages through readers (mean {self._mean(self.reader_seconds, self.reader_pages)} ms "
                f"handed over to answered), {self.local_pages} answered here under load (mean "
                f"{self._mean(self.local_seconds, self.local_pages)} ms), {self.gate_local} here with the CPU gate "
                f"closed; {self.waited} of {self.queued} "
                f"waited for a slot; slot wait (the last {len(waits)}) p50 {at(0.5):.1f} ms, p99 {at(0.99):.1f} ms, max {at(1.0):.1f} ms; "
                f"share left to the readers {self.share_declined} times (the owner busier than a reader with "
                f"a core idle in {sum(1 for b in self.balance if _owner_busier(b))} of {len(self.balance)} "
                f"readings; p50 the owner {self._median(0):.2f}, a reader {self._median(1):.2f}, idle "
                f"{self._median(2):.2f} of a core); {self.items} items through readers (mean "
                f"{self._mean(self.item_seconds, self.items + self.items_left)} ms), {self.items_left} left to the owner")

    def _median(self, i: int) -> float:
        values = sorted(b[i] for b in self.balance)
        return values[len(values) // 2] if values else 0.0

    @staticmethod
    def _mean(total: float, n: int) -> str:
        return f"{total * 1000 / n:.1f}" if n else "-"


def _owner_busier(balance: tuple[float, float, float]) -> bool:
    """A balance reading (the owner's cores, a reader's, the idle cores) that leaves the share to
    the readers: the owner used more CPU than a reader, and a core had idle time."""
    owner, reader, idle = balance
    return owner >= reader and idle >= BALANCE_IDLE


class ReaderGone(Exception):
    """The reader process ended (or its connection broke) before it answered."""


class Reader:
    """One running reader process and its connection."""

    def __init__(self, proc: subprocess.Popen[bytes], pid: int, stream_in: asyncio.StreamReader,
                 stream_out: asyncio.StreamWriter) -> None:
        self.proc = proc
        self.pid = pid  # the reader's own pid (on macOS proc.pid is its watchdog wrapper's)
        self._in = stream_in
        self._out = stream_out
        self._pending: dict[int, asyncio.Future[tuple[str, Any, Any]]] = {}
        self._ids = itertools.count(1)
        self.alive = True
        self.last_used = time.monotonic()
        self.served = 0
        self.cpu = 0.0  # CPU seconds the reader used so far, as it reported with its last reply
        self.reserved = 0  # slots given to pages that have not sent their request yet
        self.last_done = 0.0  # when it last answered (the pool's clock)
        self.task: asyncio.Task[None] | None = None
        #: the connection as a plain socket (a duplicate), to send a client's socket with a
        #: request (``sendmsg`` with SCM_RIGHTS: asyncio's transports cannot); None: no hand-off
        self.raw: socket.socket | None = None
        sock = stream_out.get_extra_info("socket")
        if protocol.FD_PASSING and sock is not None and sock.family == socket.AF_UNIX:
            self.raw = socket.socket(fileno=os.dup(sock.fileno()))  # (its blocking mode is left as it is)

    #: single items (``ReaderPool.item``) sent and not answered yet: not among the ``outstanding``
    #: pages (an item takes no page's slot)
    items_out = 0

    @property
    def outstanding(self) -> int:
        """Pages sent and not answered yet, and slots reserved for pages."""
        return len(self._pending) - self.items_out + self.reserved

    async def call(self, kind: str, generation: tuple[int, int], args: tuple[Any, ...],
                   hand: tuple[handoff.Offer, int, tuple[bytes, bytes]] | None = None) -> tuple[str, Any, Any]:
        """``(status, payload, extra)``: extra is the reply's extra part (``protocol.read_extra``).
        ``hand``: the offer, the client's socket and the reply's head parts, to hand the socket
        over with the request (the offer is marked ``handed`` once it went)."""
        if not self.alive:
            raise ReaderGone
        request_id = next(self._ids)
        try:
            data = protocol.frame((request_id, kind, generation, args, hand[2] if hand is not None else None))
        except Exception:  # a query that does not pickle: the owner answers it
            return protocol.FAILED, traceback.format_exc(), None
        future: asyncio.Future[tuple[str, Any, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.last_used = time.monotonic()
        try:
            if hand is not None and self.raw is not None and not self._out.transport.get_write_buffer_size():
                try:
                    sent = protocol.send_request(self.raw, data, hand[1])
                except OSError:  # the reader's end is gone: the write below fails as ever
                    sent = 0
                if sent:
                    hand[0].handed = True
                    data = data[sent:]
                else:  # the connection took nothing: the request goes as an ordinary one
                    data = protocol.frame((request_id, kind, generation, args, None))
            if data:
                self._out.write(data)
            return await future
        finally:
            self._pending.pop(request_id, None)
            self.last_used = time.monotonic()

    async def read_replies(self) -> None:
        try:
            while True:
                head = await self._in.readexactly(protocol.REPLY_HEADER.size)
                size, _id, _status, extra_size, cpu = protocol.REPLY_HEADER.unpack(head)
                self.cpu = cpu
                request_id, status, payload = protocol.read_reply(head, await self._in.readexactly(size))
                extra = protocol.read_extra(await self._in.readexactly(extra_size)) if extra_size else None
                future = self._pending.get(request_id)
                if future is not None and not future.done():
                    self.served += 1
                    future.set_result((status, payload, extra))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass  # the reader ended or closed its end
        except Exception:  # a reply that does not read back: this reader is done with
            log.exception("Reader process %s sent a reply that could not be read; stopping it", self.pid)
        finally:
            self.alive = False
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ReaderGone())
            self._close()

    def stop(self) -> None:
        """Close the connection: the reader reads its end and exits."""
        self.alive = False
        self._close()

    def _close(self) -> None:
        self._out.close()
        if self.raw is not None:
            self.raw.close()


class ReaderPool:
    def __init__(self, db: Database, server_id: str, settings: ReaderSettings,
                 store_use: Callable[[DtoOptions, bool], StoreUse | None] | None = None,
                 store: FragmentStore | None = None) -> None:
        """``store_use``: ``ItemService.store_use`` (the epoch and shape a page uses the fragment
        store with, taken before it is handed over); ``store``: the owner's store (its file is
        what readers read; what they built goes to its writer)."""
        self.db = db
        self.server_id = server_id
        self.settings = settings
        self._store_use = store_use
        self.store = store
        self.stored_back = 0  # fragments readers built and sent back to the owner's store
        self.store_hits = 0  # fragments readers used from the store as they were (of the page's epoch)
        self.readers: list[Reader] = []
        self.started = 0  # reader processes started so far
        self.served = 0  # requests answered by readers
        self.handed = 0  # of those, replies a reader wrote to the client itself (a hand-off)
        self.handed_back = 0  # of those, replies whose end the reader gave back (the client's socket was full)
        self.answered_here = 0  # requests of the pool's kinds the owner answered itself while enabled
        self._inflight = 0  # requests of the pool's kinds in flight
        self._here = 0  # of those, answered in the owner from a slot of the queue (``local``, ``share``)
        self._reader_page: float | None = None  # a reader's seconds per page, smoothed
        self._local_page: float | None = None  # the owner's seconds per page under load, smoothed
        self._local_at: float | None = None  # when the owner last started a page of its own under load
        self.clock: Callable[[], float] = time.monotonic
        #: this process's CPU seconds so far (the owner's side of ``_owner_has_room``)
        self.own: Callable[[], float] = time.process_time
        #: the machine's idle CPU seconds so far (``idle_source``; found at the first use)
        self.idle_source: Callable[[], float | None] | None = None
        #: the owner's, the readers' and the idle cores over ``BALANCE_WINDOW`` (``_owner_has_room``),
        #: measured by a gate of its own with this pool's clock and readings
        self.balance = CpuGate(BALANCE_WINDOW, source=self._idle_seconds, clock=lambda: self.clock(),
                               own=lambda: self.own())
        #: the last window's (the owner's cores, a reader's, the idle cores): ``_owner_has_room``
        self._balance: tuple[float, float, float] | None = None
        self.stats = PoolStats()
        self._starting = 0
        self._retry_after = 0.0
        self._closed = False
        self._server: asyncio.Server | None = None
        self._address: str | None = None  # what a reader connects to (protocol.ENV_ADDRESS)
        self._socket_dir: str | None = None
        self._hellos: dict[str, asyncio.Future[tuple[int, asyncio.StreamReader, asyncio.StreamWriter]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._waiters: collections.deque[asyncio.Future[Reader | object | None]] = collections.deque()
        self._reaper: asyncio.Task[None] | None = None
        self.gate = CpuGate(first_window=FIRST_WINDOW)

    @property
    def enabled(self) -> bool:
        return self.settings.max_readers > 0 and not self._closed

    def pids(self) -> list[int]:
        """The running readers' process ids."""
        return [r.pid for r in self.readers if r.alive]

    # -- requests ------------------------------------------------------------------------

    async def items(self, q: ItemQuery, opts: DtoOptions,
                    local: Callable[[ItemQuery, DtoOptions], Awaitable[R]]) -> R | bytes | handoff.Handed:
        """A GET /Items page: the encoded reply from a reader, else ``local(q, opts)``
        (ItemService.query_reply) in this process.

        While few pages are in flight (``busy``) or no reader runs, the owner answers as it
        always did. Otherwise the page joins one queue, first come first served, and takes the
        first slot that comes free: one of ``depth`` at the least loaded reader, one of ``local``
        in the owner, or (``share``) the owner's own while a reader would keep the queue's last
        page waiting longer than the owner takes for a page (both measured: ``_owner_sooner``).
        Each side so takes pages at the pace it actually runs, whatever else the machine does."""
        if not self.enabled:
            return await local(q, opts)
        self._inflight += 1
        try:
            while True:
                busy = self._inflight > self.settings.busy
                free = busy and self._cpu_free()  # (the gate, asked once a page)
                if not free or not self._alive():
                    if free:
                        self._grow()
                    elif busy:
                        self.stats.gate_local += 1
                    self.answered_here += 1
                    return await local(q, opts)
                slot = await self._queue()
                if slot is None:
                    continue  # the readers changed (one ended, the gate closed): look again
                if slot is HERE:
                    self.answered_here += 1
                    t0 = self.clock()
                    try:
                        return await local(q, opts)
                    finally:
                        self._note_local(self.clock() - t0)
                        self._here -= 1
                        self._dispatch()
                reader = cast(Reader, slot)
                try:
                    encoded = await self._via(reader, q, opts)
                except ReaderGone:
                    log.warning("Reader process %s ended; its request is answered elsewhere", reader.pid)
                    continue  # take another slot (another reader's, or the owner's)
                if encoded is not None:
                    return encoded
                self.answered_here += 1
                return await local(q, opts)  # the reader failed on it: answered here
        finally:
            self._inflight -= 1

    async def item(self, key: str, viewer: Viewer, opts: DtoOptions,
                   camel: bool) -> tuple[bytes, bytes] | bool | None:
        """GET /Items/{id}'s miss (``ItemService.item_reply``'s ``elsewhere``), read and encoded by
        a reader: ``ItemService.item_parts_read``'s answer (the DTO's two parts; False: no library
        row; True: the viewer may not see it), or None when the owner reads it itself.

        A reader takes it while one runs (the ``auto`` gate open) with fewer than ``ITEM_DEPTH``
        items queued, and either has room at once (fewer than ``depth`` pages queued, no page
        waiting in line) or the owner is the busier side with a core idle (the share rule's
        reading, ``_owner_has_room``: under the mixed load pages always wait, and the owner, which
        answers everything else, is the bottleneck). Items never wait in the pages' line, never
        take a page's slot and never start a reader (a miss costs the owner about a millisecond).
        The owner reads it when the reader ended first, failed on it, or left it to the owner (a
        kind it does not build, ``protocol.ITEM_TYPES``)."""
        if not self.enabled or not self._alive() or not self._cpu_free():
            return None
        reader = self._least_loaded()
        if reader is None or reader.items_out >= ITEM_DEPTH:
            return None
        if reader.outstanding >= self.settings.depth or self._waiters:
            balance = self._balance_now()
            if balance is None or not _owner_busier(balance):
                return None
        sent = self.clock()
        reader.items_out += 1
        try:
            status, payload, extra = await reader.call(protocol.ITEM, self.db.generations, (key, viewer, opts, camel))
        except ReaderGone:
            log.warning("Reader process %s ended; its item is answered here", reader.pid)
            return None
        finally:
            reader.items_out -= 1
        reader.last_done = self.clock()
        self.stats.item_seconds += reader.last_done - sent
        if status == protocol.OK:
            if not payload:
                if extra is None:
                    self.stats.items_left += 1
                    return None
                self.stats.items += 1
                return bool(extra)
            self.stats.items += 1
            body = cast(bytes, payload)
            return body[:extra], body[extra:]
        if status == protocol.ERROR:
            raise payload
        log.error("A reader failed on an item; answered here instead:\n%s", payload)
        return None

    async def _queue(self) -> Reader | object | None:
        """Wait in line for a slot: a reader (its slot reserved), ``HERE`` (one of the owner's
        slots, taken), or None (no reader is left or the gate closed: the caller looks again)."""
        waiter: asyncio.Future[Reader | object | None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        t0 = self.clock()
        self._dispatch()
        if not waiter.done():
            self.stats.waited += 1
        try:
            slot = await waiter
        except asyncio.CancelledError:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)
            if waiter.done() and not waiter.cancelled():
                self._release(waiter.result())  # given a slot, then cancelled (the client left)
            raise
        self.stats.waits.append(self.clock() - t0)
        self.stats.queued += 1
        return slot

    def _dispatch(self) -> None:
        """Hand free slots to the waiting pages, first come first served."""
        while self._waiters:
            head = self._waiters[0]
            if head.done():
                self._waiters.popleft()
                continue
            if not self._alive() or not self._cpu_free():
                self._waiters.popleft()
                head.set_result(None)
                continue
            slot = self._take_slot()
            if slot is None:
                return
            self._waiters.popleft()
            head.set_result(slot)

    def _take_slot(self) -> Reader | object | None:
        """A free slot for the page at the head of the queue, taken: a reader's, else the owner's."""
        reader = self._free_reader()
        if reader is not None:
            reader.reserved += 1
            return reader
        if self._here < self.settings.local or (
                self.settings.share and self._here < self.settings.local + self.settings.share_max
                and self._owner_sooner() and self._owner_has_room()):
            self._here += 1
            return HERE
        return None

    def _owner_has_room(self) -> bool:
        """Whether the owner may take a page of the share. Not while, over the last
        ``BALANCE_WINDOW``, it used more CPU than a reader (the readers' CPU as they report it with
        their replies, per reader running) *and* the machine's cores were idle for at least
        ``BALANCE_IDLE`` of a core (``idle_source``, as the gate reads it). The owner also answers
        every other request (views, items, images, the pages' HTTP): while it is the busier side
        and a core has time for the reader, a page it answers itself (several times a handed
        page's cost to it) delays all of those, and the reader's core would have taken it. While a
        reader is the busier side (a line of pages only), or no core is idle (other work starves
        the reader of CPU, and the owner's page is answered sooner), the owner's help shortens the
        line, as before. True until a window has been measured, after a long gap (which tells
        nothing of now), and where the idle time cannot be read."""
        balance = self._balance_now()
        if balance is None or not _owner_busier(balance):
            return True
        self.stats.share_declined += 1
        return False

    def _balance_now(self) -> tuple[float, float, float] | None:
        """The last window's (the owner's cores, a reader's, the idle cores), measured anew when
        the window is over (``balance``); None before the first window, after a long gap, or
        where the idle time cannot be read."""
        gate, looks = self.balance, self.balance.looks
        alive = [r for r in self.readers if r.alive]
        gate.check(sum(r.cpu for r in alive), 0.0)
        if gate.looks != looks:  # a new window
            self._balance = None
            if alive and gate.owner is not None and gate.idle is not None and gate.readers is not None:
                self._balance = (gate.owner, gate.readers / len(alive), gate.idle)
                self.stats.balance.append(self._balance)
        return self._balance

    def _idle_seconds(self) -> float | None:
        if self.idle_source is None:
            self.idle_source = idle_source()
        return self.idle_source()

    def expected_wait(self) -> float | None:
        """Seconds the last page in line would wait for the readers: the pages queued at them and
        in line, times a reader's measured seconds per page, shared by the readers running.
        None before a reader has answered a page."""
        if self._reader_page is None:
            return None
        alive = ahead = 0
        for r in self.readers:
            if r.alive:
                alive += 1
                ahead += r.outstanding
        if not alive:
            return None
        # (a page leaves the line when it is given a slot or cancelled: every one in it is waiting;
        # asked several times a page, with up to a line of 30 under wrk)
        return (ahead + len(self._waiters)) * self._reader_page / alive

    def owner_page(self) -> float | None:
        """Seconds the owner takes for a page under load (measured), or a guess from the
        reader's until it has answered one (the owner's read costs it about what it costs a
        reader, plus the HTTP a reader spares it: ``OWNER_GUESS`` times), and again once the
        measurement is ``OWNER_STALE_SECONDS`` old."""
        if self._local_page is not None and not self._owner_stale(self.clock()):
            return self._local_page
        return None if self._reader_page is None else self._reader_page * OWNER_GUESS

    def _owner_sooner(self) -> bool:
        """The owner would answer the head page sooner than a reader would get to the last one
        in line: the queue is longer than the readers can drain in the time the owner takes."""
        wait, own = self.expected_wait(), self.owner_page()
        return wait is not None and own is not None and wait > own

    def _release(self, slot: Reader | object | None) -> None:
        if slot is HERE:
            self._here -= 1
        elif isinstance(slot, Reader):
            slot.reserved -= 1
        self._dispatch()

    def _note_reader(self, seconds: float) -> None:
        self._reader_page = seconds if self._reader_page is None else (
            self._reader_page + SMOOTHING * (seconds - self._reader_page))

    def _note_local(self, seconds: float) -> None:
        self.stats.local_pages += 1
        self.stats.local_seconds += seconds
        started = self.clock() - seconds
        stale = self._owner_stale(started)
        self._local_at = started
        self._local_page = seconds if self._local_page is None or stale else (
            self._local_page + SMOOTHING * (seconds - self._local_page))

    def _owner_stale(self, now: float) -> bool:
        """The owner's measured seconds per page are ``OWNER_STALE_SECONDS`` old at ``now`` (and a
        reader's are known, for the guess)."""
        return (self._reader_page is not None and self._local_at is not None
                and now - self._local_at >= OWNER_STALE_SECONDS)

    async def _via(self, reader: Reader, q: ItemQuery, opts: DtoOptions) -> bytes | handoff.Handed | None:
        """The page from ``reader``; None when it failed on it (logged); ReaderGone when it
        ended first. A 4xx it raised is raised here. With a hand-off (``handoff.current``: the
        HTTP side offers the client's connection, and the owner does not want the reply's bytes
        for its reply cache) the reader writes the reply to the client itself: a ``Handed`` comes
        back, and ``handoff.Lost`` when the reader ended once it had the socket."""
        names, q.names = q.names, None  # the owner's by-name index stays here
        camel = camel_case_requested.get()
        offer = handoff.current.get() if self.settings.handoff and reader.raw is not None else None
        # the store's epoch as the owner's own page would take it: before the read (the reader's)
        try:
            try:
                use = self._store_use(opts, camel) if self._store_use is not None else None
                hand = None
                if offer is not None and not offer.keeps():
                    fd = offer.fd()
                    head = await offer.head() if fd is not None else None
                    if fd is not None and head is not None and offer.fd() == fd:
                        hand = (offer, fd, head)
                sent = self.clock()
                call = reader.call(protocol.ITEMS, self.db.generations,
                                   (q, opts, camel, use.epoch if use is not None else 0), hand)
            finally:
                reader.reserved -= 1  # the call holds the slot from here (``Reader.outstanding``)
            try:
                status, payload, extra = await call
            except ReaderGone:
                if offer is not None and offer.handed:
                    raise handoff.Lost from None
                raise
        finally:
            q.names = names
            self._dispatch()
        if extra is not None and use is not None:
            self._keep(use, extra)
        if status != protocol.HANDED and offer is not None:
            offer.handed = False  # the reader did not write: the connection is the owner's again
        if status == protocol.OK or status == protocol.HANDED:
            done = self.clock()
            # the reader's seconds per page: from when it could start this one (sent, or its
            # previous answer when this one queued behind it) to the answer
            self._note_reader(done - max(sent, reader.last_done))
            reader.last_done = done
            self.stats.reader_pages += 1
            self.stats.reader_seconds += done - sent
            self.served += 1
            if status == protocol.HANDED:
                self.handed += 1
                length, written, failed, rest = payload
                if rest:
                    self.handed_back += 1
                return handoff.Handed(length, written, failed, rest)
            return cast(bytes, payload)  # the reply's bytes as they came off the connection
        if status == protocol.ERROR:
            raise payload
        log.error("A reader failed on an Items page; answered here instead:\n%s", payload)
        return None

    def _keep(self, use: StoreUse, extra: Any) -> None:
        """What a reader built for a page (fragments stamped with the epoch it was sent) to the
        owner's store writer, and the digests it found holding to the owner's marks of that epoch."""
        writes, valid, hits = extra
        self.store_hits += hits
        epoch = use.epoch
        writes = [w for w in writes if w[2] == epoch or w[2] == 0]  # (only what this page's epoch allows)
        if writes:
            use.store.put(writes)
            self.stored_back += len(writes)
        for at, shape, digests in valid:
            if at == epoch:
                use.store.mark_valid(at, shape, digests)

    def _cpu_free(self) -> bool:
        """``auto``: the machine has a core's worth of CPU for the readers (CpuGate); else always."""
        return not self.settings.gate or self.gate.check(
            sum(r.cpu for r in self.readers if r.alive), self.settings.free_cores)

    def _alive(self) -> bool:
        return any(r.alive for r in self.readers)

    def _free_reader(self) -> Reader | None:
        """The least loaded reader with fewer than ``depth`` pages queued. Another reader is
        started (up to ``max_readers``) while the ones running are all busy and the line would
        wait more than ``GROW_WAIT`` for them (measured: ``expected_wait``), not at the first
        page queued behind another: each reader is ~75 MiB more."""
        best = self._least_loaded()
        if best is None:
            self._grow()
        elif best.outstanding > 0:
            wait = self.expected_wait()
            if wait is not None and wait > GROW_WAIT:
                self._grow()
        return best if best is not None and best.outstanding < self.settings.depth else None

    def _least_loaded(self) -> Reader | None:
        best: Reader | None = None
        for reader in self.readers:
            if reader.alive and (best is None or reader.outstanding < best.outstanding):
                best = reader
        return best

    def _wake_all(self) -> None:
        """Every waiting page looks again (the pool is closing)."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    # -- starting and stopping -----------------------------------------------------------

    def _grow(self) -> None:
        alive = sum(1 for r in self.readers if r.alive)
        if self._closed or alive + self._starting >= self.settings.max_readers or self._starting:
            return
        why = "pages in flight"
        if self.settings.gate:  # auto: only on a core that stays free, or one free now for a saturated owner
            if self.gate.lasting():
                why = "a core free for a while"
            elif self.gate.saturated() and (not self.gate.quick or self._inflight > QUICK_PAGES):
                why = (f"the owner saturated ({self.gate.owner or 0.0:.2f} of a core) with {self.gate.free or 0.0:.2f} free"
                       + (f" over the first window, {self._inflight} pages in flight" if self.gate.quick else ""))
            else:
                return
        if time.monotonic() < self._retry_after:
            return
        self._starting += 1
        self._spawn_task(self._start_one(why))

    def _spawn_task(self, coro: Awaitable[Any]) -> None:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _listen(self) -> str:
        """Where readers connect: a Unix socket where there are Unix sockets (a 245 KB reply
        through one costs both processes less kernel time than through loopback TCP): an abstract
        name on Linux, else in a private folder (0700); loopback TCP on Windows. Whoever connects
        must still prove the secret before anything it sends is unpickled."""
        if self._server is None:
            # a large stream limit: a 250 KB reply is read without pausing the transport every 128 KB
            if protocol.UNIX_SOCKETS:
                if sys.platform.startswith("linux"):  # an abstract name: nothing left behind by a crash
                    name = protocol.ABSTRACT + f"reelroom-readers-{os.getpid()}-{secrets.token_hex(8)}"
                    path = "\0" + name[len(protocol.ABSTRACT):]
                else:
                    self._socket_dir = tempfile.mkdtemp(prefix="reelroom-readers-")
                    path = name = os.path.join(self._socket_dir, "s")
                self._server = await asyncio.start_unix_server(self._accept, path, limit=STREAM_LIMIT)
                self._address = protocol.UNIX_PREFIX + name
            else:
                self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0, limit=STREAM_LIMIT)
                host, port = self._server.sockets[0].getsockname()[:2]
                self._address = f"{host}:{port}"
        assert self._address is not None
        return self._address

    async def _accept(self, stream_in: asyncio.StreamReader, stream_out: asyncio.StreamWriter) -> None:
        """A connecting reader says which start it is (its secret) and its pid; anything else is
        closed."""
        try:
            head = await asyncio.wait_for(stream_in.readexactly(protocol.HEADER.size), 10)
            (size,) = protocol.HEADER.unpack(head)
            if size > 4096:
                raise ValueError("hello too long")
            body = await asyncio.wait_for(stream_in.readexactly(size), 10)
            key, pid = _parse_hello(body)
        except (asyncio.IncompleteReadError, TimeoutError, ValueError, OSError):
            stream_out.close()
            return
        for token, future in self._hellos.items():
            if hmac.compare_digest(token, key) and not future.done():
                future.set_result((pid, stream_in, stream_out))
                return
        stream_out.close()

    async def _start_one(self, why: str = "") -> None:
        """Start a reader (``why``: for the log)."""
        asked = time.monotonic()
        token = secrets.token_hex(16)
        loop = asyncio.get_running_loop()
        hello: asyncio.Future[tuple[int, asyncio.StreamReader, asyncio.StreamWriter]] = loop.create_future()
        self._hellos[token] = hello
        proc: subprocess.Popen[bytes] | None = None
        try:
            address = await self._listen()
            env = {**os.environ, protocol.ENV_ADDRESS: address, protocol.ENV_KEY: token,
                   protocol.ENV_DATABASE: self.db.url, protocol.ENV_SERVER_ID: self.server_id,
                   protocol.ENV_STORE: str(self.store.path) if self.store is not None else ""}
            started: subprocess.Popen[bytes] = await asyncio.to_thread(
                spawn.popen, reader_command(), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            proc = started
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            while not hello.done():
                if started.poll() is not None or time.monotonic() > deadline or self._closed:
                    raise ReaderGone(f"exit status {started.returncode}")
                # (woken by the hello itself, not by the next look: a look every 50 ms for the
                # process's end, the deadline and a close)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(hello), 0.05)
            pid, stream_in, stream_out = hello.result()
            reader = Reader(started, pid, stream_in, stream_out)
            if self._closed:
                reader.stop()
                return
            reader.task = asyncio.create_task(self._run(reader))
            self.readers.append(reader)
            self.started += 1
            self._dispatch()  # waiting pages may use it
            log.info("Reader process %s started (%d running; %s; ready %.1f s after it was asked for)",
                     pid, len(self.pids()), why, time.monotonic() - asked)
            if self._reaper is None or self._reaper.done():
                self._reaper = asyncio.create_task(self._reap_idle())
        except Exception as exc:
            self._retry_after = time.monotonic() + RETRY_AFTER_FAILURE_SECONDS
            if not self._closed:
                log.error("A reader process did not start (%s); requests are answered here", exc)
            if proc is not None:
                spawn.kill(proc)
                await asyncio.to_thread(proc.wait)
        finally:
            self._hellos.pop(token, None)
            self._starting -= 1

    async def _run(self, reader: Reader) -> None:
        await reader.read_replies()
        self._dispatch()  # pages waiting for slots look again (maybe no reader is left)
        if reader not in self.readers:
            return  # stopped on purpose (idle, shutdown): whoever stopped it waits for it
        self.readers.remove(reader)
        if not self._closed:
            self._spawn_task(self._end(reader))
            if self._inflight > self.settings.busy and self._cpu_free():
                self._grow()  # replace it while the load lasts

    async def _end(self, reader: Reader) -> None:
        """Wait for a reader whose connection closed to exit; kill it if it does not."""
        reader.stop()
        try:
            await asyncio.wait_for(asyncio.to_thread(reader.proc.wait), STOP_GRACE_SECONDS)
        except TimeoutError:
            spawn.kill(reader.proc)
            await asyncio.to_thread(reader.proc.wait)
        spawn.release_watchdog(reader.proc)

    async def _reap_idle(self) -> None:
        """Stop readers given nothing for ``idle_seconds``; ends when none is left."""
        while self.readers and not self._closed:
            idle = self.settings.idle_seconds  # read each round: settings may be replaced
            await asyncio.sleep(min(idle / 2, 5.0))
            now = time.monotonic()
            for reader in list(self.readers):
                if reader.outstanding == 0 and not reader.items_out and now - reader.last_used >= idle:
                    log.info("Reader process %s idle for %.0f s; stopping it", reader.pid, idle)
                    self.readers.remove(reader)
                    await self._end(reader)

    async def close(self) -> None:
        """Stop every reader (the server is stopping or restarting)."""
        self._closed = True
        readers, self.readers = self.readers, []
        self._wake_all()
        if self.settings.gate and self.gate.readings:
            log.info("CPU gate: %s", self.gate.summary(self.settings.free_cores))
        if self.stats.reader_pages or self.stats.local_pages or self.stats.gate_local:
            log.info("Reader pool: %s; %d written to the client by a reader (%d of them with an end handed back)",
                     self.stats.summary(), self.handed, self.handed_back)
        await asyncio.gather(*(self._end(r) for r in readers), return_exceptions=True)
        for task in list(self._tasks) + ([self._reaper] if self._reaper else []):
            task.cancel()
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None


def _parse_hello(body: bytes) -> tuple[str, int]:
    """``<secret>:<pid>`` in ASCII: nothing from an unproven peer is unpickled."""
    key, sep, pid = body.decode("ascii").partition(":")
    if not sep or not pid.isdigit():
        raise ValueError("not a reader's hello")
    return key, int(pid)
