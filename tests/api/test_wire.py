"""Jellyfin's HTTP dialect: casing, nulls, GUIDs, tolerant paths, keys and values."""

from __future__ import annotations

import re

import httpx


def test_pascal_case_by_default_and_camel_case_on_request(server):
    with server.admin() as c:
        pascal = c.get("/Users/Me").json()
        camel = c.get("/Users/Me", headers={"Accept": 'application/json; profile="CamelCase"'}).json()
    assert "Name" in pascal and "Policy" in pascal and "IsAdministrator" in pascal["Policy"]
    assert "name" in camel and "policy" in camel and "isAdministrator" in camel["policy"]
    assert camel["id"] == pascal["Id"]


def test_nulls_are_left_out_and_guids_are_32_hex(server):
    with server.admin() as c:
        body = c.get("/Users/Me").text
        me = c.get("/Users/Me").json()
    assert "null" not in body
    assert re.fullmatch(r"[0-9a-f]{32}", me["Id"])
    assert re.fullmatch(r"[0-9a-f]{32}", me["ServerId"])


def test_paths_match_case_insensitively_with_legacy_prefixes(server):
    for path in ("/system/info/public", "/SYSTEM/INFO/PUBLIC", "/emby/System/Info/Public",
                 "/mediabrowser/system/info/public"):
        r = httpx.get(server.url + path)
        assert r.status_code == 200, path
        assert r.json()["ProductName"] == "Jellyfin Server"


def test_guid_path_parameters_dashed_or_not(server):
    dashed = "-".join([server.admin_id[:8], server.admin_id[8:12], server.admin_id[12:16], server.admin_id[16:20],
                       server.admin_id[20:]])
    with server.admin() as c:
        assert c.get(f"/Users/{dashed}").json()["Id"] == server.admin_id
        assert c.get(f"/users/{server.admin_id.upper()}").json()["Id"] == server.admin_id


def test_query_keys_and_booleans_are_tolerant(server):
    with server.admin() as c:
        a = c.get("/ScheduledTasks", params={"ISHIDDEN": "False"})
        b = c.get("/ScheduledTasks", params={"isHidden": "false"})
    assert a.status_code == b.status_code == 200
    assert [t["Id"] for t in a.json()] == [t["Id"] for t in b.json()]


def test_fully_encoded_query_string_is_decoded(server):
    with server.admin() as c:
        r = c.get("/Playback/BitrateTest?size%3D1000")
    assert r.status_code == 200
    assert len(r.content) == 1000


def test_body_property_names_in_any_case(fresh_server):
    with fresh_server.client() as c:
        assert c.post("/Startup/User", json={"name": "lowercase", "password": "pw"}).status_code == 204
        assert c.get("/Startup/User").json()["Name"] == "lowercase"
        r = c.post("/Users/AuthenticateByName", json={"username": "lowercase", "pw": "pw"})
    assert r.status_code == 200, r.text


def test_bad_input_gets_problem_details_not_500(server):
    with server.admin() as c:
        cases = [
            c.post("/Users/New", content=b"{not json", headers={"Content-Type": "application/json"}),
            c.get("/Users/not-a-guid"),
            c.get("/ScheduledTasks", params={"isHidden": "perhaps"}),
            c.get("/no/such/path"),
            c.post("/Users/New", json={"Name": 12}),
        ]
    for r in cases:
        assert 400 <= r.status_code < 500, (r.request.url, r.status_code, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.json()["status"] == r.status_code
        assert "Traceback" not in r.text


def test_json_replies_say_utf8(server):
    r = httpx.get(server.url + "/Branding/Configuration")
    assert r.headers["content-type"] == "application/json; charset=utf-8"


def test_503_while_starting(tmp_path):
    """Requests that arrive before start-up finished get 503 with Retry-After and Message."""
    import asyncio

    from server.app import create_app
    from server.context import ServerContext, ServerOptions

    ctx = ServerContext(ServerOptions(data_dir=tmp_path, enable_lan=False))
    app = create_app(ctx)
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/System/Info/Public", "raw_path": b"/System/Info/Public",
             "query_string": b"", "headers": [], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
             "scheme": "http", "http_version": "1.1", "root_path": "", "asgi": {"version": "3.0"}}
    asyncio.run(app(scope, receive, send))
    start = sent[0]
    headers = dict(start["headers"])
    assert start["status"] == 503
    assert int(headers[b"retry-after"]) >= 1
    assert headers[b"message"]
    ctx.db.close()
