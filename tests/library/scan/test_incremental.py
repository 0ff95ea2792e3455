"""Rescans: unchanged files are never probed again, changes and deletions are applied, a
renamed file keeps its user data, user data survives rescans and restarts, the watcher shows
a new file within seconds and announces it on the WebSocket."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import pytest
import websockets
from sqlalchemy import select

from server.db.tables import UserData
from server.library.catalog import ids
from tests.conftest import complete_wizard, start_server, stop_server
from tests.library.conftest import items, one, streams
from tests.library_helpers import add_library_and_scan, refresh_and_wait, wait_for_scan
from tests.mediagen import make_srt


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, library_source: Path):
    root = tmp_path_factory.mktemp("incremental")
    media = root / "media"
    shutil.copytree(library_source / "shows", media / "shows")
    shutil.copytree(library_source / "music", media / "music")
    server = start_server(root / "data")
    complete_wizard(server)
    server.extra["root"] = root
    server.extra["media"] = media
    # No folder watcher while the rescan tests change files: it would apply a change before the
    # test's own refresh (a race that a loaded machine loses). The watcher test switches it on.
    server.extra["shows"] = add_library_and_scan(server, "Shows", "tvshows", [media / "shows"], realtime=False)
    server.extra["music"] = add_library_and_scan(server, "Music", "music", [media / "music"], realtime=False)
    yield server
    stop_server(server)


def stats(live, kind: str):
    return live.ctx.scanner.last_stats[live.extra[kind]]


def user_rows(live, item_id: str) -> list[UserData]:
    return live.ctx.db.read_sync(lambda s: list(s.execute(select(UserData).where(UserData.item_id == item_id)).scalars()))


def set_user_data(live, item_id: str, **values) -> None:
    def write(s):
        row = s.get(UserData, (live.admin_id, item_id)) or UserData(user_id=live.admin_id, item_id=item_id)
        for k, v in values.items():
            setattr(row, k, v)
        s.add(row)

    live.ctx.db.write_sync(write)


def episode_path(live, name: str) -> Path:
    return live.extra["media"] / "shows" / "Show Name (2019)" / name


def test_unchanged_rescan_probes_nothing_and_writes_nothing(live) -> None:
    before = live.ctx.scanner.probe_calls
    refresh_and_wait(live)
    assert live.ctx.scanner.probe_calls == before
    for kind in ("shows", "music"):
        s = stats(live, kind)
        assert s.probed == 0 and s.written == 0 and s.removed == 0
        assert s.units_skipped == 2 and s.files == 0  # the root and the series / artist folder: untouched

    # A forced refresh re-resolves everything from the probe cache and still rewrites nothing.
    series = one(live, type="Series")
    started = time.time()
    with live.admin() as c:
        assert c.post(f"/Items/{series.id}/Refresh", params={"replaceAllMetadata": "true"}).status_code == 204
    wait_for_scan(live, started)
    s = stats(live, "shows")
    assert s.units_skipped == 0 and s.probed == 0 and s.written == 0
    assert s.unchanged == s.items > 0 and s.probe_cached == s.files > 0
    assert live.ctx.scanner.probe_calls == before


def test_changed_file_is_reprobed_alone_and_new_sidecar_needs_no_probe(live) -> None:
    path = episode_path(live, "Season 01/Show Name S01E01.mkv")
    st = path.stat()
    os.utime(path, (st.st_atime, st.st_mtime + 10))
    make_srt(path.with_name("Show Name S01E01.fr.srt"), [(0, 1, "Bonjour")])
    before = live.ctx.scanner.probe_calls
    refresh_and_wait(live)
    assert live.ctx.scanner.probe_calls == before + 1
    assert stats(live, "shows").probed == 1 and stats(live, "shows").written == 1
    episode = one(live, id=ids.item_id_for_path(str(path)))
    external = [s for s in streams(episode) if s.get("IsExternal")]
    assert [(s["Language"], s["Codec"]) for s in external] == [("fre", "srt")]

    sub = path.with_name("Show Name S01E01.en.srt")
    make_srt(sub, [(0, 1, "Hello")])
    refresh_and_wait(live)
    assert stats(live, "shows").probed == 0 and stats(live, "shows").written == 1
    episode = one(live, id=episode.id)
    assert sorted(s["Language"] for s in streams(episode) if s.get("IsExternal")) == ["eng", "fre"]


def test_deleted_file_goes_but_its_user_data_stays(live) -> None:
    path = episode_path(live, "Specials/Show Name S00E01.mkv")
    item_id = ids.item_id_for_path(str(path))
    set_user_data(live, item_id, played=True, play_count=1)
    path.unlink()
    refresh_and_wait(live)
    assert items(live, id=item_id) == []
    assert items(live, type="Season", index_number=0) == []  # the empty Specials season went too
    assert stats(live, "shows").removed == 2
    assert [r.played for r in user_rows(live, item_id)] == [True]


def test_renamed_file_keeps_user_data_and_locks(live) -> None:
    old = episode_path(live, "Season 02/Show Name 2x02.mkv")
    old_id = ids.item_id_for_path(str(old))
    set_user_data(live, old_id, played=True, is_favorite=True, playback_position_ticks=1234)

    def lock(s):
        from server.db.tables import Item

        row = s.get(Item, old_id)
        row.name = "My Own Title"
        row.locked_fields_json = json.dumps(["Name"])
        s.add(row)

    live.ctx.db.write_sync(lock)
    new = old.with_name("Show Name S02E02 - Renamed.mkv")
    old.rename(new)
    new_id = ids.item_id_for_path(str(new))
    before = live.ctx.scanner.probe_calls
    refresh_and_wait(live)
    assert stats(live, "shows").renamed == 1
    assert live.ctx.scanner.probe_calls == before + 1  # the new name is probed (it is a new path)
    assert items(live, id=old_id) == []
    episode = one(live, id=new_id)
    assert episode.name == "My Own Title" and episode.index_number == 2
    rows = user_rows(live, new_id)
    assert [(r.played, r.is_favorite, r.playback_position_ticks) for r in rows] == [(True, True, 1234)]
    assert user_rows(live, old_id) == []


def test_user_data_survives_rescan_and_restart(live) -> None:
    track = one(live, name="Tune 3")
    set_user_data(live, track.id, is_favorite=True, rating=8.0)
    refresh_and_wait(live)
    assert [r.is_favorite for r in user_rows(live, track.id)] == [True]

    stop_server(live)
    restarted = start_server(live.data_dir)
    live.runner, live.thread, live.url = restarted.runner, restarted.thread, restarted.url
    assert items(live, id=track.id)[0].name == "Tune 3"
    refresh_and_wait(live)
    assert live.ctx.scanner.probe_calls == 0  # a restarted server reuses the cached probes
    assert [(r.is_favorite, r.rating) for r in user_rows(live, track.id)] == [(True, 8.0)]


async def _library_changed(url: str, token: str, action, item_id: str, key: str,
                           timeout: float = 30) -> tuple[dict, float]:
    """Run ``action`` and wait for the LibraryChanged message that lists ``item_id`` under ``key``
    (other messages, e.g. from the artwork task, may come first). The timeout is generous: it
    only catches a watcher that never reacts (the latency is not asserted: a busy CI machine)."""
    ws_url = url.replace("http://", "ws://") + f"/socket?api_key={token}&deviceId=ws-test"
    async with websockets.connect(ws_url) as ws:
        # the server sends ForceKeepAlive once the socket is subscribed to events: from then on
        # no message is missed (a fixed pause raced a busy server)
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["MessageType"] == "ForceKeepAlive"
        t0 = time.monotonic()
        await asyncio.to_thread(action)
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            message = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
            if message["MessageType"] == "LibraryChanged" and item_id in message["Data"].get(key, []):
                return message["Data"], time.monotonic() - t0
    raise TimeoutError("no LibraryChanged message")


def _watch(live, kind: str) -> None:
    """Switch the folder watcher on for the module's ``kind`` library (through its options)."""
    with live.admin() as c:
        folder = next(f for f in c.get("/Library/VirtualFolders").json() if f["ItemId"] == live.extra[kind])
        options = {**folder["LibraryOptions"], "EnableRealtimeMonitor": True}
        r = c.post("/Library/VirtualFolders/LibraryOptions", json={"Id": live.extra[kind], "LibraryOptions": options})
        assert r.status_code == 204, r.text
    watched = live.ctx.scanner.watcher.watched
    assert str(live.extra["media"] / kind) in watched
    _wait_for_inotify_watches(sum(1 for root in watched for _ in os.walk(root)))


