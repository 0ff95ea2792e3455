"""Scan progress on the WebSocket and in the ScheduledTasks API; removing a library path."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path

import websockets

from tests.library.conftest import items
from tests.library_helpers import add_library_and_scan, allow_roots, wait_for_scan


async def test_refresh_progress_messages_and_task(server, library_source: Path, tmp_path: Path) -> None:
    music = tmp_path / "music"
    shutil.copytree(library_source / "music", music)
    lib_id = await asyncio.to_thread(add_library_and_scan, server, "Music", "music", [music])
    (music / "Band" / "Second Album" / "03 - Tune 3.mp3").unlink()
    url = server.url.replace("http://", "ws://") + f"/socket?api_key={server.admin_token}&deviceId=ws"
    async with websockets.connect(url) as ws:
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
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(items(server, library_id=lib_id, type="Episode")) < 6:
        time.sleep(0.05)
    assert len(items(server, library_id=lib_id, type="Episode")) == 6
    assert server.ctx.scanner.last_stats[lib_id].units == [str(shows / "Show Name (2019)")]
