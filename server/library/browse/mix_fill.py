"""The fragment store filled ahead of time for InstantMix (``RelatedService.instant_mix_reply``).

A mix is 200 random tracks of ~95k at 100k items: the store rarely has them, so a mix read ~220
wide rows and built 200 BaseItemDtos (~90% of its CPU). With every track's fragment of the mix's
shape current in the store, a mix reads the candidates' ids, 200 stored fragments and the
viewer's user data (in-process at 100k: ~5-6 ms of CPU against ~15-20 built, load 4-5).

``MixFill`` does that filling in the server's idle time:

- **What**: the fragment shapes (``dto.fragment_shape``: Fields, image options, CanDelete and
  CanDownload, casing) InstantMix was asked with, the last ``SHAPES`` of them, each while a mix of
  it was asked in the last ``WANTED_SECONDS``; every track (audio, not an extra) of the library,
  whatever the viewer (a fragment holds no user data; the viewer's access is the mix's playable
  test, unchanged).
- **How**: the same path a mix that asks the store takes (``StoreUse.fetch``, then
  ``ItemService.item_fragments``), ``BATCH`` tracks at a time (in the order the scanner wrote
  them, on SQLite: an album's tracks together): a fragment of the current epoch is
  left as it is; one of an older epoch whose digest still holds is marked valid (in memory, as the
  store does); any other is built and stored by the store's writer. So the bytes are those a mix
  builds, and the store's rule holds: after any library write (a new epoch) nothing filled before
  is used until it was checked again -- by this pass, which starts over for the new epoch once
  the library has been left alone ``SETTLE_SECONDS`` (a scan's writes restart it at most that
  often).
- **When**: on a thread of its own at the lowest priority (``os.setpriority``, where there is
  one), never on the event loop; a batch only while the rest of the process used under
  ``BUSY_SHARE`` of a core since the last one (the store writer's CPU, the fill's own doing, not
  counted): requests always come first, the fill takes what they leave.
- **Bounds**: a shape whose fragments would take more than ``SHARE_OF_STORE`` of the store's
  ``max_bytes`` (estimated from its first batch) is not filled; the store's own cap and pruning
  hold as for any fragment.

Each pass also keeps the tracks of its content generation in memory (``TrackMap``: ~19 bytes a
track), where a filled mix of a viewer without parental rules runs its playable test; the pass
reads it once the process is quiet, as it does a batch (~0.2 s of CPU at 100k tracks).

**Across a restart**: the wanted shapes, with when each was last asked, are kept in a small
file beside the fragment store's (``RECORD``), written when a new shape is wanted and at close.
A restarted server's ``resume`` (a moment after ready) reads it on the fill's thread and goes on
filling those shapes, at the same low priority, without waiting for a mix. It is a cache: a
missing or unreadable record is no record, and a shape it names is filled only while it is still
wanted (``WANTED_SECONDS``). After a clean close the store took over its last epoch, so the pass
finds the fragments current and only reads them.

``filled(use)``: the last pass of ``use``'s shape covered every track in ``use``'s epoch. A mix
then reads its candidates' ids only and asks the store for all of them (a track the pass did not
find, added or pruned since, is read and built as before). It is a hint, never a promise: each
fragment is still checked (``StoreUse.fetch``: its epoch, or its digest marked valid), so the
bytes are right whatever it says.
"""

from __future__ import annotations

import bisect
import json
import logging
import struct
import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from server.db.handles import items
from server.library.catalog.dto import DtoOptions
from server.library.catalog.fragment_store import Stored, StoreUse, item_keys
from server.library.catalog.idle import BackgroundFill, Quiet

if TYPE_CHECKING:
    from server.db.database import Database
    from server.library.catalog.items import ItemService

log = logging.getLogger(__name__)

SHAPES = 2  # mix shapes kept filled (the most recently asked)
WANTED_SECONDS = 24 * 3600.0  # a shape is kept filled while a mix of it was asked this recently
BATCH = 32  # tracks per batch (~3 ms of work: what a request may wait for the GIL, once)
SETTLE_SECONDS = 5.0  # the library left alone this long before a pass for a new epoch starts
BUSY_SHARE = 0.15  # of a core used by the rest of the process since the last batch: wait
IDLE_CHECK = 0.5  # seconds between looks while the server is busy
SHARE_OF_STORE = 0.3  # of the store's max_bytes one shape's fragments may take
_OVERHEAD = 1.3  # file bytes per fragment byte (SQLite pages, the index), roughly
RECORD = "mix-fill.json"  # the wanted shapes across a restart, beside the fragment store's file


