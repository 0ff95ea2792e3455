"""Whole replies of repeated list pages, kept as the bytes that were sent.

Clients ask for the same pages again and again (the first page of a library sorted by name, a web
app going back to a view, a TV app re-reading its rows). A page served from DTO fragments still
reads its ids, rows and user data and splices them; a page kept here costs what the guard costs.

**Key.** The operation, who asks (the token's user, or the API key itself), the path and the query
string as ``WireMiddleware`` left them (keys in the spec's spelling, values tidied) and the casing
(camelCase or PascalCase). Two users never share an entry; neither do two API keys.

**Valid while nothing it was made from changed.** Each entry keeps the stamp taken *before* its
reply was computed: ``Database.content_generation`` (any write of more than user data or a
device's last activity: items, images, people, policies, a scan), the viewer's user-data stamp
(``Database.user_generation``: their own play-state writes, or any undeclared user-data write) and
``config_generation`` (every configuration save). A write during the computation leaves the entry
with an old stamp, so it is never served. On a hit the caller's user record and the viewer's must
still be the very objects the reply was made with (``UserService`` makes a new record whenever a
user, their policy or configuration changes), so an edited policy, a parental rating or a
demotion is seen at once. The guard (token, permissions, the session's activity) runs for every
request, hit or not.

**Not kept:** replies for a viewer with parental controls (a cautious choice: their conditions
read the library's rating list, kept per content write by ``query._distinct_ratings``), random sorts, replies larger than
a quarter of the budget, query strings over ``MAX_QUERY`` bytes, anything but a 200 built by the
handler. A reply is admitted on the second time its key is seen (a small set of key hashes), so
random pages anywhere in a large library never push repeated ones out. Bounded by bytes (LRU).
All of this runs on the event loop (no lock): the lookup before the handler, the store after it.
"""

from __future__ import annotations

import contextvars
import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from server.db.database import Database

#: A user's record (server.users.service.UserRecord): only compared by identity here.
UserRecord = object


class Users(Protocol):
    """What the cache asks of UserService: the record it holds for a user, without reading."""

    def cached(self, user_id: str) -> object | None: ...

DEFAULT_BUDGET = 16 * 1024 * 1024
MAX_QUERY = 4096  # longer query strings are answered, not kept
_ENTRY_OVERHEAD = 400  # the key tuple, the entry and the dict slot, roughly
_SEEN_MAX = 4096  # key hashes remembered for admission


def reply_cache_budget(mib: float | None, env: dict[str, str] | None = None) -> int:
    """Bytes from the server option, else ``REELROOM_REPLY_CACHE_MIB``, else 16 MiB; 0 turns it off."""
    if mib is None:
        text = (os.environ if env is None else env).get("REELROOM_REPLY_CACHE_MIB", "").strip()
        try:
            mib = float(text) if text else None
        except ValueError:
            mib = None
    return DEFAULT_BUDGET if mib is None else max(0, int(mib * 1024 * 1024))


class Slot(NamedTuple):
    """What a lookup that missed leaves for the store: the key and the stamp before computing."""

    key: tuple[Any, ...]
    viewer_id: str | None
    stamp: tuple[Any, ...]
    auth_user: UserRecord | None


class _Entry(NamedTuple):
    stamp: tuple[Any, ...]
    auth_user: UserRecord | None
    viewer_id: str | None
    viewer_user: UserRecord | None
    body: bytes
    size: int


#: The slot of the request being handled (set by the lookup on a miss, read by ``keep``).
pending: contextvars.ContextVar[Slot | None] = contextvars.ContextVar("reply_slot", default=None)


class ReplyCache:
    def __init__(self, db: Database, users: Users, budget: int = DEFAULT_BUDGET) -> None:
        self.db = db
        self.users = users
        self.budget = budget
        self.config_generation = 0
        self._entries: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._seen: dict[int, None] = {}
        self.size = 0
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.budget > 0

    def __len__(self) -> int:
        return len(self._entries)

    def config_saved(self, _key: str, _value: Any) -> None:
        """Any configuration save (a listener of ConfigurationService): kept replies are old."""
        self.config_generation += 1

    def stamp(self, viewer_id: str | None) -> tuple[Any, ...]:
        db = self.db
        return db.content_generation, db.user_generation(viewer_id), self.config_generation

    def lookup(self, key: tuple[Any, ...], viewer_id: str | None, auth_user: UserRecord | None) -> bytes | None:
        """The kept reply for ``key`` if still valid; else None, with a slot left for ``keep``."""
        entry = self._entries.get(key)
        stamp = self.stamp(viewer_id)
        if entry is not None:
            if (entry.stamp == stamp and entry.auth_user is auth_user and entry.viewer_id == viewer_id
                    and (viewer_id is None or self.users.cached(viewer_id) is entry.viewer_user)):
                self._entries.move_to_end(key)
                self.hits += 1
                return entry.body
            self._drop(key)
        self.misses += 1
        pending.set(Slot(key, viewer_id, stamp, auth_user))
        return None

    def would_keep(self) -> bool:
        """Whether ``keep`` would store the reply of the pending slot (its key is kept or was seen
        before): a reader process then sends the reply's bytes back rather than writing them to
        the client itself (server/http/handoff.py). The viewer's rules and the reply's size
        are not known yet: a True may still keep nothing."""
        slot = pending.get()
        return slot is not None and self.enabled and (slot.key in self._entries or hash(slot.key) in self._seen)

    def keep(self, body: Any, viewer_id: str | None, viewer_user: UserRecord | None, parental: bool) -> None:
        """Store the reply the handler computed for the pending slot (if any, and if it may be).
        A reply a reader wrote to the client itself (``handed_off``, no bytes here) counts as the
        key's first sight, so the next one is kept (``would_keep``)."""
        slot = pending.get()
        if slot is None:
            return
        pending.set(None)
        if getattr(body, "handed_off", False) and not parental and viewer_id == slot.viewer_id:
            self._first_sight(hash(slot.key))
            return
        if not isinstance(body, bytes) or parental or viewer_id != slot.viewer_id:
            return
        size = len(body) + len(slot.key[3]) + _ENTRY_OVERHEAD
        if size * 4 > self.budget:
            return
        key = slot.key
        if key not in self._entries:
            h = hash(key)
            if h not in self._seen:  # first sight: remember, keep on the second
                self._first_sight(h)
                return
        else:
            self._drop(key)
        self._entries[key] = _Entry(slot.stamp, slot.auth_user, viewer_id, viewer_user, body, size)
        self.size += size
        while self.size > self.budget:
            self._drop(next(iter(self._entries)))

    def _first_sight(self, h: int) -> None:
        if len(self._seen) >= _SEEN_MAX:
            self._seen.clear()
        self._seen[h] = None

    def _drop(self, key: tuple[Any, ...]) -> None:
        entry = self._entries.pop(key)
        self.size -= entry.size

    def clear(self) -> None:
        self._entries.clear()
        self._seen.clear()
        self.size = 0
