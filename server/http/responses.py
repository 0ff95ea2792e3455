"""The response class of every handler: JSON in the casing the request asked for."""

from __future__ import annotations

from typing import Any

from litestar import Response
from litestar.serialization import default_serializer
from litestar.types import Serializer

from server.wire.casing import camel_case_requested, encode_json


class WireResponse(Response[Any]):
    def render(self, content: Any, media_type: str, enc_hook: Serializer = default_serializer) -> bytes:
        if isinstance(content, bytes):
            return content
        if "json" in media_type:
            # A bare string is still JSON on Jellyfin's wire ("Jellyfin Server", not Jellyfin Server).
            if camel_case_requested.get() or isinstance(content, str):
                return encode_json(content)
        return super().render(content, media_type, enc_hook)
