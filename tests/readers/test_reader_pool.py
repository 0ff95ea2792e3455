"""Reader processes (server/readers/) on a real server with a scanned library: GET /Items through
a reader answers exactly what the owner answers itself, a write is seen at once through a reader,
a killed reader costs no request and is replaced, and no reader outlives the server."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, auth_header, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan, refresh_and_wait, wait_for_artwork
from tests.mediagen import make_audio

FIELDS = "PrimaryImageAspectRatio,MediaSources,Overview,Genres,People,Studios,SortName,DateCreated,Path,ProviderIds"
CAMEL = {"Accept": 'application/json; profile="CamelCase"'}

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc")


def alive(pid: int) -> bool:
    """A live process (a zombie waiting for its parent counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(check: Any, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what or check}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, library_source: Path) -> Iterator[LiveServer]:
    """A server whose Items pages go to a reader process whenever one runs (readers_busy=0)."""
    root = tmp_path_factory.mktemp("readers")
    media = root / "media"
    shutil.copytree(library_source, media)
    live = start_server(root / "data", readers=1, readers_busy=0,
                        reply_cache_mib=0)  # (every page to the reader: none kept in the owner)
    complete_wizard(live)
    live.extra["media"] = media
    live.extra["libraries"] = {
        kind: add_library_and_scan(live, kind.title(), ctype, [media / kind])
        for kind, ctype in (("movies", "movies"), ("shows", "tvshows"), ("music", "music"))
    }
    with live.admin() as c:
        uid = c.post("/Users/New", json={"Name": "kid", "Password": "pw"}).json()["Id"]
        with live.client(device="kid") as own:
            r = own.post("/Users/AuthenticateByName", json={"Username": "kid", "Pw": "pw"})
        live.extra["kid"] = (r.json()["AccessToken"], uid)
    yield live
    pids = live.ctx.readers.pids()
    socket_dir = live.ctx.readers._socket_dir
    stop_server(live)
    assert not [pid for pid in pids if alive(pid)], "a reader process outlived its server"
    assert socket_dir is None or not os.path.exists(socket_dir)  # (the Unix socket's private folder)


def served_by_readers(pool: Any, n: int) -> bool:
    """Whether the pool counts ``n`` pages answered by readers, waiting a little for it: a reader
    that wrote a reply to the client itself (a hand-off) tells the owner after the client has it."""
    try:
        wait_until(lambda: pool.served >= n, timeout=10)
    except TimeoutError:
        pass
    return bool(pool.served == n)


def settled_served(pool: Any) -> int:
    """The pages readers answered so far, once no page is in flight (a page a reader wrote to the
    client itself is counted once the owner hears from the reader, after the client has it)."""
    wait_until(lambda: pool._inflight == 0, timeout=10, what="the pages in flight")
    return int(pool.served)


def reader_running(live: LiveServer) -> list[int]:
    """Make sure a reader runs (an Items request starts one) and return the readers' pids."""
    if not live.ctx.readers.pids():
        with live.admin() as c:
            assert c.get("/Items", params={"limit": 1}).status_code == 200
        wait_until(live.ctx.readers.pids, what="a reader process")
    return live.ctx.readers.pids()


def both_ways(live: LiveServer, client: httpx.Client, params: dict, headers: dict | None = None
              ) -> tuple[httpx.Response, httpx.Response]:
    """The same request answered by a reader, then by the owner itself."""
    pool = live.ctx.readers
    reader_running(live)
    served = settled_served(pool)
    via_reader = client.get("/Items", params=params, headers=headers)
    assert via_reader.status_code != 200 or served_by_readers(pool, served + 1), "the reader did not answer"
    settings = pool.settings
    pool.settings = dataclasses.replace(settings, busy=10**6)  # readers never take a page
    try:
        via_owner = client.get("/Items", params=params, headers=headers)
    finally:
        pool.settings = settings
    assert pool.served == served + (via_reader.status_code == 200)
    return via_reader, via_owner


def same(live: LiveServer, client: httpx.Client, params: dict, headers: dict | None = None) -> dict:
    """Both ways, on the same database state: a background task (artwork after a scan) that writes
    between the two requests makes them differ rightly, so that pair is asked again."""
    for _ in range(5):
        generation = live.ctx.db.generation
        via_reader, via_owner = both_ways(live, client, params, headers)
        if live.ctx.db.generation == generation:
            break
    assert via_reader.status_code == via_owner.status_code == 200, via_reader.text
    assert via_reader.headers["content-type"] == via_owner.headers["content-type"]
    assert via_reader.json() == via_owner.json()
    return via_reader.json()


