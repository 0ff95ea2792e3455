"""Serving one folder of static files over plain ASGI: types, caching headers, ETag/304, HEAD,
single byte ranges, gzip and brotli, and paths that never leave the folder.

Small files are kept in memory (bounded), so a warm asset costs one ``stat`` and no disk read;
anything read or compressed goes through a worker thread, never the event loop.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import re
import stat as stat_mod
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from server.http.memory_cache import MemoryCache as _MemoryCache
from server.web.compress import CompressionCache, FileFacts

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".map": "application/json; charset=utf-8",
    ".webmanifest": "application/manifest+json; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".xml": "application/xml; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
    ".wasm": "application/wasm",
    ".mp3": "audio/mpeg",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".pdf": "application/pdf",
}
DEFAULT_TYPE = "application/octet-stream"
# Worth compressing: text, and binary formats that are not compressed already.
COMPRESSIBLE = {".html", ".htm", ".js", ".mjs", ".css", ".json", ".map", ".webmanifest", ".txt", ".xml",
                ".svg", ".wasm", ".ico", ".ttf", ".otf", ".eot"}
MIN_COMPRESS_SIZE = 512

NO_CACHE = "no-cache"
IMMUTABLE = "public, max-age=31536000, immutable"
NEVER_IMMUTABLE = {"index.html", "config.json", "serviceworker.js", "manifest.json", "robots.txt"}
# A content hash in a file name (webpack's [contenthash]: 16+ hex digits between dots or dashes)...
_HASHED_NAME = re.compile(r"(?:^|[.\-_])[0-9a-f]{16,}(?:[.\-_]|$)")
# ...or a bare build hash as the whole query string (jellyfin-web's "runtime.bundle.js?ad3898a0...").
_HASH_QUERY = re.compile(r"^(?:v=)?[0-9a-f]{16,}$")

MEMORY_LIMIT = 48 * 1024 * 1024
MEMORY_FILE_LIMIT = 2 * 1024 * 1024
CHUNK = 256 * 1024


@lru_cache(maxsize=4096)
def content_type(name: str) -> str:
    return CONTENT_TYPES.get(os.path.splitext(name)[1].lower(), DEFAULT_TYPE)


@lru_cache(maxsize=4096)
def cache_control(name: str, query: str) -> str:
    base = name.rsplit("/", 1)[-1].lower()
    if base in NEVER_IMMUTABLE or base.endswith(".html"):
        return NO_CACHE
    if _HASHED_NAME.search(base) or _HASH_QUERY.match(query):
        return IMMUTABLE
    return NO_CACHE


def safe_relative(path: str) -> str | None:
    """The request path below the site root as a relative POSIX path, or None when it could leave
    the folder or name something hidden (``..``, ``.``, dotfiles, backslashes, NULs, drive letters)."""
    if "\\" in path or "\x00" in path:
        return None
    parts = []
    for part in path.split("/"):
        if part == "":
            continue
        if part.startswith(".") or ":" in part:
            return None
        parts.append(part)
    return "/".join(parts)


@lru_cache(maxsize=256)
def parse_accept_encoding(value: str) -> frozenset[str]:
    accepted: set[str] = set()
    refused: set[str] = set()
    for item in value.split(","):
        token, _, params = item.strip().partition(";")
        token = token.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, val = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(val)
                except ValueError:
                    q = 0.0
        (accepted if q > 0 else refused).add(token)
    if "*" in accepted:
        accepted |= {"br", "gzip"} - refused
    return frozenset(accepted)


def _etag_values(header: str) -> set[str]:
    out = set()
    for part in header.split(","):
        part = part.strip()
        if part.startswith("W/"):
            part = part[2:]
        out.add(part.strip('"'))
    return out


class MemoryCache(_MemoryCache):
    """The web app's file bodies (plain and compressed), bounded in total bytes."""

    def __init__(self, limit: int = MEMORY_LIMIT) -> None:
        super().__init__(limit, MEMORY_FILE_LIMIT)


