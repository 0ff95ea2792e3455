"""Encoded item fragments kept on disk, so a page anywhere in a big library is bytes, not work.

The in-memory ``FragmentCache`` (fragments.py) holds a few thousand items; a page anywhere in a
library of 100k misses it and reads 100 wide rows and builds 100 DTOs (~12 ms of CPU). This store
keeps every fragment made (the encoded BaseItemDto without UserData and the closing brace, exactly
what ``dto.build_fragments`` makes) in a SQLite file of its own in the cache folder. It is a cache:
never user data, safe to delete (a corrupt or missing file is started over), and the same whatever
the main database is (SQLite or PostgreSQL).

A row: (shape, item id) -> (epoch, digest, the item's type, is_folder and runtime, body), the parts
other than the body packed in one ``meta`` blob (format 5: a page's read takes three columns a row,
``Stored``, not seven: the sqlite driver pays a GIL release and a value per column), found by
(shape, ``item_key(id)``): a 64-bit integer made of the id (its two halves mixed), kept in the
process's map of the shape's rows (``_Located``), not in an index of the file (format 7: the writer
keeps one row per (shape, key) from the owner's map; an index of random keys dirtied a page of
it per fragment written, half of the writer's CPU). Two ids with one key share a slot (the last
written wins); a row is always taken by its own ``id`` column, so such a pair only ever misses,
never answers for the other.

- **shape**: a stable 64-bit hash of the DTO shape (Fields, image options, CanDelete/CanDownload,
  server id, casing) and of the code that makes the bytes (``code_stamp``: a hash of the DTO
  modules' source), so a new build never serves an old build's bytes, and one that changed none of
  them keeps the store.
- **epoch**: what the fragment is known valid for. ``epoch(stamp)`` gives one number per
  (start of this store, stamp) pair, where the stamp is ``Database.content_generation`` and the
  configuration generation, taken *before* the read: any write of more than user data moves it,
  and a restart (with whatever was written to the main database meanwhile, by any path) starts a
  new series -- unless the last run closed cleanly and the files the fragments depend on are as it
  left them (``record_clean`` at the close, ``open(adopt)`` at the start: the start's stamp gets
  the last epoch; the record is used once, so a crash leaves none). A fragment of the current epoch is used as it is; the type, folder flag and runtime
  kept with it are all UserData needs, so such a page reads no item row and builds nothing.
- **digest**: a hash of what the fragment was made from (the very deps ``build_fragments``
  compares in memory). A fragment of an older epoch whose digest equals the digest of what a fresh
  read gives is used, not rebuilt, and marked valid for the current epoch *in memory* (``mark_valid``:
  its (shape, digest) in a set kept for the newest epoch only). Written to the file, such a
  re-stamp rewrote a 16 KiB page per fragment (~5 ms of the writer's CPU per 100), and it would be
  of no use after a restart anyway (a new series of epochs).

The read API (what another reader of the file needs): ``shape(key)`` for a DTO shape,
``epoch(stamp)`` taken before the read, ``fetch(shape, ids)`` -> {id: ``Stored``} (any epoch),
``is_current(stored, shape, epoch)``: use ``stored.body`` as it is only then (``StoreUse.fetch``
does all of this for a page; ``read`` gives the rows as SQLite does, and ``StoreUse.page`` a warm
GetItems page's rows as a list in the page's order, for ``dto.stored_reply``). Epochs are per process (``boot`` and a counter): a second process
reading the file needs its own series, or the owner's numbers.

Reads run on the caller's thread (one connection per thread, a small page cache: the bytes live
in the OS page cache, not in the process). A page's fragments are read by rowid: each process keeps
where the rows of a shape it reads are (``_Located``: its keys and rowids in two sorted arrays, 16
bytes a fragment, read sorted from the (n, shape, key) index at the shape's first read and brought
up to date before each read (and before each of the writer's batches) by the rows written since,
``rowid > high``: rowids only grow, AUTOINCREMENT; merged into the arrays in memory every
``_RECENT`` of them), so the 100 lookups of a page walk no index (and a page whose rows are
neighbours in the file is one range of rowids, found from its first and last ids alone when
they are close). What the map says is only a place
to look: a row is used when its shape is the asked one and its ``id`` one of the asked ids, so a
row moved, pruned or taken by another id sharing the key is a miss, never another's answer. Writes are queued and made by one writer thread in
batches (WAL, synchronous=OFF), never on the event loop and never on the request's path; a queue
that falls behind drops batches (they are only a cache). The file is bounded: above ``max_bytes``
the fragments least recently stamped go first.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import hashlib
import logging
import os
import sqlite3
import struct
import sys
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

log = logging.getLogger(__name__)

FORMAT = 7  # bump when the layout or the meaning of a row changes (PRAGMA user_version; another: start over)
DEFAULT_MAX_MIB = 512.0
_QUEUE_LIMIT = 64  # batches waiting for the writer; more are dropped
_CHUNK = 500  # ids per IN list
#: SQLite's page cache of a reading thread's connection. A page's rows are read by rowid (no index
#: walk: ``_Located``), so the cache holds the table's few interior pages and the page's leaves:
#: 256 KiB reads as fast as 1 MiB did (bench at 50k fragments: 0.33 / 0.60 ms a page of
#: neighbours / ids anywhere either way) and leaves each reading thread ~0.75 MiB less to keep,
#: more than the map's 16 bytes a fragment. (Format 3 walked the (shape, key) index: 4 MiB kept it
#: cached, 0.43 -> 0.32 ms, for ~15 MiB of RSS after browsing.) The bytes live in the OS page cache.
_READ_CACHE_KIB = 256
#: The file's page size. A read copies whole pages from the OS page cache (a pread each): 8 KiB
#: pages hold three 2.3 KB fragments and copy half of what 16 KiB pages did for a fragment read
#: alone (bench/store_read.py, ids anywhere: ~x1.2), in a file of the same size.
_PAGE_SIZE = 8192
#: Seconds without a batch after which the writer closes its connection (opened again by the next
#: batch, ~1 ms on the writer's thread): its page cache (1 MiB) was full after any fill of a big
#: library and stayed so for the process's life (1.06 MiB of SQLite's 1.44 in a used 100k server)
_WRITER_IDLE_SECONDS = 5.0
#: Fragments located in memory per process (``_Located``, 16 bytes each): past it the maps of the
#: shapes read least recently are dropped (a shape without a map reads through the index).
_LOCATED_LIMIT = 400_000


#: A row's ``meta`` column: the epoch (first, so ``StoreUse.fetch`` tests it on the bytes), a flags
#: byte (1: a folder; 2: a run time is kept; 4: no digest), the run time (0 when none), the digest's
#: length; then the digest and the type's UTF-8.
_META = struct.Struct(">qBqB")
_EPOCH = struct.Struct(">q")


def pack_meta(epoch: int, digest: bytes | None, type: str, is_folder: int, run_time_ticks: int | None) -> bytes:
    """A row's ``meta`` column (see ``_META``). A digest is at most 255 bytes (``_digest``'s are 16)."""
    flags = (1 if is_folder else 0) | (0 if run_time_ticks is None else 2) | (4 if digest is None else 0)
    kept = b"" if digest is None else digest
    return _META.pack(epoch, flags, run_time_ticks or 0, len(kept)) + kept + type.encode()


class _Row(NamedTuple):
    """A row as a page's read gives it (``_COLUMNS``)."""

    id: str
    body: bytes
    meta: bytes


