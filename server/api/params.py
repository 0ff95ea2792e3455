"""Parameter groups: the query parameters many operations share, declared by a handler as one.

A group is a small frozen ``msgspec.Struct`` whose fields are spec parameters, spelled as the
spec spells them. A handler names the group once instead of copying its parameters:

    @operation("GetItemImage")
    async def get_item_image(ctx: ServerContext, request: Request, itemId: str, imageType: str,
                             image: ImageOptions) -> ImageResponse: ...

``operation`` (server/api/base.py) hands the handler to :func:`expand_groups`, which shows
Litestar a signature where each group parameter is replaced by the group's fields (those the
operation's spec lists; a field that is a path parameter of the route becomes that path
parameter), and wraps the handler so that it receives the group as one struct. So Litestar parses
the fields in the handler's one signature model, as it parses every other parameter (no extra
dependency to resolve per request), the OpenAPI document lists them under their own names and
types, and packing them costs one struct construction. A field the handler also declares itself
is passed to both.

Fields the operation's spec does not list keep their defaults (the audio streams have no
``maxWidth``); a group none of whose fields the operation lists is a mistake, found at import.

The same wrapper hands the handler ``ctx`` (the ServerContext) and ``auth`` (the caller the guard
found), when it declares them, from the request itself: ``request.app.state.ctx`` and the
``auth`` the guard left in the request's state, as the app's ``provide_ctx`` / ``provide_auth``
dependencies would. Resolving two dependencies through Litestar costs a task group (two tasks
and their cancel scopes) on every request; reading two attributes costs nothing worth counting.

The groups:

- :class:`ImageOptions`: how an image is rendered (size, quality, blur, played indicator, ...).
- :class:`DtoOptions`: what an item DTO carries (fields, images, user data).
- :class:`Paging`: startIndex and limit.
- :class:`NameFilters`: the filters of the by-name listings (genres, studios, artists, years).
- :class:`StreamOptions`: what a progressive stream or an HLS transcode should be.

and the helpers for id and list parameters: :func:`guids`, :func:`guid_or_none`,
:func:`split_names`.
"""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any

import msgspec
from litestar import Request
from litestar.constants import RESERVED_KWARGS
from litestar.params import DependencyKwarg, KwargDefinition, PathParameter, QueryParameter

from server.errors import BadRequestError
from server.guid import normalize_guid

__all__ = ["DtoOptions", "ImageOptions", "NameFilters", "ParamGroup", "Paging", "StreamOptions", "expand_groups", "guid_or_none",
           "guids", "split_names"]


