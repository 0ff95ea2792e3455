"""Trickplay against a real server: the RefreshTrickplayImages task makes tile sheets for a scanned
clip, the HLS image playlist and the sheets are served, the item DTO carries Trickplay, an
unchanged file is not redone, and a vanished video's tiles are removed."""

from __future__ import annotations

import io
import shutil
import time
from datetime import datetime

import pytest
from PIL import Image

from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan, refresh_and_wait
from tests.mediagen import make_video


def _run_task(live: LiveServer) -> dict:
    with live.admin() as c:
        task = next(t for t in c.get("/ScheduledTasks").json() if t["Key"] == "RefreshTrickplayImages")
        before = (task.get("LastExecutionResult") or {}).get("EndTimeUtc")
        assert c.post(f"/ScheduledTasks/Running/{task['Id']}").status_code == 204
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            task = c.get(f"/ScheduledTasks/{task['Id']}").json()
            last = task.get("LastExecutionResult") or {}
            if task["State"] == "Idle" and last.get("EndTimeUtc") and last["EndTimeUtc"] != before:
                return last
            time.sleep(0.2)
    raise AssertionError("the trickplay task did not finish")


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    root = tmp_path_factory.mktemp("trickplay")
    make_video(root / "Movies" / "Long Walk (2020)" / "Long Walk (2020).mkv", seconds=20, width=320, height=240)
    server = start_server(root / "data")
    complete_wizard(server)
    with server.admin() as c:
        config = c.get("/System/Configuration").json()
        config["TrickplayOptions"].update(Interval=2000, WidthResolutions=[160], TileWidth=3, TileHeight=3)
        assert c.post("/System/Configuration", json=config).status_code == 204
    add_library_and_scan(server, "Movies", "movies", [root / "Movies"])
    server.extra["root"] = root
    yield server
    stop_server(server)


def _movie(live: LiveServer) -> dict:
    with live.admin() as c:
        return c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie",
                                       "fields": "Trickplay"}).json()["Items"][0]


def test_tiles_playlist_and_dto(live):
    movie = _movie(live)
    with live.admin() as c:
        assert c.get(f"/Videos/{movie['Id']}/Trickplay/160/tiles.m3u8").status_code == 404  # not made yet
    assert _run_task(live)["Status"] == "Completed"
    movie = _movie(live)
    info = movie["Trickplay"][movie["Id"]]["160"]
    assert info["Width"] == 160 and info["Height"] == 120 and info["Interval"] == 2000
    assert info["TileWidth"] == 3 and info["TileHeight"] == 3 and info["ThumbnailCount"] == 10
    assert info["Bandwidth"] > 0
    sheets = sorted((live.data_dir / "trickplay" / movie["Id"][:2] / movie["Id"] / "160").glob("*.jpg"))
    assert [p.name for p in sheets] == ["0.jpg", "1.jpg"]  # 10 thumbnails, 9 per sheet
    with Image.open(sheets[0]) as first:
        assert first.size == (480, 360)
    with Image.open(sheets[1]) as second:
        assert second.size == (160, 120)
    with live.admin() as c:
        playlist = c.get(f"/Videos/{movie['Id']}/Trickplay/160/tiles.m3u8")
        assert playlist.status_code == 200 and playlist.headers["content-type"].lower().startswith("application/x-mpegurl")
        lines = playlist.text.splitlines()
        assert lines[0] == "#EXTM3U" and "#EXT-X-IMAGES-ONLY" in lines and lines[-1] == "#EXT-X-ENDLIST"
        assert "#EXT-X-TILES:RESOLUTION=160x120,LAYOUT=3x3,DURATION=2.000" in lines
        assert [line.split("?")[0] for line in lines if line.endswith(".jpg") or ".jpg?" in line] == ["0.jpg", "1.jpg"]
        assert "#EXTINF:18.000," in lines and "#EXTINF:2.000," in lines
        tile = c.get(f"/Videos/{movie['Id']}/Trickplay/160/0.jpg")
        assert tile.status_code == 200 and tile.headers["content-type"] == "image/jpeg"
        assert Image.open(io.BytesIO(tile.content)).size == (480, 360)
        assert c.get(f"/Videos/{movie['Id']}/Trickplay/160/7.jpg").status_code == 404
        assert c.get(f"/Videos/{movie['Id']}/Trickplay/320/tiles.m3u8").status_code == 404
        assert c.get("/Videos/0123456789abcdef0123456789abcdef/Trickplay/160/0.jpg").status_code == 404
    with live.client() as anonymous:
        assert anonymous.get(f"/Videos/{movie['Id']}/Trickplay/160/tiles.m3u8").status_code == 401

    # An unchanged file is not redone.
    stamp = sheets[0].stat().st_mtime_ns
    assert _run_task(live)["Status"] == "Completed"
    assert sheets[0].stat().st_mtime_ns == stamp


def test_tiles_of_a_vanished_video_are_removed(live):
    movie = _movie(live)
    folder = live.data_dir / "trickplay" / movie["Id"][:2] / movie["Id"]
    if not folder.exists():
        _run_task(live)
    assert folder.exists()
    shutil.rmtree(live.extra["root"] / "Movies" / "Long Walk (2020)")
    refresh_and_wait(live)
    with live.admin() as c:
        assert c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}).json()["TotalRecordCount"] == 0
    last = _run_task(live)
    assert last["Status"] == "Completed" and datetime.fromisoformat(last["EndTimeUtc"].replace("Z", "+00:00"))
    assert not folder.exists()
