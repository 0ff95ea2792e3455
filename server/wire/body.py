"""Request bodies: property names in any case, numbers from strings, GUIDs either form."""

from __future__ import annotations

import typing
from functools import lru_cache
from typing import Any, TypeVar

import msgspec

from server.errors import BadRequestError

T = TypeVar("T")


@lru_cache(maxsize=1024)
def _field_map(struct_type: type) -> dict[str, tuple[str, Any]]:
    """lower-case wire name -> (wire name, field type) for a struct type."""
    info = msgspec.inspect.type_info(struct_type)
    assert isinstance(info, msgspec.inspect.StructType)
    hints = typing.get_type_hints(struct_type)
    out: dict[str, tuple[str, Any]] = {}
    for field in info.fields:
        out[field.encode_name.lower()] = (field.encode_name, hints.get(field.name))
    return out


def _struct_in(tp: Any) -> type | None:
    """The Struct type inside a (possibly Optional / list) annotation, if any."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return tp
    for arg in typing.get_args(tp):
        found = _struct_in(arg)
        if found is not None:
            return found
    return None


def _is_list(tp: Any) -> bool:
    origin = typing.get_origin(tp)
    if origin in (list, tuple):
        return True
    return any(_is_list(a) for a in typing.get_args(tp) if a is not type(None))


def canonical_keys(value: Any, struct_type: type) -> Any:
    """Rename the keys of a decoded JSON object to the struct's own spelling, recursively."""
    if not isinstance(value, dict):
        return value
    fields = _field_map(struct_type)
    out: dict[str, Any] = {}
    for key, v in value.items():
        hit = fields.get(key.lower()) if isinstance(key, str) else None
        if hit is None:
            out[key] = v
            continue
        name, tp = hit
        inner = _struct_in(tp)
        if inner is not None:
            if isinstance(v, list) and _is_list(tp):
                v = [canonical_keys(x, inner) for x in v]
            elif isinstance(v, dict):
                v = canonical_keys(v, inner)
        out[name] = v
    return out


def decode_body(raw: bytes, struct_type: type[T], *, allow_empty: bool = True) -> T:
    """Decode a JSON body into ``struct_type`` tolerantly, or raise a 400 that says why."""
    if not raw.strip():
        if allow_empty:
            return struct_type()
        raise BadRequestError("A JSON request body is required.")
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise BadRequestError(f"The request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequestError("The request body must be a JSON object.")
    try:
        return msgspec.convert(canonical_keys(data, struct_type), struct_type, strict=False)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"Invalid request body: {exc}") from None


def null_fields(raw: bytes, struct_type: type) -> frozenset[str]:
    """The top-level properties a JSON body sets to null explicitly, in the struct's own spelling
    (a decoded struct cannot tell them from the ones left out)."""
    try:
        data = msgspec.json.decode(raw) if raw.strip() else None
    except msgspec.DecodeError:
        return frozenset()
    if not isinstance(data, dict):
        return frozenset()
    fields = _field_map(struct_type)
    return frozenset(hit[0] for key, v in data.items()
                     if v is None and isinstance(key, str) and (hit := fields.get(key.lower())) is not None)
