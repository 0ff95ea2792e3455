"""Bounds on what a request can make the server parse, allocate or store (issue 11): deep JSON,
integers beyond the spec's int32/int64 formats, enum members, names and search terms, list
sizes, body sizes, request heads, and 401 before any parameter check. All against a real
uvicorn server on 127.0.0.1."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import httpx
import pytest

from server.http import limits, protocol
from server.wire.operations import OPERATIONS
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server

GUID = "0123456789abcdef0123456789abcdef"
DEEP_ARRAY = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000
SKIP = {"RestartApplication", "ShutdownApplication"}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("bounds") / "data")
    complete_wizard(server)
    yield server
    stop_server(server)


def _path(op, ints: str = "1") -> str:
    kinds = {n: k for n, w, k, _e, _r in op.params if w == "path"}

    def value(m: re.Match) -> str:
        kind = kinds.get(m.group(1), "str")
        return ints if kind.startswith("int") else GUID if kind == "uuid" else "Primary" if kind == "enum" else "x"

    return re.sub(r"\{(\w+)\}", value, op.path)


def _log_text(live: LiveServer) -> str:
    return "".join(p.read_text(errors="replace") for p in (live.data_dir / "log").glob("*"))


JSON_BODY_OPS = [op for op in OPERATIONS if op.operation_id not in SKIP and any("json" in t for t in op.body_types)]


def test_deep_json_is_refused_on_every_body_operation(live: LiveServer) -> None:
    assert len(JSON_BODY_OPS) >= 70
    admin, anon = live.admin(), live.client()
    before = _log_text(live).count("Traceback")
    wrong = []
    for op in JSON_BODY_OPS:
        for body in (DEEP_ARRAY, DEEP_OBJECT):
            r = admin.request(op.method, _path(op), content=body, headers={"content-type": "application/json"})
            if r.status_code != 400 or r.headers["content-type"].split(";")[0] != "application/problem+json":
                wrong.append((op.operation_id, "admin", r.status_code))
            r = anon.request(op.method, _path(op), content=body, headers={"content-type": "application/json"})
            expected = {401} if op.requires_auth and op.operation_id != "UpdateStartupUser" else {400}
            if op.operation_id in ("UpdateInitialConfiguration", "UpdateStartupUser"):
                expected = {400, 401}  # first-time-setup operations: 401 once the wizard is done
            if r.status_code not in expected:
                wrong.append((op.operation_id, "anonymous", r.status_code))
    assert not wrong, wrong
    r = anon.post("/Users/AuthenticateByName", content=DEEP_OBJECT, headers={"content-type": "application/json"})
    assert r.status_code == 400 and "deeper" in r.json()["detail"]
    assert _log_text(live).count("Traceback") == before


def test_a_body_just_within_the_depth_limit_still_works(live: LiveServer) -> None:
    nested = '{"Name": "x", "Extra": ' + "[" * (limits.MAX_JSON_DEPTH - 2) + "]" * (limits.MAX_JSON_DEPTH - 2) + "}"
    assert not limits.json_too_deep(nested.encode())
    assert limits.json_too_deep(("[" * 65 + "]" * 65).encode())
    assert not limits.json_too_deep(('["' + "[" * 500 + '"]').encode())  # brackets inside strings
    r = live.admin().post("/Playlists", content=nested.replace('"x"', '"Depth ok"'),
                          headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("path", [
    "/Items?limit=9223372036854775808",
    "/Items?startIndex=-9223372036854775809",
    "/Genres?startIndex=9223372036854775808",
    "/Search/Hints?searchTerm=abc&limit=9223372036854775808",
    "/Sessions?activeWithinSeconds=9223372036854775808",
    "/System/ActivityLog/Entries?startIndex=9223372036854775808",
    "/Items?parentIndexNumber=99999999999999999999999",
    "/Items?years=2000,9223372036854775808",
    "/Items?limit=2147483648",  # int32: one above the range
    "/Items?limit=abc",
])
def test_integer_parameters_outside_their_format_are_400(live: LiveServer, path: str) -> None:
    r = live.admin().get(path)
    assert r.status_code == 400, (path, r.status_code, r.text)
    assert r.json()["status"] == 400
    assert live.client().get(path).status_code == 401


def test_integer_parameters_at_the_edges_of_their_format_are_accepted(live: LiveServer) -> None:
    admin = live.admin()
    assert admin.get("/Items?limit=2147483647&startIndex=0").status_code == 200
    assert admin.get("/Items?parentIndexNumber=-2147483648&limit=1").status_code == 200
    assert admin.get("/Sessions?activeWithinSeconds=2147483647").status_code == 200


def test_integers_in_bodies_are_checked_against_the_schema(live: LiveServer) -> None:
    admin = live.admin()
    r = admin.post("/Sessions/Playing/Progress", json={"ItemId": GUID, "PositionTicks": 2**63})
    assert r.status_code == 400 and "PositionTicks" in r.json()["detail"]
    r = admin.post("/Sessions/Playing", json={"ItemId": GUID, "AudioStreamIndex": 2**31})
    assert r.status_code == 400 and "AudioStreamIndex" in r.json()["detail"]
    r = admin.post("/Sessions/Playing/Stopped", json={"ItemId": GUID, "PositionTicks": -(2**63) - 1})
    assert r.status_code == 400


SECURED_INT_PATH_OPS = [op for op in OPERATIONS if op.requires_auth
                        and any(w == "path" and k.startswith("int") for _n, w, k, _e, _r in op.params)]


def test_secured_operations_check_the_caller_before_their_path_parameters(live: LiveServer) -> None:
    assert len(SECURED_INT_PATH_OPS) == 11
    admin, anon = live.admin(), live.client()
    wrong = []
    for op in SECURED_INT_PATH_OPS:
        for bad in ("abc", "99999999999999999999"):
            path = _path(op, bad)
            r = anon.request(op.method, path)
            if r.status_code != 401:
                wrong.append((op.operation_id, bad, "anonymous", r.status_code))
            r = admin.request(op.method, path)
            if r.status_code != 400:
                wrong.append((op.operation_id, bad, "admin", r.status_code))
    assert not wrong, wrong
    assert anon.get("/Years/abc").status_code == 401
    assert admin.get("/Years/abc").json()["detail"]


def test_anonymous_operations_refuse_a_malformed_index_with_400(live: LiveServer) -> None:
    anon = live.client()
    assert anon.get(f"/Items/{GUID}/Images/Primary/abc").status_code == 400
    assert anon.get("/Genres/Rock/Images/Primary/2147483648").status_code == 400


def test_negative_image_index_is_400(live: LiveServer) -> None:
    admin = live.admin()
    views = admin.get("/UserViews", params={"userId": live.admin_id}).json()["Items"]
    folder = admin.get("/Items", params={"userId": live.admin_id}).json()["Items"]
    target = (views or folder or [{"Id": GUID}])[0]["Id"]
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    r = admin.post(f"/Items/{target}/Images/Backdrop/-429", content=png, headers={"content-type": "image/png"})
    assert r.status_code == 400, r.text


def test_enum_members_in_bodies_are_checked_and_named(live: LiveServer) -> None:
    client = live.admin()
    r = client.post("/Sessions/Capabilities/Full", json={"PlayableMediaTypes": ["Bogus"]})
    assert r.status_code == 400 and "PlayableMediaTypes" in r.json()["detail"]
    profile = {"CodecProfiles": [{"Type": "Video", "Conditions": [
        {"Condition": "AAA", "Property": "Width", "Value": "1920"}]}]}
    r = client.post("/Sessions/Capabilities/Full", json={"PlayableMediaTypes": ["Video"], "DeviceProfile": profile})
    assert r.status_code == 400
    assert "DeviceProfile.CodecProfiles[0].Conditions[0].Condition" in r.json()["detail"]
    # Members in another case are Jellyfin's (case-insensitive) and stored in their own spelling.
    profile["CodecProfiles"][0]["Conditions"][0]["Condition"] = "lessthanequal"
    r = client.post("/Sessions/Capabilities/Full", json={"PlayableMediaTypes": ["video"], "DeviceProfile": profile,
                                                         "SupportedCommands": ["Play"]})
    assert r.status_code == 204, r.text
    sessions = live.admin().get("/Sessions").json()
    assert [s["PlayableMediaTypes"] for s in sessions] == [["Video"]]
    r = live.admin().post(f"/Users/{live.admin_id}/Policy", json={"SyncPlayAccess": "Everything"})
    assert r.status_code == 400 and "SyncPlayAccess" in r.json()["detail"]


def test_enum_query_parameters(live: LiveServer) -> None:
    admin = live.admin()
    # A single enum value must be a member (ASP.NET model binding: 400) ...
    r = admin.get("/Libraries/AvailableOptions", params={"libraryContentType": "Bogus"})
    assert r.status_code == 400 and "libraryContentType" in r.json()["detail"]
    assert admin.get("/Libraries/AvailableOptions", params={"libraryContentType": "MOVIES"}).status_code == 200
    # ... while lists drop unknown members, as Jellyfin's comma-delimited binder does.
    assert admin.get("/Items", params={"fields": "Genres,Bogus", "includeItemTypes": "Movie,Nope"}).status_code == 200


def test_names_and_search_terms_are_bounded(live: LiveServer) -> None:
    admin = live.admin()
    r = admin.post("/Playlists", json={"Name": "p" * 100_000})
    assert r.status_code == 400 and "Name" in r.json()["detail"]
    assert admin.post("/Playlists", params={"name": "p" * 1025}).status_code == 400
    assert admin.post("/Playlists", json={"Name": "p" * limits.MAX_NAME_CHARS}).status_code == 200
    assert admin.post("/Collections", params={"name": "c" * 5000}).status_code == 400
    assert admin.post("/Users/New", json={"Name": "u" * 256}).status_code == 400
    assert admin.get("/System/Logs/Log", params={"name": "l" * 20_000}).status_code == 400
    assert admin.get("/Items", params={"searchTerm": "s" * 10_000, "recursive": "true"}).status_code == 400
    assert admin.get("/Search/Hints", params={"searchTerm": "s" * 10_000}).status_code == 400
    long_term = "p" * limits.MAX_SEARCH_TERM_CHARS
    r = admin.get("/Items", params={"searchTerm": long_term, "recursive": "true", "userId": live.admin_id})
    assert r.status_code == 200
    assert [i["Name"] for i in r.json()["Items"]] == ["p" * limits.MAX_NAME_CHARS]
    r = admin.get("/Items", params={"searchTerm": "p" * 40 + "q", "recursive": "true", "userId": live.admin_id})
    assert r.status_code == 200 and r.json()["Items"] == []  # the part beyond the index's phrase counts


def test_list_parameters_are_bounded(live: LiveServer) -> None:
    admin = live.admin()
    assert admin.get("/Items", params={"tags": ",".join(["a"] * 1001)}).status_code == 400
    assert admin.get("/Items", params={"tags": ",".join(["a"] * 1000)}).status_code == 200
    assert admin.get("/Items", params={"tags": "t" * 2000}).status_code == 400


def test_json_bodies_are_bounded_in_size(live: LiveServer) -> None:
    admin = live.admin()
    big = b'{"Name": "' + b"x" * (limits.DEFAULT_JSON_BODY + 10) + b'"}'
    r = admin.post("/Playlists", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["status"] == 413

    def chunks():
        yield b'{"Name": "'
        for _ in range(40):
            yield b"x" * 65536
        yield b'"}'

    r = admin.post("/Playlists", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413  # chunked, no Content-Length: counted as it arrives


def test_out_of_range_transcode_parameters_are_400_not_503(live: LiveServer) -> None:
    admin = live.admin()
    r = admin.get(f"/Videos/{GUID}/hls1/main/0.ts", params={"audioBitRate": "99999999999999999999999"})
    assert r.status_code == 400, r.text
    r = admin.get(f"/Audio/{GUID}/universal", params={"maxStreamingBitrate": "3000000000"})
    assert r.status_code == 400


def _raw(live: LiveServer, head: bytes, *, then: bytes = b"", repeat: int = 0) -> tuple[bytes, int]:
    port = int(live.url.rsplit(":", 1)[1])
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        try:
            sock.sendall(head)
            sent += len(head)
            for _ in range(repeat):
                sock.sendall(then)
                sent += len(then)
        except OSError:
            pass  # the server closed the connection: what we want
        try:
            reply = sock.recv(4096)
        except OSError:
            reply = b""
    return reply, sent


def test_a_huge_request_header_is_refused_early(live: LiveServer) -> None:
    total = 64 * 1024 * 1024
    reply, sent = _raw(live, b"GET /System/Info/Public HTTP/1.1\r\nHost: x\r\nX-Big: ",
                       then=b"a" * 65536, repeat=total // 65536)
    assert reply.startswith(b"HTTP/1.1 431"), reply[:100]
    assert sent < total // 4, f"the server read {sent} bytes of a 64 MiB header before refusing it"
    assert httpx.get(live.url + "/System/Info/Public").status_code == 200


def test_request_head_limits(live: LiveServer) -> None:
    many = b"".join(b"X-H%d: 1\r\n" % i for i in range(protocol.MAX_HEADER_COUNT + 1))
    reply, _ = _raw(live, b"GET /System/Info/Public HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
    assert reply.startswith(b"HTTP/1.1 431")
    reply, _ = _raw(live, b"GET /System/Info/Public HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 40_000 + b"\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 431")
    reply, _ = _raw(live, b"GET /System/Info/Public?q=" + b"a" * 40_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 414")
    # Within the limits (as Jellyfin's web server allows): a 20 KiB header and 90 headers.
    ok = {f"X-H{i}": "1" for i in range(90)}
    assert httpx.get(live.url + "/System/Info/Public", headers={"X-Long": "a" * 20_000}).status_code == 200
    assert httpx.get(live.url + "/System/Info/Public", headers=ok).status_code == 200
    # Keep-alive: several requests on one connection each get their own head budget.
    with httpx.Client(base_url=live.url) as c:
        for _ in range(5):
            assert c.get("/System/Info/Public", headers={"X-Long": "a" * 20_000}).status_code == 200


def test_no_traceback_was_logged(live: LiveServer) -> None:
    log = _log_text(live)
    assert "Traceback" not in log and "OverflowError" not in log, log[-3000:]


def test_uvicorn_is_configured_without_deprecated_parts() -> None:
    import warnings

    import uvicorn

    from server.runner import http_protocol, websocket_mode

    async def app(scope, receive, send):  # pragma: no cover - never called
        pass

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = uvicorn.Config(app, ws=websocket_mode(), http=http_protocol(), log_config=None)
        config.load()
    assert websocket_mode() in ("websockets-sansio", "wsproto")
    assert not [w for w in caught if "uvicorn" in str(w.filename) or "Uvicorn" in type(w.message).__name__]


def test_uninstalling_a_plugin_by_version_is_not_a_server_error(live: LiveServer) -> None:
    # Found by the schemathesis run: the by-version route called the other route's handler object.
    admin = live.admin()
    plugins = admin.get("/Plugins").json()
    assert admin.delete(f"/Plugins/{GUID}/0.1.0").status_code == 404
    for plugin in plugins:
        r = admin.delete(f"/Plugins/{plugin['Id']}/{plugin['Version']}")
        assert r.status_code < 500, r.text
