"""InstantMix's fill of the fragment store (server/library/browse/mix_fill.py).

A mix arms the fill for its shape; the fill's pass stores (or checks again) every track's fragment
in the background, after which a mix comes wholly from the store: exactly the bytes the server
builds without it, for the viewer's libraries only. A library write makes the next mix show it at
once (the fill covered an older epoch: the mix checks its tracks as before) and a new pass checks
every fragment again. The server runs in this process; its draw is seeded the same before each of
the asks compared.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from server.library.browse import mix_fill
from server.library.catalog.dto import options_from
from server.library.catalog.fragment_store import FragmentStore
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library.browse.conftest import new_user
from tests.library.browse.test_mix_store import _ask, _built, _count
from tests.library.conftest import items
from tests.library_helpers import add_library_and_scan, open_store, wait_for_artwork
from tests.mediagen import make_audio

PARAMS = {"fields": "PrimaryImageAspectRatio", "limit": "200"}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("mixfill")
    libraries = {}
    tracks = {"a": [("Band", "Record", "Rock", "Alpha"), ("Band", "Record", "Rock", "Beta"),
                    ("Band", "Record", "Rock;Jazz", "Gamma")],
              "b": [("Other", "Second", "Rock", "Delta"), ("Other", "Second", "Rock", "Epsilon"),
                    ("Third", "Lone", "Jazz", "Zeta")]}
    settle = mix_fill.SETTLE_SECONDS
    mix_fill.SETTLE_SECONDS = 0.2  # (a pass starts once the library was left alone this long)
    server = start_server(root / "data", reply_cache_mib=0)
    try:
        complete_wizard(server)
        for key, made in tracks.items():
            libraries[key] = _library(server, root / "media" / key, f"Music {key}", made)
        wait_for_artwork(server)
        server.extra["libraries"] = libraries
        yield server
    finally:
        stop_server(server)
        mix_fill.SETTLE_SECONDS = settle


def _library(server: LiveServer, folder: Path, name: str, made: list[tuple[str, str, str, str]]) -> str:
    """A music library of ``made`` ((artist, album, genre, title) each), scanned; its id."""
    for n, (artist, album, genre, title) in enumerate(made, 1):
        make_audio(folder / artist / album / f"0{n} - {title}.mp3", tags={
            "title": title, "artist": artist, "album_artist": artist, "album": album, "track": str(n),
            "genre": genre})
    return add_library_and_scan(server, name, "music", [folder])


def _track(live: LiveServer, name: str) -> str:
    found = items(live, type="Audio", name=name)
    assert len(found) == 1, name
    return found[0].id


def _use(live: LiveServer, user_id: str):  # type: ignore[no-untyped-def]
    """The store use of a mix of PARAMS' shape asked by ``user_id`` (PascalCase), now."""
    svc = live.ctx.items
    viewer = asyncio.run(svc.viewer(None, user_id))
    return svc.store_use(svc.options(viewer, ["PrimaryImageAspectRatio"]), False)


def _filled(live: LiveServer, c: httpx.Client, path: str, params: dict, timeout: float = 60) -> None:
    """Ask a mix (which arms the fill) and wait until a pass covered the current epoch."""
    fill = live.ctx.browse.related.mix_fill
    store = open_store(live)
    deadline = time.monotonic() + timeout
    asked = 0.0
    while time.monotonic() < deadline:
        if time.monotonic() - asked > 5:  # (not more often: the fill waits while the process is busy)
            _ask(c, path, params, False, 7)
            asked = time.monotonic()
        use = _use(live, params["userId"])
        if use is not None and fill.filled(use):
            store.flush()
            return
        time.sleep(0.1)
    raise AssertionError(f"the fill never covered the epoch (passes {fill.passes}, content generation "
                         f"{live.ctx.db.content_generation}, shapes {[(k, v.epoch) for k, v in fill._shapes.items()]}, "
                         f"use {use.shape if use else None} {use.epoch if use else None})")


def _whole_from_store(live: LiveServer, c: httpx.Client, path: str, params: dict) -> bytes:
    store = live.ctx.items.store
    hits = store.hits
    body = _ask(c, path, params, False, 7)
    assert _count(body, False) and store.hits - hits == _count(body, False), "not every track came from the store"
    return body


def test_after_the_fill_a_mix_comes_from_the_store_as_the_same_bytes(live: LiveServer) -> None:
    alpha = _track(live, "Alpha")
    path = f"/Songs/{alpha}/InstantMix"
    params = {**PARAMS, "userId": live.admin_id}
    fill = live.ctx.browse.related.mix_fill
    with live.admin() as c:
        _filled(live, c, path, params)
        assert fill.passes >= 1
        # every track of both libraries was filled, not only the picks of the mixes asked
        svc = live.ctx.items
        use = _use(live, live.admin_id)
        every = [r.id for r in items(live, type="Audio")]
        assert len(every) == 6
        stored = svc.store.fetch(use.shape, every)
        assert set(stored) == set(every)
        assert all(svc.store.is_current(f, use.shape, use.epoch) for f in stored.values())
        body = _whole_from_store(live, c, path, params)
        assert body == _built(live, c, path, params, False, 7)
        assert {i["Name"] for i in httpx.Response(200, content=body).json()["Items"]} >= {"Alpha", "Delta"}


