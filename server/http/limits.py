"""Bounds on what a request may make the server parse, allocate or store.

The wire middleware applies these before a handler runs, so that no handler has to repeat them:

- integer parameters (query and path) must be integers within the spec's ``int32`` / ``int64``
  format (Jellyfin's model binding refuses anything else with 400);
- a single-valued enum query parameter must name a member (lists drop unknown members, as
  Jellyfin's comma-delimited binder does);
- list parameters hold at most :data:`MAX_LIST_ITEMS` elements of at most
  :data:`MAX_LIST_ITEM_CHARS` characters; a search term at most :data:`MAX_SEARCH_TERM_CHARS`;
  names (items, playlists, collections, libraries, users, devices, log files) are capped by
  :data:`NAME_LIMITS`;
- a JSON body is at most :func:`body_limit` bytes (413), nested at most :data:`MAX_JSON_DEPTH`
  levels (400), holds only known members in enum-typed properties (400 naming the property) and
  only integers its schema's format can hold.

Parameter problems found before routing are kept on the ASGI scope (:data:`SCOPE_KEY`) and
raised by the authorization guard *after* it has checked the caller, so a caller without a token
gets 401 whatever the parameters are, and a signed-in caller gets 400.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from server.errors import BadRequestError
from server.guid import normalize_guid
from server.wire import models
from server.wire.body import _field_map, _struct_in

SCOPE_KEY = "reelroom.bad_request"

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)

MAX_JSON_DEPTH = 64
# a client's WebSocket message (KeepAlive, *Start/*Stop: tens of bytes); a larger one closes the
# socket with 1009 (uvicorn's ws_max_size, server/runner.py)
MAX_SOCKET_MESSAGE_BYTES = 64 * 1024
MAX_LIST_ITEMS = 1000
MAX_LIST_ITEM_CHARS = 1024
MAX_SEARCH_TERM_CHARS = 512
MAX_STRING_PARAM_CHARS = 8192

# Jellyfin keeps user names to 255 characters (its Users table); other names have no limit
# there, so Reelroom uses 1024 characters, far above any real title. Log files are files:
# 255 is the file-name limit of every common file system.
MAX_NAME_CHARS = 1024
MAX_USER_NAME_CHARS = 255
MAX_FILE_NAME_CHARS = 255

# operationId -> {query parameter or top-level body property: max characters}
NAME_LIMITS: dict[str, dict[str, int]] = {
    "CreateUserByName": {"Name": MAX_USER_NAME_CHARS},
    "UpdateUser": {"Name": MAX_USER_NAME_CHARS},
    "UpdateStartupUser": {"Name": MAX_USER_NAME_CHARS},
    "AuthenticateUserByName": {"Username": MAX_USER_NAME_CHARS},
    "ForgotPassword": {"EnteredUsername": MAX_USER_NAME_CHARS},
    "CreatePlaylist": {"Name": MAX_NAME_CHARS, "name": MAX_NAME_CHARS},
    "UpdatePlaylist": {"Name": MAX_NAME_CHARS},
    "CreateCollection": {"name": MAX_NAME_CHARS},
    "UpdateItem": {"Name": MAX_NAME_CHARS, "OriginalTitle": MAX_NAME_CHARS, "SortName": MAX_NAME_CHARS,
                   "ForcedSortName": MAX_NAME_CHARS},
    "AddVirtualFolder": {"name": MAX_NAME_CHARS},
    "RenameVirtualFolder": {"name": MAX_NAME_CHARS, "newName": MAX_NAME_CHARS},
    "RemoveVirtualFolder": {"name": MAX_NAME_CHARS},
    "AddMediaPath": {"Name": MAX_NAME_CHARS},
    "UpdateMediaPath": {"Name": MAX_NAME_CHARS},
    "UpdateDeviceOptions": {"CustomName": MAX_NAME_CHARS},
    "GetLogFile": {"name": MAX_FILE_NAME_CHARS},
    "CreateKey": {"app": MAX_NAME_CHARS},
    "SyncPlayCreateGroup": {"GroupName": MAX_NAME_CHARS},
}

# Body size caps (bytes). Image uploads are not JSON and keep Litestar's own cap (50 MiB),
# read as a stream.
DEFAULT_JSON_BODY = 2 * 1024 * 1024
BODY_LIMITS: dict[str, int] = {
    "UploadSubtitle": 32 * 1024 * 1024,  # the subtitle file travels base64-encoded in JSON
    "LogFile": 1_000_000,  # Jellyfin's client-log upload stops at the same size
    "UploadLyrics": 4 * 1024 * 1024,
}


def body_limit(operation_id: str) -> int:
    return BODY_LIMITS.get(operation_id, DEFAULT_JSON_BODY)


def name_limit(operation_id: str, name: str) -> int | None:
    limits = NAME_LIMITS.get(operation_id)
    return limits.get(name) if limits else None


def check_int(name: str, kind: str, value: str) -> str | None:
    """A problem with an integer parameter's value, or None when it is fine."""
    text = value.strip()
    if len(text) > 40:
        return f"The value of {name} is not a valid integer."
    try:
        number = int(text)
    except ValueError:
        return f"The value '{text[:40]}' is not a valid integer for {name}."
    low, high = INT32 if kind == "int32" else INT64
    if not low <= number <= high:
        return f"{name} must be between {low} and {high}."
    return None


# -- JSON bodies ------------------------------------------------------------------------------

_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_KEEP_BRACKETS = bytes(range(256)).translate(None, b"[]{}")
_SQUARE = bytes.maketrans(b"{}", b"[]")


