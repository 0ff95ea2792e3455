"""PascalCase is the wire default; `Accept: application/json; profile="CamelCase"` asks for
camelCase. Only struct field names change: dictionary keys (ImageTags, ProviderIds) keep theirs,
as in Jellyfin's serializer.

camelCase is produced by msgspec itself: every wire model (``server.wire.models``) has a *camel
twin*, a struct with the same fields whose encode names are the camelCase ones, made on first use
(``camel_twin``). A value is converted to its twin in C (``msgspec.convert(..., from_attributes=
True)``, nested structs included) and encoded as usual. Structs that are no wire model, and
values the twin's types refuse, take the slow path (``to_camel_builtins``: a walk to builtins)."""

from __future__ import annotations

import contextvars
import sys
import threading
import types
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


# ---------------------------------------------------------------- camel twins of the wire models

_TWIN_MODULE = "server.wire._camel_twins"
_twins: dict[type, type] | None = None
_twins_lock = threading.Lock()


def _make_twins() -> dict[type, type]:
    """A twin per struct of ``server.wire.models`` (all at once: their annotations name each
    other, and msgspec resolves them in the twins' own module, where each name is the twin)."""
    from server.wire import models

    module = types.ModuleType(_TWIN_MODULE)
    module.__dict__.update({k: v for k, v in vars(models).items() if not k.startswith("__")})
    twins: dict[type, type] = {}
    for name, cls in list(vars(models).items()):
        if not (isinstance(cls, type) and issubclass(cls, models.WireStruct) and cls is not models.WireStruct
                and cls.__module__ == models.__name__):
            continue
        config = cls.__struct_config__
        if not config.omit_defaults or config.tag is not None or config.array_like:
            continue  # (every generated model is a plain WireStruct; anything else takes the slow path)
        annotations: dict[str, Any] = {}
        for base in reversed(cls.__mro__):
            annotations.update(getattr(base, "__annotations__", {}))
        defaults = dict(zip(cls.__struct_fields__[len(cls.__struct_fields__) - len(cls.__struct_defaults__):],
                            cls.__struct_defaults__, strict=True))
        if any(d is not None for d in defaults.values()) or len(defaults) != len(cls.__struct_fields__):
            continue  # a twin must leave out exactly what the model leaves out: None
        fields = [(f, annotations[f], None) for f in cls.__struct_fields__]
        rename = {f: camel_name(wire) for f, wire in zip(cls.__struct_fields__, cls.__struct_encode_fields__,
                                                         strict=True)}
        twin = msgspec.defstruct(name, fields, kw_only=True, omit_defaults=True, module=_TWIN_MODULE,
                                 rename=rename)
        twins[cls] = twin
        module.__dict__[name] = twin
    sys.modules[_TWIN_MODULE] = module
    return twins


def camel_twin(cls: type) -> type | None:
    """The camelCase twin of a wire model class (None for any other class)."""
    global _twins
    if _twins is None:
        with _twins_lock:
            if _twins is None:
                _twins = _make_twins()
    return _twins.get(cls)


def to_camel(value: Any) -> Any:
    """``value`` in a form msgspec encodes with camelCase names: wire models as their twins,
    lists and dicts walked, anything else as it is."""
    if isinstance(value, msgspec.Struct):
        twin = camel_twin(type(value))
        if twin is not None:
            try:
                return msgspec.convert(value, twin, from_attributes=True)
            except msgspec.ValidationError:
                pass  # a value its declared type does not allow (the encoder is lenient): slow path
        return to_camel_builtins(value)
    if isinstance(value, list | tuple):
        return [to_camel(v) for v in value]
    if isinstance(value, dict):
        return {k: to_camel(v) for k, v in value.items()}
    return value


_encoder = msgspec.json.Encoder()


def encode_wire(value: Any, camel: bool) -> bytes:
    """Encode a reply in the given casing."""
    return _encoder.encode(to_camel(value) if camel else value)


def encode_json(value: Any) -> bytes:
    """Encode a reply in the casing the current request asked for."""
    return encode_wire(value, camel_case_requested.get())


def wants_camel_case(accept: str) -> bool:
    return 'profile="camelcase"' in accept.lower().replace("'", '"')
