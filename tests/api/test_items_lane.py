"""The Items lane (server/http/items_lane.py) answers GET /Items exactly as the app does.

On a real server (uvicorn on 127.0.0.1, the real protocol), the same requests are sent with the
lane on and with it off (``ItemsLane.enabled``, the switch ``REELROOM_ITEMS_LANE`` sets at start),
over raw sockets, and the replies compared byte for byte: status line, every header but Date, in
order, and the body. Many random Items queries (sorts, filters, fields, key casings, prefixes, the
legacy alias, a token in a header or an API key in the query, a user restricted to one library, a
user with parental rules) must be answered by the lane; bad ones (no or bad token, bad values,
parameters the compiled parser leaves to Litestar, a body, HEAD, forwarded headers) must go to the
app, whose replies stay what they were. Keep-alive with lane and app requests mixed on one
connection, and pipelined requests, keep their order and framing.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from server.http.items_lane import ItemsLane, lane_enabled
from tests.conftest import AUTH_BASE, LiveServer, stop_server
from tests.library_helpers import new_user, songs_movie_show_server, wait_for_artwork
from tests.raw_http import RawConnection

CAMEL = 'application/json; profile="CamelCase"'


def _lane(live: LiveServer) -> ItemsLane:
    lane = live.runner._server.config.app.items_lane  # type: ignore[attr-defined]
    assert isinstance(lane, ItemsLane), "the server runs without the Items lane"
    return lane


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("items-lane")
    server = songs_movie_show_server(root)
    with server.admin() as c:
        # a rating and a tag, for the user with parental rules
        film = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}).json()["Items"][0]["Id"]
        item = c.get(f"/Items/{film}", params={"userId": server.admin_id}).json()
        item.update({"OfficialRating": "R", "Tags": ["grim"]})
        assert c.post(f"/Items/{film}", json=item).status_code == 204
        server.extra["restricted"] = new_user(c, server, "musiconly", EnableAllFolders=False,
                                           EnabledFolders=[server.extra["music"]])
        server.extra["parental"] = new_user(c, server, "kid", MaxParentalRating=10, BlockedTags=["grim"])
        assert c.post("/Auth/Keys", params={"app": "lane-test"}).status_code == 204
        server.extra["key"] = next(k for k in c.get("/Auth/Keys").json()["Items"]
                                   if k["AppName"] == "lane-test")["AccessToken"]
    wait_for_artwork(server)
    yield server
    stop_server(server)


# -- raw HTTP/1.1 ---------------------------------------------------------------------------------

def _request(target: str, headers: dict[str, str] | None = None, method: str = "GET", body: bytes = b"") -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class _Conn(RawConnection):
    def reply(self, head_only: bool = False) -> tuple[bytes, list[tuple[bytes, bytes]], bytes]:
        head, body = self.raw_reply(head_only)
        status, *lines = head.split(b"\r\n")
        return status, [(n.lower(), v.strip()) for n, _, v in (line.partition(b":") for line in lines)], body


def _exchange(live: LiveServer, data: bytes, head_only: bool = False) -> tuple[bytes, list[tuple[bytes, bytes]], bytes]:
    conn = _Conn(live)
    try:
        conn.send(data)
        return conn.reply(head_only)
    finally:
        conn.close()


def _without_date(reply: tuple[bytes, list[tuple[bytes, bytes]], bytes]) -> tuple[Any, ...]:
    status, headers, body = reply
    return status, [(n, v) for n, v in headers if n != b"date"], body


def _both(live: LiveServer, data: bytes, head_only: bool = False) -> tuple[tuple[Any, ...], int, int]:
    """The reply with the lane on (checked equal to the one with it off, asked before and after),
    and how many requests the lane answered and gave to the app."""
    lane = _lane(live)
    lane.enabled = False
    try:
        off = _without_date(_exchange(live, data, head_only))
    finally:
        lane.enabled = True
    served, passed = lane.served, lane.passed
    on = _without_date(_exchange(live, data, head_only))
    taken, given = lane.served - served, lane.passed - passed
    lane.enabled = False
    try:
        again = _without_date(_exchange(live, data, head_only))
    finally:
        lane.enabled = True
    assert on == off == again, (data[:300], on[:2], off[:2])
    return on, taken, given


# -- the queries ----------------------------------------------------------------------------------

_FIELDS = ["PrimaryImageAspectRatio", "MediaSources", "Overview", "Genres", "Tags", "Path", "People",
           "ChildCount", "DateCreated", "SortName", "MediaSourceCount", "Studios", "ProviderIds"]
_SORTS = ["SortName", "DateCreated", "PremiereDate", "CommunityRating", "Name", "ProductionYear", "Runtime",
          "Album", "SeriesSortName", "DatePlayed", "PlayCount", "IsFolder"]
_TYPES = ["Movie", "Episode", "Audio", "MusicAlbum", "Series", "Season", "MusicArtist", "Folder"]


def _case(rnd: random.Random, key: str) -> str:
    return rnd.choice([key, key.lower(), key[0].upper() + key[1:], key.upper()])


def _random_query(rnd: random.Random, live: LiveServer, user_id: str | None) -> list[tuple[str, str]]:
    libraries = [live.extra["music"], live.extra["movies"], live.extra["shows"]]
    q: list[tuple[str, str]] = []
    pick: dict[str, Any] = {
        "recursive": lambda: rnd.choice(["true", "false", "True", "1"]),
        "sortBy": lambda: ",".join(rnd.sample(_SORTS, rnd.randint(1, 3))),
        "sortOrder": lambda: rnd.choice(["Ascending", "Descending", "descending", "Ascending,Descending"]),
        "includeItemTypes": lambda: ",".join(rnd.sample(_TYPES, rnd.randint(1, 3))),
        "excludeItemTypes": lambda: rnd.choice(["Folder", "Season", "CollectionFolder"]),
        "fields": lambda: ",".join(rnd.sample(_FIELDS, rnd.randint(1, 6))),
        "parentId": lambda: rnd.choice(libraries),
        "startIndex": lambda: str(rnd.randint(0, 3)),
        "limit": lambda: str(rnd.randint(1, 50)),
        "filters": lambda: rnd.choice(["IsFolder", "IsNotFolder", "IsFavorite", "IsPlayed", "IsUnplayed",
                                       "IsResumable"]),
        "isFavorite": lambda: rnd.choice(["true", "false"]),
        "mediaTypes": lambda: rnd.choice(["Audio", "Video", "Audio,Video"]),
        "searchTerm": lambda: rnd.choice(["al", "film", "show", "b"]),
        "years": lambda: rnd.choice(["2001", "2020", "2001,2020"]),
        "genres": lambda: "Rock",
        "enableImages": lambda: rnd.choice(["true", "false"]),
        "imageTypeLimit": lambda: str(rnd.randint(0, 2)),
        "enableImageTypes": lambda: rnd.choice(["Primary", "Primary,Backdrop,Thumb", "Banner"]),
        "enableUserData": lambda: rnd.choice(["true", "false"]),
        "enableTotalRecordCount": lambda: rnd.choice(["true", "false"]),
        "nameStartsWith": lambda: rnd.choice(["A", "F", "s"]),
        "isPlayed": lambda: rnd.choice(["true", "false"]),
        "hasOverview": lambda: rnd.choice(["true", "false"]),
        "minCommunityRating": lambda: rnd.choice(["0", "5.5"]),
        "collapseBoxSetItems": lambda: "false",
    }
    for key in rnd.sample(sorted(pick), rnd.randint(1, 8)):
        q.append((_case(rnd, key), pick[key]()))
    if user_id is not None:
        q.append((_case(rnd, "userId"), rnd.choice([user_id, _dashed(user_id)])))
    return q


def _dashed(guid: str) -> str:
    g = guid.replace("-", "")
    return f"{g[:8]}-{g[8:12]}-{g[12:16]}-{g[16:20]}-{g[20:]}"


def _target(path: str, query: list[tuple[str, str]]) -> str:
    return path + ("?" + "&".join(f"{quote(k)}={quote(v, safe=',|')}" for k, v in query) if query else "")


def _auth(token: str, device: str = "lane-device") -> dict[str, str]:
    return {"Authorization": AUTH_BASE.format(device=device) + f', Token="{token}"'}


def test_the_switch() -> None:
    assert lane_enabled({})
    assert lane_enabled({"REELROOM_ITEMS_LANE": "1"})
    assert not lane_enabled({"REELROOM_ITEMS_LANE": "0"})
    assert not lane_enabled({"REELROOM_ITEMS_LANE": "off"})


def test_random_queries_answer_the_same(live: LiveServer) -> None:
    rnd = random.Random(13)
    callers = [
        ("admin", live.admin_token, live.admin_id),
        ("restricted", live.extra["restricted"][1], live.extra["restricted"][0]),
        ("parental", live.extra["parental"][1], live.extra["parental"][0]),
        ("key", None, None),
    ]
    answered = 0
    for n in range(160):
        who, token, user_id = callers[n % len(callers)]
        query = _random_query(rnd, live, user_id if rnd.random() < 0.7 else None)
        headers: dict[str, str] = {}
        if token is None:
            query.append((rnd.choice(["ApiKey", "api_key", "apikey"]), live.extra["key"]))
            if rnd.random() < 0.5:
                query.append(("userId", live.admin_id))
        else:
            headers.update(_auth(token))
        if rnd.random() < 0.4:
            headers["Accept"] = CAMEL
        if rnd.random() < 0.2:
            headers["Origin"] = "http://example.test"
        path = rnd.choice(["/Items", "/items", "/ITEMS", "/emby/Items", "/mediabrowser/Items", "/Emby/items"])
        if user_id is not None and rnd.random() < 0.25:
            path = rnd.choice(["/Users/{}/Items", "/users/{}/items", "/emby/Users/{}/Items"]).format(
                rnd.choice([user_id, _dashed(user_id)]))
            query = [(k, v) for k, v in query if k.lower() != "userid"]
        (status, _headers, body), taken, given = _both(live, _request(_target(path, query), headers))
        if status.startswith(b"HTTP/1.1 200"):
            assert taken == 1, (who, path, query, "a page the lane should have answered went to the app")
            answered += 1
        assert taken + given == 1, (path, query)
    assert answered >= 120  # most of the random queries are good ones


def test_pages_the_lane_answers_are_those_clients_get(live: LiveServer) -> None:
    """Replies compared on their own terms too: the lane's page is the page (the reply cache's
    hit on a repeated page included), with the app's headers."""
    query = [("recursive", "true"), ("sortBy", "SortName"), ("fields", "Overview,MediaSources"),
             ("userId", live.admin_id)]
    for accept in ("application/json", CAMEL):
        for _ in range(3):  # the third ask is a kept reply's hit
            (status, headers, body), taken, _ = _both(
                live, _request(_target("/Items", query), {**_auth(live.admin_token), "Accept": accept}))
            assert status == b"HTTP/1.1 200 OK" and taken == 1
            names = [n for n, _ in headers]
            assert (b"content-type", b"application/json; charset=utf-8") in headers
            assert b"access-control-allow-origin" in names and b"content-length" in names
            key = b'"totalRecordCount"' if accept == CAMEL else b'"TotalRecordCount"'
            assert key in body


