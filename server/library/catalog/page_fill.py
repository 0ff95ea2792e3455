"""The fragment store filled again in the background, so the first browse after a start is warm.

A start with another code stamp (an upgrade: other shapes) or after a crash or a write while
stopped (a new series of epochs) finds no fragment of the current epoch: every GetItems page of
the first browse reads its rows and builds (or checks the digests of) its items, ~8-12 ms of CPU a
page at 100k items against ~1 ms for a page of stored fragments. ``PageFill`` asks those pages
itself, ahead of the clients, in the server's idle time:

- **What**: the listings clients asked (a GetItems *family*: the query without its paging, the
  viewer, the DTO shape and the casing), the ``FAMILIES`` most recently asked, each while it was
  asked in the last ``WANTED_SECONDS``. A family is noted when its first page (``startIndex`` 0)
  is asked (``want``: a dict look-up for a family already known; nothing on other pages).
- **How**: the family's pages, ``PAGE`` items at a time, through the very read a GetItems page
  takes (``ItemService.fill_read``: ``run_query_with`` with ``StoreUse.page``, then
  ``rows_reply``), as the family's viewer (their libraries, rules and policy: the shape has
  CanDelete/CanDownload) but without user data (no part of a fragment): a fragment of the current
  epoch is left, one of an older epoch whose digest holds is marked valid, any other is built and
  stored by the store's writer. So the bytes are the ones a request would make, and the store's
  rule holds unchanged (requests during a fill get what they get without it). First the first
  ``FIRST_PAGES`` pages of every family (what a client asks first), then each family to its end,
  the most recently asked first, in its listing's order (so a later page is one range of the file).
- **When**: a pass starts after ready (``resume``) and after a family is asked in an epoch its
  pass did not cover, once the library was left alone ``SETTLE_SECONDS``; on a thread of its own at
  nice 19, never the event loop; a page only while the rest of the process used under
  ``BUSY_SHARE`` of a core over a pause of ``GAP`` after the last one (``idle.Quiet``: measured
  while the fill holds no GIL), the server did nothing meanwhile (``activity``: statements run in
  the process, pages and items answered by the reader pool; once it moved, looks of
  ``IDLE_CHECK`` until one finds it still) and the store's writer has under ``BACKLOG`` batches
  queued. A write (a new epoch) ends the pass; the next one checks again.
- **Bounds**: a pass stops once what it saw would take ``SHARE_OF_STORE`` of the store's
  ``max_bytes`` (the store's own cap and pruning hold as for any fragment); memory: one page's rows,
  and for a listing's deep pages its ordered ids, in a ``CountCache`` of the pass's own (gone with it).
- **Across a restart**: the families, with when each was last asked, are kept in ``RECORD`` beside
  the store's file (written by the fill's thread when a family is added, and at close); a damaged
  record is none. A family whose user is gone is dropped.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.library.catalog.dto import DtoOptions
from server.library.catalog.idle import BackgroundFill, Quiet
from server.library.catalog.query import CountCache, ItemQuery

if TYPE_CHECKING:
    from server.db.database import Database
    from server.library.catalog.items import ItemService, Viewer

log = logging.getLogger("reelroom.library")

FAMILIES = 8  # listings kept filled (the most recently asked)
WANTED_SECONDS = 30 * 24 * 3600.0  # a family is filled while its first page was asked this recently
PAGE = 50  # items per page of the fill (~5 ms of work: what a request may wait for the GIL, once)
FIRST_PAGES = 4  # pages of every family before any family's rest
SETTLE_SECONDS = 5.0  # the library left alone this long before a pass starts
BUSY_SHARE = 0.15  # of a core used by the rest of the process since the last page: wait
IDLE_CHECK = 0.5  # seconds between looks while the server is busy
#: seconds the fill pauses after each page, over which it looks whether the rest is busy. At 0.02 a
#: pass over a 100k listing (~1000 pages of ~4 ms) ran 25-30 s after a browse, with RSS 1-2 MiB
#: over its end's all that time; a request still meets at most one page, as before
GAP = 0.01
BACKLOG = 4  # batches queued for the store's writer: wait
SHARE_OF_STORE = 0.5  # of the store's max_bytes one pass may fill
#: seconds of a pass between two trims of the heap (``Database.trim_heap``): a pass over a 100k listing
#: runs for 30-60 s after a browse, and what its pages allocate and free stayed in the heap until
#: it ended (~6 MiB at 100k); the trim takes ~1-3 ms, on the fill's thread, only while it is idle.
#: Every 5 s the pages' churn still kept 2-6 MiB of freed heap resident between two trims (RSS 77-82
#: MiB at 100k during the pass, against 75-77 every second; the fill's CPU a page unchanged)
TRIM_SECONDS = 1.0
_OVERHEAD = 1.3  # file bytes per reply byte (SQLite pages, the index), roughly
RECORD = "page-fill.json"  # the families across a restart, beside the fragment store's file

#: the query's fields that are the viewer's (``ItemService.scoped``) or the page's, not the family's
_SCOPED = frozenset(("user_id", "allowed_library_ids", "parental", "exclude_library_ids", "names", "start_index",
                     "limit"))
_KEYED = tuple(f.name for f in dataclasses.fields(ItemQuery) if f.name not in _SCOPED)


def record_path(store: Any) -> Path | None:
    """Where the families are kept for the store ``store`` (None: no store, no record)."""
    return None if store is None else Path(store.path).with_name(RECORD)


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class _Family:
    __slots__ = ("asked", "camel", "epoch", "opts", "query", "user_id")

    def __init__(self, query: ItemQuery, opts: DtoOptions, camel: bool, user_id: str | None) -> None:
        self.query = query  # scoped to the viewer, start_index 0
        self.opts = opts  # without user data
        self.camel = camel
        self.user_id = user_id
        self.asked = time.monotonic()
        self.epoch = 0  # the epoch its last complete pass covered (0: none)


class PageFill(BackgroundFill):
    """Fills the store for the GetItems listings clients ask (see the module's notes)."""

    NAME = "page-fill"
    WHAT = "The page fill"

    def __init__(self, db: Database, items_service: ItemService, activity: Callable[[], int] | None = None) -> None:
        super().__init__(db, log)
        self.items = items_service
        #: what moves with the server's own work (statements run, pages answered, by any thread or
        #: reader): a page of the fill goes only after a pause in which it did not move
        self.activity = activity or (lambda: db.activity)
        self._families: dict[tuple[Any, ...], _Family] = {}
        self.passes = 0  # complete passes (tests, logs)
        self.pages = 0  # pages read by the passes
        self.cpu = 0.0  # the fill thread's CPU seconds in its pages
        self.busy = False  # a pass is running

    # -- the request's side --------------------------------------------------------------------

    def want(self, q: ItemQuery, opts: DtoOptions, camel: bool) -> None:
        """A GetItems page of ``q`` (scoped to its viewer) was asked: note its family when it is a
        first page (cheap: a tuple and a dict look-up), and fill it if its pass is not current."""
        if q.start_index or self._stop.is_set() or self.items.store is None:
            return
        key = self._key(q, opts, camel)
        found = self._families.get(key)
        if found is not None:
            found.asked = time.monotonic()
            if found.epoch and found.epoch == self._epoch(found):
                return
        else:
            found = _Family(replace(q, start_index=0, limit=None),
                            replace(opts, user_id=None, enable_user_data=False), camel, q.user_id)
            with self._lock:
                self._families[key] = found
                self._trim(self._families, FAMILIES)
                self._dirty = True
        self._start()

    @staticmethod
    def _key(q: ItemQuery, opts: DtoOptions, camel: bool) -> tuple[Any, ...]:
        return (q.user_id, camel, opts.fields, opts.enable_images, opts.image_type_limit, opts.enable_image_types,
                opts.can_delete, opts.can_download, *(_frozen(getattr(q, f)) for f in _KEYED))

    def _epoch(self, family: _Family) -> int:
        use = self.items.store_use(family.opts, family.camel)
        return use.epoch if use is not None else -1

    def resume(self, viewer_of: Any) -> None:
        """Go on filling the families the last run asked (its record): ``viewer_of(user_id)`` gives
        a family's viewer now (None: the user is gone). Called off the loop, after ready."""
        if self._stop.is_set():
            return
        restored = self._load(viewer_of)
        with self._lock:
            for key, family in restored.items():
                if key not in self._families:
                    self._families[key] = family
            self._trim(self._families, FAMILIES)
        self._start()

    def _closing(self) -> None:
        if self._families:
            self._save()  # (the last asked times)

    # -- the record ----------------------------------------------------------------------------

    def _save(self) -> None:
        path = record_path(self.items.store)
        if path is None:
            return
        self._dirty = False
        wall, now = time.time(), time.monotonic()
        with self._lock:
            families = list(self._families.values())
        records = []
        for f in families:
            query = {name: _plain(getattr(f.query, name)) for name in _KEYED
                     if getattr(f.query, name) != _DEFAULTS[name]}
            records.append({"user": f.user_id, "camel": f.camel, "fields": sorted(f.opts.fields),
                            "images": f.opts.enable_images, "limit": f.opts.image_type_limit,
                            "types": None if f.opts.enable_image_types is None else sorted(f.opts.enable_image_types),
                            "query": query, "asked": wall - (now - f.asked)})
        self._write_record(path, {"families": records})

    def _load(self, viewer_of: Any) -> dict[tuple[Any, ...], _Family]:
        """The record's families still wanted, each scoped to its viewer as they are now."""
        path = record_path(self.items.store)
        out: dict[tuple[Any, ...], _Family] = {}
        if path is None:
            return out
        try:
            records = json.loads(path.read_bytes())["families"]
            if not isinstance(records, list):
                return out
        except (OSError, ValueError, TypeError, KeyError):  # (no record, or a damaged one: none)
            return out
        wall, now = time.time(), time.monotonic()
        for record in records:
            try:
                user, camel, fields, images, limit, types, query, asked = (
                    record["user"], record["camel"], record["fields"], record["images"], record["limit"],
                    record["types"], record["query"], record["asked"])
                if not (isinstance(camel, bool) and isinstance(images, bool) and isinstance(asked, int | float)
                        and (user is None or isinstance(user, str)) and _strings(fields)
                        and (types is None or _strings(types))
                        and (limit is None or (isinstance(limit, int) and not isinstance(limit, bool)))):
                    continue
                q = _query(query)
            except (KeyError, TypeError, ValueError):  # (a damaged entry: none)
                continue
            age = max(0.0, wall - float(asked))
            if age > WANTED_SECONDS:
                continue
            viewer: Viewer | None = viewer_of(user) if user else None
            if user and viewer is None:
                continue  # the user is gone
            if viewer is None:
                from server.library.catalog.items import Viewer

                viewer = Viewer(None)
            self.items.scoped(q, viewer)
            opts = self.items.options(viewer, fields, enable_images=images, image_type_limit=limit,
                                      enable_image_types=types, enable_user_data=False)
            family = _Family(q, replace(opts, user_id=None), camel, q.user_id)
            family.asked = now - age
            out[self._key(q, opts, camel)] = family
        return out

    # -- the fill thread -----------------------------------------------------------------------

    def _tidy(self) -> None:
        if self._dirty:
            self._save()

    def _next(self) -> bool | None:
        return True if self._due() else None

    def _wanted(self) -> list[_Family]:
        """The families to fill, the most recently asked first."""
        now = time.monotonic()
        with self._lock:
            families = sorted(self._families.values(), key=lambda f: -f.asked)
        return [f for f in families if now - f.asked <= WANTED_SECONDS]

    def _due(self) -> bool:
        return any(f.epoch != self._epoch(f) for f in self._wanted())

    def _pass(self, _work: Any = None) -> None:
        """Every wanted family's pages for the current epoch: first the first ``FIRST_PAGES`` of
        each, then each to its end; over as soon as the epoch moves (the next pass checks again)."""
        if not self._settled(SETTLE_SECONDS):
            return
        store = self.items.store
        families = [f for f in self._wanted() if f.epoch != self._epoch(f)]
        if store is None or not families:
            return
        first = self._epoch(families[0])
        if first <= 0:
            return
        self.busy = True
        began_pass, cpu, pages = time.monotonic(), self.cpu, self.pages
        try:
            quiet = Quiet(store, BUSY_SHARE, IDLE_CHECK, GAP)
            moved = self.activity()
            seen = 0  # reply bytes the pass saw (its share of the store)
            budget = store.max_bytes * SHARE_OF_STORE
            trimmed = quiet.at  # (when the heap was last trimmed)
            ends: dict[int, int] = {}  # family -> its total, once a page told it
            # (the pass's own totals and orderings: a deep page's whole ordered id list, ~1.5 MiB at
            # 100k, read by the fill for the pass alone, goes with it; in the clients' cache it stayed
            # until the next write, though no client had paged that deep)
            counts = CountCache(size=4 * FAMILIES, id_lists=1)
            for family, n in _order(families, ends):
                start = n * PAGE
                if not self._calm(quiet, store, moved):
                    return
                began = time.thread_time()
                read = self.items.fill_read(replace(family.query, start_index=start, limit=PAGE), family.opts,
                                            family.camel, first, counts)
                if read is None:
                    return  # a write (a new epoch), or the store went off: a new pass
                total, size = self.db.read_background(read)  # (not the clients' activity; a small page cache)
                quiet.mark()  # (the next look is over the pause after this page: see idle.Quiet)
                moved = self.activity()
                self.cpu += time.thread_time() - began
                self.pages += 1
                ends[id(family)] = total
                if quiet.at - trimmed > TRIM_SECONDS:
                    self.db.trim_heap()
                    trimmed = quiet.at
                seen += size
                if seen * _OVERHEAD > budget:
                    log.info("Page fill: stopped at ~%.0f MiB, %d%% of the fragment store", seen / 2 ** 20,
                             SHARE_OF_STORE * 100)
                    break
            for family in families:
                family.epoch = first
            self.passes += 1
            log.info("Page fill: %d pages of %d listings in %.1f s (CPU %.1f s)", self.pages - pages, len(families),
                     time.monotonic() - began_pass, self.cpu - cpu)
        finally:
            self.busy = False

    def _calm(self, quiet: Quiet, store: Any, moved: int) -> bool:
        """Until the process is idle, no request or task did anything over the last look (the
        server's ``activity`` is still ``moved``) and the store's writer keeps up (False: stopping).
        Once anything moved, the looks are ``IDLE_CHECK`` long until one finds it still."""
        while True:
            if not quiet.wait(self._stop):
                return False
            now = self.activity()
            if now == moved and store.backlog() < BACKLOG:
                return True
            pause = IDLE_CHECK if now != moved else 0.05
            moved = now
            quiet.mark()
            if self._stop.wait(pause):
                return False


def _order(families: list[_Family], ends: dict[int, int]) -> Iterator[tuple[_Family, int]]:
    """(family, page number) in the fill's order: the first ``FIRST_PAGES`` of every family, then
    each family's rest; a family's pages end at its total (``ends``, as its pages tell it)."""
    def more(family: _Family, n: int) -> bool:
        return n * PAGE < ends.get(id(family), 1 << 62)

    for n in range(FIRST_PAGES):
        for family in families:
            if more(family, n):
                yield family, n
    for family in families:
        n = FIRST_PAGES
        while more(family, n):
            yield family, n
            n += 1


_DEFAULTS = {f.name: (f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default)
             for f in dataclasses.fields(ItemQuery) if f.name in _KEYED}


def _plain(value: Any) -> Any:
    """A query field as JSON (a date as {"date": iso})."""
    if isinstance(value, datetime):
        return {"date": value.isoformat()}
    return list(value) if isinstance(value, list | set | frozenset | tuple) else value


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _query(fields: Any) -> ItemQuery:
    """An ItemQuery of a record's fields (ValueError: not one ``_save`` wrote)."""
    if not isinstance(fields, dict):
        raise ValueError("not a query")
    values: dict[str, Any] = {}
    for name, value in fields.items():
        if name not in _DEFAULTS:
            raise ValueError(f"not a query field: {name}")
        default = _DEFAULTS[name]
        if isinstance(value, dict) and set(value) == {"date"} and isinstance(value["date"], str):
            value = datetime.fromisoformat(value["date"])
        elif isinstance(default, list):
            if not isinstance(value, list) or not all(isinstance(v, str | int) and not isinstance(v, bool)
                                                      for v in value):
                raise ValueError(f"not a list: {name}")
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ValueError(f"not a flag: {name}")
        elif value is not None and not isinstance(value, str | int | float):
            raise ValueError(f"not a value: {name}")
        values[name] = value
    return ItemQuery(**values)


__all__ = ["PageFill", "record_path"]
