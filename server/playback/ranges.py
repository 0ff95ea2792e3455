"""HTTP byte ranges for media files (RFC 9110 sections 13 and 14), at the ASGI level.

``parse_range_header`` and ``plan_file_reply`` are pure functions; ``send_file_range``
streams part of a file as ``http.response.body`` messages (chunks read in a thread);
``RangeFileApp`` is an ASGI app that does all of it for one file, so any ASGI framework can
return it: the file opened and stat'ed in one thread hop, then the range sent as one
``http.response.zerocopysend`` message where the server offers that extension
(server/http/protocol.py: ``os.sendfile``), else with ``send_file_range``.
"""

from __future__ import annotations

import logging
import mimetypes
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import anyio.to_thread

log = logging.getLogger(__name__)

ZERO_COPY = "http.response.zerocopysend"  # the ASGI extension server/http/protocol.py offers
MIB = 1024 * 1024
DEFAULT_CHUNK_SIZE = 2 * MIB

# Media types by container or file extension, as media players expect them.
_MEDIA_TYPES: dict[str, str] = {
    "mkv": "video/x-matroska", "mk3d": "video/x-matroska", "mka": "audio/x-matroska",
    "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime", "3gp": "video/3gpp",
    "ts": "video/mp2t", "mpegts": "video/mp2t", "m2ts": "video/mp2t", "mts": "video/mp2t",
    "webm": "video/webm", "avi": "video/x-msvideo", "wmv": "video/x-ms-wmv", "asf": "video/x-ms-asf",
    "flv": "video/x-flv", "mpg": "video/mpeg", "mpeg": "video/mpeg", "ogv": "video/ogg",
    "mp3": "audio/mpeg", "flac": "audio/flac", "m4a": "audio/mp4", "m4b": "audio/mp4",
    "aac": "audio/aac", "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/ogg",
    "wav": "audio/wav", "wma": "audio/x-ms-wma", "ape": "audio/x-ape", "wv": "audio/x-wavpack",
    "dsf": "audio/dsf", "dff": "audio/dff", "weba": "audio/webm",
    "m3u8": "application/x-mpegURL", "vtt": "text/vtt", "srt": "application/x-subrip",
    "ass": "text/x-ssa", "ssa": "text/x-ssa",
}


class RangeNotSatisfiableError(ValueError):
    """No range in the Range header overlaps the file (the reply is 416)."""

    def __init__(self, size: int) -> None:
        super().__init__(f"requested range not satisfiable for a {size}-byte file")
        self.size = size


@dataclass(frozen=True)
class ByteRange:
    """An inclusive byte range ``start``..``end`` of a file."""

    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start + 1


@dataclass(frozen=True)
class FileReply:
    """Status, headers and the byte span to send for one request for a file."""

    status: int
    headers: list[tuple[str, str]]
    body_range: ByteRange | None  # None: no body (HEAD, 304, 412, 416, empty file)


def media_type_for(path: str | os.PathLike[str], container: str | None = None) -> str:
    """Content-Type for a media file, from its container name or else its extension."""
    for key in ((container or "").split(",")[0], Path(path).suffix.lstrip(".")):
        found = _MEDIA_TYPES.get(key.strip().lower())
        if found:
            return found
    guessed, _ = mimetypes.guess_type(str(path))
    return guessed or "application/octet-stream"


def file_etag(size: int, mtime_ns: int) -> str:
    """A strong entity tag built from the file's size and modification time."""
    return f'"{size:x}-{mtime_ns:x}"'