def _wait_for_inotify_watches(folders: int, timeout: float = 20) -> None:
    """Wait until this process holds an inotify watch for every watched folder: the watcher's
    task sets them up once it runs, and a change made before that would go unseen. (Linux reads
    the count from /proc; elsewhere a short pause stands in for it.)"""
    fdinfo = Path("/proc/self/fdinfo")
    if not fdinfo.is_dir():
        time.sleep(0.5)
        return

    def count() -> int:
        total = 0
        for entry in fdinfo.iterdir():
            try:
                total += entry.read_text().count("inotify wd:")
            except OSError:  # an fd closed meanwhile
                continue
        return total

    deadline = time.monotonic() + timeout
    while count() < folders:
        assert time.monotonic() < deadline, f"{count()} inotify watches for {folders} folders"
        time.sleep(0.05)


async def test_watcher_shows_new_changed_and_deleted_files_within_seconds(live, library_source: Path) -> None:
    await asyncio.to_thread(_watch, live, "music")
    band = live.extra["media"] / "music" / "Band"
    album = band / "Second Album"
    shows_stats = stats(live, "shows")
    src = library_source / "music" / "Band" / "Second Album" / "03 - Tune 3.mp3"
    target = album / "04 - Tune 4.mp3"
    new_id = ids.item_id_for_path(str(target))

    data, _ = await _library_changed(live.url, live.admin_token, lambda: shutil.copy(src, target),
                                           new_id, "ItemsAdded")
    assert new_id in data["ItemsAdded"] and live.extra["music"] in data["CollectionFolders"]
    assert one(live, id=new_id).album == "Second Album"
    assert stats(live, "music").units == [str(band)]  # only the artist's folder was rescanned
    assert stats(live, "music").probed == 1 and stats(live, "shows") is shows_stats

    other = library_source / "music" / "Band" / "Second Album" / "01 - Tune 1.mp3"
    data, _ = await _library_changed(live.url, live.admin_token, lambda: shutil.copyfile(other, target),
                                           new_id, "ItemsUpdated")
    assert new_id in data["ItemsUpdated"]
    assert one(live, id=new_id).name == "Tune 1"

    data, _ = await _library_changed(live.url, live.admin_token, lambda: target.unlink(),
                                           new_id, "ItemsRemoved")
    assert new_id in data["ItemsRemoved"]
    assert items(live, id=new_id) == []


async def test_watcher_with_a_file_in_the_library_root(live, library_source: Path) -> None:
    root = live.extra["media"] / "shows"
    src = library_source / "shows" / "Show Name (2019)" / "Season 01" / "Show Name S01E01.mkv"
    target = root / "Loose Clip.mkv"
    series_before = items(live, type="Series")
    await asyncio.to_thread(_watch, live, "shows")
    data, _ = await _library_changed(live.url, live.admin_token, lambda: shutil.copy(src, target),
                                           ids.item_id_for_path(str(target)), "ItemsAdded")
    assert ids.item_id_for_path(str(target)) in data["ItemsAdded"]
    assert stats(live, "shows").units == [str(root)] and stats(live, "shows").removed == 0
    assert [s.id for s in items(live, type="Series")] == [s.id for s in series_before]
    assert one(live, id=ids.item_id_for_path(str(target))).type == "Video"
