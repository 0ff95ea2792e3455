"""WireMiddleware keeps a route's tidied query string per (route, query string): a kept answer is
exactly what tidying the query again gives, problems included, and legacy paths are still rewritten."""

from __future__ import annotations

import asyncio
from typing import Any

from server.http import limits
from server.http.wire_middleware import StartupState, WireMiddleware, _encode_query, _parse_query, _tidy_query
from server.wire.operations import BY_ID

QUERIES = [
    b"userId=5D3F0E0C-1A2B-4C5D-8E9F-0A1B2C3D4E5F&fields=Overview,mediasources|People&recursive=TRUE",
    b"ParentId=abc&SORTBY=sortname&limit=100&startIndex=5",
    b"limit=99999999999999",  # over int32: a problem, kept with the answer
    b"includeItemTypes=Movie,NotAType&isFavorite=1",
    b"a%3D1%26limit%3D5",  # fully URL-encoded
    b"searchTerm=" + b"x" * 600,  # long: not kept, still tidied (and too long: a problem)
    b"&&",
]


def _run(mw: WireMiddleware, path: str, query: bytes) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.update(scope)

    mw.app = app
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": query,
             "headers": []}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(_message: Any) -> None:
        pass

    asyncio.run(mw(scope, receive, send))
    return seen


def _middleware() -> WireMiddleware:
    mw = WireMiddleware(lambda *_: None, StartupState(ready=True))  # type: ignore[arg-type]
    mw.add_route("/Items", "GET", BY_ID["GetItems"])
    mw.add_route("/Items/{itemId}", "GET", BY_ID["GetItem"])
    return mw


def test_a_kept_query_is_what_tidying_gives_every_time() -> None:
    mw = _middleware()
    info = mw.routes[("/Items", "GET")]
    for query in QUERIES:
        pairs, problem = _tidy_query(_parse_query(query), info)
        expected = _encode_query(pairs) if pairs else b""
        for _ in range(3):  # the first ask fills the map, the next ones read it
            scope = _run(mw, "/Items", query)
            assert scope["query_string"] == expected, query
            assert scope.get(limits.SCOPE_KEY) == problem, query
    assert (id(info), QUERIES[0]) in mw._queries
    assert not [key for key in mw._queries if len(key[1]) > 256]


def test_the_same_query_on_another_route_is_tidied_for_that_route() -> None:
    mw = _middleware()
    query = b"userid=5D3F0E0C-1A2B-4C5D-8E9F-0A1B2C3D4E5F&startindex=3"
    items = _run(mw, "/Items", query)
    item = _run(mw, "/Items/0123456789abcdef0123456789abcdef", query)
    assert items["query_string"] == b"userId=5d3f0e0c1a2b4c5d8e9f0a1b2c3d4e5f&startIndex=3"
    # GetItem has no startIndex: the key is left as it came
    assert item["query_string"] == b"userId=5d3f0e0c1a2b4c5d8e9f0a1b2c3d4e5f&startindex=3"


def test_legacy_paths_are_still_rewritten_with_their_user_in_the_query() -> None:
    mw = _middleware()
    for _ in range(2):
        scope = _run(mw, "/Users/5d3f0e0c1a2b4c5d8e9f0a1b2c3d4e5f/Items/0123456789abcdef0123456789abcdef",
                     b"Fields=Overview")
        assert scope["path"] == "/Items/0123456789abcdef0123456789abcdef"
        assert scope["query_string"] == b"Fields=Overview&userId=5d3f0e0c1a2b4c5d8e9f0a1b2c3d4e5f"


def test_a_query_put_together_from_kept_parts_is_what_tidying_it_whole_gives() -> None:
    """A query string not kept whole (long, or new) is tidied part by part, each ``key=value`` kept
    per route: the same string and the same first problem as tidying it whole, list bounds that
    span parts included (server/http/wire_middleware.py ``_tidied_by_parts``)."""
    import random

    mw = _middleware()
    info = mw.routes[("/Items", "GET")]
    rnd = random.Random(5)
    parts = [b"userId=5D3F0E0C-1A2B-4C5D-8E9F-0A1B2C3D4E5F", b"parentid=b821ae17690f5f2183928238e7c5f3af",
             b"recursive=true", b"Recursive=1", b"includeItemTypes=Movie,NotAType", b"sortBy=SortName",
             b"sortOrder=Ascending", b"limit=100", b"limit=99999999999999", b"limit=abc",
             b"fields=PrimaryImageAspectRatio%2CMediaSources%2COverview", b"enableTotalRecordCount=true",
             b"isFavorite=maybe", b"searchTerm=" + b"x" * 600, b"searchTerm=a+b%20c", b"genres=A|B,C", b"",
             b"ids=" + b",".join(b"%032x" % i for i in range(600)), b"years=1999,abc,2001",
             b"sortOrder=Sideways", b"unknown=1", b"flag", b"=v", b"caf%C3%A9=1"]
    for n in range(400):
        picked = [rnd.choice(parts) for _ in range(rnd.randint(1, 8))]
        picked.append(b"startIndex=%d" % rnd.randrange(0, 100000))
        rnd.shuffle(picked)
        query = b"&".join(picked)
        pairs, problem = _tidy_query(_parse_query(query), info)
        expected = (_encode_query(pairs) if pairs else b"", problem)
        assert mw._tidied(info, query) == expected, query
        by_parts = mw._tidied_by_parts(info, query)
        if by_parts is not None:
            assert by_parts == expected, query
        if n == 0:
            assert by_parts is not None
    assert mw._parts
