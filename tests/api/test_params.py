"""Parameter groups (server/api/params.py): a handler declares a group as one parameter, Litestar
still parses (and documents) each of its fields under the spec's name, the handler receives
one struct; and the generated OpenAPI document keeps every parameter of the spec's spelling."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from litestar import Litestar, Request, get
from litestar.testing import TestClient

from server.api.params import (
    DtoOptions,
    ImageOptions,
    NameFilters,
    Paging,
    StreamOptions,
    expand_groups,
    guid_or_none,
    guids,
    split_names,
)
from server.errors import BadRequestError
from server.wire.operations import BY_ID, OPERATIONS
from tests.api.openapi_params import build_document, operation_parameters

SNAPSHOT = Path(__file__).with_name("openapi_params.json")


@pytest.fixture(scope="module")
def document() -> dict:
    return build_document()


# -- the mechanism, on a small app ----------------------------------------------------------------

_SPEC = (("itemId", "path", "uuid", None, True), ("imageIndex", "path", "int32", None, True),
         ("maxWidth", "query", "int32", None, False), ("quality", "query", "int32", None, False),
         ("percentPlayed", "query", "float", None, False), ("startIndex", "query", "int32", None, False),
         ("limit", "query", "int32", None, False), ("fields", "query", "array:str", None, False))


def _app(*handlers) -> Litestar:
    return Litestar(route_handlers=list(handlers), logging_config=None)


def test_a_group_arrives_as_one_struct_parsed_from_its_fields():
    seen = {}

    async def handler(itemId: str, image: ImageOptions, page: Paging, dto: DtoOptions, tag: str | None = None) -> str:
        seen.update(item=itemId, image=image, page=page, dto=dto, tag=tag)
        return "ok"

    path = "/Items/{itemId:str}/Images/{imageIndex:int}"
    route = get(path)(expand_groups(handler, _SPEC, path))
    with TestClient(_app(route)) as client:
        r = client.get("/Items/abc/Images/2", params=[("maxWidth", "300"), ("percentPlayed", "12.5"),
                                                      ("limit", "5"), ("fields", "Path"), ("fields", "Genres")])
    assert r.status_code == 200, r.text
    assert seen["item"] == "abc"
    assert seen["image"] == ImageOptions(maxWidth=300, percentPlayed=12.5, imageIndex=2)  # path field filled too
    assert seen["page"].bounds() == (0, 5)
    assert seen["dto"] == DtoOptions(fields=["Path", "Genres"])
    assert seen["tag"] is None  # 'tag' is the handler's own (and not in this spec): not taken by the group


def test_a_field_two_groups_share_is_one_parameter_that_fills_both():
    import inspect

    seen = {}

    async def handler(image: ImageOptions, stream: StreamOptions) -> str:
        seen.update(image=image, stream=stream)
        return "ok"

    wrapped = expand_groups(handler, _SPEC, "/both/{imageIndex:int}")
    assert sorted(inspect.signature(wrapped).parameters) == ["imageIndex", "maxWidth", "percentPlayed", "quality"]
    route = get("/both/{imageIndex:int}")(wrapped)
    with TestClient(_app(route)) as client:
        assert client.get("/both/0", params={"maxWidth": "640", "quality": "80"}).status_code == 200
    assert seen["image"] == ImageOptions(maxWidth=640, quality=80, imageIndex=0)
    assert seen["stream"] == StreamOptions(maxWidth=640)


def test_a_bad_field_value_is_a_400_like_any_parameter():
    async def handler(image: ImageOptions) -> str:
        return "ok"

    route = get("/img/{imageIndex:int}")(expand_groups(handler, _SPEC, "/img/{imageIndex:int}"))
    with TestClient(_app(route)) as client:
        assert client.get("/img/1", params={"maxWidth": "wide"}).status_code == 400
        assert client.get("/img/1", params={"maxWidth": "20"}).status_code == 200


def test_fields_the_operation_does_not_list_keep_their_defaults_and_are_not_parameters():
    async def handler(dto: DtoOptions) -> str:
        return "ok"

    wrapped = expand_groups(handler, _SPEC)
    import inspect

    assert list(inspect.signature(wrapped).parameters) == ["fields"]  # enableImages... are not in _SPEC


def test_a_group_the_operation_has_nothing_of_is_refused():
    async def handler(names: NameFilters) -> str:
        return "ok"

    with pytest.raises(TypeError, match="NameFilters"):
        expand_groups(handler, _SPEC)


def test_a_handler_without_groups_is_left_alone():
    async def handler(itemId: str) -> str:
        return itemId

    assert expand_groups(handler, _SPEC) is handler


def test_helpers():
    assert guids(["0123456789ABCDEF0123456789ABCDEF", "", " "], "ids") == ["0123456789abcdef0123456789abcdef"]
    with pytest.raises(BadRequestError, match="ids"):
        guids(["nope"], "ids")
    assert guid_or_none(" ", "parentId") is None
    with pytest.raises(BadRequestError, match="parentId"):
        guid_or_none("nope", "parentId")
    assert split_names(["Rock|Pop", " Jazz "]) == ["Rock", "Pop", "Jazz"]
    assert Paging(startIndex=3).bounds() == (3, None)
    with pytest.raises(BadRequestError, match="startIndex"):
        Paging(startIndex=-1).bounds()
    with pytest.raises(BadRequestError, match="limit"):
        Paging(limit=-1).bounds()
    assert Paging(startIndex=-4, limit=2).clamped() == (0, 2)
    assert NameFilters().enableTotalRecordCount is None


# -- the real routes -------------------------------------------------------------------------------


def test_handlers_declare_groups_not_copies_of_their_fields():
    """No handler spells out the image or DTO options again: they declare the group."""
    import inspect

    from server.app import collect_handlers

    spelled = []
    for handler in collect_handlers():
        own = inspect.signature(getattr(handler.fn, "__declared__", handler.fn)).parameters
        names = set(own)
        if {"fillWidth", "fillHeight", "backgroundColor"} & names or {"enableImageTypes", "imageTypeLimit"} & names:
            spelled.append(handler.fn.__name__)
    assert spelled == []


def test_every_documented_parameter_is_a_spec_parameter_of_its_operation(document):
    """Names (the spec's spelling), location and kind of every parameter the document lists agree
    with the spec: a group cannot add a parameter the operation does not have."""
    kinds = {"int32": "integer", "int64": "integer", "float": "number", "bool": "boolean", "str": "string",
             "uuid": "string", "enum": "string", "datetime": "string", "object": "object"}
    problems = []
    for op_id, params in operation_parameters(document).items():
        spec = {name: (where, kind) for name, where, kind, _e, _r in BY_ID[op_id].params}
        for name, where, schema, _required in params:
            if name not in spec:
                problems.append(f"{op_id}: {name} is not a parameter of the operation")
                continue
            spec_where, spec_kind = spec[name]
            if where != spec_where:
                problems.append(f"{op_id}: {name} is in {where}, the spec has it in {spec_where}")
            base = spec_kind.removeprefix("array:")
            expected = kinds.get(base, "string")
            if spec_kind.startswith("array:"):
                expected = f"array<{expected}"
            if expected not in schema:
                problems.append(f"{op_id}: {name} is {schema}, the spec has {spec_kind}")
    assert problems == []


def test_no_operation_lost_a_parameter_it_documented(document):
    """The document lists at least what it listed before the parameter groups, with the same
    names, locations, types and requiredness (tests/api/openapi_params.json; regenerate it with
    `python -m tests.api.openapi_params` only when an operation deliberately drops a parameter)."""
    before = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    now = {op: {p[0]: list(p) for p in params} for op, params in operation_parameters(document).items()}
    lost = []
    for op_id, params in before.items():
        for param in params:
            if now.get(op_id, {}).get(param[0]) != param:
                lost.append(f"{op_id}: {param} -> {now.get(op_id, {}).get(param[0])}")
    assert lost == []
    assert len(now) == len(OPERATIONS)


def test_the_served_document_lists_a_groups_fields(server):
    doc = httpx.get(server.url + "/api-docs/openapi.json", timeout=120).json()
    params = operation_parameters(doc)
    names = {p[0] for p in params["GetItemImage"]}
    assert {"maxWidth", "fillHeight", "percentPlayed", "backgroundColor", "tag", "format", "imageIndex"} <= names
    assert {"fields", "enableImageTypes", "startIndex", "limit"} <= {p[0] for p in params["GetItems"]}
    assert ("maxWidth", "path", "integer", True) in [tuple(p) for p in params["GetItemImage2"]]


def test_ctx_and_auth_come_from_the_request_without_dependencies():
    """``ctx`` is the app's ``state.ctx`` and ``auth`` what the guard left in the request's state
    (server/api/base.py); the handler's other parameters are parsed as before."""
    import inspect

    from litestar.datastructures import State

    seen = {}

    async def handler(ctx, auth, itemId: str, page: Paging, limit: int | None = None) -> str:
        seen.update(ctx=ctx, auth=auth, item=itemId, page=page, limit=limit)
        return "ok"

    wrapped = expand_groups(handler, _SPEC, "/Items/{itemId:str}")
    assert sorted(inspect.signature(wrapped).parameters) == ["itemId", "limit", "request", "startIndex"]
    assert wrapped.__annotations__["request"] is Request

    async def guard(connection, _handler) -> None:
        connection.state["auth"] = "the caller"

    route = get("/Items/{itemId:str}", guards=[guard])(wrapped)
    app = Litestar(route_handlers=[route], logging_config=None, state=State({"ctx": "the context"}))
    with TestClient(app) as client:
        r = client.get("/Items/abc", params={"limit": "3", "startIndex": "2"})
    assert r.status_code == 200, r.text
    assert seen == {"ctx": "the context", "auth": "the caller", "item": "abc", "page": Paging(startIndex=2, limit=3),
                    "limit": 3}


def test_a_handler_that_takes_request_itself_gets_it_along_with_ctx():
    from litestar.datastructures import State

    seen = {}

    async def handler(ctx, request: Request) -> str:
        seen.update(ctx=ctx, path=request.url.path)
        return "ok"

    route = get("/here")(expand_groups(handler, None, "/here"))
    with TestClient(Litestar(route_handlers=[route], logging_config=None, state=State({"ctx": 7}))) as client:
        assert client.get("/here").status_code == 200
    assert seen == {"ctx": 7, "path": "/here"}
