"""A Litestar response that serves a media file with byte ranges.

Return ``RangeFileResponse(path)`` from a handler registered for GET and HEAD
(``@route(path, http_method=["GET", "HEAD"])``); Range, If-Range and the other
conditionals are read from the request when the response is sent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from litestar.response import Response

from server.playback.ranges import DEFAULT_CHUNK_SIZE, RangeFileApp, media_type_for

if TYPE_CHECKING:
    from litestar.connection import Request
    from litestar.types import ASGIApp


class RangeFileResponse(Response[bytes]):
    """Serve a file with 200/206/304/416 replies, chunked reads and HEAD support."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        media_type: str | None = None,
        container: str | None = None,
        headers: dict[str, str] | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        background: Any = None,
    ) -> None:
        self.file_path = Path(path)
        self.chunk_size = chunk_size
        super().__init__(
            content=b"",
            media_type=media_type or media_type_for(self.file_path, container),
            headers=headers,
            background=background,
        )

    def to_asgi_response(  # type: ignore[override]
        self,
        app: Any,
        request: Request[Any, Any, Any],
        *,
        background: Any = None,
        cookies: Any = None,
        encoded_headers: Any = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        media_type: Any = None,
        status_code: int | None = None,
        type_encoders: Any = None,
    ) -> ASGIApp:
        merged = {**(headers or {}), **self.headers}
        merged.pop("content-type", None)
        merged.pop("Content-Type", None)
        header_list = [(str(k), str(v)) for k, v in merged.items()]
        for cookie in [*self.cookies, *(cookies or [])]:
            if not getattr(cookie, "documentation_only", False):
                name, value = cookie.to_encoded_header()
                header_list.append((name.decode("latin-1"), value.decode("latin-1")))
        return RangeFileApp(
            self.file_path,
            media_type=str(self.media_type),
            headers=header_list,
            chunk_size=self.chunk_size,
            background=self.background or background,
        )
