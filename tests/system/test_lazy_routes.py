"""HTTP routes are compiled (type hints, signature and kwargs models) on their first request, not
when the app is built (server/app.py ``_LazyHandlerMap``): a route not asked yet costs neither
start-up time nor memory, and a route asked answers exactly as an eagerly compiled one would."""

from __future__ import annotations

import typing
import warnings

import pydantic
from litestar import Litestar
from litestar.routes import HTTPRoute

from server.app import _PENDING, _LazyHandlerMap, create_app
from server.context import ServerContext, ServerOptions


def _mentions_pydantic(annotation: object) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return True
    return any(_mentions_pydantic(arg) for arg in typing.get_args(annotation))


def _litestar(live) -> Litestar:
    app = live.runner._server.config.app
    while not isinstance(app, Litestar):
        app = app.app
    return app


def _route_of(app: Litestar, op: str) -> HTTPRoute:
    for route in app.routes:
        if isinstance(route, HTTPRoute) and any(h.opt.get("op") == op for h in route.route_handlers):
            return route
    raise AssertionError(f"no route for {op}")


def _pending(route: HTTPRoute) -> bool:
    return any(model is _PENDING for _handler, model in dict.values(route.route_handler_map))


def test_building_the_app_compiles_no_route_and_compile_all_compiles_every_one(tmp_path):
    ctx = ServerContext(ServerOptions(data_dir=tmp_path, enable_lan=False))
    try:
        app = create_app(ctx)
        while not isinstance(app, Litestar):
            app = app.app
        routes = [r for r in app.routes if isinstance(r, HTTPRoute)]
        assert len(routes) > 300
        assert all(isinstance(r.route_handler_map, _LazyHandlerMap) and _pending(r) for r in routes)
        app.compile_all()  # what Litestar did at registration: a misdeclared handler fails here
        assert not any(_pending(r) for r in routes)
        for route in routes:
            for handler, model in dict.values(route.route_handler_map):
                assert model is not None and isinstance(handler.has_sync_callable, bool)
                # the app leaves Litestar's pydantic plugins out: no handler may take or return one
                signature = handler.parsed_fn_signature
                for field in [signature.return_type, *signature.parameters.values()]:
                    assert not _mentions_pydantic(field.annotation), (handler, field)
    finally:
        ctx.db.close()


def test_compiling_every_route_raises_no_litestar_deprecation_warning(tmp_path):
    """Handlers declare their request bodies with a marker (``data: JSONBody[...]``): a reserved
    ``data`` kwarg without one is deprecated and stops working in Litestar 3, and a warning per
    handler on every compile hid any new one."""
    ctx = ServerContext(ServerOptions(data_dir=tmp_path, enable_lan=False))
    try:
        app = create_app(ctx)
        while not isinstance(app, Litestar):
            app = app.app
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            app.compile_all()
        deprecated = [str(w.message) for w in seen if "Deprecation" in w.category.__name__]
        assert not deprecated, f"{len(deprecated)} deprecation warnings, the first: {deprecated[:2]}"
    finally:
        ctx.db.close()


def test_a_route_compiles_on_its_first_request_and_answers_as_before(server):
    app = _litestar(server)
    info, tasks = _route_of(app, "GetSystemInfo"), _route_of(app, "GetTasks")
    assert _pending(info) and _pending(tasks)
    admin = server.admin()
    r = admin.get("/System/Info")
    assert r.status_code == 200, r.text
    assert r.json()["Version"] == "10.10.7" and r.json()["Id"]
    assert not _pending(info)
    assert _pending(tasks)  # not asked yet
    # its first request validates its parameters with the models just built: a bad one is a 400
    r = admin.get("/ScheduledTasks", params={"isHidden": "maybe"})
    assert r.status_code == 400 and r.headers["content-type"].startswith("application/problem+json"), r.text
    assert not _pending(tasks)
    r = admin.get("/ScheduledTasks", params={"isHidden": "false"})
    assert r.status_code == 200 and any(t["Key"] == "RefreshLibrary" for t in r.json())


def test_an_unauthenticated_first_request_is_refused_like_any_other(server):
    app = _litestar(server)
    route = _route_of(app, "GetUsers")
    assert _pending(route)
    assert server.client().get("/Users").status_code == 401
    assert server.admin().get("/Users").status_code == 200
