"""uvicorn's HTTP protocol with bounds on the request head, as Jellyfin's web server (Kestrel) has,
a response head written together with the first body message, and zero-copy file bodies (the
ASGI ``http.response.zerocopysend`` extension).

httptools keeps a header in memory until it is complete and has no limit of its own, so a client
could send one 64 MiB header and have it read and answered. Here the bytes of the head are
counted as they arrive (before the parser buffers them): a request line over
:data:`MAX_REQUEST_LINE` bytes gets 414, headers over :data:`MAX_HEADER_BYTES` bytes or more than
:data:`MAX_HEADER_COUNT` headers get 431, and the connection is closed without reading further.

Zero-copy: on a plain TCP connection (no TLS) where the OS has ``sendfile``, the scope offers
``extensions["http.response.zerocopysend"]``; an app (server/playback/ranges.py) may then send
``{"type": "http.response.zerocopysend", "file": <binary file>, "offset": int, "count": int,
"more_body": bool}`` after a ``http.response.start`` with a Content-Length. The bytes go from
the page cache to the socket through ``loop.sendfile`` (``os.sendfile`` driven by the event
loop's writable events): no read into Python, no worker thread per chunk, no copy, and a busy
event loop still moves as much as the socket buffer takes on each wake-up.

One write per reply: uvicorn writes the head when ``http.response.start`` is sent and the body
with each body message, two system calls for every small reply. Under load each call on the
event loop's thread lets the GIL go to a busy database reader and waits to get it back, so
``response_sender`` holds the head of a reply with a Content-Length (its body follows at once;
a streamed reply's head still goes out at once) until the first body message and writes both
together.

The Items lane: a request the app's ``items_lane`` (``server/http/items_lane.py``) takes (a GET of a
path ending in ``/Items``) runs the lane in place of the app once its head is complete; the lane
answers through the same cycle and sender, or hands the request to the app untouched. On a plain
socket connection (and an OS that passes sockets between processes) the lane also gets the cycle,
so that a reader process may write the page's reply to the socket itself (a hand-off).

Admission: a browsing request (``server/http/admission.py``: a GET or HEAD off the playback paths)
runs once the app's ``admission`` lets it in, first come first served with a bound on the requests
in flight, so that under load the waiting is shared by every request rather than left to the
heaviest.
"""

from __future__ import annotations

import asyncio
import logging
import os
from asyncio import constants as asyncio_constants
from collections.abc import Callable, Coroutine
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from server.http import handoff
from server.http.admission import held_back as admission_held_back

log = logging.getLogger("reelroom.http")

MAX_REQUEST_LINE = 32 * 1024  # Kestrel: 8 KiB; more room for long Ids lists (and a clear 400 for long names)
MAX_HEADER_BYTES = 32 * 1024  # Kestrel's MaxRequestHeadersTotalSize
MAX_HEADER_COUNT = 100  # Kestrel's MaxRequestHeaderCount

_REASONS = {414: b"URI Too Long", 431: b"Request Header Fields Too Large"}


class _HeadTooLarge(Exception):
    pass


ZERO_COPY = "http.response.zerocopysend"
_HAS_SENDFILE = hasattr(os, "sendfile")
_HAS_WRITEV = hasattr(os, "writev")
_NATIVE_SENDFILE = asyncio_constants._SendfileMode.TRY_NATIVE
_FD_PASSING = handoff.FD_PASSING


class _Gathered:
    """Stands in for the transport while a held response head and the first body message are
    sent: their writes are gathered into one, a close is remembered for after it."""

    __slots__ = ("closed", "parts", "transport")

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.parts: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.parts.append(data)

    def close(self) -> None:
        self.closed = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


# A reply body at least this long goes out with its head in one writev(2) rather than joined to it
# first (a copy of the whole body on the event loop: 245 KB for an Items page of 100 items).
GATHER_MIN_BYTES = 16 * 1024