def test_a_library_write_shows_at_once_and_is_filled_again(live: LiveServer) -> None:
    alpha, beta = _track(live, "Alpha"), _track(live, "Beta")
    path = f"/Songs/{alpha}/InstantMix"
    params = {**PARAMS, "userId": live.admin_id}
    fill = live.ctx.browse.related.mix_fill
    with live.admin() as c:
        _filled(live, c, path, params)
        passes = fill.passes
        item = c.get(f"/Items/{beta}", params={"userId": live.admin_id}).json()
        try:
            assert c.post(f"/Items/{beta}", json={**item, "Name": "Beta Renamed"}).status_code == 204
            # at once, before any pass checked the store again (its epoch is over)
            names = {i["Name"] for i in httpx.Response(200, content=_ask(c, path, params, False, 7)).json()["Items"]}
            assert "Beta Renamed" in names and "Beta" not in names
            _filled(live, c, path, params)
            assert fill.passes > passes
            body = _whole_from_store(live, c, path, params)
            assert b"Beta Renamed" in body and body == _built(live, c, path, params, False, 7)
        finally:
            assert c.post(f"/Items/{beta}", json=item).status_code == 204


def test_a_filled_mix_takes_the_kept_user_data_and_a_mark_shows_in_the_next_mix(live: LiveServer) -> None:
    """A filled mix is made of stored fragments only: its user data comes from the user's kept
    rows (query.KeptUserData, as a stored GetItems page's) once they are kept, and is never stale:
    a played mark and a favourite show in the very next mix, the bytes the server builds."""
    from server.library.catalog.query import kept_user_data

    alpha, beta = _track(live, "Alpha"), _track(live, "Beta")
    path = f"/Songs/{alpha}/InstantMix"
    params = {**PARAMS, "userId": live.admin_id}
    kept = kept_user_data(live.ctx.db.engine)

    def beta_data(body: bytes) -> dict:
        return next(i for i in httpx.Response(200, content=body).json()["Items"] if i["Id"] == beta)["UserData"]

    with live.admin() as c:
        _filled(live, c, path, params)
        loads = kept.loads
        for _ in range(10):  # (kept once asked a few times at one user-data stamp)
            body = _whole_from_store(live, c, path, params)
            if kept.loads > loads:
                break
        else:
            raise AssertionError("the filled mixes never took the kept user data")
        body = _whole_from_store(live, c, path, params)
        assert body == _built(live, c, path, params, False, 7) and beta_data(body)["Played"] is False
        try:
            assert c.post(f"/UserPlayedItems/{beta}", params={"userId": live.admin_id}).status_code == 200
            body = _whole_from_store(live, c, path, params)
            assert beta_data(body)["Played"] is True and body == _built(live, c, path, params, False, 7)
            assert c.post(f"/UserFavoriteItems/{beta}", params={"userId": live.admin_id}).status_code == 200
            body = _whole_from_store(live, c, path, params)
            assert beta_data(body)["IsFavorite"] is True and body == _built(live, c, path, params, False, 7)
        finally:
            c.delete(f"/UserPlayedItems/{beta}", params={"userId": live.admin_id})
            c.delete(f"/UserFavoriteItems/{beta}", params={"userId": live.admin_id})


def test_a_filled_mix_keeps_to_the_viewers_libraries(live: LiveServer) -> None:
    libraries = live.extra["libraries"]
    alpha = _track(live, "Alpha")
    in_a = {_track(live, n) for n in ("Alpha", "Beta", "Gamma")}
    uid, token = new_user(live, "mixfill-a", EnableAllFolders=False, EnabledFolders=[libraries["a"]])
    path = f"/Songs/{alpha}/InstantMix"
    with live.admin() as c:
        _filled(live, c, path, {**PARAMS, "userId": live.admin_id})
        everyone = {i["Id"] for i in httpx.Response(200, content=_whole_from_store(
            live, c, path, {**PARAMS, "userId": live.admin_id})).json()["Items"]}
        assert everyone - in_a  # the admin's mix has tracks of the other library
    with live.client(token, device="mixfill-a") as c:
        # (the user's CanDelete differs from the admin's: another shape, filled for this user's asks)
        _filled(live, c, path, {**PARAMS, "userId": uid})
        got = {i["Id"] for i in httpx.Response(200, content=_whole_from_store(
            live, c, path, {**PARAMS, "userId": uid})).json()["Items"]}
        assert got and got <= in_a