class ParamGroup(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the parameter groups. Field names are the spec's parameter names."""

    def given(self) -> dict[str, Any]:
        """The fields that were given (not None), by their spec names."""
        return {name: value for name in self.__struct_fields__ if (value := getattr(self, name)) is not None}


# -- the groups -------------------------------------------------------------------------------


class ImageOptions(ParamGroup, frozen=True, kw_only=True):
    """The image routes' rendering options (query parameters, or path segments in
    ``/Items/{itemId}/Images/{imageType}/{imageIndex}/{tag}/{format}/{maxWidth}/...``)."""

    maxWidth: int | None = None
    maxHeight: int | None = None
    width: int | None = None
    height: int | None = None
    quality: int | None = None
    fillWidth: int | None = None
    fillHeight: int | None = None
    percentPlayed: float | None = None
    unplayedCount: int | None = None
    blur: int | None = None
    backgroundColor: str | None = None
    foregroundLayer: str | None = None
    tag: str | None = None
    format: str | None = None
    imageIndex: int | None = None

    def render_options(self) -> dict[str, Any]:
        """The rendering options as ``ImageService.serve`` takes them."""
        return {"maxWidth": self.maxWidth, "maxHeight": self.maxHeight, "width": self.width, "height": self.height,
                "quality": self.quality, "fillWidth": self.fillWidth, "fillHeight": self.fillHeight,
                "percentPlayed": self.percentPlayed, "unplayedCount": self.unplayedCount, "blur": self.blur,
                "backgroundColor": self.backgroundColor, "foregroundLayer": self.foregroundLayer}


class DtoOptions(ParamGroup, frozen=True, kw_only=True):
    """What the item DTOs of a reply carry."""

    fields: list[str] | None = None
    enableImages: bool | None = None
    imageTypeLimit: int | None = None
    enableImageTypes: list[str] | None = None
    enableUserData: bool | None = None

    def options(self, items: Any, viewer: Any) -> Any:
        """The library's DTO options for ``viewer`` (``ItemService.options``)."""
        return items.options(viewer, self.fields, enable_images=self.enableImages,
                             image_type_limit=self.imageTypeLimit, enable_image_types=self.enableImageTypes,
                             enable_user_data=self.enableUserData)


class Paging(ParamGroup, frozen=True, kw_only=True):
    """startIndex and limit (some operations have only limit)."""

    startIndex: int | None = None
    limit: int | None = None

    def bounds(self) -> tuple[int, int | None]:
        """(start, limit): start 0 when absent, limit None for all; 400 when either is negative."""
        return paging(self.startIndex, self.limit)

    def clamped(self) -> tuple[int, int | None]:
        """(start, limit) for the listings that read a negative start as 0 (Live TV, activity)."""
        return max(self.startIndex or 0, 0), self.limit


class NameFilters(ParamGroup, frozen=True, kw_only=True):
    """The filters of the by-name listings (Genres, MusicGenres, Studios, Artists, Years)."""

    searchTerm: str | None = None
    parentId: str | None = None
    excludeItemTypes: list[str] | None = None
    includeItemTypes: list[str] | None = None
    isFavorite: bool | None = None
    nameStartsWithOrGreater: str | None = None
    nameStartsWith: str | None = None
    nameLessThan: str | None = None
    sortOrder: list[str] | None = None
    enableTotalRecordCount: bool | None = None


class StreamOptions(ParamGroup, frozen=True, kw_only=True):
    """The stream parameters Reelroom acts on, of the long list the progressive streams
    (Audio/Videos ``stream``) and the HLS operations share. Anything else a client sends is
    accepted and ignored, as Jellyfin does for options that do not apply."""

    container: str | None = None
    static: bool | None = None
    mediaSourceId: str | None = None
    deviceId: str | None = None
    playSessionId: str | None = None
    liveStreamId: str | None = None
    videoCodec: str | None = None
    audioCodec: str | None = None
    startTimeTicks: int | None = None
    audioBitRate: int | None = None
    videoBitRate: int | None = None
    maxWidth: int | None = None
    maxHeight: int | None = None
    width: int | None = None
    height: int | None = None
    audioChannels: int | None = None
    maxAudioChannels: int | None = None
    transcodingMaxAudioChannels: int | None = None
    audioStreamIndex: int | None = None
    videoStreamIndex: int | None = None
    subtitleMethod: str | None = None
    segmentContainer: str | None = None
    segmentLength: int | None = None
    allowVideoStreamCopy: bool | None = None
    allowAudioStreamCopy: bool | None = None
    transcodeReasons: str | None = None


# -- id and list helpers ------------------------------------------------------------------------


def guids(values: list[str] | None, what: str) -> list[str]:
    """32-hex ids from an array parameter (empty entries ignored); 400 on a malformed id."""
    out = []
    for value in values or ():
        if not value or not value.strip():
            continue
        guid = normalize_guid(value)
        if guid is None:
            raise BadRequestError(f"{what} contains an invalid id: {value!r}")
        out.append(guid)
    return out


def guid_or_none(value: str | None, what: str) -> str | None:
    """A 32-hex id from a single id parameter, None when absent or empty; 400 when malformed."""
    if value is None or not value.strip():
        return None
    guid = normalize_guid(value)
    if guid is None:
        raise BadRequestError(f"{what} is not a valid id: {value!r}")
    return guid


def split_names(values: list[str] | None) -> list[str]:
    """Name lists arrive comma-split by the wire layer; Jellyfin also splits on '|'."""
    out: list[str] = []
    for value in values or ():
        out.extend(part.strip() for part in value.split("|") if part.strip())
    return out


def paging(startIndex: int | None, limit: int | None) -> tuple[int, int | None]:
    """(start, limit) from the two paging parameters; 400 when either is negative."""
    if startIndex is not None and startIndex < 0:
        raise BadRequestError("startIndex must not be negative.")
    if limit is not None and limit < 0:
        raise BadRequestError("limit must not be negative.")
    return startIndex or 0, limit


# -- expansion ------------------------------------------------------------------------------------

_PATH_TYPES: dict[str, type] = {"int32": int, "int64": int, "float": float}
_KW = inspect.Parameter.KEYWORD_ONLY


def _group_type(hint: Any) -> type[ParamGroup] | None:
    return hint if isinstance(hint, type) and issubclass(hint, ParamGroup) else None


# Handler parameters served from the request instead of Litestar's dependency injection (see the
# module's docstring): the name -> the code that reads it, given ``request``.
INJECTED: dict[str, str] = {
    "ctx": "request.scope['litestar_app'].state.ctx",
    "auth": "request.scope['state'].get('auth')",
}


_PATH_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


def _explicit(name: str, annotation: Any, path_names: set[str]) -> Any:
    """A parameter's annotation in Litestar's explicit style (``Annotated[T, QueryParameter()]``,
    or ``PathParameter()`` for a name in the route's path): Litestar takes it as it infers a
    plain one, and documents it the same, but warns about every inferred one (some 2,500 each
    time the app is built)."""
    if name in RESERVED_KWARGS or annotation is inspect.Parameter.empty:
        return annotation
    if typing.get_origin(annotation) is typing.Annotated and any(
            isinstance(extra, KwargDefinition | DependencyKwarg) for extra in annotation.__metadata__):
        return annotation
    in_path = name in path_names
    try:
        return _EXPLICIT[annotation, in_path]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation
        return typing.Annotated[annotation, _PATH if in_path else _QUERY]
    explicit = _EXPLICIT[annotation, in_path] = typing.Annotated[annotation, _PATH if in_path else _QUERY]
    return explicit


# The explicit annotations made so far. typing caches ``Annotated[T, x]`` itself, but its cache
# hashes ``x`` and Litestar hashes a parameter through ``dataclasses.asdict``: for ~1,900
# parameters that was ~80 ms of start-up. The markers are frozen dataclasses without
# arguments, so one of each serves every parameter (as Litestar's own ``FromQuery`` does).
_QUERY = QueryParameter()
_PATH = PathParameter()
_EXPLICIT: dict[tuple[Any, bool], Any] = {}


def expand_groups(fn: Any, params: tuple[tuple[str, str, str, Any, bool], ...] | None, path: str | None = None) -> Any:
    """``fn`` itself when it declares no group and neither ``ctx`` nor ``auth``; else a wrapper
    whose signature shows Litestar the groups' fields (and ``request`` in place of ``ctx`` and
    ``auth``) and which calls ``fn`` with each group packed into its struct. ``params`` is the
    operation's spec parameters (name, location, kind, ...), or None for a route outside the spec
    (then every field of a group is a query parameter). Given the route's ``path``, the query
    and path parameters Litestar sees are declared in its explicit style (see :func:`_explicit`;
    on ``fn`` itself when it is not wrapped)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    signature = inspect.signature(fn)
    path_names = set(_PATH_PARAM.findall(path)) if path is not None else None
    groups = {name: cls for name in signature.parameters if (cls := _group_type(hints.get(name)))}
    injected = tuple(name for name in INJECTED if name in signature.parameters and name not in groups)
    if not inspect.iscoroutinefunction(fn):
        if groups:
            raise TypeError(f"{fn.__qualname__}: a handler with parameter groups must be async")
        return fn  # a plain function keeps Litestar's dependencies
    if not groups and not injected:
        if path_names is not None and "__signature__" not in vars(fn):
            fn.__annotations__ = {**{name: _explicit(name, hints[name], path_names)
                                     for name in signature.parameters if name in hints},
                                  **({"return": hints["return"]} if "return" in hints else {})}
        return fn
    where = {name: (location, kind) for name, location, kind, *_ in params} if params is not None else None
    own = {name: p for name, p in signature.parameters.items() if name not in groups and name not in injected}
    added: dict[str, inspect.Parameter] = {}
    if injected and "request" not in own:
        added["request"] = inspect.Parameter("request", _KW, annotation=Request)
    plan: list[tuple[str, type[ParamGroup], tuple[str, ...], tuple[str, ...]]] = []
    for group_name, cls in groups.items():
        taken: list[str] = []  # fields parsed for this group alone (removed from the handler's kwargs)
        shared: list[str] = []  # fields the handler (or an earlier group) declares too
        for field in msgspec.structs.fields(cls):
            name = field.name
            if where is not None and name not in where:
                continue  # not a parameter of this operation: the field keeps its default
            if name in own:
                shared.append(name)
                continue
            location, kind = where[name] if where is not None else ("query", "")
            if location == "path":
                parameter = inspect.Parameter(name, _KW, annotation=_PATH_TYPES.get(kind, str))
            else:
                parameter = inspect.Parameter(name, _KW, default=field.default, annotation=field.type)
            previous = added.get(name)
            if previous is not None:
                if previous.annotation != parameter.annotation:
                    raise TypeError(f"{fn.__qualname__}: groups disagree on the type of {name!r}")
                shared.append(name)
                continue
            added[name] = parameter
            taken.append(name)
        if not taken and not shared:
            raise TypeError(f"{fn.__qualname__}: the operation has none of the parameters of {cls.__name__}")
        plan.append((group_name, cls, tuple(taken), tuple(shared)))

    handler = _compile(fn, signature, groups, injected, plan, added)
    annotations = {**{name: hints[name] for name in own if name in hints},
                   **{name: p.annotation for name, p in added.items()}}
    if path_names is not None:
        annotations = {name: _explicit(name, hint, path_names) for name, hint in annotations.items()}
    parameters = [p.replace(kind=_KW, annotation=annotations.get(name, p.annotation)) for name, p in own.items()] + \
        [p.replace(annotation=annotations[name]) for name, p in added.items()]
    handler.__signature__ = signature.replace(parameters=parameters)
    handler.__annotations__ = {**annotations, "return": hints.get("return", Any)}
    handler.__declared__ = fn  # the handler as written
    return handler


def _compile(fn: Any, signature: inspect.Signature, groups: dict[str, type[ParamGroup]], injected: tuple[str, ...],
             plan: list[tuple[str, type[ParamGroup], tuple[str, ...], tuple[str, ...]]],
             added: dict[str, inspect.Parameter]) -> Any:
    """The wrapper as code (as dataclasses makes __init__): keyword parameters as Litestar passes
    them, each group built from its fields, ``ctx`` and ``auth`` read from the request, and ``fn``
    called with positional arguments where it allows them. Binding some 80 keyword arguments a
    second time (``fn(**kwargs)``) would cost microseconds on GET /Items; this costs one struct
    per group."""
    namespace: dict[str, Any] = {"_fn": fn}
    outer: list[str] = []
    for name, p in signature.parameters.items():
        if name in groups or name in injected:
            continue
        if p.default is inspect.Parameter.empty:
            outer.append(name)
        else:
            namespace[f"_d_{name}"] = p.default
            outer.append(f"{name}=_d_{name}")
    for name, p in added.items():
        if p.default is inspect.Parameter.empty:
            outer.append(name)
        else:
            namespace[f"_d_{name}"] = p.default
            outer.append(f"{name}=_d_{name}")
    body = [f"    {name} = {INJECTED[name]}" for name in injected]
    for group_name, cls, taken, shared in plan:
        namespace[f"_G_{group_name}"] = cls
        fields = ", ".join(f"{n}={n}" for n in (*taken, *shared))
        body.append(f"    {group_name} = _G_{group_name}({fields})")
    positional, keywords = [], []
    by_position = "__signature__" not in vars(fn)  # a made-up signature may not match the code
    for name, p in signature.parameters.items():
        if by_position and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            positional.append(name)
        elif p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            keywords.append(f"{name}={name}")
        else:
            raise TypeError(f"{fn.__qualname__}: a handler with parameter groups takes no *args or **kwargs")
    call = ", ".join(positional + keywords)
    source = f"async def {fn.__name__}(*, {', '.join(outer)}):\n" + "\n".join(body) + \
        f"\n    return await _fn({call})\n"
    exec(compile(source, f"<parameter groups of {fn.__module__}.{fn.__qualname__}>", "exec"), namespace)
    handler = namespace[fn.__name__]
    handler.__module__ = fn.__module__
    handler.__qualname__ = fn.__qualname__
    handler.__doc__ = fn.__doc__
    return handler