def parse_range_header(value: str | None, size: int) -> ByteRange | None:
    """The range to serve for a ``Range`` header, or None to send the whole file.

    Absent, malformed or non-``bytes`` headers give None (the reply is a plain 200).
    With several ranges the first satisfiable one is served. Raises
    RangeNotSatisfiableError when the header is valid but no range overlaps the file.
    """
    if not value:
        return None
    unit, sep, spec_list = value.partition("=")
    if not sep or unit.strip().lower() != "bytes":
        return None
    specs = [s.strip() for s in spec_list.split(",")]
    specs = [s for s in specs if s]
    if not specs:
        return None
    parsed: list[tuple[int | None, int | None]] = []
    for spec in specs:
        first, dash, last = spec.partition("-")
        first, last = first.strip(), last.strip()
        if not dash or (first and not first.isdigit()) or (last and not last.isdigit()):
            return None
        if not first and not last:
            return None
        if first and last and int(last) < int(first):
            return None
        parsed.append((int(first) if first else None, int(last) if last else None))
    for first_pos, last_pos in parsed:
        if first_pos is None:  # suffix range: the last N bytes
            suffix = last_pos or 0
            if suffix == 0 or size == 0:
                continue
            return ByteRange(max(0, size - suffix), size - 1)
        if first_pos >= size:
            continue
        end = size - 1 if last_pos is None else min(last_pos, size - 1)
        return ByteRange(first_pos, end)
    raise RangeNotSatisfiableError(size)


def plan_file_reply(
    *,
    method: str,
    request_headers: Mapping[str, str],
    size: int,
    mtime_ns: int,
    media_type: str,
    extra_headers: Iterable[tuple[str, str]] = (),
) -> FileReply:
    """Decide status and headers for a GET or HEAD of a file.

    ``request_headers`` must have lower-case names. Handles Range, If-Range,
    If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since.
    """
    etag = file_etag(size, mtime_ns)
    mtime_s = mtime_ns // 1_000_000_000
    last_modified = formatdate(mtime_s, usegmt=True)
    validators = [("etag", etag), ("last-modified", last_modified)]
    base = [("accept-ranges", "bytes"), *validators, *extra_headers]

    if_match = request_headers.get("if-match")
    if if_match is not None:
        if not etag_matches(if_match, etag, weak=False):
            return FileReply(412, [*base, ("content-length", "0")], None)
    elif (unmodified_since := parse_http_date(request_headers.get("if-unmodified-since"))) is not None:
        if mtime_s > unmodified_since:
            return FileReply(412, [*base, ("content-length", "0")], None)

    if_none_match = request_headers.get("if-none-match")
    if if_none_match is not None:
        if etag_matches(if_none_match, etag, weak=True):
            return FileReply(304, base, None)
    elif (modified_since := parse_http_date(request_headers.get("if-modified-since"))) is not None:
        if mtime_s <= modified_since:
            return FileReply(304, base, None)

    range_header = request_headers.get("range")
    if range_header and not _if_range_allows(request_headers.get("if-range"), etag, mtime_s):
        range_header = None
    try:
        byte_range = parse_range_header(range_header, size)
    except RangeNotSatisfiableError:
        headers = [*base, ("content-range", f"bytes */{size}"), ("content-length", "0")]
        return FileReply(416, headers, None)

    head_only = method.upper() == "HEAD"
    typed = [*base, ("content-type", media_type)]
    if byte_range is None:
        body = None if head_only or size == 0 else ByteRange(0, size - 1)
        return FileReply(200, [*typed, ("content-length", str(size))], body)
    headers = [
        *typed,
        ("content-range", f"bytes {byte_range.start}-{byte_range.end}/{size}"),
        ("content-length", str(byte_range.length)),
    ]
    return FileReply(206, headers, None if head_only else byte_range)


def etag_matches(header: str, etag: str, *, weak: bool) -> bool:
    """Whether an If-Match / If-None-Match list names ``etag`` (weak or strong comparison)."""
    if header.strip() == "*":
        return True
    for candidate in header.split(","):
        tag = candidate.strip()
        if tag.startswith("W/"):
            if not weak:
                continue
            tag = tag[2:]
        if tag == etag:
            return True
    return False


def _if_range_allows(if_range: str | None, etag: str, mtime_s: int) -> bool:
    """True when the Range header may be honoured under the given If-Range value."""
    if if_range is None:
        return True
    value = if_range.strip()
    if value.startswith('"') or value.startswith("W/"):
        return value == etag  # strong comparison; weak tags never match
    date = parse_http_date(value)
    return date is not None and date == mtime_s


