"""Helpers for tests that need a scanned library on a live server (tests/conftest.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import httpx

from tests.conftest import LiveServer, start_server


def allow_roots(live: LiveServer, *roots: str) -> None:
    """Lock the server down to these folders (and those allowed before): the filesystem
    configuration's opt-in AllowedRoots. Without it any existing folder may be used."""
    with live.admin() as c:
        current = c.get("/System/Configuration/filesystem").json() or {}
        allowed = list(dict.fromkeys([*(current.get("AllowedRoots") or []), *map(str, roots)]))
        r = c.post("/System/Configuration/filesystem", json={"RestrictToAllowedRoots": True, "AllowedRoots": allowed})
        assert r.status_code == 204, r.text


@contextmanager
def store_off(live: LiveServer) -> Iterator[None]:
    """While the block runs, the served server's items are built from rows: its fragment store off
    and its kept fragments dropped (what a page is compared with)."""
    svc = live.ctx.items
    store, svc.store = svc.store, None
    try:
        svc.fragments.clear()
        yield
    finally:
        svc.store = store


def open_store(live: LiveServer, timeout: float = 30):
    """The server's fragment store once it is open (it opens beside the start, on a thread)."""
    store = live.ctx.items.store
    assert store is not None
    deadline = time.monotonic() + timeout
    while not store.enabled and time.monotonic() < deadline:
        time.sleep(0.05)
    return store


def restarted(tmp_path: Path, before: LiveServer) -> LiveServer:
    """The server started again on ``before``'s folder (``tmp_path / "data"``), with its token (a
    sign-in is a write), and its fragment store open."""
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    live.admin_token, live.admin_id = before.admin_token, before.admin_id
    open_store(live)
    return live


def _scan_task(c) -> dict:
    tasks = c.get("/ScheduledTasks").json()
    return next(t for t in tasks if t["Key"] == "RefreshLibrary")


def _parse(value: str) -> float:
    value = value.rstrip("Z")
    if "." in value:
        head, frac = value.split(".", 1)
        value = f"{head}.{frac[:6]}"
    return datetime.fromisoformat(value).timestamp() if "+" in value else \
        datetime.fromisoformat(value + "+00:00").timestamp()


def wait_for_scan(live: LiveServer, started_after: float, timeout: float = 60,
                  allow: tuple[str, ...] = ("Completed",)) -> dict:
    """Poll the RefreshLibrary scheduled task until it is idle after a run that ended after
    ``started_after`` (epoch seconds, taken before the request that queued the scan: a run
    already going when the scan was queued picks the request up before it ends); returns the
    task info."""
    deadline = time.monotonic() + timeout
    with live.admin() as c:
        while True:
            task = _scan_task(c)
            last = task.get("LastExecutionResult")
            if task["State"] == "Idle" and last and _parse(last["EndTimeUtc"]) >= started_after:
                assert last["Status"] in allow, last
                return task
            if time.monotonic() > deadline:
                raise TimeoutError(f"the library scan did not finish in {timeout} s: {task}")
            time.sleep(0.05)


def wait_for_artwork(live: LiveServer, timeout: float = 180) -> None:
    """Wait until the offline artwork a scan asks for (frames grabbed, collages) is made: it
    changes items' Primary images, so a test that compares replies over time waits for it."""
    deadline = time.monotonic() + timeout
    quiet = 0
    while quiet < 5:  # quiet for a while: a run may ask for another (debounced)
        quiet = 0 if live.ctx.artwork.pending else quiet + 1
        if time.monotonic() > deadline:
            raise TimeoutError(f"offline artwork still running after {timeout} s")
        time.sleep(0.1)


def refresh_and_wait(live: LiveServer, timeout: float = 60) -> dict:
    started = time.time()
    with live.admin() as c:
        r = c.post("/Library/Refresh")
        assert r.status_code == 204, r.text
    return wait_for_scan(live, started, timeout)


def add_library_and_scan(live: LiveServer, name: str, collection_type: str | None, paths: list,
                         timeout: float = 60, realtime: bool = True, options: dict | None = None) -> str:
    """Add a virtual folder over HTTP, scan it, wait until the scan finished; returns the
    library id (the CollectionFolder item id)."""
    allow_roots(live, *paths)
    started = time.time()
    with live.admin() as c:
        params: dict = {"name": name, "refreshLibrary": "true", "paths": [str(p) for p in paths]}
        if collection_type:
            params["collectionType"] = collection_type
        library_options = {"EnableRealtimeMonitor": realtime, **(options or {})}
        r = c.post("/Library/VirtualFolders", params=params, json={"LibraryOptions": library_options})
        assert r.status_code == 204, r.text
    wait_for_scan(live, started, timeout)
    with live.admin() as c:
        folders = c.get("/Library/VirtualFolders").json()
    return next(f["ItemId"] for f in folders if f["Name"] == name)


def songs_movie_show_server(root: Path, **options: object) -> LiveServer:
    """A live server of its own over a small library made under ``root``: two songs of one album
    (Music), a movie (Movies) and a show with two episodes (Shows), scanned, with the offline
    artwork made. ``options``: ServerOptions for ``start_server``. ``extra`` holds "media" and
    the three library ids."""
    from tests.conftest import complete_wizard, start_server
    from tests.mediagen import make_audio, make_video

    music = root / "media" / "music"
    for n, title in enumerate(("Alpha", "Beta"), 1):
        make_audio(music / "Band" / "Record" / f"0{n} - {title}.mp3", tags={
            "title": title, "artist": "Band", "album_artist": "Band", "album": "Record", "track": str(n),
            "genre": "Rock"})
    movies = root / "media" / "movies"
    make_video(movies / "Film (2001)" / "Film (2001).mkv", seconds=1.0, width=160, height=120, fps=10)
    shows = root / "media" / "shows"
    for n in (1, 2):
        make_video(shows / "Show (2020)" / "Season 01" / f"Show S01E0{n}.mkv", seconds=1.0, width=160, height=120,
                   fps=10)
    live = start_server(root / "data", **options)
    complete_wizard(live)
    live.extra["media"] = root / "media"
    live.extra["music"] = add_library_and_scan(live, "Music", "music", [music])
    live.extra["movies"] = add_library_and_scan(live, "Movies", "movies", [movies])
    live.extra["shows"] = add_library_and_scan(live, "Shows", "tvshows", [shows])
    wait_for_artwork(live)  # (grabbed frames become Primary images: not in the middle of a test)
    return live


def new_user(c: httpx.Client, live: LiveServer, name: str, **policy: object) -> tuple[str, str]:
    """A new user made through ``c`` (an administrator's client) with ``policy`` applied on top of
    the default policy, signed in on a device of its own: (user id, access token)."""
    r = c.post("/Users/New", json={"Name": name, "Password": "pw"})
    assert r.status_code == 200, r.text
    uid = r.json()["Id"]
    if policy:
        full = {**c.get(f"/Users/{uid}").json()["Policy"], **policy}
        assert c.post(f"/Users/{uid}/Policy", json=full).status_code == 204
    with live.client(device=f"dev-{name}") as anon:
        r = anon.post("/Users/AuthenticateByName", json={"Username": name, "Pw": "pw"})
        assert r.status_code == 200, r.text
        return uid, r.json()["AccessToken"]
