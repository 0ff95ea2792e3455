"""Scan progress on the WebSocket and in the ScheduledTasks API; removing a library path."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import websockets

from tests.library.conftest import items
from tests.library_helpers import add_library_and_scan, allow_roots, refresh_and_wait, wait_for_scan


async def test_refresh_progress_messages_and_task(server, library_source: Path, tmp_path: Path) -> None:
    music = tmp_path / "music"
    shutil.copytree(library_source / "music", music)
    lib_id = await asyncio.to_thread(add_library_and_scan, server, "Music", "music", [music])
    (music / "Band" / "Second Album" / "03 - Tune 3.mp3").unlink()
    url = server.url.replace("http://", "ws://") + f"/socket?api_key={server.admin_token}&deviceId=ws"
    async with websockets.connect(url) as ws:
        # subscribed once ForceKeepAlive comes: the scan's first progress message is not missed
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["MessageType"] == "ForceKeepAlive"
        await ws.send(json.dumps({"MessageType": "ScheduledTasksInfoStart", "Data": "0,500"}))
        started = time.time()
        with server.admin() as c:
            assert c.post("/Library/Refresh").status_code == 204
        progress: list[float] = []
        changed = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (not progress or progress[-1] < 100 or changed is None):
            message = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
            if message["MessageType"] == "RefreshProgress" and message["Data"]["ItemId"] == lib_id:
                progress.append(float(message["Data"]["Progress"]))
            elif message["MessageType"] == "LibraryChanged":
                changed = message["Data"]
    assert progress[0] == 0 and progress[-1] == 100 and progress == sorted(progress)
    assert len(changed["ItemsRemoved"]) == 1 and changed["CollectionFolders"] == [lib_id]
    task = await asyncio.to_thread(wait_for_scan, server, started)
    assert task["Name"] == "Scan Media Library" and task["Category"] == "Library"
    assert task["LastExecutionResult"]["Status"] == "Completed"


def test_removing_a_library_path_removes_its_items(server, library_source: Path, tmp_path: Path) -> None:
    shows, more = tmp_path / "shows", tmp_path / "more"
    shutil.copytree(library_source / "shows", shows)
    shutil.copytree(library_source / "music", more)  # audio in a shows library: plain files
    allow_roots(server, tmp_path)
    lib_id = add_library_and_scan(server, "Shows", "tvshows", [shows])
    started = time.time()
    with server.admin() as c:
        assert c.post("/Library/VirtualFolders/Paths", params={"refreshLibrary": "true"},
                      json={"Name": "Shows", "Path": str(shows.parent / "more")}).status_code == 204
    wait_for_scan(server, started)
    assert len(items(server, library_id=lib_id, type="Episode")) == 5
    started = time.time()
    with server.admin() as c:
        assert c.delete("/Library/VirtualFolders/Paths", params={"name": "Shows", "path": str(shows),
                                                                  "refreshLibrary": "true"}).status_code == 204
    wait_for_scan(server, started)
    assert items(server, library_id=lib_id, type="Episode") == []
    assert items(server, library_id=lib_id, type="Series") == []
    assert [i.type for i in items(server, library_id=lib_id)] == ["CollectionFolder"]


def test_post_updated_media_without_the_watcher(server, library_source: Path, tmp_path: Path) -> None:
    shows = tmp_path / "shows"
    shutil.copytree(library_source / "shows", shows)
    lib_id = add_library_and_scan(server, "Shows", "tvshows", [shows], realtime=False)
    assert server.ctx.scanner.watcher.watched == []
    season = shows / "Show Name (2019)" / "Season 01"
    new = season / "Show Name S01E03.mkv"
    shutil.copyfile(season / "Show Name S01E01.mkv", new)
    time.sleep(1)
    assert len(items(server, library_id=lib_id, type="Episode")) == 5  # nobody noticed
    with server.admin() as c:
        r = c.post("/Library/Media/Updated", json={"Updates": [{"Path": str(new), "UpdateType": "Created"}]})
        assert r.status_code == 204
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and server.ctx.scanner.last_stats[lib_id].units is None:
        time.sleep(0.05)  # (the stats are set when the pass has finished writing)
    assert server.ctx.scanner.last_stats[lib_id].units == [str(shows / "Show Name (2019)")]
    assert len(items(server, library_id=lib_id, type="Episode")) == 6


def test_an_unreachable_library_path_keeps_its_items(server, library_source: Path, tmp_path: Path) -> None:
    shows, music = tmp_path / "nas" / "shows", tmp_path / "local" / "music"
    shutil.copytree(library_source / "shows", shows)
    shutil.copytree(library_source / "music", music)
    allow_roots(server, tmp_path)
    lib_id = add_library_and_scan(server, "Mixed", None, [shows, music], realtime=False)
    before = {i.id for i in items(server, library_id=lib_id)}
    assert len(before) > 10
    (tmp_path / "nas").rename(tmp_path / "nas-offline")  # the NAS went to sleep
    refresh_and_wait(server)
    assert {i.id for i in items(server, library_id=lib_id)} == before
    (tmp_path / "nas-offline").rename(tmp_path / "nas")
    (music / "Band" / "Second Album" / "03 - Tune 3.mp3").unlink()  # a real deletion is applied
    refresh_and_wait(server)
    assert len({i.id for i in items(server, library_id=lib_id)}) == len(before) - 1


def test_stopping_the_scan_task(server, library_source: Path, tmp_path: Path) -> None:
    src = library_source / "music" / "Band" / "Second Album" / "01 - Tune 1.mp3"
    music = tmp_path / "many"
    for album in range(40):
        folder = music / f"Artist {album // 10}" / f"Album {album}"
        folder.mkdir(parents=True)
        for track in range(10):
            os.link(src, folder / f"{track + 1:02d} - Track.mp3")
    allow_roots(server, tmp_path)
    started = time.time()
    with server.admin() as c:
        r = c.post("/Library/VirtualFolders", params={"name": "Many", "collectionType": "music",
                                                     "paths": [str(music)], "refreshLibrary": "true"})
        assert r.status_code == 204
        task = next(t for t in c.get("/ScheduledTasks").json() if t["Key"] == "RefreshLibrary")
        assert task["State"] == "Running"
        assert c.delete(f"/ScheduledTasks/Running/{task['Id']}").status_code == 204
    task = wait_for_scan(server, started, allow=("Cancelled",))
    assert task["LastExecutionResult"]["Status"] == "Cancelled"
    lib_id = next(i.id for i in items(server, type="CollectionFolder", name="Many"))
    assert len(items(server, library_id=lib_id, type="Audio")) < 400
    refresh_and_wait(server, timeout=120)  # the next scan finishes the job
    assert len(items(server, library_id=lib_id, type="Audio")) == 400
