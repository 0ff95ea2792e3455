"""A reader process: answers the owner's heavy read requests from the database, read-only.

Started by ``ReaderPool`` (``python -m server.readers.worker``, or the frozen executable with
``--reelroom-reader``) through ``server/media/spawn.py``, so it dies with the server. It builds
only the read path: a ``Database`` on the same URL (SQLite connections ``query_only``, reads run
inline, no threads) and the catalog's ``ItemService`` on it. No tasks, no scanner, no web app.

Each request carries the owner's database generations (any write, content writes); the reader adopts them before reading, so
its caches (by-name index, counts and whatever else ``ItemService`` keeps per generation) are
those of the owner's last committed write and never serve older data. An Items page also carries
the owner's fragment store epoch: the page reads the owner's store at that epoch (store.py), and
what it builds goes back to the owner with the reply. A single item (GET /Items/{id} that the owner
does not keep) is read and built by the same ``ItemService.item_parts_read`` the owner runs, for
the media kinds ``protocol.ITEM_TYPES``. It exits when the owner closes the
connection (idle, shutdown) or goes away.
"""

from __future__ import annotations

import gc
import logging
import os
import select
import socket
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import event

from server import code_cache
from server.db.database import Database
from server.errors import ReelroomError
from server.library.catalog.dto import DtoOptions
from server.library.catalog.items import ItemService, Viewer
from server.library.catalog.query import ItemQuery
from server.memory import trim
from server.readers import protocol
from server.readers.store import ReaderStore
from server.users.service import UserService

T = TypeVar("T")
#: The reader's DTO fragment cache (the owner keeps its own, 24 MiB): pages sent to a reader are
#: mostly random ones the cache cannot hold anyway, and a reader's memory adds to the server's.
FRAGMENT_BUDGET = 8 * 1024 * 1024
#: SQLite's page cache of the reader's database connection, in KiB (the owner's connections keep
#: 8 MiB each, ``dialect.SQLITE_CACHE_KIB``). A warm page reads the fragment store, not the
#: library's rows, and the OS page cache holds the file either way: 1 MiB costs a reader no CPU a
#: page (store warm or cold, ``bench/reader_memory.py``) and ~7 MiB less RSS once a page ran.
CACHE_KIB = 1024
#: after a reply, this many seconds with no request count as quiet: the heap's free pages go back
#: to the system (``malloc_trim``) once, until the next request
QUIET_SECONDS = 1.0
log = logging.getLogger("reelroom.reader")


class ReaderDatabase(Database):
    """The owner's database, read in this process: reads run inline (one request at a time),
    ``generation`` and ``content_generation`` are the owner's, set before each request; writes are refused."""

    #: its quiet spell is a second without a request (``QUIET_SECONDS``): a release empties the
    #: connection's page cache and keeps it open (a new one would cost the next page ~1 ms)
    CLOSE_IDLE = False

    def __init__(self, url: str) -> None:
        super().__init__(url, readers=1)
        self.cache_kib = CACHE_KIB
        if self.is_sqlite:
            event.listen(self.engine, "connect", _query_only)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        return self._run_read(fn, args)

    async def read_lean(self, fn: Callable[..., T], *args: Any) -> T:
        return self._run_read_lean(fn, args)

    async def read_driver(self, fn: Callable[..., T], *args: Any) -> T:
        return self._run_read_lean(fn, args, True)

    def read_inline(self, fn: Callable[..., T], *args: Any) -> T:
        """``read_lean`` without a coroutine (the reader's page needs no event loop)."""
        return self._run_read_lean(fn, args)

    def read_driver_inline(self, fn: Callable[..., T], *args: Any) -> T:
        """``read_driver`` without a coroutine (a single item's read)."""
        return self._run_read_lean(fn, args, True)

    def user_data_stamp(self, user_id: str) -> tuple[int, ...]:
        """Only the owner's ``generation`` comes here (not its per-user counters): any write."""
        return (self.generation,)

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        raise RuntimeError("a reader process does not write")

    def write_sync(self, fn: Callable[..., T], *args: Any) -> T:
        raise RuntimeError("a reader process does not write")