def test_pages_from_a_reader_equal_the_owners(live: LiveServer) -> None:
    libs = live.extra["libraries"]
    uid = live.admin_id
    pages = [
        {"userId": uid, "parentId": libs["movies"], "recursive": "true", "includeItemTypes": "Movie",
         "sortBy": "SortName", "fields": FIELDS, "enableImageTypes": "Primary,Backdrop,Thumb", "imageTypeLimit": 1},
        {"userId": uid, "parentId": libs["shows"], "recursive": "true", "includeItemTypes": "Episode",
         "sortBy": "ParentIndexNumber,IndexNumber", "fields": FIELDS},
        {"userId": uid, "parentId": libs["music"], "recursive": "true", "includeItemTypes": "Audio",
         "fields": FIELDS, "startIndex": 1, "limit": 2, "sortOrder": "Descending"},
        {"userId": uid, "recursive": "true", "filters": "IsNotFolder", "isPlayed": "false", "sortBy": "DateCreated"},
        {"userId": uid, "recursive": "true", "searchTerm": "a", "enableTotalRecordCount": "false"},
        {"userId": uid},  # the user's views
        {"recursive": "true", "includeItemTypes": "Series,Season", "fields": "ChildCount,RecursiveItemCount"},
    ]
    with live.admin() as c:
        for params in pages:
            body = same(live, c, params)
            assert body["Items"], params
        camel = same(live, c, pages[0], CAMEL)
        assert "items" in camel and "name" in camel["items"][0]


def test_a_restricted_user_gets_the_same_scope_through_a_reader(live: LiveServer) -> None:
    token, uid = live.extra["kid"]
    movies = live.extra["libraries"]["movies"]
    with live.admin() as c:
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        policy.update(EnableAllFolders=False, EnabledFolders=[movies])
        assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
    with live.client(token, "kid") as own:
        body = same(live, own, {"recursive": "true", "fields": FIELDS})
        assert body["Items"] and {i.get("Type") for i in body["Items"]} <= {"Movie", "CollectionFolder", "Folder"}
        # the policy changes: the very next page through a reader follows it
        with live.admin() as c:
            policy.update(EnableAllFolders=True, EnabledFolders=[])
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
        body = same(live, own, {"recursive": "true", "includeItemTypes": "Audio"})
        assert body["TotalRecordCount"] > 0


def test_errors_from_a_reader_are_the_owners(live: LiveServer) -> None:
    with live.admin() as c:
        via_reader, via_owner = both_ways(live, c, {"parentId": uuid.uuid4().hex, "recursive": "true"})
        assert via_reader.status_code == via_owner.status_code == 404
        assert via_reader.json()["title"] == via_owner.json()["title"]
        assert via_reader.headers["content-type"].startswith("application/problem+json")


def test_writes_are_seen_at_once_through_a_reader(live: LiveServer) -> None:
    uid = live.admin_id
    movies = live.extra["libraries"]["movies"]
    page = {"userId": uid, "parentId": movies, "recursive": "true", "includeItemTypes": "Movie", "sortBy": "SortName"}
    with live.admin() as c:
        before = same(live, c, page)
        movie = before["Items"][0]
        total = before["TotalRecordCount"]
        # played
        assert c.post(f"/UserPlayedItems/{movie['Id']}", params={"userId": uid}).status_code == 200
        played = same(live, c, {**page, "isPlayed": "true"})
        assert movie["Id"] in [i["Id"] for i in played["Items"]]
        assert same(live, c, page)["Items"][0]["UserData"]["Played"] is True
        assert c.delete(f"/UserPlayedItems/{movie['Id']}", params={"userId": uid}).status_code == 200
        assert movie["Id"] not in [i["Id"] for i in same(live, c, {**page, "isPlayed": "true"})["Items"]]
        # favourite: a filter and a count of the same page
        assert c.post(f"/UserFavoriteItems/{movie['Id']}", params={"userId": uid}).status_code == 200
        favs = same(live, c, {**page, "filters": "IsFavorite"})
        assert [i["Id"] for i in favs["Items"]] == [movie["Id"]] and favs["TotalRecordCount"] == 1
        # an edit: a new name and genre, seen in the page, its order and a genre filter
        item = c.get(f"/Items/{movie['Id']}", params={"userId": uid}).json()
        item.update(Name="Zzz Renamed", ForcedSortName="Zzz Renamed", Genres=["Readerfresh"])
        assert c.post(f"/Items/{movie['Id']}", json=item).status_code == 204
        after = same(live, c, page)
        assert {i["Id"]: i["Name"] for i in after["Items"]}[movie["Id"]] == "Zzz Renamed"
        by_genre = same(live, c, {**page, "genres": "Readerfresh"})
        assert [i["Id"] for i in by_genre["Items"]] == [movie["Id"]]
        # a scan: a new file is counted and listed
        make_audio(live.extra["media"] / "music" / "Reader Band" / "Fresh Album" / "01 - Fresh.flac", seconds=1,
                   tags={"title": "Fresh Song", "artist": "Reader Band", "album": "Fresh Album", "track": "1"})
        songs = {"userId": uid, "recursive": "true", "includeItemTypes": "Audio", "sortBy": "SortName"}
        before_scan = same(live, c, songs)
        refresh_and_wait(live)
        after_scan = same(live, c, songs)
        assert after_scan["TotalRecordCount"] == before_scan["TotalRecordCount"] + 1
        assert "Fresh Song" in [i["Name"] for i in after_scan["Items"]]
        assert same(live, c, {**page})["TotalRecordCount"] == total