class Stored(_Row):
    """A fragment read from the store, with what UserData needs of its item: a tuple (id, body,
    meta) as the row comes from SQLite (``FragmentStore.fetch``: three columns, not seven; each
    column costs the sqlite driver a release and a re-take of the GIL, a value made and SQLite a
    column decoded, ~1k instructions a column a row), the other parts read from ``meta`` when asked
    (a warm page asks ``is_folder`` of each row, the rest only of a fragment not of the epoch or an
    item with the viewer's data). ``Stored(id, epoch, digest, type, is_folder, run_time_ticks,
    body)`` makes one."""

    __slots__ = ()

    def __new__(cls, id: str, epoch: int, digest: bytes | None, type: str, is_folder: int,
                run_time_ticks: int | None, body: bytes) -> Stored:
        return tuple.__new__(cls, (id, body, pack_meta(epoch, digest, type, is_folder, run_time_ticks)))

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple.__new__, (Stored, tuple(self))

    @property
    def epoch(self) -> int:
        value: int = _EPOCH.unpack_from(self[2])[0]
        return value

    @property
    def is_folder(self) -> int:
        return self[2][8] & 1

    @property
    def run_time_ticks(self) -> int | None:
        _, flags, ticks, _ = _META.unpack_from(self[2])
        return ticks if flags & 2 else None

    @property
    def digest(self) -> bytes | None:
        meta = self[2]
        if meta[8] & 4:
            return None
        return meta[_META.size:_META.size + meta[_META.size - 1]]

    @property
    def type(self) -> str:
        meta = self[2]
        return meta[_META.size + meta[_META.size - 1]:].decode()

    @staticmethod
    def folders(rows: Iterable[Stored | Row]) -> list[Stored | Row]:
        """Those of ``rows`` that are folders (``is_folder``, tested on the bytes: no call a row)."""
        return [r for r in rows if r[2][8] & 1]

    def __repr__(self) -> str:
        return f"Stored(id={self.id!r}, epoch={self.epoch}, type={self.type!r}, body={len(self.body)} bytes)"


#: One write: (shape, id, epoch, digest, type, is_folder, run_time_ticks, body).
Write = tuple[int, str, int, bytes | None, str, int, int | None, bytes]
_VALID_LIMIT = 150_000  # fragments marked valid for the newest epoch (24-byte keys: ~100 B each, ~15 MB)

# A rowid table: new fragments are appended (a WITHOUT ROWID table keyed by the random ids wrote a
# random 16 KiB page per fragment: 8 ms of the writer's CPU per 100 against 1.3), found through the
# (shape, id) index.
_SCHEMA = (
    # (AUTOINCREMENT: a rowid is never given twice, so the rows written since a read are those
    # past the highest rowid it saw: _Located)
    "CREATE TABLE IF NOT EXISTS fragments (n INTEGER PRIMARY KEY AUTOINCREMENT, shape INTEGER NOT NULL, "
    # (format 5: the digest, type, folder flag and run time in one ``meta`` blob (``pack_meta``), the
    # epoch there too (and in its own column, for the prune and the writer's test): a read takes
    # three columns, ``Stored``)
    "key INTEGER NOT NULL, id TEXT NOT NULL, epoch INTEGER NOT NULL, meta BLOB NOT NULL, body BLOB NOT NULL)",
    # (format 7: no (shape, key) index. Its entries were random, so each fragment written dirtied
    # one of its leaves (at 50k fragments a batch of 100 wrote 111 WAL frames of 8 KiB, each
    # copied again by the checkpoint; 45 without it): half of the writer's CPU there, ~1 ms a cold
    # page of 100. A (shape, key) is kept to one row by the writer instead, from the
    # owner's map of where each key's row is (``_Located``, caught up before each batch: the
    # writer is the file's only one), and the maps are read from ix_fragments_n, sorted)
    "CREATE INDEX IF NOT EXISTS ix_fragments_epoch ON fragments (epoch)",
    # (format 6: the rows written since a map was read, in rowid order, from an index of their own
    # (_locate's catch-up): the table's pages hold the bodies, ~3 rows a page, so reading ``n, shape,
    # key`` of a cold page's 100 new rows from the table read ~33 pages (~0.3 ms of the page's CPU in
    # the owner and again in each reader), from this index one or two; its entries are appended, in
    # rowid order: ~0.03 ms of the writer's per 100 rows)
    "CREATE INDEX IF NOT EXISTS ix_fragments_n ON fragments (n, shape, key)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    # what a clean close left: the state of the files the fragments depend on and the epoch that
    # was current then (record_clean; the next open takes it away, whatever it decides)
    "CREATE TABLE IF NOT EXISTS closed (one INTEGER PRIMARY KEY CHECK (one = 1), state TEXT NOT NULL, "
    "epoch INTEGER NOT NULL)",
    # and the (shape, digest) keys of older fragments found valid in that epoch (mark_valid)
    "CREATE TABLE IF NOT EXISTS closed_valid (key BLOB PRIMARY KEY) WITHOUT ROWID",
)