def record_path(store: Any) -> Path | None:
    """Where the wanted shapes are kept for the store ``store`` (None: no store, no record)."""
    return None if store is None else Path(store.path).with_name(RECORD)


class _Shape:
    __slots__ = ("asked", "camel", "epoch", "opts", "refilled", "too_big")

    def __init__(self, opts: DtoOptions, camel: bool) -> None:
        self.opts = opts
        self.camel = camel
        self.asked = time.monotonic()
        self.epoch = 0  # the epoch its last complete pass covered (0: none)
        self.refilled = 0  # the epoch ``seen`` asked for a pass again (once an epoch)
        self.too_big = False


class MixFill(BackgroundFill):
    """Fills the store for InstantMix's shapes in the background (see the module's notes)."""

    NAME = "mix-fill"
    WHAT = "The InstantMix fill"

    def __init__(self, db: Database, items_service: ItemService) -> None:
        super().__init__(db, log)
        self.items = items_service
        self._shapes: dict[int, _Shape] = {}
        self.passes = 0  # complete passes (tests, logs)
        self.built = 0  # tracks read and built or checked by the passes
        self.cpu = 0.0  # the fill thread's CPU seconds in its batches
        self.share_of_store = SHARE_OF_STORE
        #: the tracks of the content generation of the last pass (``tracks``)
        self._tracks: TrackMap | None = None
        self._restore = False  # ``resume`` asked the thread to read the record

    # -- the mix's side ------------------------------------------------------------------------

    def want(self, use: StoreUse, opts: DtoOptions, camel: bool) -> None:
        """A mix of ``use``'s shape was asked: keep that shape filled (cheap: a dict look-up)."""
        found = self._shapes.get(use.shape)
        if found is not None:
            found.asked = time.monotonic()
            if found.epoch == use.epoch or found.too_big:
                return
        elif self._stop.is_set():
            return
        else:
            # (no user in the options: a fragment holds no user data; same shape)
            found = _Shape(replace(opts, user_id=None, enable_user_data=False), camel)
            with self._lock:
                self._shapes[use.shape] = found
                self._trim(self._shapes, SHAPES)
                self._dirty = True
        self._start()

    def resume(self) -> None:
        """Go on filling the shapes the last run wanted (its record), on the fill's thread."""
        if self._stop.is_set():
            return
        self._restore = True
        self._start()

    def filled(self, use: StoreUse) -> bool:
        """The last pass of ``use``'s shape covered every track in ``use``'s epoch."""
        found = self._shapes.get(use.shape)
        return found is not None and use.epoch != 0 and found.epoch == use.epoch

    def tracks(self, generation: int) -> TrackMap | None:
        """The track map of ``generation`` (the content generation taken before the mix's read),
        once a pass made it; None otherwise."""
        found = self._tracks
        return found if found is not None and found.generation == generation else None

    def seen(self, use: StoreUse, stored: int, total: int) -> None:
        """A filled mix found ``stored`` of its ``total`` tracks current in the store. Well under
        all of them (the store pruned them, or let go of the marks of those checked again: its
        memory of them is bounded): the shape is filled again, once per epoch."""
        found = self._shapes.get(use.shape)
        if found is None or found.epoch != use.epoch or stored >= 0.8 * total or found.refilled == use.epoch:
            return
        found.refilled = found.epoch
        found.epoch = 0
        self._wake.set()

    def _closing(self) -> None:
        if self._shapes and not self._restore:  # (the last asked times; a record not yet read is left as it is)
            self._save()

    # -- the record of the wanted shapes (across a restart) ------------------------------------

    def _save(self) -> None:
        """Write the wanted shapes with when each was last asked (wall clock) to ``RECORD``."""
        path = record_path(self.items.store)
        if path is None:
            return
        self._dirty = False
        wall, now = time.time(), time.monotonic()
        with self._lock:
            shapes = [s for s in self._shapes.values() if not s.too_big]
        records = [{"fields": sorted(s.opts.fields), "images": s.opts.enable_images,
                    "limit": s.opts.image_type_limit,
                    "types": None if s.opts.enable_image_types is None else sorted(s.opts.enable_image_types),
                    "delete": s.opts.can_delete, "download": s.opts.can_download, "camel": s.camel,
                    "asked": wall - (now - s.asked)} for s in shapes]
        self._write_record(path, {"shapes": records})

    def _load(self) -> None:
        """Add the shapes of the record that are still wanted (those a mix asked since are kept)."""
        path = record_path(self.items.store)
        if path is None:
            return
        try:
            found = [_decoded(r) for r in json.loads(path.read_bytes())["shapes"]]
        except (OSError, ValueError, TypeError, KeyError):  # (no record, or a damaged one: none)
            return
        wall, now = time.time(), time.monotonic()
        for opts, camel, asked in found:
            age = max(0.0, wall - asked)
            use = self.items.store_use(opts, camel)
            if age > WANTED_SECONDS or use is None:
                continue
            with self._lock:
                if use.shape not in self._shapes:
                    shape = self._shapes[use.shape] = _Shape(opts, camel)
                    shape.asked = now - age
                    self._trim(self._shapes, SHAPES)

    # -- the fill thread -----------------------------------------------------------------------

    def _tidy(self) -> None:
        if self._restore:
            self._load()
            self._restore = False
        if self._dirty:
            self._save()

    def _next(self) -> tuple[int, _Shape] | None:
        """The most recently asked shape whose pass is not done for the current epoch."""
        now = time.monotonic()
        with self._lock:
            shapes = sorted(self._shapes.items(), key=lambda kv: -kv[1].asked)
        for key, shape in shapes:
            if shape.too_big or now - shape.asked > WANTED_SECONDS:
                continue
            use = self.items.store_use(shape.opts, shape.camel)
            if use is not None and use.shape == key and shape.epoch != use.epoch:
                return key, shape
        return None

    def _pass(self, work: tuple[int, _Shape]) -> None:
        key, shape = work
        """Every track of ``shape`` for the current epoch, a batch at a time while the server is
        idle; over as soon as the epoch moves (the next pass checks again what this one did)."""
        if not self._settled(SETTLE_SECONDS):
            return
        store = self.items.store
        use = self.items.store_use(shape.opts, shape.camel)
        if store is None or use is None or use.shape != key:
            return
        epoch = use.epoch
        quiet = _Quiet(store)
        if self._tracks is None or self._tracks.generation != self.db.content_generation:
            self._tracks = None
            # the map's read (~0.2 s of CPU at 100k tracks, holding the GIL most of it) waits for a
            # quiet process as a batch does: made at once, it landed among the mixes that armed the
            # fill. (An unfilled mix never uses the map: no mix waits for it.)
            if not quiet.wait(self._stop):
                return
            generation = self.db.content_generation  # (before the read)
            tracks = self.db.read_background(_track_map, generation)
            quiet.mark()
            if self.db.content_generation == generation:
                self._tracks = tracks
        total = len(self._tracks.keys) if self._tracks is not None else self.db.read_background(_track_count)
        dropped = store.dropped
        sized = False
        after: Any = None
        while True:
            if not quiet.wait(self._stop):
                return
            use = self.items.store_use(shape.opts, shape.camel)  # (the epoch before each read)
            if use is None or use.epoch != epoch:
                return  # a write: a new pass, once the library is left alone
            quiet.mark()
            started = time.thread_time()
            after, made = self.db.read_background(self._batch, after, shape, use)
            self.cpu += time.thread_time() - started
            if after is None:
                break
            self.built += made[0]
            if not sized and made[1]:  # the first fragments seen tell the shape's size
                sized = True
                estimate = made[2] / made[1] * total * _OVERHEAD
                if estimate > store.max_bytes * self.share_of_store:
                    shape.too_big = True
                    log.info("InstantMix fill: ~%.0f MiB for %d tracks is over %d%% of the fragment store; "
                             "not filled", estimate / 2 ** 20, total, self.share_of_store * 100)
                    return
        if store.dropped != dropped:  # the writer fell behind and dropped some: another pass
            return
        shape.epoch = epoch
        self.passes += 1

    def _batch(self, s: Any, after: Any, shape: _Shape, use: StoreUse) -> tuple[Any, tuple[int, int, int]]:
        """The next ``BATCH`` tracks after ``after`` (the walk's key of the last one; None at the
        end) and (tracks read and built or checked, fragments seen, their bytes)."""
        found = _next_tracks(s, after)
        if not found:
            return None, (0, 0, 0)
        chunk = [r[1] for r in found]
        entries = use.fetch(s, chunk)
        rows = [e for i in chunk if (e := entries.get(i)) is not None and e.__class__ is not Stored]
        sizes = [len(e.body) for e in entries.values() if e.__class__ is Stored]
        if rows:
            made = self.items.item_fragments(s, rows, shape.opts, shape.camel, use)
            sizes.extend(len(m) for m in made)
        return found[-1][0], (len(rows), len(sizes), sum(sizes))