def test_a_killed_reader_costs_at_most_its_handed_pages_and_is_replaced(live: LiveServer) -> None:
    """A reader killed mid-load: the pages queued for it go back to the line; a page whose client
    socket it already held (the hand-off) may have been partly written, so its connection is
    closed, never answered twice -- at most ``depth`` of them, each a connection closed with no
    reply, and the client's next request (a new connection) is answered. Every other page is a 200."""
    (first,) = reader_running(live)
    uid = live.admin_id
    page = {"userId": uid, "recursive": "true", "includeItemTypes": "Audio,Movie,Episode", "fields": FIELDS}
    statuses: list[int] = []
    dropped: list[str] = []
    stop = threading.Event()

    def browse() -> None:
        while not stop.is_set():
            with live.admin() as c:
                try:
                    while not stop.is_set():
                        statuses.append(c.get("/Items", params=page).status_code)
                except httpx.RemoteProtocolError as e:  # a handed page's connection, closed
                    dropped.append(str(e))

    clients = [threading.Thread(target=browse) for _ in range(4)]
    for t in clients:
        t.start()
    try:
        wait_until(lambda: len(statuses) > 20, what="pages before the kill")
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: any(p != first for p in live.ctx.readers.pids()), what="a replacement reader")
        served = live.ctx.readers.served
        wait_until(lambda: live.ctx.readers.served > served + 5, what="pages from the replacement")
    finally:
        stop.set()
        for t in clients:
            t.join(30)
    assert statuses and set(statuses) == {200}
    assert len(dropped) <= live.ctx.readers.settings.depth, dropped
    assert all("without sending a response" in d for d in dropped), dropped
    assert first not in live.ctx.readers.pids()
    wait_until(lambda: not alive(first), what="the killed reader reaped")


def test_an_idle_reader_stops_and_the_next_busy_moment_starts_one(live: LiveServer) -> None:
    pool = live.ctx.readers
    (pid,) = reader_running(live)
    settings = pool.settings
    pool.settings = dataclasses.replace(settings, idle_seconds=0.5)
    try:
        wait_until(lambda: not pool.pids() and not alive(pid), timeout=30, what="the idle reader to stop")
    finally:
        pool.settings = settings
    assert reader_running(live) != [pid]


def test_the_pool_is_off_with_readers_0(tmp_path: Path) -> None:
    live = start_server(tmp_path / "data", readers=0, readers_busy=0)
    try:
        complete_wizard(live)
        with live.admin() as c:
            for _ in range(5):
                assert c.get("/Items", params={"recursive": "true"}).status_code == 200
        assert live.ctx.readers.pids() == [] and live.ctx.readers.started == 0
    finally:
        stop_server(live)