def _query_only(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA query_only=1")
    cur.execute(f"PRAGMA cache_size=-{CACHE_KIB}")  # (after the dialect's own pragmas: it wins)
    cur.close()


class Reader:
    """The read path of one server, built from what the owner told the process."""

    def __init__(self, database_url: str, server_id: str, fragment_budget: int = FRAGMENT_BUDGET,
                 store: str | None = None) -> None:
        from server.library.catalog.items import fragment_code_stamp

        self.db = ReaderDatabase(database_url)
        #: the owner's fragment store, read at the epochs the owner sends (None: it has none)
        self.store = ReaderStore(Path(store), fragment_code_stamp) if store else None
        self.items = ItemService(self.db, UserService(self.db), server_id, fragment_budget=fragment_budget,
                                 store=self.store)

    def items_page(self, q: ItemQuery, opts: DtoOptions, camel: bool, epoch: int = 0) -> bytes:
        """GET /Items: the scoped query and DTO options in, the encoded reply out (what the owner's
        ``ItemService.query_reply`` would have answered), reading the owner's fragment store at
        ``epoch`` (0: without the store). Its read runs here, inline: no event loop's turn a page."""
        if self.store is not None:
            self.store.adopt(epoch)
        return self.db.read_inline(self.items.query_reply_read(q, opts, camel))

    def item(self, key: str, viewer: Viewer, opts: DtoOptions, camel: bool) -> tuple[bytes, bytes] | bool | None:
        """GET /Items/{id}'s miss: what the owner's ``ItemService.item_reply`` reads (the same
        checks of the viewer's libraries, parental rules and private playlists), for the kinds
        readers build (``protocol.ITEM_TYPES``; None for any other: the owner reads it)."""
        return self.db.read_driver_inline(self.items.item_parts_read, key, viewer, opts, camel, protocol.ITEM_TYPES)

    def handle(self, message: tuple[Any, ...]) -> tuple[int, str, Any, Any]:
        """``(request_id, status, payload, extra)``: extra is what goes back to the owner's fragment
        store (``ReaderStore.take``), or None; for an item, its first part's length or its verdict
        (``protocol``'s notes)."""
        request_id, kind, generations, args = message[:4]
        self.db.content_generation, self.db.generation = generations
        try:
            if kind == protocol.ITEMS:
                page = self.items_page(*args)
                return request_id, protocol.OK, page, self.store.take() if self.store is not None else None
            if kind == protocol.ITEM:
                built = self.item(*args)
                if isinstance(built, tuple):
                    return request_id, protocol.OK, built[0] + built[1], len(built[0])
                return request_id, protocol.OK, b"", built
            return request_id, protocol.FAILED, f"unknown request kind {kind!r}", None
        except ReelroomError as exc:  # a 4xx the owner would have raised: raised there as it is
            return request_id, protocol.ERROR, exc, None
        except Exception:
            return request_id, protocol.FAILED, traceback.format_exc(), None

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
        self.db.close()


def quiet(sock: socket.socket, seconds: float) -> bool:
    """True when nothing arrives on ``sock`` within ``seconds`` (the owner sent no request)."""
    try:
        readable, _, _ = select.select([sock], [], [], seconds)
    except (OSError, ValueError):
        return False
    return not readable


def serve(sock: socket.socket, reader: Reader, quiet_seconds: float = QUIET_SECONDS) -> None:
    """Answer the owner's requests until it closes the connection. After a burst of requests, once
    the owner has sent nothing for ``quiet_seconds``, empty SQLite's page cache and hand the freed
    heap pages back (a page's read allocates and frees a few MiB; glibc keeps them at the
    process's peak otherwise) and unmap the fragment store's file."""
    busy = False
    while True:
        if busy and quiet(sock, quiet_seconds):
            reader.db.release_memory()
            if reader.store is not None:
                reader.store.release()  # (its mapping of the store's file)
            trim()
            busy = False
        message, fds = protocol.read_frame_fds(sock)
        if message is None:  # the owner closed the connection or went away
            return
        client = fds.pop(0) if fds else None
        for fd in fds:  # (never more than one is sent)
            os.close(fd)
        try:
            request_id, status, payload, extra = reader.handle(message)
            head = message[4] if len(message) > 4 else None
            if status == protocol.OK and client is not None and head is not None:
                status, payload = protocol.HANDED, write_to_client(client, head, payload)
        finally:
            if client is not None:
                os.close(client)  # before the owner hears: its close of the connection is the last
        try:
            parts = protocol.reply_parts(request_id, status, payload, extra)
        except Exception:  # an exception that does not pickle: the owner answers it
            if status == protocol.HANDED:  # (the reply went out: only the store's part is lost)
                parts = protocol.reply_parts(request_id, status, payload)
            else:
                parts = protocol.reply_parts(request_id, protocol.FAILED, traceback.format_exc())
        protocol.send_parts(sock, parts)
        busy = True


def write_to_client(fd: int, head: tuple[bytes, bytes], body: bytes) -> list[Any]:
    """A hand-off: the reply's head (the owner's, with this body's Content-Length between its two
    parts) and body written to the client's socket ``fd``; what goes back to the owner
    (``protocol.handed_body``)."""
    prefix, suffix = head
    reply_head = b"%s%d%s" % (prefix, len(body), suffix)
    written, failed = protocol.write_reply(fd, reply_head, body)
    return protocol.handed_body(reply_head, body, written, failed)


def main() -> int:
    address = os.environ[protocol.ENV_ADDRESS]
    key = os.environ[protocol.ENV_KEY]
    reader = Reader(os.environ[protocol.ENV_DATABASE], os.environ[protocol.ENV_SERVER_ID],
                    store=os.environ.get(protocol.ENV_STORE) or None)
    for name in (protocol.ENV_KEY, protocol.ENV_DATABASE):
        os.environ.pop(name, None)
    code_cache.settle()  # dataclasses' methods: what the imports compiled saved, the texts let go
    gc.freeze()  # what the read path built lives as long as the process (as the owner does)
    sock = None
    try:
        sock = protocol.connect(address)  # (refused: the owner stopped while this process started)
        sock.sendall(protocol.hello(key, os.getpid()))
        serve(sock, reader)
    except OSError:
        pass  # the owner went away
    finally:
        if sock is not None:
            sock.close()
        reader.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