def files_state(paths: Iterable[Path]) -> str:
    """What identifies the contents of these files without reading them: inode, size, mtime and
    ctime (which no tool sets back) of each; a missing or empty file is "-" (a SQLite ``-wal`` file
    is deleted by the last clean close and made again, empty, by the next connection)."""
    parts = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            parts.append(f"{path}:-")
            continue
        parts.append(f"{path}:-" if not st.st_size and str(path).endswith("-wal") else
                     f"{path}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
    return "\n".join(parts)


def code_stamp(files: Iterable[Path], version: str) -> str:
    """What identifies the code that makes fragments: the store's format, the Python and msgspec
    versions and the *contents* of the modules' source files (a blake2b of them), so a reinstall,
    a ``git pull`` or an upgrade that leaves them as they were keeps the store, and any change of
    one of them starts it over (another stamp: other shapes). Where a file cannot be read (a
    frozen bundle keeps its modules in an archive) the stamp is the version, as before."""
    import msgspec

    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{FORMAT}|{sys.version_info[0]}.{sys.version_info[1]}|{msgspec.__version__}".encode())
    for path in files:
        try:
            data = Path(path).read_bytes()
        except OSError:
            return f"{version}|{FORMAT}|frozen"
        digest.update(b"\0%d\0" % len(data))
        digest.update(data)
    return digest.hexdigest()


def _stable(value: Any) -> Any:
    """A shape's parts with sets in a fixed order (a frozenset's order changes between runs)."""
    if isinstance(value, frozenset | set):
        return ("set", tuple(sorted(repr(_stable(v)) for v in value)))
    if isinstance(value, tuple | list):
        return tuple(_stable(v) for v in value)
    return value


def item_keys(ids: Sequence[str]) -> list[int]:
    """The store's integer keys of item ids. A 32-hex id's key is its high 64-bit half xor-ed with
    its low half and that half shifted right by 29 (a one-to-one map of the low half: ids sharing
    either half still differ), as a signed 64-bit number; any other id's is a hash of it. Two ids
    may share a key: rows are matched by their ``id`` column too (see the module's notes). Made
    for a page's ids at once (one hex decode and one unpack, in C: ~0.35 us an id)."""
    if all(len(i) == 32 for i in ids):
        with contextlib.suppress(ValueError):  # (a letter past f: one by one)
            # (fromhex skips whitespace: 32 characters each and 16 bytes each out means none was)
            raw = bytes.fromhex("".join(ids))
            if len(raw) == 16 * len(ids):
                halves = struct.unpack(f">{2 * len(ids)}q", raw)
                return [h ^ lo ^ (lo >> 29) for h, lo in zip(halves[::2], halves[1::2], strict=True)]
    return [item_key(i) for i in ids] if len(ids) > 1 else [_hashed_key(i) for i in ids]


def item_key(item_id: str) -> int:
    """``item_keys`` of one id."""
    return item_keys((item_id,))[0]


def _hashed_key(item_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(item_id.encode(), digest_size=8).digest(), "big", signed=True)


_COLUMNS = "id, body, meta"  # Stored's
#: a row as SQLite gives it (``FragmentStore.read``): ``Stored``'s three columns in a plain tuple
Row = tuple[str, bytes, bytes]
_ROW_ID = itemgetter(0)


@functools.lru_cache(maxsize=64)
def _rowid_sql(n: int) -> str:
    """``FragmentStore.fetch``'s statement for ``n`` rowids (0 where none: no row has it); the
    shape is checked by SQLite (the id by ``fetch``); ``+shape``: a test of each row, not the (shape,
    key) index, which the planner would otherwise walk for every row of the shape)."""
    return f"SELECT {_COLUMNS} FROM fragments WHERE n IN (" + ",".join("?" * n) + ") AND +shape = ?"


#: ``FragmentStore.fetch``'s statement for a page whose rows are neighbours in the file (a listing
#: stored in its order): one range of rowids, not a lookup of each (~30 us less a page of 100 at
#: 100k; the rows between them that were not asked are checked and left, as any row)
_RANGE_SQL = f"SELECT {_COLUMNS} FROM fragments WHERE n BETWEEN ? AND ? AND +shape = ?"
#: ``_RANGE_SQL`` for the rows of one epoch (``FragmentStore.read``'s page: SQLite tests the epoch,
#: not Python a row)
_RANGE_EPOCH_SQL = _RANGE_SQL + " AND +epoch = ?"
#: after a range with no row of the epoch, the epoch's statement is tried again every this many ranges
_EPOCH_RETRY = 32
#: a range is read when it holds at most this many rows per id asked
_RANGE_SLACK = 1.25
#: more ids than this are first read as the range between the first and the last id's places
#: (found in the map: 2 lookups, not one per id), when that range is short enough: a page of a
#: listing stored in its order is then one statement and ~2% of the keys and lookups; the ids it
#: did not hold are then looked up and read as before
_ENDS_FIRST = 8


class _Located:
    """Where a shape's fragments are in the file, in this process: their keys in order and the
    rowid of each (two arrays, 16 bytes a fragment), and those written since the arrays were read
    (``recent``, a dict until it holds ``_RECENT`` of them: then the arrays are read again). A key
    is found by bisection within its bucket (``starts``: where the keys of each of ~n/32 equal
    slices of the 64-bit range begin, ~0.25 bytes a fragment): ~5 probes, not ~17 (each probe
    of an array makes an int). (~n/8 slices took ~3 probes, 10% less of a find, but a bisection
    each to make: ~7 ms of a merge at 70k, every ``_RECENT`` rows written while a library is filled.)"""

    __slots__ = ("keys", "recent", "rowids", "shift", "starts", "used")

    def __init__(self, keys: array[int], rowids: array[int]) -> None:
        self.keys = keys
        self.rowids = rowids
        self.recent: dict[int, int] = {}
        self.used = 0.0
        bits = max(0, len(keys).bit_length() - 5)
        self.shift = 64 - bits
        at = bisect.bisect_left
        self.starts = array("q", [at(keys, (j << self.shift) - _HALF) for j in range(1 << bits)])
        self.starts.append(len(keys))

    def merged(self) -> _Located:
        """This map with ``recent`` merged into its arrays (a key there already takes its new
        place; a place 0 drops it): slices of the arrays copied between the recent keys' places,
        ~1 us a recent key, not a read of the shape's every row."""
        keys, rowids = self.keys, self.rowids
        new_keys, new_rowids = array("q"), array("q")
        at = bisect.bisect_left
        end = len(keys)
        pos = 0
        recent = self.recent
        for k in sorted(recent):  # (ints: sorted without a tuple compared)
            r = recent[k]
            i = at(keys, k, pos)
            if i > pos:
                new_keys += keys[pos:i]
                new_rowids += rowids[pos:i]
            pos = i + 1 if i < end and keys[i] == k else i
            if r:
                new_keys.append(k)
                new_rowids.append(r)
        new_keys += keys[pos:]
        new_rowids += rowids[pos:]
        return _Located(new_keys, new_rowids)

    def find(self, keys: Iterable[int]) -> list[int]:
        """The rowid of each key (0: not in the file when last looked)."""
        recent, ks, rs, starts, shift, at = self.recent, self.keys, self.rowids, self.starts, self.shift, \
            bisect.bisect_left
        out: list[int] = []
        append = out.append
        for k in keys:
            r = recent.get(k) if recent else None  # (usually no row written since the map was read)
            if r is None:
                j = (k + _HALF) >> shift
                hi = starts[j + 1]
                i = at(ks, k, starts[j], hi)
                r = rs[i] if i < hi and ks[i] == k else 0
            append(r)
        return out


#: the writer's statements (``_run``): a new (shape, key) appended; one with a row rewritten in place
#: by its rowid (an older epoch's row only, as the format 6 upsert); its row gone since the map saw
#: it (pruned): appended
_INSERT_SQL = "INSERT INTO fragments (shape, key, id, epoch, meta, body) VALUES (?, ?, ?, ?, ?, ?)"
_UPDATE_SQL = ("UPDATE fragments SET id = ?, epoch = ?, meta = ?, body = ? "
               "WHERE n = ? AND shape = ? AND key = ? AND epoch <= ?")
_INSERT_GONE_SQL = ("INSERT INTO fragments (shape, key, id, epoch, meta, body) SELECT ?, ?, ?, ?, ?, ? "
                    "WHERE NOT EXISTS (SELECT 1 FROM fragments WHERE n = ?)")


def _sequence(conn: sqlite3.Connection) -> int:
    """The highest rowid the fragments table has given (AUTOINCREMENT's sequence; 0: none yet)."""
    found = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'fragments'").fetchone()
    return int(found[0]) if found else 0


#: the rows written since rowid ? (``_locate``): SQLite reads them from ix_fragments_n alone (a covering
#: index, no table page; tests/library/query/test_fragment_store.py checks the plans)
_CATCH_UP_SQL = "SELECT n, shape, key FROM fragments WHERE n > ? ORDER BY n LIMIT ?"
_CATCH_UP_RANGE_SQL = "SELECT n, shape, key FROM fragments WHERE n > ? AND n <= ?"

_HALF = 1 << 63  # (a signed 64-bit key plus this is its place in 0 .. 2**64)
_RECENT = 4096  # fragments written since a shape's map was read: then it is read again (~0.4 MB at most)


class FragmentStore:
    """Encoded fragments on disk (see the module's notes). ``open()`` before use; a store that
    cannot be opened is off (``enabled`` False) and every call is a miss."""

    def __init__(self, path: Path, max_bytes: int = int(DEFAULT_MAX_MIB * 1024 * 1024),
                 stamp: str | Callable[[], str] = "") -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._stamp_source = stamp
        self.stamp = stamp if isinstance(stamp, str) else ""
        self.enabled = False
        #: set once ``open`` is over (the store on or off) or the store closes: ``wait_open``
        self._settled = threading.Event()
        self.boot = 0
        self.adopted = 0  # the last run's epoch taken over by ``open`` (0: none)
        self._local = threading.local()
        self._generation = 0  # bumped by a start-over: per-thread connections opened before it reconnect
        self._restart_lock = threading.Lock()
        self._epochs: dict[Hashable, int] = {}
        self._seq = 0
        self._newest = 0  # the epoch given last
        #: (epoch, the (shape, digest) keys of stored fragments found still valid in it): mark_valid
        self._valid: tuple[int, set[bytes]] = (0, set())
        self._epoch_lock = threading.Lock()
        self._shapes: dict[Hashable, int] = {}
        #: where the fragments of the shapes read are (see the module's notes): by shape, with the
        #: highest rowid seen and the generation of the file they were read from
        self._located: dict[int, _Located] = {}
        self._located_high = 0
        self._located_generation = -1
        self._located_lock = threading.Lock()
        #: (epoch, ranges read since one of it found no row of it): ``read``'s epoch statement
        self._epoch_misses = (0, 0)
        self._pending: deque[list[Write]] = deque()
        self._wake = threading.Condition()
        self._writer: threading.Thread | None = None
        self._closing = False
        self._busy = False
        self.hits = 0  # fragments of the current epoch used as they were (StoreUse.fetch)
        self.dropped = 0  # batches dropped because the writer was behind
        self.written = 0  # rows written
        self.write_seconds = 0.0  # the writer thread's CPU
        #: called on the writer's thread once it closed its idle connection (``_WRITER_IDLE_SECONDS``):
        #: the owner's heap trim (``memory.trim``, set by the server's context), or nothing
        self.trim_heap: Callable[[], object] = lambda: None

    # -- opening ----------------------------------------------------------------------------

    def _connect(self, cache_kib: int = 1024) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=2.0)
        conn.execute(f"PRAGMA cache_size=-{cache_kib}")  # the bytes live in the OS page cache
        conn.execute("PRAGMA synchronous=OFF")
        return conn

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                os.remove(str(self.path) + suffix)

    def open(self, adopt: tuple[str, Hashable] | None = None) -> bool:
        """Open (or create) the file and start a new series of epochs; a corrupt file is started
        over. False (and the store stays off) when it cannot be used at all.

        ``adopt``: (the state of what the fragments are made from, as ``record_clean`` was given
        it, taken now; the stamp current now, taken before it). When the last run closed cleanly
        and left exactly that state (and this code: ``stamp``), its last epoch is this stamp's:
        the fragments current at that close are current again, not re-checked one by one. Any
        other case (a crash: no record; a write while stopped, a migration, another
        configuration: another state; a new build: another code stamp) starts a new series."""
        if callable(self._stamp_source):
            self.stamp = self._stamp_source()
            self._shapes.clear()
        for attempt in range(2):
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = self._connect()
                try:
                    version = conn.execute("PRAGMA user_version").fetchone()[0]
                    tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                    if tables and version != FORMAT:
                        raise sqlite3.DatabaseError(f"the fragment store's format is {version}, not {FORMAT}")
                    # (a new file's page size: see _PAGE_SIZE)
                    conn.execute(f"PRAGMA page_size={_PAGE_SIZE}")
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute(f"PRAGMA user_version={FORMAT}")
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    # (no integrity check: it reads the whole file; a damaged page raises on use,
                    # and the store starts over then)
                    conn.execute("BEGIN IMMEDIATE")
                    found = conn.execute("SELECT value FROM meta WHERE key = 'boot'").fetchone()
                    boot = (found[0] if found else 0) + 1
                    conn.execute("INSERT INTO meta (key, value) VALUES ('boot', ?) "
                                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (boot,))
                    closed = conn.execute("SELECT state, epoch FROM closed").fetchone()
                    adopted = adopt is not None and attempt == 0 and closed is not None \
                        and closed[0] == self._closed_state(adopt[0]) and closed[1] >> 32 < boot
                    valid = {k for (k,) in conn.execute("SELECT key FROM closed_valid")} if adopted else set()
                    conn.execute("DELETE FROM closed")  # (used once: a crash after this leaves none)
                    conn.execute("DELETE FROM closed_valid")
                    conn.execute("COMMIT")
                finally:
                    conn.close()
                self.boot = boot
                self.adopted = 0
                if adopted and adopt is not None and closed is not None:
                    with self._epoch_lock:
                        self._epochs[adopt[1]] = self._newest = self.adopted = int(closed[1])
                        self._valid = (self.adopted, valid)
                self.enabled = True
                self._settled.set()
                return True
            except (sqlite3.Error, OSError) as exc:
                if attempt == 0:
                    log.warning("Fragment store %s unusable (%s); starting it over", self.path, exc)
                    self._remove_files()
                else:
                    log.warning("Fragment store %s is off: %s", self.path, exc)
        self.enabled = False
        self._settled.set()
        return False

    def wait_open(self, timeout: float, stop: Callable[[], bool] = lambda: False) -> bool:
        """Wait up to ``timeout`` seconds for ``open`` (run on a thread of its own beside the
        server's start) to be over; whether the store is on. A close, or ``stop()`` turning true
        (looked at every quarter of a second), ends the wait."""
        deadline = time.monotonic() + timeout
        while not self._settled.wait(max(0.0, min(0.25, deadline - time.monotonic()))):
            if stop() or time.monotonic() >= deadline:
                break
        return self.enabled and not self._closing

    def _closed_state(self, state: str) -> str:
        return f"{FORMAT}\n{self.stamp}\n{state}"

    def record_clean(self, state: str, stamp: Hashable) -> bool:
        """A clean close (after ``close`` and after the main database's last write and close):
        keep ``state`` (``files_state`` of the database and configuration files) with the epoch
        of ``stamp`` (the content and configuration generations now), and the older fragments found
        still valid in it (``mark_valid``: ~24 bytes each, at most 150k), for the next ``open``."""
        if not self.enabled:
            return False
        epoch = self.epoch(stamp)
        with self._epoch_lock:
            kept_epoch, kept = self._valid
            valid = list(kept) if kept_epoch == epoch else []
        try:
            conn = self._connect()
            try:
                conn.execute("BEGIN")
                conn.execute("DELETE FROM closed_valid")
                conn.executemany("INSERT OR IGNORE INTO closed_valid (key) VALUES (?)", ((k,) for k in valid))
                conn.execute("INSERT INTO closed (one, state, epoch) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE "
                             "SET state = excluded.state, epoch = excluded.epoch", (self._closed_state(state), epoch))
                conn.execute("COMMIT")
            finally:
                conn.close()
        except sqlite3.Error as exc:
            log.warning("Fragment store %s: the clean close was not recorded (%s)", self.path, exc)
            return False
        return True

    def _conn(self) -> sqlite3.Connection:
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is None or getattr(local, "generation", -1) != self._generation:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            conn = local.conn = self._connect(_READ_CACHE_KIB)
            local.generation = self._generation
        return conn

    def _start_over(self, exc: BaseException, generation: int) -> None:
        """A read or write failed (the file was deleted, damaged...): begin again with an empty file
        (once, whichever thread saw it first: ``generation`` is the one the failing connection had)."""
        with self._restart_lock:
            if generation != self._generation:
                return  # another thread started it over already
            log.warning("Fragment store %s failed (%s); starting it over", self.path, exc)
            self._generation += 1
            self._remove_files()
            self.enabled = False
            self.open()

    # -- keys -------------------------------------------------------------------------------

    def shape(self, key: Hashable) -> int:
        """A stable signed 64-bit number for a DTO shape and this code (``stamp``)."""
        found = self._shapes.get(key)
        if found is None:
            text = repr((_stable(key), self.stamp)).encode()
            found = int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big", signed=True)
            if len(self._shapes) > 4096:
                self._shapes.clear()
            self._shapes[key] = found
        return found

    def epoch(self, stamp: Hashable) -> int:
        """One number per (this start of the store, ``stamp``); a stamp not seen before gets a new
        one, so two stamps never share an epoch (and epochs grow: the oldest are pruned first)."""
        with self._epoch_lock:
            found = self._epochs.get(stamp)
            if found is None:
                if len(self._epochs) > 1024:
                    self._epochs.clear()
                self._seq += 1
                found = self._epochs[stamp] = (self.boot << 32) | (self._seq & 0xFFFFFFFF)
                self._newest = found
            return found

    # -- reading ----------------------------------------------------------------------------

    def fetch(self, shape: int, ids: Sequence[str]) -> dict[str, Stored]:
        """The stored fragments of ``ids`` under ``shape`` (any epoch), by id (a row is keyed by
        its own id: one of another id sharing a key is not one of ``ids``'s)."""
        new = tuple.__new__  # (the row as it is: Stored is its three columns; not Stored.__new__, which packs)
        found = self.read(shape, ids)
        return {i: new(Stored, row) for i, row in found.items()}  # type: ignore[union-attr]

    def read(self, shape: int, ids: Sequence[str], epoch: int = 0) -> dict[str, Row] | list[Row]:
        """``fetch``'s rows as SQLite gives them (plain ``(id, body, meta)`` tuples, no ``Stored``
        made), by id; or, with ``epoch``, a list of ``ids``'s rows in their order when those rows
        are the whole of one range of the file (in that order or its reverse: a listing the store
        was filled by) and all of ``epoch`` (``StoreUse.page``: the range's statement takes only
        the epoch's rows, so no row is tested in Python, and the ids are compared in one C pass;
        no dict is made). Rows of another epoch in such a range are then read by rowid (the whole
        range again when none was of the epoch, as after a write)."""
        if not self.enabled or not ids:
            return {}
        out: dict[str, Row] = {}
        generation = self._generation
        try:
            conn = self._conn()
            located = self._locate(conn, shape, generation)
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start:start + _CHUNK] if len(ids) > _CHUNK else ids
                # by rowid (one lookup in the table, not two; neighbours as one range), each row
                # checked: of this shape (SQLite), and one of the asked ids (the place may since
                # hold another; a range also holds rows not asked: those are dropped at the end)
                skip = None
                if len(chunk) > _ENDS_FIRST:
                    # (a listing stored in its order: the first and last ids' places tell the range,
                    # and only the ids it did not hold are looked up, not all of them)
                    first, last = located.find(item_keys((chunk[0], chunk[-1])))
                    low, high = (first, last) if first < last else (last, first)
                    if low and high - low < _RANGE_SLACK * len(chunk):
                        rows = []
                        misses = self._epoch_misses
                        # (only the rows of the epoch: the others are read by rowid below; after
                        # a range that held none of them, as after a write, only every
                        # _EPOCH_RETRY-th range of that epoch asks: such a statement cost ~100k)
                        if epoch and (misses[0] != epoch or not misses[1] % _EPOCH_RETRY):
                            rows = conn.execute(_RANGE_EPOCH_SQL, (low, high, shape, epoch)).fetchall()
                            self._epoch_misses = (epoch, 0 if rows else (misses[1] if misses[0] == epoch else 0) + 1)
                            if chunk is ids and len(rows) == len(ids):
                                if first > last:
                                    rows.reverse()
                                if list(map(_ROW_ID, rows)) == ids:
                                    return rows
                        elif epoch:
                            self._epoch_misses = (epoch, misses[1] + 1)
                        if not rows:  # (no row of the epoch, e.g. after a write: every row, as fetch reads them)
                            rows = conn.execute(_RANGE_SQL, (low, high, shape)).fetchall()
                            skip = (low, high)
                        out.update(zip(map(_ROW_ID, rows), rows, strict=True))
                        chunk = [i for i in chunk if i not in out]
                        if not chunk:
                            continue
                rowids = located.find(item_keys(chunk))
                if skip is not None:  # (a place in the range read already holds another row now)
                    rowids = [0 if skip[0] <= r <= skip[1] else r for r in rowids]
                known = [r for r in rowids if r]
                if not known:
                    continue  # (none in the file when last looked)
                low, high = min(known), max(known)
                rows = (conn.execute(_RANGE_SQL, (low, high, shape)) if high - low < _RANGE_SLACK * len(chunk)
                        else conn.execute(_rowid_sql(len(chunk)), (*rowids, shape))).fetchall()
                out.update(zip(map(_ROW_ID, rows), rows, strict=True))
        except sqlite3.Error as exc:
            self._start_over(exc, generation)
            return {}
        asked = set(ids)
        if not out.keys() <= asked:  # (rows of ids not asked: dropped)
            out = {i: row for i, row in out.items() if i in asked}
        return out

    def _locate(self, conn: sqlite3.Connection, shape: int, generation: int) -> _Located:
        """The map of ``shape``'s rows, brought up to date with the rows written since it was last
        (one statement from the highest rowid seen: nothing to read when nothing was written). The
        first read of a shape (or after a catch-up of ``_RECENT`` rows: the others may be missing)
        reads its keys and rowids from ix_fragments_n, sorted by key (~70 ms for 70k fragments,
        once); after ``_RECENT`` rows of the shape caught up they are merged into its arrays
        (``_Located.merged``, ~5 ms at 50k). The writer's batches call it too: its map must hold
        every row of the shape (``_placed``)."""
        with self._located_lock:
            if self._located_generation != generation:  # a new file (started over, reopened)
                self._located.clear()
                self._located_high = 0
                self._located_generation = generation
            located = self._located
            high = self._located_high
            found = located.get(shape)
            if found is not None or located:
                # (at most _RECENT rows, one at a time: after a long run of writes with no read here,
                # e.g. a first pass whose pages a reader process built, every map is read again
                # instead; a catch-up of 50k rows left ~6 MB of small objects in the owner's heap)
                added = 0
                for n, row_shape, key in conn.execute(_CATCH_UP_SQL, (high, _RECENT)):
                    seen = located.get(row_shape)
                    if seen is not None:
                        seen.recent[key] = n
                    high = n
                    added += 1
                self._located_high = high
                if added >= _RECENT:
                    located.clear()
                    found = None
                if found is not None:
                    if len(found.recent) >= _RECENT:
                        # (its rows written since: merged into the arrays in memory, not the whole
                        # map read again: a sort of every row of the shape in SQLite, ~1 us a row,
                        # every _RECENT rows written while a library is filled)
                        found = located[shape] = found.merged()
                    found.used = time.monotonic()
                    return found
            # (read in one transaction with the highest rowid: a row written meanwhile is past it)
            conn.execute("BEGIN")
            try:
                top = conn.execute("SELECT max(n) FROM fragments").fetchone()[0] or 0
                # (as two hex texts, not a row each: 50k rows made ~6 MB of small Python objects
                # whose pymalloc arenas stayed in the process, bench/reader_memory.py; in the
                # subquery's order, which SQLite's aggregate keeps: were it not, a key not found
                # would only be a miss)
                hex_keys, hex_rowids = conn.execute(
                    "SELECT group_concat(printf('%016x', key), ''), group_concat(printf('%016x', n), '') "
                    "FROM (SELECT key, n FROM fragments WHERE shape = ? ORDER BY key, n DESC)", (shape,)).fetchone()
            finally:
                conn.execute("COMMIT")
            keys, rowids = array("q"), array("q")
            keys.frombytes(bytes.fromhex(hex_keys or ""))
            rowids.frombytes(bytes.fromhex(hex_rowids or ""))
            if sys.byteorder == "little":  # (the texts are big-endian)
                keys.byteswap()
                rowids.byteswap()
            fresh = _Located(keys, rowids)
            fresh.used = time.monotonic()
            if located and top > high:  # rows past the old high of the other shapes: catch them up
                for n, row_shape, key in conn.execute(_CATCH_UP_RANGE_SQL,
                                                      (high, top)).fetchall():
                    seen = located.get(row_shape)
                    if seen is not None:
                        seen.recent[key] = n
            self._located_high = max(high, top)
            located[shape] = fresh
            total = sum(len(m.keys) + len(m.recent) for m in located.values())
            for other in sorted(located, key=lambda s: located[s].used):
                if total <= _LOCATED_LIMIT or other == shape:
                    break
                total -= len(located[other].keys) + len(located[other].recent)
                del located[other]
            return fresh

    @staticmethod
    def valid_key(shape: int, digest: bytes) -> bytes:
        return shape.to_bytes(8, "big", signed=True) + digest

    def mark_valid(self, epoch: int, shape: int, digests: Iterable[bytes]) -> None:
        """Stored fragments (by their digest) found to hold in ``epoch``: current for the rest of it.
        Only the newest epoch is kept (an older one is over: no reply will ask for it)."""
        with self._epoch_lock:
            if epoch != self._newest:
                return
            kept_epoch, kept = self._valid
            if kept_epoch != epoch or len(kept) > _VALID_LIMIT:
                kept = set()
                self._valid = (epoch, kept)
            key = self.valid_key
            kept.update(key(shape, d) for d in digests)

    def marked(self, epoch: int) -> set[bytes] | None:
        """The (shape, digest) keys (``valid_key``) marked valid in ``epoch``; None when none are."""
        kept_epoch, kept = self._valid
        return kept if kept_epoch == epoch and kept else None

    def is_current(self, stored: Stored, shape: int, epoch: int) -> bool:
        """Whether a stored fragment may be used as it is in ``epoch``."""
        if stored[2][:8] == _EPOCH.pack(epoch):
            return True
        kept_epoch, kept = self._valid
        return epoch == kept_epoch and stored.digest is not None and self.valid_key(shape, stored.digest) in kept

    # -- writing ----------------------------------------------------------------------------

    def put(self, writes: list[Write]) -> None:
        """Queue fragments to keep; the writer thread makes them in one transaction."""
        if not writes or not self.enabled or self._closing:
            return
        with self._wake:
            if len(self._pending) >= _QUEUE_LIMIT:
                self.dropped += 1
                return
            self._pending.append(writes)
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="fragment-store", daemon=True)
                self._writer.start()
            self._wake.notify()

    def backlog(self) -> int:
        """Batches queued for the writer (a background fill waits while there are a few)."""
        return len(self._pending)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until the queued writes are made (tests, benchmarks)."""
        with self._wake:
            self._wake.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        while True:
            with self._wake:
                ready = bool(self._wake.wait_for(lambda: self._pending or self._closing,  # (not the deque: cleared below)
                                                 None if conn is None else _WRITER_IDLE_SECONDS))
                if ready:
                    if not self._pending and self._closing:
                        break
                    batches = list(self._pending)
                    self._pending.clear()
                    self._busy = True
            if not ready:  # (no batch for a while: the connection and its page cache go, out of the lock)
                if conn is not None:
                    with contextlib.suppress(sqlite3.Error):
                        conn.close()
                    conn = None
                    self.trim_heap()
                continue
            started = time.thread_time()
            generation = self._generation
            try:
                if conn is None or getattr(self, "_writer_generation", -1) != self._generation:
                    if conn is not None:
                        with contextlib.suppress(sqlite3.Error):
                            conn.close()
                    conn = self._connect()
                    self._writer_generation = self._generation
                inserts, updates = self._placed(conn, [w for batch in batches for w in batch], generation)
                conn.execute("BEGIN")
                before = after = -1
                if inserts:
                    before = _sequence(conn)
                    conn.executemany(_INSERT_SQL, inserts)
                    after = _sequence(conn)
                for n, row in updates:  # (rare: a fragment written again, rewritten in place)
                    if not conn.execute(_UPDATE_SQL, (*row[2:], n, row[0], row[1], row[3])).rowcount:
                        # (not updated: a newer epoch's row is there, or the row is gone: pruned)
                        conn.execute(_INSERT_GONE_SQL, (*row, n))
                conn.execute("COMMIT")
                if inserts and after - before == len(inserts):
                    self._note_appended(inserts, before, generation)
                made = len(inserts) + len(updates)
                self.written += made
                if made:
                    self._prune(conn)  # (three pragmas when under the cap)
            except sqlite3.Error as exc:
                if conn is not None:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                    with contextlib.suppress(sqlite3.Error):
                        conn.close()
                conn = None
                if not self._closing:
                    self._start_over(exc, generation)
            finally:
                self.write_seconds += time.thread_time() - started
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _placed(self, conn: sqlite3.Connection, flat: list[Write],
                generation: int) -> tuple[list[tuple[Any, ...]], list[tuple[int, tuple[Any, ...]]]]:
        """A batch's writes as rows (shape, key, id, epoch, meta, body): those whose (shape, key) has
        no row yet (appended), and (rowid, row) of those that have one (rewritten in place, as the
        format 6 upsert did: a newer epoch's row is kept), by the shapes' maps brought up to date
        (``_locate``, on the writer's connection: every row written so far is in them). One write
        per (shape, key): the newest epoch's, the last of equals."""
        keys = item_keys([w[1] for w in flat])
        shapes = {w[0] for w in flat}
        by_shape: dict[int, list[int]] = {}
        if len(shapes) == 1 and len(set(keys)) == len(keys):  # (a page's writes: one shape, no key twice)
            by_shape[shapes.pop()] = list(range(len(flat)))
        else:
            chosen: dict[tuple[int, int], int] = {}
            for i, (w, k) in enumerate(zip(flat, keys, strict=True)):
                at = chosen.get((w[0], k))
                if at is None or w[2] >= flat[at][2]:
                    chosen[(w[0], k)] = i
            for (shape, _), i in chosen.items():
                by_shape.setdefault(shape, []).append(i)
        inserts: list[tuple[Any, ...]] = []
        updates: list[tuple[int, tuple[Any, ...]]] = []
        for shape, indexes in by_shape.items():
            located = self._locate(conn, shape, generation)
            rowids = located.find([keys[i] for i in indexes])
            for i, n in zip(indexes, rowids, strict=True):
                w = flat[i]
                row = (shape, keys[i], w[1], w[2], pack_meta(w[2], w[3], w[4], w[5], w[6]), w[7])
                if n:
                    updates.append((n, row))
                else:
                    inserts.append(row)
        return inserts, updates

    def _note_appended(self, inserts: list[tuple[Any, ...]], before: int, generation: int) -> None:
        """The rows the writer just appended (rowids ``before`` + 1 on, in order: AUTOINCREMENT and
        the only writer) put into this process's maps, as a catch-up would, when the maps have
        seen every row up to ``before`` (else the next catch-up reads them). A page read here then
        reads no row of its own cold page's writes back (~100 rows of ix_fragments_n a page, on
        the request's thread), nor does the writer's next ``_locate``."""
        with self._located_lock:
            if self._located_generation != generation or self._located_high != before:
                return
            located = self._located
            for n, row in enumerate(inserts, before + 1):
                seen = located.get(row[0])
                if seen is not None:
                    seen.recent[row[1]] = n
            self._located_high = before + len(inserts)

    def used_bytes(self, conn: sqlite3.Connection | None = None) -> int:
        """Bytes in use in the file (its pages less the free ones)."""
        own = conn is None
        conn = conn or self._connect()
        try:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            size = conn.execute("PRAGMA page_size").fetchone()[0]
            return int((pages - free) * size)
        finally:
            if own:
                conn.close()

    def _prune(self, conn: sqlite3.Connection) -> None:
        """Above ``max_bytes``: drop the fragments least recently stamped until under 90% of it."""
        for _ in range(1000):
            used = self.used_bytes(conn)
            if used <= self.max_bytes:
                return
            excess = used - int(self.max_bytes * 0.9)
            n = max(20, excess // 2500 + 1)
            conn.execute("DELETE FROM fragments WHERE rowid IN "
                         "(SELECT rowid FROM fragments ORDER BY epoch LIMIT ?)", (n,))

    def count(self) -> int:
        if not self.enabled:
            return 0
        conn = self._connect()
        try:
            return int(conn.execute("SELECT count(*) FROM fragments").fetchone()[0])
        finally:
            conn.close()

    def close(self) -> None:
        """Write what is queued, stop the writer."""
        with self._wake:
            self._closing = True
            self._wake.notify_all()
        self._settled.set()  # (a resume waiting for the open gives up)
        writer = self._writer
        if writer is not None:
            writer.join(timeout=10)
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()


def store_budget(mib: float | None) -> int:
    """The store's size cap in bytes: ``mib``, else REELROOM_FRAGMENT_STORE_MIB, else 512 MiB;
    0 turns the store off."""
    if mib is None:
        text = os.environ.get("REELROOM_FRAGMENT_STORE_MIB", "").strip()
        try:
            mib = float(text) if text else DEFAULT_MAX_MIB
        except ValueError:
            print(f"REELROOM_FRAGMENT_STORE_MIB={text!r} is not a number; using {DEFAULT_MAX_MIB}", file=sys.stderr)
            mib = DEFAULT_MAX_MIB
    return max(0, int(mib * 1024 * 1024))


class StoreUse:
    """One reply's use of the store: the shape, the epoch taken before the read (0: none was
    taken, so what this reply writes is never current, only re-stampable), and the stored
    fragments of the page's items that were not of the epoch (``stale``: used when their digest
    still holds)."""

    __slots__ = ("epoch", "fetched", "shape", "stale", "store", "whole")

    def __init__(self, store: FragmentStore, shape: int, epoch: int) -> None:
        self.store = store
        self.shape = shape
        self.epoch = epoch
        self.stale: dict[str, Stored] = {}
        self.fetched = False
        #: the last ``page`` was answered whole by the store: its rows (plain tuples) in order
        self.whole = False

    def page(self, s: Any, page_ids: list[str], rows: dict[str, Any] | None = None) -> dict[str, Any] | list[Row]:
        """``fetch`` for a GetItems page (``query.run_query_with``'s second step, for
        ``ItemService.rows_reply``): when every id has a fragment of the current epoch and those
        rows are one range of the file in the page's order (a listing the store was filled by: a
        warm page), the rows as SQLite gives them, a list in the page's order, and ``whole`` set
        (no ``Stored``, no dict, no test a row in Python); else ``fetch``'s answer (``rows`` as there)."""
        self.whole = False
        if self.epoch and page_ids:
            found = self.store.read(self.shape, page_ids, self.epoch)
            if found.__class__ is list:
                self.fetched = self.whole = True
                self.store.hits += len(found)
                return found
            return self._sort(s, page_ids, found, rows)  # type: ignore[arg-type]
        return self.fetch(s, page_ids, rows)

    def fetch(self, s: Any, page_ids: list[str], rows: dict[str, Any] | None = None) -> dict[str, Any]:
        """``query.run_query_with``'s second step: a page id's stored fragment when it is of the
        current epoch, else its ``ItemRow`` (read by id, as ``get_rows``, or taken from ``rows``:
        the page's rows when the caller already read them)."""
        found = self.store.read(self.shape, page_ids) if self.epoch else {}
        return self._sort(s, page_ids, found, rows)  # type: ignore[arg-type]

    def _sort(self, s: Any, page_ids: list[str], found: dict[str, Row], rows: dict[str, Any] | None) -> dict[str, Any]:
        """``fetch``'s answer from the store's rows ``found`` (``FragmentStore.read``)."""
        from server.library.catalog.query import get_rows

        new = tuple.__new__
        out: dict[str, Any] = {}
        missing: list[str] = []
        epoch = self.epoch
        # (``is_current`` inline: a fragment stored in this epoch, or one whose (shape, digest) was
        # marked valid in it -- after a library write or a restart, every fragment of a filled mix:
        # the call and the key made per fragment were ~1.5 us each, ~0.3 ms a mix of 200)
        marked = self.store.marked(epoch)
        prefix = self.store.valid_key(self.shape, b"")
        # (the epoch tested on the meta column's first bytes: no number made, no call a fragment)
        current = _EPOCH.pack(epoch)
        for item_id in page_ids:
            row = found.get(item_id)
            stored = None if row is None else new(Stored, row)
            if stored is not None and (stored[2][:8] == current or (
                    marked is not None and (digest := stored.digest) is not None and prefix + digest in marked)):
                out[item_id] = stored
            else:
                missing.append(item_id)
                if stored is not None:
                    self.stale[item_id] = stored
        self.fetched = True
        self.store.hits += len(out)
        if missing:
            if rows is not None:
                out.update((i, rows[i]) for i in missing if i in rows)
            else:
                out.update(get_rows(s, missing))
        return out


__all__ = ["DEFAULT_MAX_MIB", "FragmentStore", "Row", "StoreUse", "Stored", "Write", "code_stamp", "files_state",
           "item_key", "item_keys", "pack_meta", "store_budget"]
