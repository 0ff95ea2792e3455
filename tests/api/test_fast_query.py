"""The compiled query parser (server/http/fast_query.py) hands every handler it serves exactly the
arguments Litestar's kwargs and signature models would, and leaves to them (so to their 400s)
every request it cannot take as they would."""

from __future__ import annotations

import asyncio
import inspect
import random
import typing
from typing import Any
from urllib.parse import quote_plus

import httpx
import pytest
from litestar import Litestar, Request
from litestar.routes import HTTPRoute

from server.api.base import _FastKwargsModel
from server.app import create_app
from server.context import ServerContext, ServerOptions
from server.http.fast_query import FastKwargs, _bare
from tests.conftest import auth_header

# values of each kind a client may send after the wire layer tidied them, good and bad
_SAMPLES: dict[Any, list[str]] = {
    str: ["", "abc", "Movie", "a b", "caf\u00e9", "x%2Cy", "a+b", "12", "null"],
    bool: ["true", "false", "True", "1", "yes", ""],
    int: ["0", "7", "-3", "100", "007", "1.0", "abc", "", "99999999999999999999", "+4"],
    float: ["0", "1.5", "-2.25", "7", "1e3", "nan", "abc", "", "0.1234567890123456789"],
}


def _routes(app: Litestar) -> list[tuple[Any, _FastKwargsModel]]:
    found = []
    for route in app.routes:
        if isinstance(route, HTTPRoute):
            for handler, model in dict.values(route.route_handler_map):
                if isinstance(model, _FastKwargsModel):
                    found.append((handler, model))
    return found


def _request(app: Litestar, handler: Any, query: str, path_params: dict[str, Any]) -> Request[Any, Any, Any]:
    scope = {"type": "http", "method": "GET", "path": "/", "raw_path": b"/", "query_string": query.encode("latin-1"),
             "headers": [], "path_params": path_params, "app": app, "litestar_app": app, "route_handler": handler,
             "state": {}, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80), "scheme": "http",
             "root_path": "", "http_version": "1.1", "asgi": {"version": "3.0"}}
    return Request(scope)  # type: ignore[arg-type]


async def _both(app: Litestar, handler: Any, model: _FastKwargsModel, query: str,
                path_params: dict[str, Any]) -> tuple[Any, Any]:
    """(Litestar's arguments or its exception type, the fast parser's or None)."""
    fast = model.parser.parse(query.encode("latin-1"), path_params, _request(app, handler, query, path_params))
    request = _request(app, handler, query, path_params)
    try:
        kwargs = await model.slow.to_kwargs(request)
        slow: Any = handler.signature_model.parse_values_from_connection_kwargs(connection=request, kwargs=dict(kwargs))
    except Exception as exc:  # noqa: BLE001 - Litestar's 400 (ValidationException) and the like
        slow = type(exc)
    return slow, fast


def _compare(handler: Any, query: str, slow: Any, fast: FastKwargs | None) -> None:
    if fast is None:
        return  # left to Litestar: whatever it does stands
    assert isinstance(slow, dict), f"{handler} {query!r}: Litestar refused ({slow}) what the fast parser took"
    defaults = {n: p.default for n, p in inspect.signature(handler.fn).parameters.items()}
    for name, value in slow.items():
        if name == "request":
            assert fast[name] is not None
            continue
        got = fast.get(name, defaults.get(name))
        assert got == value and type(got) is type(value), (handler, query, name, value, got)
    assert set(fast) <= set(slow), (handler, query, set(fast) - set(slow))


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> typing.Iterator[Litestar]:
    ctx = ServerContext(ServerOptions(data_dir=tmp_path_factory.mktemp("fast-query"), enable_lan=False))
    try:
        built: Any = create_app(ctx)
        while not isinstance(built, Litestar):
            built = built.app
        built.compile_all()
        yield built
    finally:
        ctx.db.close()


def test_get_items_and_most_plain_routes_take_the_fast_parser(app: Litestar) -> None:
    ops = {handler.opt.get("op") for handler, _model in _routes(app)}
    assert {"GetItems", "GetUserViews", "GetItem", "GetItemImage", "GetPingSystem", "GetEpisodes"} <= ops
    # a handler with a body, headers or dependencies stays with Litestar
    assert "UpdateItemUserData" not in ops and "AuthenticateUserByName" not in ops


def test_the_fast_parser_agrees_with_litestar_on_every_route_it_serves(app: Litestar) -> None:
    rnd = random.Random(13)
    checked = 0

    async def run() -> None:
        nonlocal checked
        for handler, model in _routes(app):
            hints = typing.get_type_hints(handler.fn, include_extras=True)
            path_params = {key: {str: "abc", int: 3, float: 1.5}[kind] for key, (_name, kind) in model.parser.path.items()}
            keys = list(model.parser.query)
            queries = [""]
            for _ in range(12):
                pairs = []
                for key in rnd.sample(keys, min(len(keys), rnd.randint(1, 6))):
                    name, _conv, many = model.parser.query[key]
                    bare = _bare(hints[name])
                    kind = _bare(typing.get_args(bare)[0]) if typing.get_origin(bare) is list else bare
                    for _n in range(rnd.randint(2, 3) if many else rnd.choice((1, 1, 1, 2))):
                        value = rnd.choice(_SAMPLES.get(kind, ["2024-01-02T03:04:05Z", "Primary", "x"]))
                        pairs.append(quote_plus(key) + "=" + quote_plus(value))
                queries.append("&".join(pairs))
            queries.append("unknown=1&" + (queries[-1] or "a=b"))
            for query in queries:
                slow, fast = await _both(app, handler, model, query, path_params)
                _compare(handler, query, slow, fast)
                checked += 1
            # a path parameter of another type than declared is left to Litestar
            if model.parser.path:
                odd = {key: object() for key in model.parser.path}
                assert model.parser.parse(b"", odd, None) is None

    asyncio.run(run())
    assert checked > 3000


def test_a_bad_value_still_gets_litestars_400(server) -> None:
    """End to end: values the fast parser leaves to Litestar answer as before."""
    with httpx.Client(base_url=server.url, headers=auth_header(server.admin_token), timeout=30) as c:
        ok = c.get("/Items", params={"recursive": "true", "limit": "5", "isFavorite": "false"})
        assert ok.status_code == 200, ok.text
        for params in ({"isFavorite": "maybe"}, {"minCommunityRating": "abc"}, {"minPremiereDate": "yesterday"}):
            bad = c.get("/Items", params=params)
            assert bad.status_code == 400, (params, bad.status_code, bad.text)
            assert bad.headers["content-type"].startswith("application/problem+json")