def parse_http_date(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(parsedate_to_datetime(value).timestamp())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _read_at(handle: BinaryIO, offset: int, length: int) -> bytes:
    handle.seek(offset)
    return handle.read(length)


async def send_file_range(
    send: Any,
    path: str | os.PathLike[str],
    size: int,
    start: int,
    end: int,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    *,
    receive: Any = None,
    handle: BinaryIO | None = None,
) -> int:
    """Send bytes ``start``..``end`` (inclusive) of a file as ASGI body messages.

    Reads happen in a worker thread. The response start message must already be sent.
    Stops quietly when the client goes away: when ``send`` raises OSError or, if
    ``receive`` is given, when it reports ``http.disconnect``. Returns the bytes sent.
    ``handle``: the file already open (the caller closes it), else it is opened here.
    """
    if not 0 <= start <= end < size:
        raise ValueError(f"byte range {start}-{end} is outside a {size}-byte file")
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    owned = handle is None
    if handle is None:
        handle = await anyio.to_thread.run_sync(open, os.fspath(path), "rb")
    sent = [0]
    try:
        async with anyio.create_task_group() as group:
            if receive is not None:
                group.start_soon(_cancel_on_disconnect, receive, group.cancel_scope)
            await _pump(send, handle, start, end, chunk_size, sent)
            group.cancel_scope.cancel()
    finally:
        if owned:
            handle.close()
    return sent[0]


def _open_with_stat(path: str | os.PathLike[str]) -> tuple[BinaryIO, os.stat_result]:
    handle = open(os.fspath(path), "rb")  # noqa: SIM115 - the caller closes it
    try:
        return handle, os.fstat(handle.fileno())
    except OSError:
        handle.close()
        raise


async def _pump(send: Any, handle: BinaryIO, start: int, end: int, chunk_size: int, sent: list[int]) -> None:
    position = start
    while position <= end:
        want = min(chunk_size, end - position + 1)
        data = await anyio.to_thread.run_sync(_read_at, handle, position, want)
        if not data:
            log.warning("%s shrank while being sent; stopping at byte %d of %d", handle.name, position, end + 1)
            return
        position += len(data)
        try:
            await send({"type": "http.response.body", "body": data, "more_body": position <= end})
        except OSError:
            return
        sent[0] += len(data)


async def _cancel_on_disconnect(receive: Any, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            scope.cancel()
            return


def request_headers_from_scope(scope: Mapping[str, Any]) -> dict[str, str]:
    """ASGI scope headers as a dict with lower-case names (repeated headers joined by commas)."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


class RangeFileApp:
    """An ASGI app serving one file with Range, conditional requests and HEAD."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        media_type: str | None = None,
        headers: Iterable[tuple[str, str]] = (),
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        background: Any = None,
    ) -> None:
        self.path = Path(path)
        self.media_type = media_type or media_type_for(self.path)
        self.headers = [(k.lower(), str(v)) for k, v in headers]
        self.chunk_size = chunk_size
        self.background = background

    async def __call__(self, scope: Mapping[str, Any], receive: Any, send: Any) -> None:
        try:  # one thread hop: the file opened and its size and mtime read from the open file
            handle, stat = await anyio.to_thread.run_sync(_open_with_stat, self.path)
        except OSError:
            await _send_simple(send, 404, b"File not found")
            return
        try:
            reply = plan_file_reply(
                method=scope.get("method", "GET"),
                request_headers=request_headers_from_scope(scope),
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
                media_type=self.media_type,
                extra_headers=self.headers,
            )
            await send({"type": "http.response.start", "status": reply.status, "headers": _encode(reply.headers)})
            if reply.body_range is None:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            elif ZERO_COPY in (scope.get("extensions") or {}):
                await send({"type": ZERO_COPY, "file": handle, "offset": reply.body_range.start,
                            "count": reply.body_range.length, "more_body": False})
            else:
                await send_file_range(
                    send, self.path, stat.st_size, reply.body_range.start, reply.body_range.end,
                    self.chunk_size, receive=receive, handle=handle,
                )
        finally:
            handle.close()
        if self.background is not None:
            await self.background()


def _encode(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]


async def _send_simple(send: Any, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
