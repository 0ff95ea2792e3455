"""PascalCase is the wire default; `Accept: application/json; profile="CamelCase"` asks for
camelCase. Only struct field names change: dictionary keys (ImageTags, ProviderIds) keep theirs,
as in Jellyfin's serializer.

camelCase is produced by msgspec itself: every wire model (``server.wire.models``) has a *camel
twin*, a struct of the same base and fields whose encode names are the camelCase ones, made on
first use (``camel_twin``). A value is shallow-copied and the copy takes the twin's class (the
same memory layout), its struct-holding fields converted the same way, then msgspec encodes it
as usual: no dict is built and no field without a struct is visited. Structs that are no wire
model take the slow path (``to_camel_builtins``: a walk to builtins)."""

from __future__ import annotations

import contextvars
import re
import threading
from functools import lru_cache
from typing import Any, cast

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


# ---------------------------------------------------------------- camel twins of the wire models

#: names in an annotation that hold no struct: a field typed only with these is copied as it is
_LEAF_NAMES = frozenset(("str", "int", "float", "bool", "bytes", "datetime", "list", "dict", "tuple", "None"))
_twins: dict[type, tuple[type, tuple[str, ...]]] | None = None
_twins_lock = threading.Lock()


def _holds_structs(annotation: Any) -> bool:
    if not isinstance(annotation, str):
        return True
    return not set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", annotation)) <= _LEAF_NAMES


def _make_twins() -> dict[type, tuple[type, tuple[str, ...]]]:
    """Per struct of ``server.wire.models``: its twin (same base, same fields in the same order,
    camelCase encode names) and the fields that may hold structs."""
    from server.wire import models

    twins: dict[type, tuple[type, tuple[str, ...]]] = {}
    for name, cls in list(vars(models).items()):
        if not (isinstance(cls, type) and issubclass(cls, models.WireStruct) and cls is not models.WireStruct
                and cls.__module__ == models.__name__ and cls.__bases__ == (models.WireStruct,)):
            continue
        fields = cls.__struct_fields__
        if len(cls.__struct_defaults__) != len(fields) or any(d is not None for d in cls.__struct_defaults__):
            continue  # a twin leaves out exactly what the model leaves out: None
        rename = {f: camel_name(wire) for f, wire in zip(fields, cls.__struct_encode_fields__, strict=True)}
        twin = msgspec.defstruct(name, [(f, object, None) for f in fields], bases=(models.WireStruct,),
                                 module=_TWIN_MODULE, rename=rename)
        try:  # the same layout: an instance can take the twin's class
            probe: Any = cls()
            probe.__class__ = twin
        except TypeError:
            continue
        annotations = getattr(cls, "__annotations__", {})
        nested = tuple(f for f in fields if _holds_structs(annotations.get(f)))
        twins[cls] = (twin, nested)
    return twins


_TWIN_MODULE = "server.wire.camel_twins"


def camel_twin(cls: type) -> type | None:
    """The camelCase twin of a wire model class (None for any other class)."""
    found = _twin_table().get(cls)
    return found[0] if found is not None else None


def _twin_table() -> dict[type, tuple[type, tuple[str, ...]]]:
    global _twins
    if _twins is None:
        with _twins_lock:
            if _twins is None:
                _twins = _make_twins()
    return _twins


def to_camel(value: Any) -> Any:
    """``value`` in a form msgspec encodes with camelCase names. A wire model becomes a shallow
    copy whose class is its twin (its struct-holding fields converted the same way); lists and
    dicts are walked (dict keys kept); anything else is returned as it is."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if isinstance(value, msgspec.Struct):
        found = _twin_table().get(kind)
        if found is None:
            return to_camel_builtins(value)
        twin, nested = found
        out: Any = cast(Any, value).__copy__()  # (msgspec copies the slots in C)
        for attr in nested:
            v = getattr(out, attr)
            if v is not None and type(v) not in _SCALARS:
                setattr(out, attr, to_camel(v))
        out.__class__ = twin
        return out
    if isinstance(value, list | tuple):
        return [v if type(v) in _SCALARS else to_camel(v) for v in value]
    if isinstance(value, dict):
        return {k: v if type(v) in _SCALARS else to_camel(v) for k, v in value.items()}
    return value


_SCALARS = frozenset((str, int, float, bool, type(None)))


_encoder = msgspec.json.Encoder()


def encode_wire(value: Any, camel: bool) -> bytes:
    """Encode a reply in the given casing."""
    return _encoder.encode(to_camel(value) if camel else value)


def encode_json(value: Any) -> bytes:
    """Encode a reply in the casing the current request asked for."""
    return encode_wire(value, camel_case_requested.get())


def wants_camel_case(accept: str) -> bool:
    return 'profile="camelcase"' in accept.lower().replace("'", '"')
