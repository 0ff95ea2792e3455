"""The frames owner and readers exchange over their loopback connection: a 4-byte length, then a
pickled tuple. Both ends are this server's own processes (the reader proved it knows the owner's
secret, in a plain-text hello, before any pickled frame is read), so pickle is safe here.

- hello (reader -> owner, once): ``<secret>:<pid>`` in ASCII, never unpickled
- request (owner -> reader): ``(request_id, kind, generations, args)``; an Items page's args are
  ``(query, dto options, camelCase?, the owner's fragment store epoch or 0)``
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

import pickle
import socket
import struct
import sys
import time
from typing import Any

HEADER = struct.Struct("!I")
MAX_FRAME = 256 * 1024 * 1024

#: A reply's head: body size, request id, status (an index into STATUSES), extra part's size, and
#: the CPU seconds the reader has used so far (``time.process_time``: the pool's CPU gate counts
#: it as free, the same on every OS).
REPLY_HEADER = struct.Struct("!IIBId")

OK = "ok"
ERROR = "error"
FAILED = "failed"
STATUSES = (OK, ERROR, FAILED)

#: The kinds of request a reader answers.
ITEMS = "items"

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


def reply_parts(request_id: int, status: str, payload: Any, extra: Any = None) -> list[bytes]:
    """A reply as the buffers to send (head, body, extra), so an OK body is sent as it is,
    uncopied. ``extra`` (None: nothing) is pickled."""
    body = payload if status == OK else pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    more = b"" if extra is None else pickle.dumps(extra, protocol=pickle.HIGHEST_PROTOCOL)
    return [REPLY_HEADER.pack(len(body), request_id, STATUSES.index(status), len(more), time.process_time()),
            body, more]


def read_reply(head: bytes, body: bytes) -> tuple[int, str, Any]:
    """``(request_id, status, payload)`` from a reply's head and body (the owner's side)."""
    _size, request_id, code, _extra, _cpu = REPLY_HEADER.unpack(head)
    status = STATUSES[code]
    return request_id, status, body if status == OK else pickle.loads(body)


def read_extra(data: bytes) -> Any:
    """A reply's extra part (``reply_parts``' ``extra``), None when it is empty."""
    return pickle.loads(data) if data else None


def send_parts(sock: socket.socket, parts: list[bytes]) -> None:
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
    head = _recv_exactly(sock, HEADER.size)
    if head is None:
        return None
    (size,) = HEADER.unpack(head)
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes")
    body = _recv_exactly(sock, size)
    return None if body is None else pickle.loads(body)