def _write_gathered(transport: Any, parts: list[bytes]) -> bool:
    """Write ``parts`` (a reply's head and body) to an asyncio socket transport with one
    ``writev``, no join; what the socket does not take now goes to the transport as a view of
    the body (one copy of the rest, into its buffer, as any write). False when this is not the way
    (a short body, data already buffered, an error the transport should see and handle)."""
    if len(parts) != 2 or len(parts[1]) < GATHER_MIN_BYTES or transport.get_write_buffer_size():
        return False
    try:
        fd = transport.get_extra_info("socket").fileno()
        sent = os.writev(fd, parts)
    except (BlockingIOError, InterruptedError):
        sent = 0
    except (OSError, AttributeError, ValueError):
        return False  # (a reset connection: the transport's own write reports it)
    head, body = parts
    if sent < len(head):
        transport.write(head[sent:])
        sent = len(head)
    rest = sent - len(head)
    if rest < len(body):
        transport.write(memoryview(body)[rest:])
    return True


def response_sender(cycle: RequestResponseCycle, zero_copy: bool) -> Callable[[Any], Coroutine[Any, Any, None]]:
    """``cycle.send`` that writes a response's head together with its first body message (one
    write, one system call, instead of two: on a busy server each call gives the GIL away and
    waits to get it back; a long body with ``writev``, not joined to its head), and, when
    ``zero_copy``, also takes ``http.response.zerocopysend``. ``zero_copy`` is true on asyncio's
    own plain socket transports, which are also the ones written to with ``writev``."""
    send = cycle.send
    plain_socket = zero_copy and _HAS_WRITEV
    held: Any = None  # the http.response.start message, until the first body message

    async def send_held(message: Any) -> None:
        nonlocal held
        start, held = held, None
        real = cycle.transport
        gathered = _Gathered(real)
        cycle.transport = gathered  # type: ignore[assignment]
        try:
            await send(start)
            if message is not None:
                await send(message)
        finally:
            cycle.transport = real
            if gathered.parts and not real.is_closing():
                if not (plain_socket and _write_gathered(real, gathered.parts)):
                    real.write(b"".join(gathered.parts))
            if gathered.closed:
                real.close()

    async def sender(message: Any) -> None:
        nonlocal held
        kind = message["type"]
        if kind == "http.response.start" and not cycle.response_started:
            # a second head replaces a held one that never went out: uvicorn's 500 after the app
            # failed between its head and its body
            held = None
            if any(name.lower() == b"content-length" for name, _ in message.get("headers", ())):
                held = message  # a reply of known length: its body follows at once
                return
        if held is not None:
            if kind == "http.response.body":
                await send_held(message)
                return
            await send_held(None)
        if kind == ZERO_COPY and zero_copy:
            await _send_zero_copy(cycle, send, message)
        else:
            await send(message)

    return sender