def json_too_deep(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a JSON text nests arrays/objects more than ``limit`` deep. Linear in the size and
    done in C: strings are blanked out, everything but brackets dropped, and innermost pairs
    removed one level per pass (at most ``limit`` passes)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = _STRINGS.sub(b"", raw).translate(_SQUARE, _KEEP_BRACKETS)
    for _ in range(limit):
        shorter = brackets.replace(b"[]", b"")
        if not shorter:
            return False
        if len(shorter) == len(brackets):
            return False  # unbalanced: the decoder will refuse it
        brackets = shorter
    return bool(brackets)


def body_struct(schema: str | None) -> type | None:
    """The wire Struct of a body schema name (``X`` or ``list[X]``)."""
    if not schema:
        return None
    name = schema[5:-1] if schema.startswith("list[") else schema
    candidate = getattr(models, name, None)
    if isinstance(candidate, type) and issubclass(candidate, msgspec.Struct):
        return candidate
    return None


# each spec enum's members by their lower-case spelling (enum values are matched case-insensitively,
# as ASP.NET binds them; the wire middleware tidies query values with it too)
ENUM_LOOKUP: dict[str, dict[str, str]] = {
    name: {m.lower(): m for m in members} for name, members in models.ENUMS.items()
}


def _check_number(value: Any, where: str, int32: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        return
    low, high = INT32 if int32 else INT64
    if not low <= value <= high:
        raise BadRequestError(f"{where} must be between {low} and {high}.")


def _enum_member(value: Any, enum: str, where: str) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        member = ENUM_LOOKUP.get(enum, {}).get(value.strip().lower())
        if member is not None:
            return member
    shown = value if isinstance(value, str | int | float) else type(value).__name__
    raise BadRequestError(f"{where}: '{str(shown)[:64]}' is not a valid {enum} value.")


_NESTED_CACHE: dict[type, dict[str, type]] = {}


def _nested(struct_type: type) -> dict[str, type]:
    hit = _NESTED_CACHE.get(struct_type)
    if hit is None:
        hit = {}
        for name, tp in _field_map(struct_type).values():
            inner = _struct_in(tp)
            if inner is not None:
                hit[name] = inner
        _NESTED_CACHE[struct_type] = hit
    return hit


def _walk_unknown(value: Any, where: str) -> None:
    """Integers anywhere must fit in 64 bits (SQLite and .NET both stop there)."""
    if isinstance(value, dict):
        for key, v in value.items():
            _walk_unknown(v, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk_unknown(v, f"{where}[{i}]")
    else:
        _check_number(value, where or "The request body", False)


_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?\s*(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?")


def _check_format(value: Any, fmt: str, where: str) -> Any:
    """A GUID or date-time property must hold one (Jellyfin's JSON binding refuses anything
    else with 400); an empty string counts as absent."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequestError(f"{where} must be a string ({fmt}).")
    text = value.strip()
    if not text:
        return None
    if fmt == "uuid" and normalize_guid(text) is None:
        raise BadRequestError(f"{where}: '{text[:64]}' is not a valid GUID.")
    if fmt == "date-time" and (len(text) > 64 or not _DATE_TIME.fullmatch(text)):
        raise BadRequestError(f"{where}: '{text[:64]}' is not a valid date and time.")
    return value


def validate_body(value: Any, struct_type: type | None, where: str = "") -> Any:
    """Check (and canonicalize) enum members and integer ranges in a decoded JSON body whose
    keys already have the schema's spelling. Returns the value with enum members in their own
    spelling; raises BadRequestError naming the property otherwise."""
    if struct_type is None:
        _walk_unknown(value, where)
        return value
    if isinstance(value, list):
        return [validate_body(v, struct_type, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        _walk_unknown(value, where)
        return value
    name = struct_type.__name__
    enums = models.ENUM_FIELDS.get(name, {})
    int32 = models.INT32_FIELDS.get(name, frozenset())
    formats = models.STRING_FORMAT_FIELDS.get(name, {})
    nested = _nested(struct_type)
    out: dict[str, Any] = {}
    for key, v in value.items():
        here = f"{where}.{key}" if where else str(key)
        enum = enums.get(key)
        if enum is not None and v is not None:
            enum_name, is_list = enum
            if is_list and isinstance(v, list):
                v = [_enum_member(x, enum_name, f"{here}[{i}]") for i, x in enumerate(v)]
            elif is_list and isinstance(v, str):
                v = [_enum_member(v, enum_name, here)]
            else:
                v = _enum_member(v, enum_name, here)
        elif key in formats and v is not None:
            fmt = formats[key]
            if isinstance(v, list):
                v = [x for x in (_check_format(x, fmt, f"{here}[{i}]") for i, x in enumerate(v)) if x is not None]
            else:
                v = _check_format(v, fmt, here)
                if v is None:
                    continue
        elif key in nested and v is not None:
            v = validate_body(v, nested[key], here)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                if isinstance(x, dict | list):
                    _walk_unknown(x, f"{here}[{i}]")
                else:
                    _check_number(x, f"{here}[{i}]", key in int32)
        elif isinstance(v, dict):
            _walk_unknown(v, here)
        else:
            _check_number(v, here, key in int32)
        out[key] = v
    return out


def check_body_names(operation_id: str, value: Any) -> None:
    limits = NAME_LIMITS.get(operation_id)
    if not limits or not isinstance(value, dict):
        return
    for key, v in value.items():
        limit = limits.get(key)
        if limit is not None and isinstance(v, str) and len(v) > limit:
            raise BadRequestError(f"{key} may be at most {limit} characters long.")
