"""The WebSocket: refused without a token; ForceKeepAlive on connect; KeepAlive answered;
subscribed lists (Sessions, ScheduledTasksInfo, ActivityLogEntry) pushed when they change, never on a
timer, and to administrators only; unique MessageIds."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets
import websockets.exceptions  # (the server no longer imports it at start: its protocol loads at the first upgrade)

from server.wire.models import ENUMS
from tests.library_helpers import new_user

MESSAGE_TYPES = set(ENUMS["SessionMessageType"])


def ws_url(server, **query) -> str:
    base = server.url.replace("http://", "ws://")
    qs = "&".join(f"{k}={v}" for k, v in query.items())
    return f"{base}/socket?{qs}"


async def _recv(ws, timeout=10):
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


async def test_unauthenticated_socket_is_refused(server):
    with pytest.raises(websockets.exceptions.InvalidStatus) as err:
        async with websockets.connect(ws_url(server)):
            pass
    assert err.value.response.status_code in (401, 403)
    with pytest.raises(websockets.exceptions.InvalidStatus):
        async with websockets.connect(ws_url(server, api_key="not-a-token")):
            pass


async def test_keepalive_and_sessions_subscription(server):
    url = ws_url(server, api_key=server.admin_token, deviceId="admin-device")
    async with websockets.connect(url) as ws:
        first = await _recv(ws)
        assert first["MessageType"] == "ForceKeepAlive" and first["Data"] == 60
        await ws.send(json.dumps({"MessageType": "KeepAlive"}))
        reply = await _recv(ws)
        assert reply["MessageType"] == "KeepAlive"
        assert reply["MessageId"] != first["MessageId"]
        await ws.send(json.dumps({"MessageType": "SessionsStart", "Data": "0,1000"}))
        first = await _recv_kind(ws, "Sessions")
        # The admin signed in from "test-device" (see conftest.complete_wizard).
        assert any(s["DeviceId"] == "test-device" and s["UserName"] == "admin" for s in first["Data"])
        # nothing changes: nothing comes (the old timer sent the list every second)
        assert await _kinds_within(ws, 1.6) == []
        # a new session (a sign-in from another device) brings the list again at once
        await asyncio.to_thread(_sign_in, server, "phone")
        second = await _recv_kind(ws, "Sessions", timeout=1.0)
        assert any(s["DeviceId"] == "phone" for s in second["Data"])
        assert first["MessageId"] != second["MessageId"]
        await ws.send(json.dumps({"MessageType": "SessionsStop"}))
        await asyncio.to_thread(_sign_in, server, "tablet")
        assert await _kinds_within(ws, 0.5) == []


async def _recv_kind(ws, kind: str, timeout: float = 10) -> dict:
    """The next message of ``kind``; every message on the way must be a SessionMessageType."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        message = await _recv(ws, max(deadline - asyncio.get_running_loop().time(), 0.001))
        assert message["MessageType"] in MESSAGE_TYPES, message
        if message["MessageType"] == kind:
            return message


async def _kinds_within(ws, seconds: float) -> list[str]:
    """The types of the messages that come within ``seconds`` (KeepAlive answers left out)."""
    kinds: list[str] = []
    deadline = asyncio.get_running_loop().time() + seconds
    while (left := deadline - asyncio.get_running_loop().time()) > 0:
        try:
            message = json.loads(await asyncio.wait_for(ws.recv(), left))
        except TimeoutError:
            break
        assert message["MessageType"] in MESSAGE_TYPES, message
        kinds.append(message["MessageType"])
    return kinds


def _sign_in(server, device: str) -> None:
    with server.client(device=device) as c:
        r = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"})
        assert r.status_code == 200, r.text


async def test_the_task_list_comes_when_a_task_starts_and_ends_never_on_a_timer(server):
    url = ws_url(server, api_key=server.admin_token, deviceId="tray")
    async with websockets.connect(url) as ws:
        await _recv(ws)  # ForceKeepAlive
        await ws.send(json.dumps({"MessageType": "ScheduledTasksInfoStart", "Data": "0,200"}))
        first = await _recv_kind(ws, "ScheduledTasksInfo")
        tasks = {t["Key"]: t for t in first["Data"]}
        assert tasks["CleanLogFiles"]["State"] == "Idle"
        # idle: with a 200 ms period the old timer sent the list 7-8 times in 1.6 s
        assert await _kinds_within(ws, 1.6) == []
        async with httpx.AsyncClient(base_url=server.url, headers={"X-Emby-Token": server.admin_token}) as c:
            r = await c.post(f"/ScheduledTasks/Running/{tasks['CleanLogFiles']['Id']}")
            assert r.status_code == 204
        # the start and the end each bring the list (sent as soon as the loop runs the send: a task
        # this short may already show its end in the first one, and the last list always does)
        before = tasks["CleanLogFiles"].get("LastExecutionResult")
        while True:
            message = await _recv_kind(ws, "ScheduledTasksInfo", timeout=5)
            task = next(t for t in message["Data"] if t["Key"] == "CleanLogFiles")
            if task["State"] == "Idle" and task.get("LastExecutionResult") != before:
                break
        assert task["LastExecutionResult"]["Status"] == "Completed"
        assert await _kinds_within(ws, 0.8) == []


