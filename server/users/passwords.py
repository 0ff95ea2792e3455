"""Password hashing with argon2id (argon2-cffi), off the event loop.

argon2 (64 MiB, t=3, p=4) costs a few hundred milliseconds of CPU and 64 MiB of memory per
call. Every hash and verification runs on a small pool of its own (``PASSWORD_WORKERS``
threads, 1 or 2 by core count; argon2-cffi releases the GIL), never on the event loop and never on the database's
reader pool, and at most ``MAX_PENDING`` calls wait for it: past that a caller gets 429 with
``Retry-After`` at once, so a sign-in flood costs a bounded amount of CPU and memory.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from server.errors import TooManyRequestsError

if TYPE_CHECKING:
    from argon2 import PasswordHasher


class _Hasher:
    """argon2-cffi's ``PasswordHasher``, made (argon2-cffi and cffi's backend imported, ~4 ms) at
    the first hash or check, on the password pool: a start's first hash is the dummy one, made
    after the server is ready (``warm_up_soon``)."""

    def __init__(self) -> None:
        self._made: PasswordHasher | None = None

    def _hasher(self) -> PasswordHasher:
        if self._made is None:
            from argon2 import PasswordHasher

            self._made = PasswordHasher()
        return self._made

    def load(self) -> None:
        self._hasher()

    def hash(self, password: str) -> str:
        return self._hasher().hash(password)

    def verify(self, stored_hash: str, password: str) -> bool:
        return self._hasher().verify(stored_hash, password)


_hasher = _Hasher()

# argon2 runs 4 lanes in parallel (p=4): one check already keeps 4 cores busy, so a second worker
# only pays on a machine with 8 cores or more; fewer workers leave the event loop its share.
PASSWORD_WORKERS = max(1, min(2, (os.cpu_count() or 1) // 4))
MAX_PENDING = 8  # running + waiting

_pool = ThreadPoolExecutor(max_workers=PASSWORD_WORKERS, thread_name_prefix="reelroom-password")
_pending = 0
_pending_lock = threading.Lock()
_dummy_hash: str | None = None


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(stored_hash: str | None, password: str) -> bool:
    """An account without a password accepts only the empty password."""
    if not stored_hash:
        return password == ""
    try:
        return _hasher.verify(stored_hash, password)
    except Exception as exc:
        from argon2.exceptions import InvalidHashError, VerificationError  # (imported by the check)

        if isinstance(exc, (VerificationError, InvalidHashError)):  # (VerifyMismatchError is one)
            return False
        raise


def _dummy() -> str:
    global _dummy_hash
    if _dummy_hash is None:
        _dummy_hash = _hasher.hash(secrets.token_hex(16))
    return _dummy_hash


def _dummy_verify(password: str) -> None:
    """One argon2 verification against a hash of nothing anyone knows: an unknown user or an
    account without a password costs the same time as a real check."""
    verify_password(_dummy(), password or "x")


async def _run(fn, *args):
    global _pending
    with _pending_lock:
        if _pending >= MAX_PENDING:
            raise TooManyRequestsError("The server is busy checking other sign-ins; try again shortly.",
                                       retry_after=1)
        _pending += 1
    try:
        return await asyncio.get_running_loop().run_in_executor(_pool, fn, *args)
    finally:
        with _pending_lock:
            _pending -= 1


async def hash_password_async(password: str) -> str:
    return await _run(hash_password, password)


async def verify_password_async(stored_hash: str | None, password: str, *, known_user: bool = True) -> bool:
    """``stored_hash`` None with ``known_user`` False: an unknown name (a dummy check, False).
    A known account without a password accepts only the empty password, after the same work."""
    if not known_user:
        await _run(_dummy_verify, password)
        return False
    if not stored_hash:
        await _run(_dummy_verify, password)
        return password == ""
    return await _run(verify_password, stored_hash, password)


async def warm_up() -> None:
    """Make the dummy hash before the first sign-in needs it."""
    await _run(_dummy)


def warm_up_soon() -> Future[None]:
    """Queue the dummy hash on the password pool and return at once: start-up does not wait the
    few hundred milliseconds of argon2 for it. A sign-in that comes sooner queues behind it on the
    same pool, so the first unknown name still costs what a known one does. Returns the future of
    the first step, argon2-cffi's import (its classes are the start's: ``code_cache.settle`` waits
    for it, ``ServerContext``)."""
    loaded = _pool.submit(_hasher.load)
    _pool.submit(_dummy)
    return loaded
