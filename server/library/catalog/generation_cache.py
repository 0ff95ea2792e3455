"""A small LRU of answers valid while the database has not been written since.

``Database.generation`` is bumped after every committed write (items, user data, users and their
policies, configuration kept in the database, playlists ...), so an entry filed under the
generation read *before* the query that made it can never outlive a change: the next request
after any write recomputes. Readers must read the generation before their first query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class GenerationCache(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self._entries: OrderedDict[K, tuple[int, V]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: K, generation: int) -> V | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None or found[0] != generation:
                return None
            self._entries.move_to_end(key)
            return found[1]

    def put(self, key: K, generation: int, value: V) -> None:
        with self._lock:
            self._entries[key] = (generation, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