#: a track a mix may pick (audio, not an extra), whatever the viewer (the mix's playable test)
_TRACK = (func.coalesce(items.c.type, "") == "Audio", func.coalesce(items.c.owner_id, "") == "")


def _decoded(record: Any) -> tuple[DtoOptions, bool, float]:
    """A shape of the record as (its options, camel, when last asked); ValueError when it is not
    one as ``_save`` writes them."""
    fields, types, limit = record["fields"], record["types"], record["limit"]
    flags = (record["images"], record["delete"], record["download"], record["camel"])
    asked = record["asked"]
    if (not isinstance(fields, list) or not all(isinstance(f, str) for f in fields)
            or not (types is None or (isinstance(types, list) and all(isinstance(t, str) for t in types)))
            or not (limit is None or (isinstance(limit, int) and not isinstance(limit, bool)))
            or not all(isinstance(f, bool) for f in flags)
            or not isinstance(asked, (int, float)) or isinstance(asked, bool)):
        raise ValueError("not a shape of the mix fill's record")
    opts = DtoOptions(fields=frozenset(fields), enable_images=flags[0], image_type_limit=limit,
                      enable_image_types=None if types is None else frozenset(types), enable_user_data=False,
                      user_id=None, can_delete=flags[1], can_download=flags[2])
    return opts, flags[3], float(asked)