async def _send_zero_copy(cycle: RequestResponseCycle, send: Callable[[Any], Coroutine[Any, Any, None]],
                          message: Any) -> None:
    if not cycle.response_started or cycle.response_complete or cycle.chunked_encoding:
        raise RuntimeError("http.response.zerocopysend needs a started response with a Content-Length.")
    more_body = bool(message.get("more_body", False))
    file = message["file"]
    offset = int(message.get("offset") or 0)
    count = message.get("count")
    if count is None:
        count = os.fstat(file.fileno()).st_size - offset
    if cycle.scope["method"] == "HEAD" or count <= 0:
        await send({"type": "http.response.body", "body": b"", "more_body": more_body})
        return
    if count > cycle.expected_content_length:
        raise RuntimeError("Response content longer than Content-Length")
    if cycle.flow.write_paused and not cycle.disconnected:
        await cycle.flow.drain()
    if cycle.disconnected or cycle.transport.is_closing():
        return
    try:
        sent = await asyncio.get_running_loop().sendfile(cycle.transport, file, offset, count)
    except (OSError, RuntimeError) as exc:  # the client went away (EPIPE, ECONNRESET), or closed
        log.debug("Zero-copy send ended early: %r", exc)
        cycle.disconnected = True
        cycle.transport.close()
        return
    cycle.expected_content_length -= sent
    if sent < count:  # the file shrank under us: the promised length cannot be kept
        log.warning("A file shrank while being sent (%d of %d bytes); closing the connection", sent, count)
        cycle.disconnected = True
        cycle.transport.close()
        return
    await send({"type": "http.response.body", "body": b"", "more_body": more_body})


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True
        self._head_bytes = 0
        self._url_bytes = 0
        self._header_count = 0
        self._header_bytes = 0
        self._refused: int | None = None
        self._zero_copy: bool | None = None  # decided on the first request (the transport is known)
        # GET /Items answered past ASGI and Litestar (server/http/items_lane.py), when the app has it
        self._lane: Any = getattr(self.config.app, "items_lane", None)
        # browsing requests let in first come first served, a bound on those in flight
        # (server/http/admission.py), when the app has it
        self._admission: Any = getattr(self.config.app, "admission", None)

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        if self._zero_copy is None:
            transport = self.transport
            # asyncio's own socket transports (the server runs on asyncio.run) have a native
            # loop.sendfile; TLS transports and uvloop's have none
            self._zero_copy = (_HAS_SENDFILE and transport is not None
                               and getattr(transport, "_sendfile_compatible", None) is _NATIVE_SENDFILE
                               and transport.get_extra_info("sslcontext") is None)
        if self._zero_copy:
            cycle.scope["extensions"] = {**cycle.scope.get("extensions", {}), ZERO_COPY: {}}
        cycle.send = response_sender(cycle, self._zero_copy)  # type: ignore[assignment]  # an instance attribute
        lane = self._lane
        ours = app is self.app  # (not uvicorn's 503 app)
        if lane is not None and ours and lane.takes(cycle.scope):
            # the lane, else the app as ever; with the cycle where a reader process may write the
            # reply to the socket itself (asyncio's own plain socket transport, an OS that passes
            # sockets: server/http/handoff.py)
            app = lane.bind(app, cycle if self._zero_copy and _FD_PASSING else None)
        admission = self._admission
        if admission is not None and ours and admission.limit > 0 and admission_held_back(
                cycle.scope["method"], cycle.scope["path"]):
            app = admission.wrap(app, cycle)
        super()._start_asgi_task(cycle, app)

    def data_received(self, data: bytes) -> None:
        if self._refused is not None:
            return
        if self._in_head:
            self._head_bytes += len(data)
        try:
            super().data_received(data)
        except _HeadTooLarge:  # pragma: no cover - httptools wraps it; kept for safety
            pass
        if self._refused is None and self._in_head:
            if self._url_bytes > MAX_REQUEST_LINE:
                self._refused = 414
            elif self._head_bytes - self._url_bytes > MAX_HEADER_BYTES + 1024:
                self._refused = 431
        if self._refused is not None:
            self._refuse()

    def send_400_response(self, msg: str) -> None:
        if self._refused is not None:
            self._refuse()
            return
        super().send_400_response(msg)

    def _refuse(self) -> None:
        status = self._refused or 431
        if self.transport is None or self.transport.is_closing():
            return
        body = b"The request head is too large."
        log.warning("Refused a request from %s: %d (request head over the limits)",
                    self.client[0] if self.client else "?", status)
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (status, _REASONS[status], len(body), body))
        self.transport.close()

    # Parser callbacks
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._url_bytes = 0
        self._header_count = 0
        self._header_bytes = 0

    def on_url(self, url: bytes) -> None:
        self._url_bytes += len(url)
        if self._url_bytes > MAX_REQUEST_LINE:
            self._refused = 414
            raise _HeadTooLarge
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        self._header_bytes += len(name) + len(value) + 4
        if self._header_count > MAX_HEADER_COUNT or self._header_bytes > MAX_HEADER_BYTES:
            self._refused = 431
            raise _HeadTooLarge
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        # A request that arrives while the last one's reply is still going out waits in uvicorn's
        # pipeline, and uvicorn stops reading the socket until that reply is done (two epoll_ctl
        # calls, a pause and a resume, and the event loop's bookkeeping of both). With a reader
        # process writing replies (server/http/handoff.py) that is most pages: the client has the
        # reply and asks the next page before the reader's answer reaches this process. The first
        # such request waits without the pause; a second one (the client pipelines) pauses reading
        # as ever, so at most one request more is read ahead (and a body beyond uvicorn's high
        # water mark still pauses it).
        flow = self.flow
        cycle = self.cycle
        ahead = (cycle is not None and not cycle.response_complete and not self.pipeline
                 and flow is not None and not flow.read_paused)
        if ahead:
            flow.read_paused = True  # (uvicorn's pause_reading is then a no-op)
        try:
            super().on_headers_complete()
        finally:
            if ahead:
                flow.read_paused = False

    def on_message_complete(self) -> None:
        self._in_head = True
        self._head_bytes = 0
        super().on_message_complete()