@pytest.mark.parametrize("case", [
    "no token", "bad token", "negative startIndex", "bad limit", "bad parentId", "datetime", "bad bool",
    "unknown list member",
    "other user's id", "bad userId", "bad ids", "body", "forwarded", "expect", "head", "post", "unknown path",
    "userId twice", "random"])
def test_what_the_lane_leaves_to_the_app(live: LiveServer, case: str) -> None:
    restricted_id, restricted_token = live.extra["restricted"]
    auth = _auth(live.admin_token)
    target, headers, method, body, head_only, want_taken = "/Items?recursive=true", dict(auth), "GET", b"", False, 0
    if case == "no token":
        headers = {}
    elif case == "bad token":
        headers = _auth("0" * 32)
    elif case == "negative startIndex":
        target += "&startIndex=-1"
    elif case == "bad limit":
        target += "&limit=abc"
    elif case == "bad parentId":
        target += "&parentId=not-a-guid"
    elif case == "datetime":
        target += "&minPremiereDate=2001-01-01T00:00:00Z"
    elif case == "bad bool":
        target += "&isFavorite=maybe"
    elif case == "unknown list member":  # dropped, as Jellyfin does: a page the lane answers
        target += "&sortOrder=Sideways"
        want_taken = 1
    elif case == "other user's id":
        headers = _auth(restricted_token)
        target += f"&userId={live.admin_id}"
    elif case == "bad userId":
        target += "&userId=nobody"
    elif case == "bad ids":
        target += "&ids=zzz"
    elif case == "body":
        headers["Content-Length"] = "2"
        body = b"{}"
    elif case == "forwarded":
        headers["X-Forwarded-For"] = "10.1.2.3"
    elif case == "expect":
        headers.update({"Expect": "100-continue", "Content-Length": "2"})
        body = b"{}"
    elif case == "head":
        method, head_only = "HEAD", True
    elif case == "post":
        method = "POST"
    elif case == "unknown path":
        target = "/Items/Nothing/Items?recursive=true"
    elif case == "userId twice":
        target += f"&userId={live.admin_id}&userId={restricted_id}"
    elif case == "random":
        target += "&sortBy=Random&limit=1&includeItemTypes=Movie"
        want_taken = 1
    lane = _lane(live)
    if case == "random":  # a random page differs from ask to ask: the lane answers it, the app would too
        served = lane.served
        status, _headers, _body = _exchange(live, _request(target, headers, method, body))
        assert status == b"HTTP/1.1 200 OK" and lane.served == served + want_taken
        return
    (status, _headers, _body), taken, _given = _both(live, _request(target, headers, method, body), head_only)
    assert taken == want_taken, (case, status)
    if case in ("no token", "bad token"):
        assert status.startswith(b"HTTP/1.1 401")
    elif case in ("negative startIndex", "bad limit", "bad parentId", "bad bool", "bad userId", "bad ids"):
        assert status.startswith(b"HTTP/1.1 400"), status