def _read_file(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _read_range(path: str, start: int, length: int) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(start)
        return fh.read(length)


class StaticSite:
    """Serves the files of one folder. ``root`` is fixed; build a new site for another folder."""

    def __init__(self, root: Path, compression: CompressionCache | None = None,
                 memory: MemoryCache | None = None) -> None:
        self.root = os.path.realpath(root)
        self.compression = compression
        self.memory = memory or MemoryCache()

    # -- lookup -----------------------------------------------------------------------------

    def find(self, relative: str) -> FileFacts | None:
        """The file for a safe relative path, or None (missing, a folder without index.html,
        or a symlink that points out of the folder)."""
        candidate = os.path.join(self.root, *relative.split("/")) if relative else self.root
        try:
            st = os.stat(candidate)
            if stat_mod.S_ISDIR(st.st_mode):
                candidate = os.path.join(candidate, "index.html")
                st = os.stat(candidate)
            if not stat_mod.S_ISREG(st.st_mode):
                return None
            if os.path.islink(candidate) or (relative and self._has_link(relative)):
                real = os.path.realpath(candidate)
                if os.path.commonpath([real, self.root]) != self.root:
                    return None
        except (OSError, ValueError):
            return None
        return FileFacts(candidate, st.st_size, st.st_mtime_ns, st.st_ino)

    def _has_link(self, relative: str) -> bool:
        current = self.root
        for part in relative.split("/"):
            current = os.path.join(current, part)
            if os.path.islink(current):
                return True
        return False

    # -- serving ----------------------------------------------------------------------------

    async def serve(self, scope: dict, send: Callable, relative: str) -> bool:
        """Answer the request from the folder; False when there is no such file (caller 404s)."""
        facts = self.find(relative)
        if facts is None:
            return False
        method = scope["method"]
        headers = _header_map(scope)
        query = scope.get("query_string", b"").decode("latin-1")
        name = facts.path[len(self.root):].replace(os.sep, "/")
        ctype = content_type(name)
        ext = os.path.splitext(name)[1].lower()
        compressible = ext in COMPRESSIBLE and facts.size >= MIN_COMPRESS_SIZE
        encoding = None
        if compressible and self.compression is not None and "range" not in headers:
            accepted = parse_accept_encoding(headers.get("accept-encoding", ""))
            for candidate in ("br", "gzip"):
                if candidate in accepted and self.compression.supports(candidate):
                    encoding = candidate
                    break
        etag = facts.etag + (f"-{encoding}" if encoding else "")
        last_modified = email.utils.formatdate(facts.mtime_ns / 1e9, usegmt=True)
        out: list[tuple[bytes, bytes]] = [
            (b"content-type", ctype.encode()),
            (b"cache-control", cache_control(name, query).encode()),
            (b"etag", f'"{etag}"'.encode()),
            (b"last-modified", last_modified.encode()),
            (b"x-content-type-options", b"nosniff"),
        ]
        if compressible:
            out.append((b"vary", b"Accept-Encoding"))
        if not encoding:
            out.append((b"accept-ranges", b"bytes"))

        if _not_modified(headers, facts):
            await send({"type": "http.response.start", "status": 304,
                        "headers": [h for h in out if h[0] != b"content-type"]})
            await send({"type": "http.response.body", "body": b""})
            return True

        body: bytes | None = None
        if encoding:
            body = await self._compressed(facts, encoding)
            if body is None:  # not smaller than the original: send it as it is
                encoding = None
                out = [(k, f'"{facts.etag}"'.encode() if k == b"etag" else v) for k, v in out]
                out.append((b"accept-ranges", b"bytes"))
            else:
                out.append((b"content-encoding", encoding.encode()))

        status = 200
        start, length = 0, facts.size
        if encoding is None and "range" in headers:
            parsed = _parse_range(headers["range"], facts.size)
            if parsed == "invalid":
                await send({"type": "http.response.start", "status": 416,
                            "headers": [(b"content-range", f"bytes */{facts.size}".encode()),
                                        (b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})
                return True
            if parsed is not None and _if_range_ok(headers, facts):
                start, length = parsed
                status = 206
                out.append((b"content-range", f"bytes {start}-{start + length - 1}/{facts.size}".encode()))

        if body is not None:
            length = len(body)
        out.append((b"content-length", str(length).encode()))
        await send({"type": "http.response.start", "status": status, "headers": out})
        if method == "HEAD":
            await send({"type": "http.response.body", "body": b""})
            return True
        if body is None:
            if status == 200:
                body = await self._plain(facts)
            elif length <= CHUNK * 4:
                body = await asyncio.to_thread(_read_range, facts.path, start, length)
        if body is not None:
            await send({"type": "http.response.body", "body": body})
            return True
        await self._stream(send, facts.path, start, length)
        return True

    async def _plain(self, facts: FileFacts) -> bytes | None:
        key = (*facts.key, None)
        data = self.memory.get(key)
        if data is not None:
            return data
        if facts.size > MEMORY_FILE_LIMIT:
            return None
        data = await asyncio.to_thread(_read_file, facts.path)
        if len(data) != facts.size:  # changed while we read it: serve, but do not keep
            return data
        self.memory.put(key, data)
        return data

    async def _compressed(self, facts: FileFacts, encoding: str) -> bytes | None:
        key = (*facts.key, encoding)
        data = self.memory.get(key)
        if data is not None:
            return data or None
        assert self.compression is not None
        data = await self.compression.get(facts, encoding)
        self.memory.put(key, data or b"")
        return data or None

    async def _stream(self, send: Callable, path: str, start: int, length: int) -> None:
        fh = await asyncio.to_thread(open, path, "rb")
        try:
            await asyncio.to_thread(fh.seek, start)
            left = length
            while left > 0:
                chunk = await asyncio.to_thread(fh.read, min(CHUNK, left))
                if not chunk:
                    break
                left -= len(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": left > 0})
            if left > 0:
                await send({"type": "http.response.body", "body": b""})
        finally:
            await asyncio.to_thread(fh.close)


def _header_map(scope: dict) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}


def _not_modified(headers: dict[str, str], facts: FileFacts) -> bool:
    inm = headers.get("if-none-match")
    if inm is not None:
        if inm.strip() == "*":
            return True
        tags = _etag_values(inm)
        return any(tag == facts.etag or tag.startswith(facts.etag + "-") for tag in tags)
    ims = headers.get("if-modified-since")
    if ims:
        try:
            since = email.utils.parsedate_to_datetime(ims).timestamp()
        except (TypeError, ValueError, IndexError):
            return False
        return int(facts.mtime_ns / 1e9) <= since
    return False


def _if_range_ok(headers: dict[str, str], facts: FileFacts) -> bool:
    value = headers.get("if-range")
    if value is None:
        return True
    return value.strip().strip('"') == facts.etag


def _parse_range(value: str, size: int):
    """One ``bytes=a-b`` range as (start, length); None to ignore the header (several ranges,
    another unit), ``"invalid"`` when it cannot be satisfied."""
    unit, _, spec = value.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, dash, last = spec.strip().partition("-")
    if not dash:
        return None
    try:
        if first == "":
            n = int(last)
            if n <= 0:
                return "invalid"
            start = max(size - n, 0)
            end = size - 1
        else:
            start = int(first)
            end = int(last) if last else size - 1
    except ValueError:
        return None
    if start >= size or end < start:
        return "invalid"
    end = min(end, size - 1)
    return start, end - start + 1