async def test_the_activity_list_comes_with_a_new_entry(server):
    url = ws_url(server, api_key=server.admin_token, deviceId="dashboard")
    async with websockets.connect(url) as ws:
        await _recv(ws)  # ForceKeepAlive
        await ws.send(json.dumps({"MessageType": "ActivityLogEntryStart", "Data": "0,10000"}))
        await _recv_kind(ws, "ActivityLogEntry")
        # a failed sign-in is logged; the list comes at once, not after the 10 s period
        with server.client(device="intruder") as c:
            r = await asyncio.to_thread(c.post, "/Users/AuthenticateByName", json={"Username": "admin", "Pw": "no"})
            assert r.status_code == 401
        message = await _recv_kind(ws, "ActivityLogEntry", timeout=3)
        assert message["Data"] and message["Data"][0]["Severity"] in ("Error", "Warning", "Information")


async def test_a_user_who_is_not_an_administrator_gets_no_subscribed_list(server):
    with server.admin() as c:
        _, token = new_user(c, server, "viewer")
    async with websockets.connect(ws_url(server, api_key=token, deviceId="dev-viewer")) as ws:
        assert (await _recv(ws))["MessageType"] == "ForceKeepAlive"
        for kind in ("SessionsStart", "ActivityLogEntryStart", "ScheduledTasksInfoStart"):
            await ws.send(json.dumps({"MessageType": kind, "Data": "0,200"}))
        await asyncio.to_thread(_sign_in, server, "another")
        # the socket still works: a KeepAlive is answered, and nothing else came
        await ws.send(json.dumps({"MessageType": "KeepAlive"}))
        assert await _kinds_within(ws, 1.0) == ["KeepAlive"]


async def test_any_socket_path_works_like_jellyfin(server):
    url = server.url.replace("http://", "ws://") + f"/websocket?api_key={server.admin_token}"
    async with websockets.connect(url) as ws:
        assert (await _recv(ws))["MessageType"] == "ForceKeepAlive"


async def test_hub_messages_reach_the_socket(server):
    url = ws_url(server, api_key=server.admin_token)
    async with websockets.connect(url) as ws:
        await _recv(ws)  # ForceKeepAlive
        server.ctx.events.publish("LibraryChanged", {"ItemsAdded": ["abc"]})
        message = await _recv(ws)
    assert message["MessageType"] == "LibraryChanged"
    assert message["Data"]["ItemsAdded"] == ["abc"]


async def test_remote_control_reaches_the_target_socket(server):
    import httpx

    url = ws_url(server, api_key=server.admin_token)
    async with websockets.connect(url) as ws:
        await _recv(ws)  # ForceKeepAlive
        async with httpx.AsyncClient(base_url=server.url, headers={"X-Emby-Token": server.admin_token}) as c:
            sessions = (await c.get("/Sessions")).json()
            target = next(s for s in sessions if s["DeviceId"] == "test-device")
            assert target["SupportsRemoteControl"] is True
            r = await c.post(f"/Sessions/{target['Id']}/Message", json={"Header": "Hi", "Text": "Dinner is ready"})
            assert r.status_code == 204
            message = await _recv(ws)
            assert message["MessageType"] == "GeneralCommand"
            assert message["Data"]["Name"] == "DisplayMessage"
            assert message["Data"]["Arguments"]["Text"] == "Dinner is ready"
            r = await c.post(f"/Sessions/{target['Id']}/Playing/Pause")
            assert r.status_code == 204
            assert (await _recv(ws))["Data"]["Command"] == "Pause"
            assert (await c.post(f"/Sessions/{target['Id']}/Playing/Dance")).status_code == 400
            assert (await c.post("/Sessions/0123456789abcdef0123456789abcdef/Message",
                                 json={"Text": "x"})).status_code == 404


async def test_bad_messages_are_ignored_and_a_huge_one_closes_the_socket(server, caplog):
    url = ws_url(server, api_key=server.admin_token, deviceId="fuzzer")
    async with websockets.connect(url, max_size=None) as ws:
        assert (await _recv(ws))["MessageType"] == "ForceKeepAlive"
        deep = "[" * 30_000 + "]" * 30_000  # 60 KB: msgspec alone raised RecursionError (a traceback)
        for bad in ("not json", "[1, 2]", '{"MessageType": 5}', deep, '{"MessageType": "SessionsStart", "Data": "x,y"}',
                    '{"MessageType": "ActivityLogEntryStart", "Data": "99999999999999999999999,-5"}'):
            await ws.send(bad)
        await ws.send(json.dumps({"MessageType": "KeepAlive"}))
        kinds = await _kinds_within(ws, 1.0)
        assert "KeepAlive" in kinds and set(kinds) <= {"KeepAlive", "Sessions", "ActivityLogEntry"}
        await ws.send("x" * (64 * 1024 + 1))  # over the bound: the server closes with 1009
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
