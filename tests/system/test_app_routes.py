"""The app's HTTP routes are made together (server/app.py ``_App._register_batch``): each path's
route once, with the handlers, methods and OPTIONS answer Litestar makes registering the same
handlers one after another (which made a path's route again at each further handler)."""

from __future__ import annotations

from litestar import Litestar, Router
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute

from server.app import _declared, collect_handlers, create_app
from server.context import ServerContext, ServerOptions


def _handlers_by_method(route: HTTPRoute) -> dict[str, object]:
    """method -> the function a handler declares (OPTIONS: the Allow header it answers)."""
    out: dict[str, object] = {}
    for handler in route.route_handlers:
        for method in handler.http_methods:
            if method == "OPTIONS":
                out[method] = handler.fn({}).headers["Allow"]
            else:
                out[method] = _declared(handler)
    return out


def test_each_path_gets_one_route_with_what_litestar_gives_it(tmp_path, monkeypatch):
    made: list[str] = []
    make = HTTPRoute.__init__

    def counting(self, *, path, route_handlers):
        made.append(path)
        make(self, path=path, route_handlers=route_handlers)

    monkeypatch.setattr(HTTPRoute, "__init__", counting)
    ctx = ServerContext(ServerOptions(data_dir=tmp_path, enable_lan=False))
    try:
        app = create_app(ctx)
        while not isinstance(app, Litestar):
            app = app.app
        routes = [r for r in app.routes if isinstance(r, HTTPRoute)]
        ours = [r for r in routes if not r.path.startswith("/api-docs/litestar")]  # (Litestar's own router)
        assert len(ours) > 300
        # one route made per path, no more (Litestar's OpenAPI router is registered by Litestar)
        assert sorted(p for p in made if not p.startswith("/api-docs/litestar")) == sorted(r.path for r in ours)
        # every handler took its OPTIONS handler's owner, and the owner is the app
        assert all(h.owner is app for r in ours for h in r.route_handlers)

        made.clear()
        # Litestar's own registration of the same handlers, one after another
        reference = Router(path="/", route_handlers=collect_handlers())
        assert len(made) > len(reference.routes)  # (what the app no longer does)
        theirs = [r for r in reference.routes if isinstance(r, HTTPRoute)]
        assert [r.path for r in ours] == [r.path for r in theirs]
        for mine, litestar in zip(ours, theirs, strict=True):
            assert mine.methods == litestar.methods
            assert _handlers_by_method(mine) == _handlers_by_method(litestar), mine.path
            assert mine.path_parameters.keys() == litestar.path_parameters.keys()
        # a path with several handlers answers OPTIONS as Litestar's first route for it did
        users = next(r for r in ours if r.path == "/Users/{userId:str}")
        assert {"GET", "DELETE"} <= users.methods
        assert _handlers_by_method(users)["OPTIONS"] == "GET, OPTIONS"
    finally:
        ctx.db.close()


def test_a_handler_copy_has_the_handlers_attributes(tmp_path):
    import copy
    import copyreg

    handler = next(h for h in collect_handlers() if isinstance(h, HTTPRouteHandler))
    made = copy.copy(handler)
    assert made is not handler and type(made) is type(handler)
    for name in copyreg._slotnames(type(handler)):
        assert hasattr(made, name) == hasattr(handler, name), name
        if hasattr(handler, name):
            assert getattr(made, name) is getattr(handler, name), name
