"""A small thread-safe LRU of byte bodies, bounded in total bytes (the web app's files, image
renderings)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable


class MemoryCache:
    """Bodies by key, least recently used dropped first once ``limit`` bytes are held; a body
    larger than ``max_item`` is not kept."""

    def __init__(self, limit: int, max_item: int) -> None:
        self.limit = limit
        self.max_item = max_item
        self.size = 0
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.size = 0

    def put(self, key: Hashable, data: bytes) -> None:
        if len(data) > self.max_item:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.size -= len(old)
            self._items[key] = data
            self.size += len(data)
            while self.size > self.limit and self._items:
                _, dropped = self._items.popitem(last=False)
                self.size -= len(dropped)