def _track_count(s: Any) -> int:
    return int(s.execute(select(func.count()).select_from(items).where(*_TRACK)).scalar() or 0)


def _next_tracks(s: Any, after: Any) -> list[tuple[Any, str]]:
    """(key, id) of the next ``BATCH`` tracks after the key ``after`` (None: from the first). The
    walk is by rowid on SQLite (the order the scanner wrote them: an album's tracks are
    neighbours, so their rows share pages and their album is read once), else by id. On the
    DB-API cursor (a select built per batch was ~10% of a pass)."""
    conn = s.connection()
    sqlite = conn.dialect.name == "sqlite"
    key = "rowid" if sqlite else "id"
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(f"SELECT {key}, id FROM items WHERE {key} > {marker} AND coalesce(type, '') = 'Audio' "
                       f"AND coalesce(owner_id, '') = '' ORDER BY {key} LIMIT {BATCH}",
                       ((0 if sqlite else "") if after is None else after,))
        return [(r[0], r[1]) for r in cursor.fetchall()]
    finally:
        cursor.close()


class TrackMap:
    """Every track a mix may pick (audio, not an extra) with its library, for one content
    generation: the playable test of a filled mix for a viewer without parental rules, in memory
    instead of ~220 random row lookups in SQLite (~12% of a filled mix's CPU). Two sorted arrays,
    one of library numbers and where each slice of the key range begins, ~19 bytes a track (1.8 MB
    at 95k): a track's store key
    (``item_key``) and its id's low 64 bits, which together are the whole 128-bit id (the key is
    the high half mixed with the low half), so a match is exact, never a shared key's."""

    __slots__ = ("generation", "keys", "libraries", "libs", "lows", "shift", "starts")

    def __init__(self, generation: int, chunks: Iterable[Sequence[tuple[str, str]]]) -> None:
        """``chunks``: (id, library or '') of every track, a few thousand at a time (no list of
        them all: ~100k rows as tuples left several MB of small objects in the heap)."""
        self.generation = generation
        self.libraries: list[str] = []
        number: dict[str, int] = {}
        keys, lows, libs = array("q"), array("q"), array("H")
        for rows in chunks:
            try:
                ids = [r[0] for r in rows]
                low = _lows(ids)
            except ValueError:  # (an id that is no 32-hex id: left out; a mix asking about it asks the database)
                rows = [r for r in rows if _hex(r[0])]
                ids = [r[0] for r in rows]
                low = _lows(ids)
            keys.extend(item_keys(ids))
            lows.extend(low)
            for _, lib in rows:
                n = number.get(lib)
                if n is None:
                    n = number[lib] = len(self.libraries)
                    self.libraries.append(lib)
                libs.append(n)
        order = sorted(range(len(keys)), key=keys.__getitem__)
        self.keys = array("q", [keys[i] for i in order])
        self.lows = array("q", [lows[i] for i in order])
        self.libs = array("H", [libs[i] for i in order])
        # where the keys of each of ~n/8 equal slices of the 64-bit range begin (~1.4 bytes a track):
        # a key is found by bisection within its slice, ~3 probes, not ~17 (each probe of an
        # array makes an int; as the fragment store's ``_Located``)
        bits = max(0, len(self.keys).bit_length() - 3)
        self.shift = 64 - bits
        at = bisect.bisect_left
        self.starts = array("q", [at(self.keys, (j << self.shift) - _HALF) for j in range(1 << bits)])
        self.starts.append(len(self.keys))

    def playable(self, ids: list[str], allowed: frozenset[str] | None) -> set[str] | None:
        """The ids that are tracks of the ``allowed`` libraries (None: every library); None when
        an id is no 32-hex id (the map cannot tell: the caller asks the database)."""
        if not all(len(i) == 32 for i in ids):
            return None
        try:
            lows = _lows(ids)
        except ValueError:
            return None
        numbers = None if allowed is None else {n for n, lib in enumerate(self.libraries) if lib in allowed}
        keys, own_lows, libs, at = self.keys, self.lows, self.libs, bisect.bisect_left
        starts, shift = self.starts, self.shift
        out: set[str] = set()
        for item_id, k, lo in zip(ids, item_keys(ids), lows, strict=True):
            j = (k + _HALF) >> shift
            end = starts[j + 1]
            i = at(keys, k, starts[j], end)
            while i < end and keys[i] == k:
                if own_lows[i] == lo:
                    if numbers is None or libs[i] in numbers:
                        out.add(item_id)
                    break
                i += 1
        return out


