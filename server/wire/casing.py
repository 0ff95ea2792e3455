"""PascalCase is the wire default; `Accept: application/json; profile="CamelCase"` asks for
camelCase. Only struct field names change: dictionary keys (ImageTags, ProviderIds) keep theirs,
as in Jellyfin's serializer."""

from __future__ import annotations

import contextvars
from functools import lru_cache
from typing import Any

import msgspec

# Set by the wire middleware for the current request.
camel_case_requested: contextvars.ContextVar[bool] = contextvars.ContextVar("camel_case", default=False)


@lru_cache(maxsize=4096)
def camel_name(name: str) -> str:
    """.NET's camel-case rule: lower the leading run of capitals, but keep the capital that
    starts the next word (IPAddress -> ipAddress, ServerId -> serverId, ID -> id)."""
    if not name or not name[0].isupper():
        return name
    chars = list(name)
    for i in range(len(chars)):
        if i == 1 and not chars[i].isupper():
            break
        has_next = i + 1 < len(chars)
        if i > 0 and has_next and not chars[i + 1].isupper():
            if chars[i + 1] == " ":
                chars[i] = chars[i].lower()
            break
        chars[i] = chars[i].lower()
    return "".join(chars)


def to_camel_builtins(value: Any) -> Any:
    """Structs become dicts with camelCase keys (None fields left out); everything else keeps
    its shape."""
    if isinstance(value, msgspec.Struct):
        out: dict[str, Any] = {}
        encode_names = value.__struct_encode_fields__
        for attr, wire in zip(value.__struct_fields__, encode_names, strict=True):
            v = getattr(value, attr)
            if v is None:
                continue
            out[camel_name(wire)] = to_camel_builtins(v)
        return out
    if isinstance(value, list | tuple):
        return [to_camel_builtins(v) for v in value]
    if isinstance(value, dict):
        return {k: to_camel_builtins(v) for k, v in value.items()}
    return value


_encoder = msgspec.json.Encoder()


def encode_json(value: Any) -> bytes:
    """Encode a reply in the casing the current request asked for."""
    if camel_case_requested.get():
        value = to_camel_builtins(value)
    return _encoder.encode(value)


def wants_camel_case(accept: str) -> bool:
    return 'profile="camelcase"' in accept.lower().replace("'", '"')
