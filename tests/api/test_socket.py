"""The WebSocket: refused without a token; ForceKeepAlive on connect; KeepAlive answered;
periodic Sessions updates; unique MessageIds."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets
import websockets.exceptions  # (the server no longer imports it at start: its protocol loads at the first upgrade)


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
        seen = []
        while len(seen) < 2:
            message = await _recv(ws)
            if message["MessageType"] == "Sessions":
                seen.append(message)
        # The admin signed in from "test-device" (see conftest.complete_wizard).
        assert any(s["DeviceId"] == "test-device" and s["UserName"] == "admin" for s in seen[0]["Data"])
        assert seen[0]["MessageId"] != seen[1]["MessageId"]
        await ws.send(json.dumps({"MessageType": "SessionsStop"}))


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
