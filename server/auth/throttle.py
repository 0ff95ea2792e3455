"""Sign-in rate limits: a token bucket per client address and one per user name.

A sign-in is admitted only while both its address's bucket and the named user's bucket hold a
token, checked before any password work is done; each failed attempt takes a token from both.
A household that signs in normally never notices (successes cost nothing), while a client
guessing passwords, or flooding with any name, is slowed to the refill rate. An empty bucket answers 429 with ``Retry-After`` (the seconds until a
token is back) without touching argon2. Buckets live in memory and are forgotten once full.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from server.errors import TooManyRequestsError


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class TokenBuckets:
    def __init__(self, capacity: float, per_second: float, *, clock=time.monotonic, max_keys: int = 10_000) -> None:
        self.capacity = capacity
        self.per_second = per_second
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def _bucket(self, key: str, now: float) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_keys:
                self._prune(now)
            bucket = self._buckets[key] = _Bucket(self.capacity, now)
        else:
            bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.stamp) * self.per_second)
            bucket.stamp = now
        return bucket

    def _prune(self, now: float) -> None:
        full = [k for k, b in self._buckets.items()
                if b.tokens + (now - b.stamp) * self.per_second >= self.capacity]
        for k in full:
            del self._buckets[k]
        if len(self._buckets) >= self.max_keys:  # still full of hot keys: forget the oldest
            for k in sorted(self._buckets, key=lambda k: self._buckets[k].stamp)[: self.max_keys // 10 or 1]:
                del self._buckets[k]

    def wait_time(self, key: str, cost: float = 1.0) -> float:
        """Seconds until ``cost`` tokens are available (0 = now)."""
        with self._lock:
            bucket = self._bucket(key, self.clock())
            return 0.0 if bucket.tokens >= cost else (cost - bucket.tokens) / self.per_second

    def take(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens; 0 when taken, else the seconds to wait (nothing taken)."""
        with self._lock:
            bucket = self._bucket(key, self.clock())
            if bucket.tokens >= cost:
                bucket.tokens -= cost
                return 0.0
            return (cost - bucket.tokens) / self.per_second

    def charge(self, key: str, cost: float = 1.0) -> None:
        """Take ``cost`` tokens even if that empties the bucket (a failure already happened)."""
        with self._lock:
            bucket = self._bucket(key, self.clock())
            bucket.tokens = max(-self.capacity, bucket.tokens - cost)

    def reset(self, key: str) -> None:
        with self._lock:
            self._buckets.pop(key, None)


class SignInThrottle:
    """Failures allowed per address: a burst of 10, then one every 3 s. Per user name: a burst
    of 6, then one every 10 s (the account lockout, server/users/service.py, comes first)."""

    def __init__(self, *, clock=time.monotonic) -> None:
        self.by_address = TokenBuckets(10, 1 / 3, clock=clock)
        self.by_user = TokenBuckets(6, 1 / 10, clock=clock)

    def admit(self, address: str, name: str) -> None:
        user_key = name.strip().lower()
        wait = max(self.by_address.wait_time(address), self.by_user.wait_time(user_key))
        if wait > 0:
            raise TooManyRequestsError("Too many failed sign-in attempts; try again later.",
                                       retry_after=math.ceil(wait))

    def failed(self, address: str, name: str) -> None:
        self.by_address.charge(address)
        self.by_user.charge(name.strip().lower())

    def succeeded(self, address: str, name: str) -> None:
        self.by_user.reset(name.strip().lower())
