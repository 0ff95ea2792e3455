"""The frames owner and readers exchange over their loopback connection: a 4-byte length, then a
pickled tuple. Both ends are this server's own processes (the reader proved it knows the owner's
secret, in a plain-text hello, before any pickled frame is read), so pickle is safe here.

- hello (reader -> owner, once): ``<secret>:<pid>`` in ASCII, never unpickled
- request (owner -> reader): ``(request_id, kind, generations, args, head)``; an Items page's args
  are ``(query, dto options, camelCase?, the owner's fragment store epoch or 0)``; ``head`` is None,
  or (a hand-off, below) the HTTP reply head's two parts around its Content-Length value. A single
  item's (``ITEM``: GET /Items/{id} that the owner does not keep) are ``(item id, viewer, dto
  options, camelCase?)``: its ``OK`` body is the DTO's two parts joined (``ItemService.item_parts_read``)
  and its extra part the first part's length; an empty body with an extra of False (no library row),
  True (the viewer may not see it) or nothing (a kind readers leave to the owner: not in
  ``ITEM_TYPES``). Never a hand-off: the owner keeps the parts, and its HTTP writes the reply
- hand-off (Linux, macOS): the request's first byte carries the client connection's socket
  (SCM_RIGHTS, ``send_request``); the reader writes the reply (head and body) to it itself
  (``write_reply``) and answers ``HANDED`` instead of ``OK``: the body is ``HANDED_HEAD``
  (Content-Length, bytes written, failed?) then the bytes it did not write (none, unless the
  client stopped reading or went away), which the owner writes or drops
- reply (reader -> owner): ``REPLY_HEADER`` (body size, request_id, status, extra size, the
  reader's CPU seconds so far) then the
  body: for status ``OK`` the encoded reply itself (raw bytes, not pickled: the owner hands
  exactly those bytes to the response, with no unpickling copy), for ``ERROR`` a pickled
  server.errors exception to raise as the owner would have, for ``FAILED`` a pickled traceback
  text (the owner answers the request itself). Then the extra part (usually empty): a pickled
  ``(writes, valid)`` of the fragment store (server/readers/store.py: fragments the reader built,
  digests it found holding) for the owner's store writer and marks.
"""

from __future__ import annotations

import array
import os
import pickle
import select
import socket
import struct
import sys
import time
from collections.abc import Mapping
from typing import Any

from server.http import handoff

HEADER = struct.Struct("!I")
MAX_FRAME = 256 * 1024 * 1024

#: A reply's head: body size, request id, status (an index into STATUSES), extra part's size, and
#: the CPU seconds the reader has used so far (``time.process_time``: the pool's CPU gate counts
#: it as free, the same on every OS).
REPLY_HEADER = struct.Struct("!IIBId")

OK = "ok"
ERROR = "error"
FAILED = "failed"
#: the reader wrote the reply to the client itself (a hand-off): the body is HANDED_HEAD + the rest
HANDED = "handed"
STATUSES = (OK, ERROR, FAILED, HANDED)
#: A HANDED reply's body starts with: the reply body's size (its Content-Length), the bytes of
#: head and body the reader wrote, and 1 when its write failed (the client went away), else 0.
HANDED_HEAD = struct.Struct("!IIB")

#: Whether a client connection's socket can travel to a reader with its request (SCM_RIGHTS over
#: the Unix socket: Linux, macOS). Elsewhere (Windows: loopback TCP) the owner relays the reply.
FD_PASSING = handoff.FD_PASSING
#: ``REELROOM_READERS_HANDOFF=0`` keeps every reply going through the owner (the relay), as on Windows.
ENV_HANDOFF = "REELROOM_READERS_HANDOFF"
#: How long a reader waits for a client that does not take the reply's bytes (its socket buffer
#: full, even once made as large as the reply) before it hands the rest back to the owner, which
#: writes it with the flow control every reply has: a slow client never holds a reader, which
#: has other pages to answer (measured: a reader that waited 50 ms for wrk's clients halved the
#: pages/s of ``bench/items_query.py``).
WRITE_WAIT_SECONDS = 0.005

#: The kinds of request a reader answers: a GET /Items page, one item's DTO (GET /Items/{id}).
ITEMS = "items"
ITEM = "item"
#: The item types a reader builds for ``ITEM`` (media items, not folders: their counts and children
#: cost more and are asked less; anything else comes back unread and the owner reads it).
ITEM_TYPES = frozenset({"Movie", "Episode", "Audio", "MusicVideo", "Video"})