def test_a_shape_too_big_for_the_store_is_not_filled(live: LiveServer) -> None:
    svc = live.ctx.items
    open_store(live)
    fill = mix_fill.MixFill(live.ctx.db, svc)
    fill.share_of_store = 0.0  # (this fill's only: the server's own goes on)
    opts = options_from(["PrimaryImageAspectRatio", "Genres"])
    use = svc.store_use(opts, True)
    try:
        fill.want(use, opts, True)
        deadline = time.monotonic() + 30
        while not fill._shapes[use.shape].too_big and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fill._shapes[use.shape].too_big and not fill.filled(use) and fill.passes == 0
        assert fill.built <= mix_fill.BATCH  # one batch looked at, then it stopped
    finally:
        fill.close()


def test_the_fill_waits_while_the_rest_of_the_process_is_busy() -> None:
    class Store:  # (the store writer's CPU, which _Quiet leaves out: none here)
        write_seconds = 0.0

    quiet = mix_fill._Quiet(Store())
    stop = threading.Event()
    done = threading.Event()

    def burn() -> None:  # another thread of the process using a core (a request, say)
        while not done.is_set():
            sum(range(20_000))

    worker = threading.Thread(target=burn, daemon=True)
    worker.start()
    waited = threading.Thread(target=lambda: quiet.wait(stop), daemon=True)
    try:
        time.sleep(0.2)
        waited.start()
        waited.join(1.5)
        assert waited.is_alive()  # busy: no batch
    finally:
        done.set()
        worker.join()
    waited.join(3.0)
    assert not waited.is_alive()  # quiet again: the next batch goes
    quiet.mark()
    assert quiet.wait(stop)
    stop.set()
    assert not quiet.wait(stop)  # stopping


def test_the_track_map_is_read_only_once_the_process_is_quiet(live: LiveServer) -> None:
    """A pass's map of the tracks (~0.2 s of CPU at 100k tracks) waits, as a batch does, while the
    rest of the process is busy (here a thread of the process burning a core, as back-to-back mixes
    do): made as soon as the library had settled, it ran among the very mixes that armed the fill."""
    alpha, beta = _track(live, "Alpha"), _track(live, "Beta")
    path = f"/Songs/{alpha}/InstantMix"
    params = {**PARAMS, "userId": live.admin_id}
    fill, db = live.ctx.browse.related.mix_fill, live.ctx.db
    done = threading.Event()

    def burn() -> None:
        while not done.is_set():
            sum(range(20_000))

    with live.admin() as c:
        _filled(live, c, path, params)
        assert fill.tracks(db.content_generation) is not None
        item = c.get(f"/Items/{beta}", params={"userId": live.admin_id}).json()
        worker = threading.Thread(target=burn, daemon=True)
        worker.start()
        try:
            assert c.post(f"/Items/{beta}", json={**item, "Name": "Beta Busy"}).status_code == 204
            generation = db.content_generation
            _ask(c, path, params, False, 7)  # (arms the fill for the new epoch)
            time.sleep(2.0)  # the settle (0.2 s here) several times over
            assert db.content_generation == generation
            assert fill.tracks(generation) is None, "the map was read while the process was busy"
        finally:
            done.set()
            worker.join()
        try:
            deadline = time.monotonic() + 30
            while fill.tracks(generation) is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert fill.tracks(generation) is not None, "the map was never read once the process was quiet"
            _filled(live, c, path, params)  # (and the pass goes on as before)
        finally:
            assert c.post(f"/Items/{beta}", json=item).status_code == 204


def test_the_track_map_answers_the_playable_test_as_the_database_does(live: LiveServer) -> None:
    from server.library.browse.related import _playable_ids

    libraries = live.extra["libraries"]
    alpha = _track(live, "Alpha")
    with live.admin() as c:
        _filled(live, c, f"/Songs/{alpha}/InstantMix", {**PARAMS, "userId": live.admin_id})
    db = live.ctx.db
    tracks = live.ctx.browse.related.mix_fill.tracks(db.content_generation)
    assert tracks is not None and len(tracks.keys) == 6
    every = [i.id for i in items(live)]  # tracks, albums, artists, folders, libraries
    for allowed in (None, frozenset([libraries["a"]]), frozenset([libraries["b"]]), frozenset(libraries.values())):
        expected = db.read_sync(lambda s, allowed=allowed: _playable_ids(s, every, allowed, None))
        assert expected and tracks.playable(every, allowed) == expected, allowed
    assert tracks.playable(every, frozenset()) == set()  # no library allowed: no track
    assert tracks.playable(["not-an-id", alpha], None) is None  # (not 32-hex: the database answers)
    assert live.ctx.browse.related.mix_fill.tracks(db.content_generation + 1) is None  # another generation's


