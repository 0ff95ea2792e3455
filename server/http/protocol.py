"""uvicorn's HTTP protocol with bounds on the request head, as Jellyfin's web server (Kestrel) has.

httptools keeps a header in memory until it is complete and has no limit of its own, so a client
could send one 64 MiB header and have it read and answered. Here the bytes of the head are
counted as they arrive (before the parser buffers them): a request line over
:data:`MAX_REQUEST_LINE` bytes gets 414, headers over :data:`MAX_HEADER_BYTES` bytes or more than
:data:`MAX_HEADER_COUNT` headers get 431, and the connection is closed without reading further.
"""

from __future__ import annotations

import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("reelroom.http")

MAX_REQUEST_LINE = 32 * 1024  # Kestrel: 8 KiB; more room for long Ids lists (and a clear 400 for long names)
MAX_HEADER_BYTES = 32 * 1024  # Kestrel's MaxRequestHeadersTotalSize
MAX_HEADER_COUNT = 100  # Kestrel's MaxRequestHeaderCount

_REASONS = {414: b"URI Too Long", 431: b"Request Header Fields Too Large"}


class _HeadTooLarge(Exception):
    pass


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True
        self._head_bytes = 0
        self._url_bytes = 0
        self._header_count = 0
        self._header_bytes = 0
        self._header_bytes = 0
        self._refused: int | None = None

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
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._in_head = True
        self._head_bytes = 0
        super().on_message_complete()