@pytest.mark.parametrize("state", ["starting", "closing", "failing"])
def test_start_up_a_close_and_a_failure_go_to_the_app(live: LiveServer, state: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Start-up's 503 window, a server whose context is closing, and an unexpected exception in
    the lane (before anything was sent): the app answers, as it would without the lane."""
    lane = _lane(live)
    request = _request(_target("/Items", [("recursive", "true"), ("userId", live.admin_id)]), _auth(live.admin_token))
    if state == "starting":
        monkeypatch.setattr(live.ctx.startup, "ready", False)
    elif state == "closing":
        monkeypatch.setattr(live.ctx, "closing", True)
    else:
        def broken(*args: object) -> bytes | None:
            raise RuntimeError("a bug in the lane")

        monkeypatch.setattr(lane, "kept_lookup", broken)
    (status, _headers, body), taken, given = _both(live, request)
    assert taken == 0 and given == 1
    if state == "starting":
        assert status.startswith(b"HTTP/1.1 503") and b"Service Unavailable" in body
    elif state == "failing":
        assert status == b"HTTP/1.1 200 OK"  # the app's page


def test_a_route_with_litestar_hooks_is_left_to_the_app(live: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Should GET /Items gain a Litestar hook the lane does not run (here an after-request hook),
    the lane leaves every page to the app."""
    lane = _lane(live)
    handler, _model = lane.route.route_handler_map["GET"]

    async def hook(response: object) -> object:
        return response

    monkeypatch.setattr(handler, "after_request", hook)
    monkeypatch.setattr(lane, "_checked", None)
    request = _request(_target("/Items", [("recursive", "true")]), _auth(live.admin_token))
    passed = lane.passed
    status, _headers, _body = _exchange(live, request)
    assert status == b"HTTP/1.1 200 OK" and lane.passed == passed + 1


def test_keep_alive_mixes_lane_and_app_requests(live: LiveServer) -> None:
    auth = _auth(live.admin_token)
    page = _request(_target("/Items", [("recursive", "true"), ("sortBy", "Name"), ("userId", live.admin_id)]), auth)
    others = [_request("/System/Info", auth), _request("/Items?recursive=true&limit=abc", auth),
              _request("/Users/Me", auth), _request("/Items?recursive=true", {})]
    expected = {r: _without_date(_exchange(live, r)) for r in [page, *others]}
    lane = _lane(live)
    conn = _Conn(live)
    try:
        served = lane.served
        sequence = [page, others[0], page, others[1], page, others[2], others[3], page]
        for request in sequence:
            conn.send(request)
            assert _without_date(conn.reply()) == expected[request]
        assert lane.served - served == sequence.count(page)
        # pipelined: all sent at once, answered in order on the one connection
        conn.send(b"".join(sequence))
        for request in sequence:
            assert _without_date(conn.reply()) == expected[request]
        # a request asking to close: the lane's reply says so and the connection ends
        conn.send(page.replace(b"Host: 127.0.0.1", b"Host: 127.0.0.1\r\nConnection: close"))
        status, headers, _body = conn.reply()
        assert status == b"HTTP/1.1 200 OK" and (b"connection", b"close") in headers
        assert conn.closed(5)
    finally:
        conn.close()


def test_the_lane_off_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``REELROOM_ITEMS_LANE=0``: the app has no lane; pages are answered by the app."""
    from tests.conftest import complete_wizard, start_server

    monkeypatch.setenv("REELROOM_ITEMS_LANE", "0")
    server = start_server(tmp_path / "data")
    try:
        complete_wizard(server)
        assert server.runner._server.config.app.items_lane is None  # type: ignore[attr-defined]
        with server.admin() as c:
            r = c.get("/Items", params={"recursive": "true"})
            assert r.status_code == 200 and r.json()["TotalRecordCount"] == 0
    finally:
        stop_server(server)
