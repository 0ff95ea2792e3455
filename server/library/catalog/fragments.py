"""Serialized BaseItemDto fragments, kept per item, and replies assembled from them as bytes.

A fragment is an item's encoded BaseItemDto without its UserData and without the closing brace
(``{"Name":...,"Id":...``). It is kept under the item's id and the *shape* of the DTO (Fields,
image options, the policy flags that show, the server id, the casing), together with everything
it was made from: the item's row, the parent rows it borrows images and names from, its
alternate versions, extras counts, folder counts, people, trickplay tiles. A page is built from
fresh reads every time (the same batched queries as before), and a fragment is used only when
all of that compares equal to what it was made from, so a changed item, image, parent or version
can never get an old fragment: there is nothing to invalidate. UserData is per user and changes
with every play: it is made and encoded for each reply and spliced into the fragment.

The cache is bounded by an estimate of the bytes it holds (fragments and the rows they were made
from), least recently used first out. It is shared by the reader threads (one lock).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

import msgspec

DEFAULT_BUDGET = 24 * 1024 * 1024
_MAX_SHAPES = 512


def _as_builtin(value: Any) -> Any:
    return tuple(value) if hasattr(value, "__iter__") else repr(value)


_SIZER = msgspec.msgpack.Encoder(enc_hook=_as_builtin)


def packed_size(packed: int | None, deps: Any) -> int:
    """A rough size of what a fragment was made from, given its packed length (None: it could not
    be packed): that length plus an object's overhead per top-level value of the row."""
    row = deps[0] if isinstance(deps, tuple) and deps else ()
    return (4096 if packed is None else packed) + 56 * (len(row) if isinstance(row, tuple) else 1)


def _size_of(deps: Any) -> int:
    """``packed_size`` of ``deps``, packed here (in C)."""
    try:
        packed: int | None = len(_SIZER.encode(deps))
    except (TypeError, ValueError, OverflowError):
        packed = None
    return packed_size(packed, deps)


class FragmentCache:
    """Encoded DTO fragments by (item id, shape), each with what it was made from."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self._entries: OrderedDict[tuple[str, int], tuple[Any, bytes, int]] = OrderedDict()
        self._shapes: dict[Hashable, int] = {}
        self._size = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def size(self) -> int:
        """The estimated bytes held."""
        return self._size

    def __len__(self) -> int:
        return len(self._entries)

    def shape(self, key: Hashable) -> int:
        """A small number for a DTO shape (so a lookup hashes an id and an int)."""
        with self._lock:
            found = self._shapes.get(key)
            if found is None:
                if len(self._shapes) >= _MAX_SHAPES:  # shapes are few; if not, start over
                    self._shapes.clear()
                    self._entries.clear()
                    self._size = 0
                found = self._shapes[key] = len(self._shapes)
            return found

    def get(self, item_id: str, shape: int, deps: Any) -> bytes | None:
        return self.get_many(shape, [(item_id, deps)])[0]

    def get_many(self, shape: int, wanted: Sequence[tuple[str, Any]]) -> list[bytes | None]:
        """The fragment of each (item id, deps), or None where there is none made from ``deps``."""
        out: list[bytes | None] = []
        entries = self._entries
        with self._lock:
            for item_id, deps in wanted:
                key = (item_id, shape)
                entry = entries.get(key)
                if entry is None or entry[0] != deps:
                    out.append(None)
                    continue
                entries.move_to_end(key)
                out.append(entry[1])
            hits = sum(1 for f in out if f is not None)
            self.hits += hits
            self.misses += len(out) - hits
        return out

    def put(self, item_id: str, shape: int, deps: Any, fragment: bytes) -> None:
        self.put_many(shape, [(item_id, deps, fragment)])

    def put_many(self, shape: int, made: Sequence[tuple[str, Any, bytes] | tuple[str, Any, bytes, int | None]]) -> None:
        """Keep fragments; an entry may carry the size of its deps when the caller has it (dto._digest)."""
        sized = [(m[0], m[1], m[2], len(m[2]) + (m[3] if len(m) > 3 and m[3] is not None else _size_of(m[1]))
                  + 200)  # (+ entry, key, dict slot)
                 for m in made]
        with self._lock:
            for item_id, deps, fragment, size in sized:
                if size > self.budget // 8:
                    continue
                key = (item_id, shape)
                old = self._entries.pop(key, None)
                if old is not None:
                    self._size -= old[2]
                self._entries[key] = (deps, fragment, size)
                self._size += size
            while self._size > self.budget and self._entries:
                _, (_, _, dropped) = self._entries.popitem(last=False)
                self._size -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._shapes.clear()
            self._size = 0


def splice(shell: bytes, fragments: Sequence[bytes]) -> bytes:
    """``shell`` is an encoded reply whose first array is the empty item list (``{"Items":[],
    ...}`` or ``[]``); the fragments go into it, comma-separated."""
    at = shell.index(b"[]") + 1
    return b"".join((shell[:at], b",".join(fragments), shell[at:]))


__all__ = ["DEFAULT_BUDGET", "FragmentCache", "packed_size", "splice"]