_HALF = 1 << 63  # (a signed 64-bit key plus this is its place in 0 .. 2**64)


def _hex(item_id: str) -> bool:
    try:
        return len(bytes.fromhex(item_id)) == 16 and len(item_id) == 32
    except ValueError:
        return False


def _lows(ids: list[str]) -> list[int]:
    """The low 64 bits of 32-hex ids, as ``item_keys`` reads them (ValueError: not hex)."""
    raw = bytes.fromhex("".join(ids))
    if len(raw) != 16 * len(ids):
        raise ValueError("not 32-hex ids")
    return list(struct.unpack(f">{2 * len(ids)}q", raw)[1::2])


def _track_map(s: Any, generation: int) -> TrackMap:
    """The ``TrackMap`` of every track (``_TRACK``), read on the DB-API cursor 5,000 at a time."""
    conn = s.connection()
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute("SELECT id, coalesce(library_id, '') FROM items WHERE coalesce(type, '') = 'Audio' "
                       "AND coalesce(owner_id, '') = ''")
        return TrackMap(generation, iter(lambda: cursor.fetchmany(5000), []))
    finally:
        cursor.close()


def _Quiet(store: Any) -> Quiet:
    """The fill's idle test (catalog/idle.py) with this module's settings."""
    return Quiet(store, BUSY_SHARE, IDLE_CHECK)


__all__ = ["MixFill"]
