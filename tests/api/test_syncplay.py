"""SyncPlay against a real server: signed-in devices with sockets create and join a group, set a
queue of real library items, report Ready, and receive synchronised commands; joining a playing
group, corrective seeks, buffering, library access; permissions and bad input."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime

import httpx
import pytest
import websockets

from tests.conftest import auth_header
from tests.library_helpers import add_library_and_scan
from tests.mediagen import make_video


@pytest.fixture
def items(server, tmp_path):
    """Three movies in a "Movies" library (ids A, B, C) and the library id."""
    root = tmp_path / "movies"
    for name in ("Alpha (2001)", "Beta (2002)", "Gamma (2003)"):
        make_video(root / name / f"{name}.mkv", seconds=1.0, width=160, height=120)
    library = add_library_and_scan(server, "Movies", "movies", [root])
    with server.admin() as c:
        found = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie",
                                        "sortBy": "SortName"}).json()["Items"]
    assert [i["Name"] for i in found] == ["Alpha", "Beta", "Gamma"]
    return [i["Id"] for i in found], library


def _sign_in(server, device: str, name: str = "admin", password: str = "s3cret!") -> str:
    r = httpx.post(f"{server.url}/Users/AuthenticateByName", json={"Username": name, "Pw": password},
                   headers=auth_header(device=device))
    assert r.status_code == 200, r.text
    return r.json()["AccessToken"]


class Member:
    def __init__(self, server, device: str, token: str) -> None:
        self.http = httpx.AsyncClient(base_url=server.url, headers=auth_header(token, device), timeout=10)
        self.url = f"{server.url.replace('http://', 'ws://')}/socket?api_key={token}&deviceId={device}"
        self.ws = None

    async def __aenter__(self):
        self.ws = await websockets.connect(self.url)
        return self

    async def __aexit__(self, *exc):
        await self.ws.close()
        await self.http.aclose()

    async def post(self, path: str, body=None) -> httpx.Response:
        return await self.http.post(path, json=body) if body is not None else await self.http.post(path)

    async def next(self, message_type: str, kind: str | None = None, timeout: float = 10) -> dict:
        """The next message of a type (and GroupUpdate kind), skipping others."""
        async def wait():
            while True:
                message = json.loads(await self.ws.recv())
                if message["MessageType"] != message_type:
                    continue
                if kind is None or message["Data"].get("Type") == kind:
                    return message["Data"]
        return await asyncio.wait_for(wait(), timeout)


async def test_group_lifecycle_and_synchronised_play(server, items):
    (ITEM_A, ITEM_B, ITEM_C), _ = items
    token_a, token_b = _sign_in(server, "dev-a"), _sign_in(server, "dev-b")
    async with Member(server, "dev-a", token_a) as a, Member(server, "dev-b", token_b) as b:
        assert (await a.post("/SyncPlay/New", {"GroupName": "Movie night"})).status_code == 204
        joined = await a.next("SyncPlayGroupUpdate", "GroupJoined")
        group_id = joined["GroupId"]
        assert joined["Data"]["GroupName"] == "Movie night" and joined["Data"]["State"] == "Idle"
        assert (await a.next("SyncPlayCommand"))["Command"] == "Stop"  # an idle group

        groups = (await b.http.get("/SyncPlay/List")).json()
        assert [g["GroupId"] for g in groups] == [group_id]
        assert groups[0]["Participants"] == ["admin"]

        assert (await b.post("/SyncPlay/Join", {"GroupId": group_id})).status_code == 204
        assert (await b.next("SyncPlayGroupUpdate", "GroupJoined"))["GroupId"] == group_id
        assert (await a.next("SyncPlayGroupUpdate", "UserJoined"))["Data"] == "admin"
        # Joining an idle group: the joiner is told to stop, with no queue.
        assert (await b.next("SyncPlayCommand"))["Command"] == "Stop"

        body = {"PlayingQueue": [ITEM_A, ITEM_B], "PlayingItemPosition": 0, "StartPositionTicks": 0}
        assert (await a.post("/SyncPlay/SetNewQueue", body)).status_code == 204
        assert (await b.next("SyncPlayGroupUpdate", "PlayQueue"))["Data"]["Reason"] == "NewPlaylist"
        queue = (await a.next("SyncPlayGroupUpdate", "PlayQueue"))["Data"]
        assert queue["Reason"] == "NewPlaylist"
        assert [q["ItemId"] for q in queue["Playlist"]] == [ITEM_A, ITEM_B]
        assert queue["PlayingItemIndex"] == 0
        first = queue["Playlist"][0]["PlaylistItemId"]
        assert (await a.next("SyncPlayGroupUpdate", "StateUpdate"))["Data"]["State"] == "Waiting"

        # Only when both have loaded the item does the group start, at one moment for both.
        ready = {"PlaylistItemId": first, "PositionTicks": 0, "IsPlaying": False,
                 "When": datetime.now().isoformat()}
        assert (await a.post("/SyncPlay/Ready", ready)).status_code == 204
        # b is still loading: a is told to hold (pause) where it is.
        assert (await a.next("SyncPlayCommand"))["Command"] == "Pause"
        assert (await b.post("/SyncPlay/Ready", ready)).status_code == 204
        cmd_a = await a.next("SyncPlayCommand")
        cmd_b = await b.next("SyncPlayCommand")
        assert cmd_a["Command"] == cmd_b["Command"] == "Unpause"
        assert cmd_a["When"] == cmd_b["When"] and cmd_a["PlaylistItemId"] == first
        assert cmd_a["When"] > cmd_a["EmittedAt"]  # scheduled ahead so both start together
        assert (await a.http.get("/SyncPlay/List")).json()[0]["State"] == "Playing"

        # Pause reaches both, with the position the group had reached.
        await asyncio.sleep(0.6)
        assert (await b.post("/SyncPlay/Pause")).status_code == 204
        paused = await a.next("SyncPlayCommand")
        assert paused["Command"] == "Pause" and paused["PositionTicks"] > 0
        assert (await b.next("SyncPlayCommand"))["Command"] == "Pause"

        # Seek: everyone reloads; the group stays paused once all are ready.
        assert (await a.post("/SyncPlay/Seek", {"PositionTicks": 50_000_000})).status_code == 204
        seek = await b.next("SyncPlayCommand")
        assert seek["Command"] == "Seek" and seek["PositionTicks"] == 50_000_000

        # Queue management.
        assert (await a.post("/SyncPlay/Queue", {"ItemIds": [ITEM_C], "Mode": "QueueNext"})).status_code == 204
        queue = (await b.next("SyncPlayGroupUpdate", "PlayQueue"))["Data"]
        assert queue["Reason"] == "QueueNext"
        assert [q["ItemId"] for q in queue["Playlist"]] == [ITEM_A, ITEM_C, ITEM_B]
        assert (await a.post("/SyncPlay/NextItem", {"PlaylistItemId": first})).status_code == 204
        queue = (await b.next("SyncPlayGroupUpdate", "PlayQueue"))["Data"]
        assert queue["Reason"] == "NextItem" and queue["PlayingItemIndex"] == 1

        # Leaving: the other member is told; the last one out ends the group.
        assert (await b.post("/SyncPlay/Leave")).status_code == 204
        assert (await b.next("SyncPlayGroupUpdate", "GroupLeft"))["Data"] == group_id
        assert (await a.next("SyncPlayGroupUpdate", "UserLeft"))["Data"] == "admin"
        assert (await a.post("/SyncPlay/Leave")).status_code == 204
        assert (await a.http.get("/SyncPlay/List")).json() == []


async def test_not_in_group_and_unknown_group(server):
    token = _sign_in(server, "dev-c")
    async with Member(server, "dev-c", token) as c:
        r = await c.post("/SyncPlay/Pause")
        assert r.status_code == 403 and r.headers["content-type"].startswith("application/problem+json")
        assert (await c.next("SyncPlayGroupUpdate", "NotInGroup"))["Type"] == "NotInGroup"
        missing = uuid.uuid4().hex
        assert (await c.post("/SyncPlay/Join", {"GroupId": missing})).status_code == 204
        assert (await c.next("SyncPlayGroupUpdate", "GroupDoesNotExist"))["Data"] == missing
        assert (await c.post("/SyncPlay/Join", {"GroupId": "not-a-guid"})).status_code == 400
        assert (await c.post("/SyncPlay/New", {"GroupName": "x"})).status_code == 204
        assert (await c.post("/SyncPlay/SetNewQueue", {"PlayingQueue": []})).status_code == 400
        assert (await c.post("/SyncPlay/Seek", {"PositionTicks": -5})).status_code == 400
        assert (await c.post("/SyncPlay/SetRepeatMode", {"Mode": "RepeatForever"})).status_code == 400
        assert (await c.post("/SyncPlay/SetShuffleMode", {"Mode": "Shuffle"})).status_code == 204


def test_syncplay_needs_the_permission(server):
    admin = server.admin()
    r = admin.post("/Users/New", json={"Name": "kid", "Password": "pw"})
    assert r.status_code == 200, r.text
    kid_id = r.json()["Id"]
    policy = admin.get(f"/Users/{kid_id}").json()["Policy"]
    policy["SyncPlayAccess"] = "JoinGroups"
    assert admin.post(f"/Users/{kid_id}/Policy", json=policy).status_code == 204
    token = _sign_in(server, "kid-device", "kid", "pw")
    with server.client(token, "kid-device") as kid:
        assert kid.get("/SyncPlay/List").status_code == 200
        denied = kid.post("/SyncPlay/New", json={"GroupName": "mine"})
        assert denied.status_code == 403 and "create-group" in denied.json()["detail"]
    policy["SyncPlayAccess"] = "None"
    assert admin.post(f"/Users/{kid_id}/Policy", json=policy).status_code == 204
    with server.client(token, "kid-device") as kid:
        assert kid.get("/SyncPlay/List").status_code == 403
    with server.client() as anonymous:
        assert anonymous.get("/SyncPlay/List").status_code == 401