#: Environment of a reader process. The address is ``unix:<path>`` (a Unix socket) or ``host:port``.
ENV_ADDRESS = "REELROOM_READER_ADDRESS"
UNIX_PREFIX = "unix:"
#: After UNIX_PREFIX: an abstract socket name (Linux; a NUL byte cannot travel in the environment).
ABSTRACT = "@"
#: Owner and readers talk over a Unix socket where there are Unix sockets, else loopback TCP.
UNIX_SOCKETS = hasattr(socket, "AF_UNIX") and sys.platform != "win32"
ENV_KEY = "REELROOM_READER_KEY"
ENV_DATABASE = "REELROOM_READER_DATABASE"
ENV_SERVER_ID = "REELROOM_READER_SERVER_ID"
#: The owner's fragment store file (server/readers/store.py); empty or unset: none.
ENV_STORE = "REELROOM_READER_STORE"
#: argv[1] of a frozen (PyInstaller) executable started as a reader (installer/entry_*.py).
FROZEN_FLAG = "--reelroom-reader"


def frame(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def reply_parts(request_id: int, status: str, payload: Any, extra: Any = None) -> list[Any]:
    """A reply as the buffers to send (head, body, extra), so an OK body is sent as it is,
    uncopied (a HANDED payload: ``handed_body``'s parts). ``extra`` (None: nothing) is pickled."""
    if status == HANDED:
        body_parts = list(payload)
    else:
        body_parts = [payload if status == OK else pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)]
    more = b"" if extra is None else pickle.dumps(extra, protocol=pickle.HIGHEST_PROTOCOL)
    size = sum(len(part) for part in body_parts)
    return [REPLY_HEADER.pack(size, request_id, STATUSES.index(status), len(more), time.process_time()),
            *body_parts, more]


def read_reply(head: bytes, body: bytes) -> tuple[int, str, Any]:
    """``(request_id, status, payload)`` from a reply's head and body (the owner's side); a
    HANDED payload is ``(content_length, written, failed, rest)``."""
    _size, request_id, code, _extra, _cpu = REPLY_HEADER.unpack(head)
    status = STATUSES[code]
    if status == HANDED:
        length, written, failed = HANDED_HEAD.unpack_from(body)
        return request_id, status, (length, written, bool(failed), body[HANDED_HEAD.size:])
    return request_id, status, body if status == OK else pickle.loads(body)


def handed_body(head: bytes, body: bytes, written: int, failed: bool) -> list[Any]:
    """A HANDED reply's body parts (``reply_parts``' payload) after ``write_reply`` wrote
    ``written`` bytes of ``head`` and ``body``: what it did not write follows, unless it failed."""
    parts: list[Any] = [HANDED_HEAD.pack(len(body), written, 1 if failed else 0)]
    if not failed:
        if written < len(head):
            parts += [memoryview(head)[written:], body]
        elif written < len(head) + len(body):
            parts.append(memoryview(body)[written - len(head):])
    return parts


