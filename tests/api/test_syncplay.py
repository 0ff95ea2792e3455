"""SyncPlay against a real server: signed-in devices with sockets create and join a group, set a
queue of real library items, report Ready, and receive synchronised commands; joining a playing
group, corrective seeks, buffering, library access; permissions and bad input."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime

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
                   headers=auth_header(device=device), timeout=30)  # (argon2 on a loaded 2-core machine)
    assert r.status_code == 200, r.text
    return r.json()["AccessToken"]


class Member:
    def __init__(self, server, device: str, token: str) -> None:
        self.http = httpx.AsyncClient(base_url=server.url, headers=auth_header(token, device), timeout=10)
        self.url = f"{server.url.replace('http://', 'ws://')}/socket?api_key={token}&deviceId={device}"
        self.ws = None

    async def __aenter__(self):
        self.ws = await websockets.connect(self.url)
        # the socket is this device's (and gets its group's messages) once ForceKeepAlive comes
        first = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
        assert first["MessageType"] == "ForceKeepAlive"
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
                 "When": datetime.now(UTC).isoformat()}
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


# -- Jellyfin 10.10's group states, with three sockets --------------------------------------------


def _utc_now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _when(command: dict) -> datetime:
    return datetime.fromisoformat(command["When"].replace("Z", "+00:00"))


async def _command(member: Member, name: str, timeout: float = 10) -> dict:
    """The next SyncPlayCommand named ``name`` (others are skipped)."""
    while True:
        command = await member.next("SyncPlayCommand", timeout=timeout)
        if command["Command"] == name:
            return command


async def _no_command(member: Member, within: float = 0.8) -> None:
    with pytest.raises(TimeoutError):
        await member.next("SyncPlayCommand", timeout=within)


async def _playing_group(a: Member, b: Member, item_ids: list[str]) -> tuple[str, str, dict]:
    """a creates a group, b joins, a queues the items; both report Ready and the group plays."""
    assert (await a.post("/SyncPlay/New", {"GroupName": "Three"})).status_code == 204
    group_id = (await a.next("SyncPlayGroupUpdate", "GroupJoined"))["GroupId"]
    assert (await b.post("/SyncPlay/Join", {"GroupId": group_id})).status_code == 204
    await _command(b, "Stop")
    body = {"PlayingQueue": item_ids, "PlayingItemPosition": 0, "StartPositionTicks": 0}
    assert (await a.post("/SyncPlay/SetNewQueue", body)).status_code == 204
    first = (await a.next("SyncPlayGroupUpdate", "PlayQueue"))["Data"]["Playlist"][0]["PlaylistItemId"]
    for m in (a, b):
        ready = {"PlaylistItemId": first, "PositionTicks": 0, "IsPlaying": False, "When": _utc_now()}
        assert (await m.post("/SyncPlay/Ready", ready)).status_code == 204
    start = await _command(a, "Unpause")
    assert (await _command(b, "Unpause"))["When"] == start["When"]
    return group_id, first, start


async def test_join_while_playing_does_not_rewind(server, items):
    item_ids, _ = items
    tokens = [_sign_in(server, f"dev-{n}") for n in "abc"]
    async with Member(server, "dev-a", tokens[0]) as a, Member(server, "dev-b", tokens[1]) as b, \
            Member(server, "dev-c", tokens[2]) as c:
        group_id, first, start = await _playing_group(a, b, item_ids)
        await asyncio.sleep(1.5)
        joined_at = datetime.now(UTC)
        assert (await c.post("/SyncPlay/Join", {"GroupId": group_id})).status_code == 204
        answered_at = datetime.now(UTC)
        # The loaded members pause at the group's current position (no rewind to the start):
        # the position the server saved lies between what had played when the join was sent and
        # when it was answered (an ordering, not a bound on how long the join took)
        pause_a, pause_b = await _command(a, "Pause"), await _command(b, "Pause")
        assert pause_a["PositionTicks"] == pause_b["PositionTicks"] and pause_a["When"] == pause_b["When"]
        saved = pause_a["PositionTicks"] / 10_000_000
        earliest = (joined_at - _when(start)).total_seconds()
        latest = (answered_at - _when(start)).total_seconds()
        assert earliest - 0.05 <= saved <= latest + 0.05, (earliest, saved, latest)
        # The newcomer gets the queue at that position.
        queue = (await c.next("SyncPlayGroupUpdate", "PlayQueue"))["Data"]
        assert queue["Reason"] == "NewPlaylist" and queue["Playlist"][0]["PlaylistItemId"] == first
        assert queue["StartPositionTicks"] == pause_a["PositionTicks"]
        await _no_command(c, 0.3)  # c is loading: no command for it yet

        # c has loaded at that position: everyone resumes from there, together.
        ready = {"PlaylistItemId": first, "PositionTicks": queue["StartPositionTicks"], "IsPlaying": False,
                 "When": _utc_now()}
        assert (await c.post("/SyncPlay/Ready", ready)).status_code == 204
        resumed = [await _command(m, "Unpause") for m in (a, b, c)]
        assert len({r["When"] for r in resumed}) == 1
        assert all(r["PositionTicks"] == pause_a["PositionTicks"] for r in resumed)
        resume_at = _when(resumed[0])

        # After the resume the group's position follows the wall clock.
        await asyncio.sleep(1.2)
        paused_at = datetime.now(UTC)
        assert (await b.post("/SyncPlay/Pause")).status_code == 204
        pause = await _command(a, "Pause")
        expected = saved + max(0.0, (paused_at - resume_at).total_seconds())
        assert abs(pause["PositionTicks"] / 10_000_000 - expected) < 1.0, (pause["PositionTicks"], expected)
        assert pause["PositionTicks"] >= resumed[0]["PositionTicks"]  # never backwards


async def test_ready_far_off_gets_a_corrective_seek(server, items):
    item_ids, _ = items
    tokens = [_sign_in(server, f"dev-{n}") for n in "abc"]
    async with Member(server, "dev-a", tokens[0]) as a, Member(server, "dev-b", tokens[1]) as b, \
            Member(server, "dev-c", tokens[2]) as c:
        group_id, first, _ = await _playing_group(a, b, item_ids)
        assert (await c.post("/SyncPlay/Join", {"GroupId": group_id})).status_code == 204
        queue = (await c.next("SyncPlayGroupUpdate", "PlayQueue"))["Data"]
        await _command(a, "Pause")  # held while c loads
        # c says it is ready, but 20 s away from where the group is: it is sent back there.
        wrong = {"PlaylistItemId": first, "PositionTicks": queue["StartPositionTicks"] + 200_000_000,
                 "IsPlaying": False, "When": _utc_now()}
        assert (await c.post("/SyncPlay/Ready", wrong)).status_code == 204
        seek = await _command(c, "Seek")
        assert seek["PositionTicks"] == queue["StartPositionTicks"]
        await _no_command(a, 0.5)  # the group keeps waiting for c
        # Within 0.5 s of the group: accepted, and the group resumes.
        near = {**wrong, "PositionTicks": queue["StartPositionTicks"] + 3_000_000, "When": _utc_now()}
        assert (await c.post("/SyncPlay/Ready", near)).status_code == 204
        assert (await _command(a, "Unpause"))["PositionTicks"] == queue["StartPositionTicks"]

        # A paused group: a Ready far from the paused position is corrected too.
        assert (await a.post("/SyncPlay/Pause")).status_code == 204
        paused = await _command(b, "Pause")
        assert (await a.post("/SyncPlay/Seek", {"PositionTicks": 50_000_000})).status_code == 204
        for m in (a, b, c):
            await _command(m, "Seek")
        for m in (a, b):
            ok = {"PlaylistItemId": first, "PositionTicks": 50_000_000, "IsPlaying": False, "When": _utc_now()}
            assert (await m.post("/SyncPlay/Ready", ok)).status_code == 204
        off = {"PlaylistItemId": first, "PositionTicks": paused["PositionTicks"], "IsPlaying": False,
               "When": _utc_now()}
        assert (await c.post("/SyncPlay/Ready", off)).status_code == 204
        assert (await _command(c, "Seek"))["PositionTicks"] == 50_000_000


async def test_buffering_pauses_only_the_others(server, items):
    item_ids, _ = items
    tokens = [_sign_in(server, f"dev-{n}") for n in "abc"]
    async with Member(server, "dev-a", tokens[0]) as a, Member(server, "dev-b", tokens[1]) as b, \
            Member(server, "dev-c", tokens[2]) as c:
        group_id, first, _ = await _playing_group(a, b, item_ids)
        assert (await c.post("/SyncPlay/Join", {"GroupId": group_id})).status_code == 204
        queue = (await c.next("SyncPlayGroupUpdate", "PlayQueue"))["Data"]
        ready = {"PlaylistItemId": first, "PositionTicks": queue["StartPositionTicks"], "IsPlaying": False,
                 "When": _utc_now()}
        assert (await c.post("/SyncPlay/Ready", ready)).status_code == 204
        for m in (a, b, c):
            await _command(m, "Unpause")
        await asyncio.sleep(1.0)

        buffering = {"PlaylistItemId": first, "PositionTicks": 5_000_000, "IsPlaying": True, "When": _utc_now()}
        assert (await b.post("/SyncPlay/Buffering", buffering)).status_code == 204
        held_a, held_c = await _command(a, "Pause"), await _command(c, "Pause")
        assert held_a["PositionTicks"] == held_c["PositionTicks"] > 0
        await _no_command(b, 0.6)  # the buffering client itself is not paused
        state = (await a.next("SyncPlayGroupUpdate", "StateUpdate"))["Data"]
        assert state == {"State": "Waiting", "Reason": "Buffer"}

        # b recovers at the group's position: everyone goes on together.
        recovered = {"PlaylistItemId": first, "PositionTicks": held_a["PositionTicks"], "IsPlaying": False,
                     "When": _utc_now()}
        assert (await b.post("/SyncPlay/Ready", recovered)).status_code == 204
        resumed = [await _command(m, "Unpause") for m in (a, b, c)]
        assert len({r["When"] for r in resumed}) == 1 and resumed[0]["PositionTicks"] == held_a["PositionTicks"]


async def test_library_access_is_checked(server, items):
    item_ids, library = items
    admin = server.admin()
    kid = admin.post("/Users/New", json={"Name": "kid", "Password": "pw"}).json()
    policy = {**kid["Policy"], "EnableAllFolders": False, "EnabledFolders": []}
    assert admin.post(f"/Users/{kid['Id']}/Policy", json=policy).status_code == 204
    tokens = [_sign_in(server, "dev-a"), _sign_in(server, "dev-b"), _sign_in(server, "dev-k", "kid", "pw")]
    async with Member(server, "dev-a", tokens[0]) as a, Member(server, "dev-b", tokens[1]) as b, \
            Member(server, "dev-k", tokens[2]) as k:
        group_id, _, _ = await _playing_group(a, b, item_ids[:1])
        # The kid may not see the queued movie: the group is hidden and cannot be joined.
        assert (await k.http.get("/SyncPlay/List")).json() == []
        assert (await k.post("/SyncPlay/Join", {"GroupId": group_id})).status_code == 204
        denied = await k.next("SyncPlayGroupUpdate", "LibraryAccessDenied")
        assert denied["GroupId"] == group_id
        assert server.ctx.syncplay.group_of("dev-k") is None  # not let in

        # In an idle group of its own, queue changes with items a member may not see are refused.
        assert (await k.post("/SyncPlay/New", {"GroupName": "Kids"})).status_code == 204
        kids_group = (await k.next("SyncPlayGroupUpdate", "GroupJoined"))["GroupId"]
        assert (await b.post("/SyncPlay/Join", {"GroupId": kids_group})).status_code == 204
        await b.next("SyncPlayGroupUpdate", "GroupJoined")
        body = {"PlayingQueue": item_ids[1:2], "PlayingItemPosition": 0, "StartPositionTicks": 0}
        assert (await b.post("/SyncPlay/SetNewQueue", body)).status_code == 204
        assert (await b.next("SyncPlayGroupUpdate", "LibraryAccessDenied"))["GroupId"] == kids_group
        assert (await b.post("/SyncPlay/Queue", {"ItemIds": item_ids[2:], "Mode": "Queue"})).status_code == 204
        assert (await b.next("SyncPlayGroupUpdate", "LibraryAccessDenied"))["GroupId"] == kids_group
        assert server.ctx.syncplay.groups[kids_group].queue == []

        # Given the library, the kid sees and may join the first group.
        policy["EnabledFolders"] = [library]
        assert admin.post(f"/Users/{kid['Id']}/Policy", json=policy).status_code == 204
        assert [g["GroupId"] for g in (await k.http.get("/SyncPlay/List")).json()
                if g["GroupId"] == group_id] == [group_id]
