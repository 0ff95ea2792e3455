"""Jellyfin GUIDs: written as 32 lowercase hex digits, read dashed or not."""

from __future__ import annotations

import re
import uuid

from server.errors import BadRequestError

EMPTY = "0" * 32
_HEX32 = re.compile(r"[0-9a-f]{32}")


def new_guid() -> str:
    return uuid.uuid4().hex


def normalize_guid(value: str | None) -> str | None:
    """32-hex form of a GUID string, or None when it is not a GUID."""
    if not value:
        return None
    if len(value) == 32 and _HEX32.fullmatch(value):
        return value  # already in that form (most ids on the wire): what uuid.UUID(value).hex gives
    try:
        return uuid.UUID(value.strip()).hex
    except (ValueError, AttributeError):
        return None


def parse_guid(value: str | None, what: str = "id") -> str:
    """32-hex form of a GUID from a request, or a 400 naming the bad value."""
    guid = normalize_guid(value)
    if guid is None:
        raise BadRequestError(f"{what} is not a valid GUID: {value!r}")
    return guid


def guid_from_text(*parts: str) -> str:
    """A stable GUID derived from text (an item's path, a person's name): the same input
    always gives the same id, so clients' cached ids survive rescans."""
    return uuid.uuid5(uuid.NAMESPACE_URL, "\x1f".join(parts)).hex