def handoff_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Hand-offs where the OS can pass sockets, unless ``REELROOM_READERS_HANDOFF`` says 0/off."""
    text = (os.environ if environ is None else environ).get(ENV_HANDOFF, "").strip().lower()
    return FD_PASSING and text not in ("0", "off", "no", "false")


def send_request(sock: socket.socket, data: bytes, fd: int) -> int:
    """Send a request frame with the client socket ``fd`` riding on its first byte (SCM_RIGHTS),
    without blocking: the bytes sent (0 when the socket took none: nothing, not even the fd, went)."""
    try:
        return sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    except (BlockingIOError, InterruptedError):
        return 0


def write_reply(fd: int, head: bytes, body: bytes, wait: float = WRITE_WAIT_SECONDS) -> tuple[int, bool]:
    """Write ``head`` and ``body`` to a client's socket ``fd`` (the owner's, duplicated into this
    process: its O_NONBLOCK is the owner's, so writes never block here; never change it). Waits
    for the socket to take more at most ``wait`` seconds in all. Returns ``(bytes written, failed)``:
    failed when the connection broke (the client went away); fewer bytes than head and body and not
    failed: the client stopped taking them (the caller hands the rest to the owner)."""
    total = len(head) + len(body)
    written = 0
    deadline: float | None = None
    while written < total:
        try:
            if written < len(head):
                n = os.writev(fd, [memoryview(head)[written:], body])
            else:
                n = os.write(fd, memoryview(body)[written - len(head):])
        except (BlockingIOError, InterruptedError):
            if deadline is None:
                deadline = time.monotonic() + wait
                if _grow_send_buffer(fd, total - written):
                    continue
            left = deadline - time.monotonic()
            if left <= 0 or not _writable(fd, left):
                return written, False
            continue
        except OSError:  # EPIPE, ECONNRESET, EBADF: the client is gone
            return written, True
        written += n
    return written, False


def _grow_send_buffer(fd: int, size: int) -> bool:
    """Let the kernel take ``size`` more bytes for the client (its send buffer, which loopback and
    LAN connections start small and grow only as the peer acknowledges): the owner's relay kept
    the rest in its own memory instead. The kernel counts its bookkeeping in the buffer (it
    doubles the value) and caps it (Linux: net.core.wmem_max). True when it grew."""
    sock = socket.socket(fileno=fd)  # (not a duplicate: detached below, never closed here)
    try:
        current = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        want = min(SEND_BUFFER_MAX, 2 * size + current)
        if want <= current:
            return False
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, want)
        return sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) > current
    except OSError:
        return False
    finally:
        sock.detach()


#: The most a reader asks for a client socket's send buffer (a page is ~250 KB).
SEND_BUFFER_MAX = 1024 * 1024


def _writable(fd: int, seconds: float) -> bool:
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return bool(poller.poll(seconds * 1000))
    _, writable, _ = select.select([], [fd], [], seconds)
    return bool(writable)


def read_extra(data: bytes) -> Any:
    """A reply's extra part (``reply_parts``' ``extra``), None when it is empty."""
    return pickle.loads(data) if data else None


def send_parts(sock: socket.socket, parts: list[Any]) -> None:
    """``sendall`` of several buffers without joining them (``sendmsg`` where there is one)."""
    if not hasattr(sock, "sendmsg"):  # Windows
        for part in parts:
            sock.sendall(part)
        return
    views = [memoryview(part) for part in parts if part]
    while views:
        sent = sock.sendmsg(views)
        while views and sent >= len(views[0]):
            sent -= len(views[0])
            views.pop(0)
        if views and sent:
            views[0] = views[0][sent:]


def connect(address: str) -> socket.socket:
    """A reader's connection to its owner (``ENV_ADDRESS``)."""
    if address.startswith(UNIX_PREFIX):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = address[len(UNIX_PREFIX):]
        try:
            sock.connect("\0" + path[len(ABSTRACT):] if path.startswith(ABSTRACT) else path)
        except OSError:
            sock.close()
            raise
        return sock
    host, _, port = address.rpartition(":")
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def hello(key: str, pid: int) -> bytes:
    body = f"{key}:{pid}".encode("ascii")
    return HEADER.pack(len(body)) + body


def _recv_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def read_frame(sock: socket.socket) -> Any | None:
    """The next message from a blocking socket; None at end of stream."""
    message, fds = read_frame_fds(sock, False)
    return message


def read_frame_fds(sock: socket.socket, fds_too: bool = True) -> tuple[Any | None, list[int]]:
    """The next message from a blocking socket and the file descriptors that came with its first
    byte (a hand-off's client socket: the caller owns and closes them); None at end of stream."""
    fds: list[int] = []
    if fds_too and FD_PASSING and sock.family == socket.AF_UNIX:
        data, fds, _flags, _addr = socket.recv_fds(sock, HEADER.size, 4)
        if not data:
            _close_all(fds)
            return None, []
        rest = _recv_exactly(sock, HEADER.size - len(data)) if len(data) < HEADER.size else b""
        head = None if rest is None else data + rest
    else:
        head = _recv_exactly(sock, HEADER.size)
    if head is None:
        _close_all(fds)
        return None, []
    try:
        (size,) = HEADER.unpack(head)
        if size > MAX_FRAME:
            raise ValueError(f"frame of {size} bytes")
        body = _recv_exactly(sock, size)
        if body is None:
            _close_all(fds)
            return None, []
        return pickle.loads(body), fds
    except BaseException:
        _close_all(fds)
        raise


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