def test_auto_starts_no_reader_for_one_client_or_an_idle_server(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The default (``auto``) browsed by one client, then left idle: pages never pile up beyond
    ``busy``, so the CPU gate is never asked and no reader starts (no second process's memory)."""
    from server.readers.pool import auto_readers

    monkeypatch.delenv("REELROOM_READERS", raising=False)
    live = start_server(tmp_path / "data")
    try:
        complete_wizard(live)
        pool = live.ctx.readers
        assert pool.settings.gate and pool.settings.max_readers == auto_readers()
        with live.admin() as c:
            for start in range(20):
                r = c.get("/Items", params={"recursive": "true", "limit": 5, "startIndex": start})
                assert r.status_code == 200
        time.sleep(1.5)  # idle: nothing but a page in flight beyond ``busy`` starts a reader
        assert pool.started == 0 and pool.pids() == [] and pool.gate.free is None
        assert pool.answered_here == (20 if pool.enabled else 0)
    finally:
        stop_server(live)


def test_no_reader_outlives_a_killed_server(tmp_path: Path) -> None:
    """reelroom-server killed with SIGKILL: its readers die with it (spawn.py's PR_SET_PDEATHSIG)."""
    from bench._server import free_port

    port = free_port()
    env = {**os.environ, "REELROOM_READERS": "1", "REELROOM_READERS_BUSY": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "app.server_main", "--data-dir", str(tmp_path / "data"),
                             "--port", str(port), "--host", "127.0.0.1", "--no-lan"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            try:
                return httpx.get(url + "/System/Info/Public", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=120, what="the server")
        with httpx.Client(base_url=url, timeout=30) as c:
            assert c.post("/Startup/Configuration", json={"UICulture": "en-US", "MetadataCountryCode": "US",
                                                          "PreferredMetadataLanguage": "en"}).status_code == 204
            assert c.get("/Startup/User").status_code == 200
            assert c.post("/Startup/User", json={"Name": "admin", "Password": "pw"}).status_code == 204
            assert c.post("/Startup/Complete").status_code == 204
            r = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "pw"},
                       headers=auth_header(None, "killer"))
            headers = auth_header(r.json()["AccessToken"], "killer")

            def readers() -> list[int]:
                assert c.get("/Items", params={"recursive": "true"}, headers=headers).status_code == 200
                return children(proc.pid)

            wait_until(readers, what="a reader process")
            pids = children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        wait_until(lambda: not any(alive(p) for p in pids), timeout=10, what="the readers to die")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = Path(entry, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == str(pid) and b"server.readers.worker" in Path(entry, "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def test_readers_in_the_tray_host(tmp_path: Path) -> None:
    """The desktop app's ServerHost (the server on a thread of the app): readers start under it,
    a restart ends the old ones, stopping the server ends them all."""
    from app.server_host import ServerHost

    host = ServerHost(tmp_path / "data", port=0, host="127.0.0.1", enable_lan=False, readers=1, readers_busy=0,
                      reply_cache_mib=0)

    def pages_through_a_reader() -> int:
        headers = auth_header(host.desktop_api_key(), "tray-test")
        pool = host._runner.ctx.readers  # type: ignore[union-attr]
        with httpx.Client(base_url=host.base_url, headers=headers, timeout=30) as c:
            def started() -> list[int]:
                assert c.get("/Items", params={"recursive": "true"}).status_code == 200
                return pool.pids()

            wait_until(started, what="a reader under the tray host")
            served = settled_served(pool)
            assert c.get("/Items", params={"recursive": "true"}).status_code == 200
            assert served_by_readers(pool, served + 1), (pool.served, pool.handed, pool.answered_here, pool.pids())
        (pid,) = pool.pids()
        return pid

    host.start()
    try:
        assert host.wait_until_running(60), host.error
        first = pages_through_a_reader()
        host.restart()
        assert host.wait_until_running(60), host.error
        wait_until(lambda: not alive(first), timeout=10, what="the old reader to end on restart")
        second = pages_through_a_reader()
    finally:
        host.stop()
    assert first != second and not alive(second)


def test_settings_from_options_and_environment() -> None:
    from server.readers.pool import ReaderSettings, auto_readers

    default = ReaderSettings.resolve(environ={})  # auto unless told otherwise: behind the CPU gate
    assert (default.max_readers, default.gate) == (auto_readers(), True)
    assert ReaderSettings.resolve(environ={"REELROOM_READERS": "0"}).max_readers == 0
    assert ReaderSettings.resolve(environ={"REELROOM_READERS": "off"}).max_readers == 0
    assert ReaderSettings.resolve(environ={"REELROOM_READERS": "2"}).max_readers == 2
    assert ReaderSettings.resolve(environ={"REELROOM_READERS": "auto"}).max_readers == auto_readers()
    assert ReaderSettings.resolve(1, environ={"REELROOM_READERS": "0"}).max_readers == 1  # the option wins
    s = ReaderSettings.resolve(environ={"REELROOM_READERS": "1", "REELROOM_READERS_BUSY": "0",
                                        "REELROOM_READERS_IDLE": "5"})
    assert (s.max_readers, s.busy, s.idle_seconds) == (1, 0, 5.0)
    assert ReaderSettings.resolve(environ={"REELROOM_READERS_IDLE": "soon"}).idle_seconds == 60.0
    # auto: readers only while a core is free (CpuGate); a number: whenever the server is busy
    assert ReaderSettings.resolve(environ={"REELROOM_READERS": "auto"}).gate is True
    assert ReaderSettings.resolve(environ={"REELROOM_READERS": "1"}).gate is False
    assert ReaderSettings.resolve(environ={"REELROOM_READERS_LOCAL": "0"}).local == 0
    assert ReaderSettings.resolve(environ={}).local == ReaderSettings.local


def test_auto_leaves_pages_to_the_owner_while_no_core_is_free(live: LiveServer) -> None:
    """REELROOM_READERS=auto on a machine without a free core: pages are answered in the owner
    (no reader takes them, none is started for them); once a core is free readers take them again."""
    from server.readers.pool import CpuGate

    pool = live.ctx.readers
    settings = pool.settings
    reader_running(live)
    gate = pool.gate
    pool.gate = CpuGate(window=0.0)  # measured at every page
    pool.settings = dataclasses.replace(settings, gate=True, free_cores=10**6)  # never enough
    try:
        with live.admin() as c:  # the first look measures nothing yet (open), the next ones do
            for _ in range(2):
                assert c.get("/Items", params={"recursive": "true", "limit": 5}).status_code == 200
        assert pool.gate.free is not None
        served, here = settled_served(pool), pool.answered_here
        with live.admin() as c:
            for _ in range(3):
                assert c.get("/Items", params={"recursive": "true", "limit": 5}).status_code == 200
        assert pool.served == served and pool.answered_here == here + 3
        pool.settings = dataclasses.replace(settings, gate=True, free_cores=0.0)  # always enough
        with live.admin() as c:
            assert c.get("/Items", params={"recursive": "true", "limit": 5}).status_code == 200
        assert served_by_readers(pool, served + 1), (pool.served, pool.handed, pool.answered_here, pool.pids())
    finally:
        pool.settings, pool.gate = settings, gate


def test_a_page_a_reader_cannot_take_is_answered_by_the_owner(live: LiveServer) -> None:
    """A query that cannot travel (it does not pickle) is answered in the owner, not failed."""
    import asyncio

    from server.library.catalog.items import Viewer
    from server.library.catalog.query import ItemQuery

    reader_running(live)
    ctx = live.ctx
    q = ctx.items.scoped(ItemQuery(recursive=True, limit=3), Viewer(None))
    opts = ctx.items.options(Viewer(None))
    q.extra_unpicklable = lambda: None  # type: ignore[attr-defined]
    answered_here: list[bool] = []

    async def local(query: ItemQuery, options: object) -> bytes:
        answered_here.append(True)
        return await ctx.items.query_reply(query, options, False)

    served = ctx.readers.served
    future = asyncio.run_coroutine_threadsafe(ctx.readers.items(q, opts, local), live.runner.loop)
    reply = future.result(30)
    assert answered_here == [True] and ctx.readers.served == served
    assert b'"TotalRecordCount"' in reply


@pytest.mark.parametrize("entry", ["entry_reelroom.py", "entry_reelroom_server.py"])
def test_the_bundles_entry_points_run_a_reader(tmp_path: Path, entry: str) -> None:
    """In the PyInstaller bundle a reader is the executable itself with --reelroom-reader
    (reader_command when sys.frozen): both entry points hand it to the reader before anything
    else, and it says hello to its owner and exits when the owner closes the connection."""
    import socket

    from server.db.database import Database, sqlite_url
    from server.readers import protocol

    db_file = tmp_path / "library.db"
    Database(sqlite_url(db_file)).close()
    root = Path(__file__).resolve().parents[2]
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(120)
        env = {**os.environ, protocol.ENV_ADDRESS: f"127.0.0.1:{listener.getsockname()[1]}",
               protocol.ENV_KEY: "k" * 32, protocol.ENV_DATABASE: sqlite_url(db_file),
               protocol.ENV_SERVER_ID: "0" * 32, "PYTHONPATH": str(root)}
        proc = subprocess.Popen([sys.executable, str(root / "installer" / entry), protocol.FROZEN_FLAG], env=env,
                                stdout=subprocess.DEVNULL)
        try:
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(30)
                head = conn.recv(protocol.HEADER.size, socket.MSG_WAITALL)
                (size,) = protocol.HEADER.unpack(head)
                assert conn.recv(size, socket.MSG_WAITALL).decode() == f"{'k' * 32}:{proc.pid}"
            assert proc.wait(30) == 0  # the owner closed the connection: the reader ends
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_a_reader_whose_owner_is_gone_before_it_connects_ends_quietly(tmp_path: Path) -> None:
    """A reader that finds no owner listening (it stopped while the reader imported) ends with
    status 0 and writes nothing to stderr (it printed a ConnectionRefusedError traceback)."""
    import socket

    from server.db.database import Database, sqlite_url
    from server.readers import protocol

    db_file = tmp_path / "library.db"
    Database(sqlite_url(db_file)).close()
    with socket.create_server(("127.0.0.1", 0)) as gone:
        port = gone.getsockname()[1]  # closed at once: nothing listens on it any more
    env = {**os.environ, protocol.ENV_ADDRESS: f"127.0.0.1:{port}", protocol.ENV_KEY: "k" * 32,
           protocol.ENV_DATABASE: sqlite_url(db_file), protocol.ENV_SERVER_ID: "0" * 32,
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "server.readers.worker"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_query_travels_as_its_values_and_comes_back_the_same() -> None:
    """A page's ItemQuery is pickled for the reader as its fields' values alone (no field names:
    ``ItemQuery.__reduce__``) and unpickles to an equal query, every field of the same type and
    value (a 0 where the default is False stays 0), with fresh lists; one with an attribute that
    is no field pickles as any object does (and one that cannot pickle still fails to)."""
    import pickle
    from datetime import UTC, datetime

    from server.library.catalog.query import ItemQuery, ParentalRules

    q = ItemQuery(user_id="u" * 32, allowed_library_ids=frozenset({"a" * 32}), recursive=1,  # type: ignore[arg-type]
                  parental=ParentalRules(max_rating=12, blocked_tags=("gore",)), exclude_library_ids={"b" * 32},
                  include_types=["Movie"], sort_by=["SortName"], start_index=300, limit=100,
                  min_premiere_date=datetime(2001, 2, 3, tzinfo=UTC), min_community_rating=0.0)
    data = pickle.dumps(q, protocol=pickle.HIGHEST_PROTOCOL)
    assert b"include_types" not in data and b"sort_by" not in data
    back = pickle.loads(data)
    assert back == q and list(vars(back)) == list(vars(q))
    for f in dataclasses.fields(ItemQuery):
        mine, theirs = getattr(q, f.name), getattr(back, f.name)
        assert type(mine) is type(theirs) and mine == theirs, f.name
    assert back.recursive == 1 and type(back.recursive) is int
    fresh = pickle.loads(pickle.dumps(ItemQuery()))
    assert fresh == ItemQuery() and fresh.ids is not pickle.loads(pickle.dumps(ItemQuery())).ids
    q.note = "kept"  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(q)).note == "kept"
    q.note = lambda: None  # type: ignore[attr-defined]
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(q)


def test_replies_travel_as_raw_bytes_of_any_size() -> None:
    """An answered page crosses the connection as the very bytes the reader encoded (no pickle),
    in one sendmsg of head and body, whatever its size; errors and failures are pickled."""
    import asyncio
    import socket

    from server.errors import NotFoundError
    from server.readers import protocol

    big = bytes(range(256)) * (5 * 4096 + 7)  # 5 MB and change: above the owner's stream limit
    replies = [(1, protocol.OK, big), (2, protocol.ERROR, NotFoundError("gone")),
               (3, protocol.FAILED, "Traceback: boom"), (4, protocol.OK, b"")]
    assert protocol.reply_parts(1, protocol.OK, big)[1] is big  # sent as it is, not copied or pickled

    async def exchange() -> list[tuple[int, str, object]]:
        ours, theirs = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=ours, limit=4 * 1024 * 1024)

        def send() -> None:
            with theirs:
                for reply in replies:
                    protocol.send_parts(theirs, protocol.reply_parts(*reply))

        sending = asyncio.get_running_loop().run_in_executor(None, send)
        got = []
        for _ in replies:
            head = await reader.readexactly(protocol.REPLY_HEADER.size)
            size = protocol.REPLY_HEADER.unpack(head)[0]
            got.append(protocol.read_reply(head, await reader.readexactly(size)))
        await sending
        writer.close()
        return got

    got = asyncio.run(exchange())
    assert got[0] == (1, protocol.OK, big) and type(got[0][2]) is bytes
    assert got[1][:2] == (2, protocol.ERROR) and isinstance(got[1][2], NotFoundError)
    assert got[2] == (3, protocol.FAILED, "Traceback: boom") and got[3] == (4, protocol.OK, b"")


# -- the fragment store through a reader ---------------------------------------------------------


def through_reader(live: LiveServer, client: httpx.Client, params: dict, headers: dict | None = None) -> bytes:
    """One page answered by a reader (the reply's bytes)."""
    pool = live.ctx.readers
    reader_running(live)
    served = settled_served(pool)
    r = client.get("/Items", params=params, headers=headers)
    assert r.status_code == 200, r.text
    assert served_by_readers(pool, served + 1), "the reader did not answer"
    return r.content


def owner_built(live: LiveServer, client: httpx.Client, params: dict, headers: dict | None = None) -> bytes:
    """The page as the owner builds it itself, without the store or kept fragments."""
    pool, svc = live.ctx.readers, live.ctx.items
    settings, store = pool.settings, svc.store
    pool.settings = dataclasses.replace(settings, busy=10**6)  # readers never take a page
    svc.store = None
    try:
        svc.fragments.clear()
        r = client.get("/Items", params=params, headers=headers)
        assert r.status_code == 200, r.text
        return r.content
    finally:
        pool.settings, svc.store = settings, store


def n_items(body: bytes) -> int:
    found = httpx.Response(200, content=body).json()
    return len(found.get("Items", found.get("items", [])))


def stored_through_reader(live: LiveServer, client: httpx.Client, params: dict,
                          headers: dict | None = None) -> bytes:
    """The page through a reader once every item of it came from the owner's store, of the
    current epoch (asked again when a background write, e.g. the artwork run, began a new one)."""
    store, pool = live.ctx.items.store, live.ctx.readers
    assert store is not None
    wait_until(lambda: store.enabled, what="the fragment store to open")
    for _ in range(5):
        through_reader(live, client, params, headers)  # the reader builds (or checks) and sends back
        store.flush()
        hits = pool.store_hits
        body = through_reader(live, client, params, headers)
        if n_items(body) and pool.store_hits - hits == n_items(body):
            return body
        wait_for_artwork(live)
    raise AssertionError("the reader never answered the page from the store")


def item_of(body: bytes, item_id: str) -> dict:
    found = httpx.Response(200, content=body).json()
    for item in found.get("Items", found.get("items", [])):
        if item.get("Id", item.get("id")) == item_id:
            return dict(item)
    raise AssertionError(f"{item_id} is not on the page")


def test_a_reader_answers_from_the_owners_store_the_bytes_the_owner_builds(live: LiveServer) -> None:
    uid = live.admin_id
    libs = live.extra["libraries"]
    pages = [
        {"userId": uid, "parentId": libs["movies"], "recursive": "true", "includeItemTypes": "Movie",
         "fields": "PrimaryImageAspectRatio,MediaSources,Overview"},
        {"userId": uid, "recursive": "true", "includeItemTypes": "Audio,MusicAlbum", "fields": FIELDS,
         "sortBy": "SortName"},
        {"userId": uid, "recursive": "true", "includeItemTypes": "Series,Season,Episode",
         "fields": "RecursiveItemCount,ChildCount,Overview"},
        {"recursive": "true", "includeItemTypes": "Audio", "enableUserData": "false"},
    ]
    pool = live.ctx.readers
    with live.admin() as c:
        for params in pages:
            for headers in (None, CAMEL):
                for _ in range(3):
                    stored = stored_through_reader(live, c, params, headers)
                    built = owner_built(live, c, params, headers)
                    if stored == built:
                        break
                    wait_for_artwork(live)  # (a background write landed between the two asks)
                assert stored == built, (params, headers)
    assert pool.stored_back > 0  # what readers built went to the owner's store
    # and the owner uses what a reader built: a page the owner answers from the store
    store = live.ctx.items.store
    assert store is not None
    params = {"userId": uid, "recursive": "true", "includeItemTypes": "Audio", "fields": FIELDS, "sortBy": "Name"}
    with live.admin() as c:
        for _ in range(5):
            stored_through_reader(live, c, params)
            hits = store.hits
            settings = pool.settings
            pool.settings = dataclasses.replace(settings, busy=10**6)
            try:
                body = c.get("/Items", params=params).content
            finally:
                pool.settings = settings
            if store.hits - hits == n_items(body):
                break
            wait_for_artwork(live)
        assert store.hits - hits == n_items(body) > 0


def test_changes_show_through_a_reader_reading_the_store_at_once(live: LiveServer) -> None:
    """Each change right after the page was answered from the store by a reader: the very next
    page through a reader shows it and equals what the owner builds."""
    uid = live.admin_id
    movies = live.extra["libraries"]["movies"]
    page = {"userId": uid, "parentId": movies, "recursive": "true", "includeItemTypes": "Movie",
            "sortBy": "SortName", "fields": "PrimaryImageAspectRatio,MediaSources,Overview,Genres,CanDelete"}
    with live.admin() as c:
        movie = httpx.Response(200, content=stored_through_reader(live, c, page)).json()["Items"][-1]
        mid = movie["Id"]
        # a played mark and a favourite
        assert c.post(f"/UserPlayedItems/{mid}", params={"userId": uid}).status_code == 200
        assert item_of(through_reader(live, c, page), mid)["UserData"]["Played"] is True
        assert c.post(f"/UserFavoriteItems/{mid}", params={"userId": uid}).status_code == 200
        assert item_of(through_reader(live, c, page, CAMEL), mid)["userData"]["isFavorite"] is True
        assert c.delete(f"/UserPlayedItems/{mid}", params={"userId": uid}).status_code == 200
        assert c.delete(f"/UserFavoriteItems/{mid}", params={"userId": uid}).status_code == 200
        shown = item_of(through_reader(live, c, page), mid)["UserData"]
        assert shown["Played"] is False and shown["IsFavorite"] is False
        # an edit (a new epoch): the stored fragment of the old one is not used as it is
        stored_through_reader(live, c, page)
        item = c.get(f"/Items/{mid}", params={"userId": uid}).json()
        item.update(Overview="Told through a reader", Genres=["Storefresh"])
        assert c.post(f"/Items/{mid}", json=item).status_code == 204
        edited = item_of(through_reader(live, c, page), mid)
        assert edited["Overview"] == "Told through a reader" and edited["Genres"] == ["Storefresh"]
        assert item_of(stored_through_reader(live, c, page), mid)["Overview"] == "Told through a reader"
        # a configuration change begins a new epoch: nothing stored before is used as it is
        stored_through_reader(live, c, page)
        config = c.get("/System/Configuration").json()
        config["ServerName"] = "Reader Store Server"
        assert c.post("/System/Configuration", json=config).status_code == 204
        hits = live.ctx.readers.store_hits
        after = through_reader(live, c, page)
        assert live.ctx.readers.store_hits == hits  # (checked by digest, not taken as it was)
        assert after == owner_built(live, c, page)
    # a policy: CanDelete follows the viewer's policy at once
    token, kid = live.extra["kid"]
    with live.admin() as c:
        policy = c.get(f"/Users/{kid}").json()["Policy"]
        policy.update(EnableAllFolders=True, EnabledFolders=[], EnableContentDeletion=False)
        assert c.post(f"/Users/{kid}/Policy", json=policy).status_code == 204
    kid_page = {**page, "userId": kid}
    with live.client(token, "kid") as own:
        assert item_of(stored_through_reader(live, own, kid_page), mid)["CanDelete"] is False
        with live.admin() as c:
            policy["EnableContentDeletion"] = True
            assert c.post(f"/Users/{kid}/Policy", json=policy).status_code == 204
        assert item_of(through_reader(live, own, kid_page), mid)["CanDelete"] is True


def test_a_rescan_that_changes_a_tag_shows_through_a_reader_at_once(live: LiveServer) -> None:
    uid = live.admin_id
    song = live.extra["media"] / "music" / "Store Band" / "Store Album" / "01 - Stored.flac"
    tags = {"title": "Stored Song", "artist": "Store Band", "album": "Store Album", "track": "1"}
    make_audio(song, seconds=1, tags={**tags, "genre": "Folk"})
    refresh_and_wait(live)
    wait_for_artwork(live)
    page = {"userId": uid, "recursive": "true", "includeItemTypes": "Audio", "searchTerm": "Stored Song",
            "fields": "Genres,Path,MediaSources"}
    with live.admin() as c:
        body = stored_through_reader(live, c, page)
        (found,) = httpx.Response(200, content=body).json()["Items"]
        assert found["Genres"] == ["Folk"]
        scratch = song.with_name("scratch.flac")
        make_audio(scratch, seconds=1, tags={**tags, "genre": "Blues"}, frequency=550)
        shutil.move(scratch, song)
        future = time.time() + 5
        os.utime(song, (future, future))
        refresh_and_wait(live)
        assert item_of(through_reader(live, c, page), found["Id"])["Genres"] == ["Blues"]
        wait_for_artwork(live)
        assert item_of(stored_through_reader(live, c, page), found["Id"])["Genres"] == ["Blues"]


def test_the_reader_store_keeps_to_the_owners_file_and_epochs(tmp_path: Path) -> None:
    """A reader's view of the store: it uses the epoch it is given (never a series of its own, the
    file's start counter untouched), it cannot write the file, what it builds and checks is kept
    for the owner, and a failed read turns it off here without removing the owner's file."""
    import sqlite3

    from server.library.catalog.fragment_store import FragmentStore, StoreUse
    from server.readers.store import ReaderStore

    path = tmp_path / "fragments.sqlite3"
    owner = FragmentStore(path, stamp="code")
    assert not ReaderStore(path, "code").open()  # no file yet: not readable (and not created)
    assert not path.exists()
    assert owner.open()
    boot = owner.boot
    epoch = owner.epoch((1, 0))
    shape = owner.shape(("movie", "fields"))
    owner.put([(shape, "a" * 32, epoch, b"d" * 16, "Movie", 0, None, b'{"Name":"A"'),
               (shape, "b" * 32, epoch - 1, b"e" * 16, "Movie", 0, None, b'{"Name":"B"')])
    owner.flush()
    reader = ReaderStore(path, "code")
    reader.adopt(epoch)
    assert reader.enabled and reader.epoch(("anything", 9)) == epoch
    assert reader.shape(("movie", "fields")) == shape
    use = StoreUse(reader, shape, reader.epoch(None))
    found = reader.fetch(shape, ["a" * 32, "b" * 32])
    assert reader.is_current(found["a" * 32], shape, epoch) and not reader.is_current(found["b" * 32], shape, epoch)
    reader.put([(shape, "c" * 32, epoch, b"f" * 16, "Movie", 0, None, b'{"Name":"C"')])
    reader.mark_valid(epoch, shape, [b"e" * 16])
    assert reader.is_current(found["b" * 32], shape, epoch)  # checked here: current here for this epoch
    assert use.epoch == epoch
    writes, valid, _hits = reader.take() or ([], [], 0)
    assert [w[1] for w in writes] == ["c" * 32] and valid == [(epoch, shape, [b"e" * 16])]
    assert reader.take() is None
    assert owner.count() == 2  # nothing was written by the reader
    with pytest.raises(sqlite3.OperationalError):
        reader._conn().execute("DELETE FROM fragments")
    # the file is read through a memory map; a quiet moment's release closes the connection (its
    # mapping) and the next read opens another that answers the same
    from server.readers import store as reader_store

    mapped = reader._conn()
    assert mapped.execute("PRAGMA mmap_size").fetchone()[0] == reader_store.MMAP_BYTES > 0
    reader.release()
    with pytest.raises(sqlite3.ProgrammingError):
        mapped.execute("SELECT 1")  # (closed)
    again = reader.fetch(shape, ["a" * 32, "b" * 32])
    assert again == found and reader._conn() is not mapped
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'boot'").fetchone()[0] == boot
    conn.close()
    reader.adopt(0)  # the owner took no epoch: no store for that page
    assert not reader.enabled and reader.fetch(shape, ["a" * 32]) == {}
    reader.adopt(epoch)
    reader._start_over(sqlite3.DatabaseError("boom"), reader._generation)
    assert not reader.enabled and path.exists() and owner.count() == 2
    reader.close()
    owner.close()


@pytest.mark.skipif(not hasattr(__import__("socket"), "AF_UNIX"), reason="no Unix sockets here")
def test_a_reader_connects_by_socket_path_abstract_name_or_tcp(tmp_path: Path) -> None:
    """The owner's address a reader gets: ``unix:<path>`` (a socket in a private folder: macOS, BSD),
    ``unix:@<name>`` (an abstract name: Linux, nothing left on disk) or ``host:port`` (Windows)."""
    import socket

    from server.readers import protocol

    path = tmp_path / "s"
    listeners = [(socket.socket(socket.AF_UNIX), str(path), f"{protocol.UNIX_PREFIX}{path}"),
                 (socket.socket(socket.AF_UNIX), "\0reelroom-readers-test-" + uuid.uuid4().hex,
                  None),
                 (socket.create_server(("127.0.0.1", 0)), None, None)]
    for listener, where, address in listeners:
        with listener:
            if where is not None:
                listener.bind(where)
                listener.listen()
            if address is None:
                address = (f"{protocol.UNIX_PREFIX}{protocol.ABSTRACT}{where[1:]}" if where is not None
                           else f"127.0.0.1:{listener.getsockname()[1]}")
            with protocol.connect(address) as sock:
                conn, _ = listener.accept()
                with conn:
                    sock.sendall(protocol.hello("k" * 32, 7))
                    assert conn.recv(64) == protocol.hello("k" * 32, 7)