def _first_run(tmp_path: Path) -> tuple[Path, tuple[str | None, str | None], str, dict, bytes]:
    """A server with a small music library whose mix was filled and then asked wholly from the
    store, stopped cleanly (the record is written at close): (the record, the admin's token and
    id, the mix's path and params, its bytes)."""
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        complete_wizard(live)
        _library(live, tmp_path / "media", "Music", [("Band", "Record", "Rock", "Alpha"),
                                                      ("Band", "Record", "Rock;Jazz", "Beta"),
                                                      ("Other", "Second", "Jazz", "Gamma")])
        wait_for_artwork(live)
        path = f"/Songs/{_track(live, 'Alpha')}/InstantMix"
        params = {**PARAMS, "userId": live.admin_id}
        with live.admin() as c:
            _filled(live, c, path, params)
            before = _whole_from_store(live, c, path, params)
        record = mix_fill.record_path(live.ctx.items.store)
    finally:
        stop_server(live)
    assert record is not None and record.exists()
    return record, (live.admin_token, live.admin_id), path, params, before


def _filled_unasked(live: LiveServer, timeout: float = 60) -> FragmentStore:
    """Wait (never asking for a mix: the browse part is read only once made) until a pass of the
    restarted server's fill covers the current epoch."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        related = live.ctx.browse.__dict__.get("related")
        if related is not None and related.mix_fill.passes and related.mix_fill.filled(_use(live, live.admin_id)):
            store = open_store(live)
            store.flush()
            return store
        time.sleep(0.1)
    raise AssertionError("the restarted server's fill never covered the epoch")


def test_a_restarted_server_fills_the_shapes_the_last_run_wanted_without_a_mix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wanted shapes outlive a restart (mix_fill.RECORD): the restarted server's fill runs a
    pass of its own, no mix asked, and the first mix after it is wholly from the store, the bytes
    of the last run's mix and of the built path. A damaged record is no record."""
    monkeypatch.setattr(mix_fill, "SETTLE_SECONDS", 0.2)
    record, admin, path, params, before = _first_run(tmp_path)

    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        live.admin_token, live.admin_id = admin
        store = _filled_unasked(live)
        fill = live.ctx.browse.related.mix_fill
        if store.adopted and all(s.epoch == store.adopted for s in fill._shapes.values()):
            assert fill.built == 0  # (the clean close's epoch taken over: the pass only read the fragments)
        with live.admin() as c:
            for _ in range(3):  # (a background write after the start: the fill covers the new epoch too)
                hits = store.hits
                after = _ask(c, path, params, False, 7)
                if _count(after, False) and store.hits - hits == _count(after, False):
                    break
                store = _filled_unasked(live)
            else:
                raise AssertionError("the mix never came wholly from the store after the restart")
            assert after == before == _built(live, c, path, params, False, 7)
    finally:
        stop_server(live)

    record.write_text('{"shapes": [{"fields": 7}]')  # damaged: the server starts, nothing is filled
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and live.ctx.browse.__dict__.get("related") is None:
            time.sleep(0.1)
        related = live.ctx.browse.__dict__.get("related")
        assert related is not None  # (resumed: the record is there)
        time.sleep(1)
        assert related.mix_fill.passes == 0 and not related.mix_fill._shapes
    finally:
        stop_server(live)


def test_a_store_that_opens_after_ready_is_waited_for_and_a_close_ends_the_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fragment store opens on a thread of its own beside the start. When it is still not open
    at ready (here: held until the test lets it go, a second after ready), the fill's resume waits
    for it (context.RESUME_WAIT, off the loop) and the pass runs, no mix asked; it used to be
    skipped until the first mix. A server stopped while its store never opened stops at once (the
    close ends the wait)."""
    monkeypatch.setattr(mix_fill, "SETTLE_SECONDS", 0.2)
    record, admin, _, _, _ = _first_run(tmp_path)
    gate = threading.Event()
    opened = FragmentStore.open

    def late(self: FragmentStore, *args: object, **kwargs: object) -> bool:
        gate.wait(60)
        return opened(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(FragmentStore, "open", late)
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        live.admin_token, live.admin_id = admin
        time.sleep(1.0)  # (the resume, in the executor since ready, found the store still closed)
        assert live.ctx.startup.ready and not live.ctx.items.store.enabled
        gate.set()
        _filled_unasked(live, 30)
    finally:
        gate.set()
        stop_server(live)
    assert record.exists()

    gate.clear()  # a store that never opens: the resume waits, and the stop ends the wait
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        time.sleep(0.5)
        assert not live.ctx.items.store.enabled
        started = time.monotonic()
    finally:
        stop_server(live)
    assert time.monotonic() - started < 10
    assert live.ctx.browse.__dict__.get("related") is None  # (never resumed: the store never opened)
    gate.set()
