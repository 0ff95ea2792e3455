"""The page fill (server/library/catalog/page_fill.py) and the code stamp the store keeps by.

A GetItems listing a client asked is kept in a record across a restart; a server started with
another code stamp (an upgrade: no fragment of its shapes) fills that listing's pages in the
background, no request asking, so its first page is wholly stored fragments: the bytes the server
builds without the store. Pages asked during the fill are those bytes too; a stop during the fill
is prompt; the user's data is as it was. The code stamp is a hash of the source: a reinstall (the
same files made again) keeps it, a changed line does not.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest

from server.library.catalog import fragment_store, page_fill
from server.library.catalog.items import FRAGMENT_MODULES, FRAGMENT_SEEDS, fragment_code_stamp, module_file
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan, open_store, restarted, store_off, wait_for_artwork
from tests.mediagen import make_audio

TITLES = ("Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta")


def _params(live: LiveServer) -> dict:
    return {"userId": live.admin_id, "recursive": "true", "includeItemTypes": "Audio", "sortBy": "SortName",
            "fields": "PrimaryImageAspectRatio,MediaSources,Overview", "limit": "3"}


def _page(c: httpx.Client, params: dict, start: int = 0) -> bytes:
    r = c.get("/Items", params={**params, "startIndex": str(start)})
    assert r.status_code == 200, r.text
    return r.content


def _built(live: LiveServer, c: httpx.Client, params: dict, start: int = 0) -> bytes:
    """The page as the server builds it without the store (and without kept fragments)."""
    with store_off(live):
        return _page(c, params, start)


def _user_data(live: LiveServer) -> list[tuple]:
    """Every song's UserData for the admin, as the server answers it (no store, no kept fragments)."""
    with live.admin() as c:
        body = _built(live, c, {"userId": live.admin_id, "recursive": "true", "includeItemTypes": "Audio",
                                "sortBy": "SortName"})
    return [(i["Id"], sorted(i["UserData"].items())) for i in httpx.Response(200, content=body).json()["Items"]]


def _first_run(tmp_path: Path) -> tuple[LiveServer, dict]:
    """A music library of seven songs; the admin asks the listing's first page, marks one song
    played and one a favourite; a clean stop (the fill's record is written)."""
    music = tmp_path / "media" / "music"
    for n, title in enumerate(TITLES, 1):
        make_audio(music / "Band" / "Record" / f"0{n} - {title}.mp3", tags={
            "title": title, "artist": "Band", "album_artist": "Band", "album": "Record", "track": str(n)})
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        complete_wizard(live)
        add_library_and_scan(live, "Music", "music", [music])
        wait_for_artwork(live)
        params = _params(live)
        with live.admin() as c:
            first = httpx.Response(200, content=_page(c, params)).json()["Items"]
            assert len(first) == 3
            assert c.post(f"/Users/{live.admin_id}/PlayedItems/{first[0]['Id']}").status_code == 200
            assert c.post(f"/Users/{live.admin_id}/FavoriteItems/{first[1]['Id']}").status_code == 200
        live.extra["user_data"] = _user_data(live)
    finally:
        stop_server(live)
    assert page_fill.record_path(live.ctx.items.store).exists()
    return live, params


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small pages and a short settle; the next start has another code stamp (another build)."""
    monkeypatch.setattr(page_fill, "PAGE", 2)
    monkeypatch.setattr(page_fill, "FIRST_PAGES", 1)
    monkeypatch.setattr(page_fill, "SETTLE_SECONDS", 0.2)


def _other_build(monkeypatch: pytest.MonkeyPatch) -> None:
    import server.context

    monkeypatch.setattr(server.context, "fragment_code_stamp", lambda: "another build of the DTO modules")


def test_after_a_start_with_another_code_stamp_the_listing_is_filled_without_a_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quick: None) -> None:
    before, params = _first_run(tmp_path)
    data = before.extra["user_data"]
    _other_build(monkeypatch)
    live = restarted(tmp_path, before)
    try:
        store = live.ctx.items.store
        fill = live.ctx.page_fill
        assert store.stamp == "another build of the DTO modules" and store.adopted == 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not fill.passes:
            time.sleep(0.05)
        assert fill.passes >= 1 and fill.pages >= 4  # every page of the listing (7 songs, 2 a page)
        store.flush()
        assert store.written >= len(TITLES)  # built and stored by the fill: no page was asked
        with live.admin() as c:
            for _ in range(3):
                passes = fill.passes
                hits = store.hits
                first = _page(c, params)
                if store.hits - hits == 3:
                    break
                # (a background write after the pass moved the epoch on: the fill covers the new one)
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and fill.passes == passes:
                    time.sleep(0.05)
                store.flush()
            else:
                raise AssertionError("the first page after the start was never wholly the fill's fragments")
            assert first == _built(live, c, params)
            for start in (3, 6):
                assert _page(c, params, start) == _built(live, c, params, start)
        assert _user_data(live) == data  # the user's data as it was
    finally:
        stop_server(live)


def test_pages_during_the_fill_are_the_built_bytes_and_a_stop_during_it_is_prompt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quick: None) -> None:
    before, params = _first_run(tmp_path)
    data = before.extra["user_data"]
    _other_build(monkeypatch)
    from server.library.catalog.items import ItemService

    reads = threading.Event()
    fill_read = ItemService.fill_read

    def slow(self: ItemService, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        read = fill_read(self, *args, **kwargs)  # type: ignore[arg-type]
        if read is None:
            return None

        def slowly(s: object) -> tuple[int, int]:
            reads.set()
            time.sleep(0.3)  # (a slow disk: the fill's pages take a while)
            return read(s)  # type: ignore[arg-type]
        return slowly

    monkeypatch.setattr(ItemService, "fill_read", slow)
    live = restarted(tmp_path, before)
    stopped = False
    try:
        assert reads.wait(30), "the fill never began"
        assert _user_data(live) == data
        fill = live.ctx.page_fill
        asked = 0
        deadline = time.monotonic() + 90
        with live.admin() as c:
            while time.monotonic() < deadline and not fill.passes:
                if fill.busy:  # (a page in the middle of the fill's pass)
                    start = (0, 3, 6)[asked % 3]
                    page = _page(c, params, start)
                    assert page == _built(live, c, params, start)
                    assert page == _page(c, params, start)
                    asked += 1
                time.sleep(0.4)  # (the fill takes the idle time: it waits while requests keep the process busy)
        assert fill.passes >= 1 and asked >= 3
        reads.clear()
        live.ctx.page_fill._families[next(iter(live.ctx.page_fill._families))].epoch = 0
        live.ctx.page_fill._wake.set()  # (another pass: stopped in its middle)
        assert reads.wait(30)
        started = time.monotonic()
        stop_server(live)
        stopped = True
        assert time.monotonic() - started < 3, "the stop waited for the fill"
    finally:
        if not stopped:
            stop_server(live)
    assert page_fill.record_path(live.ctx.items.store).exists()


def test_a_damaged_record_is_no_record(tmp_path: Path) -> None:
    live = start_server(tmp_path / "data", reply_cache_mib=0)
    try:
        open_store(live)
        record = page_fill.record_path(live.ctx.items.store)
    finally:
        stop_server(live)
    for text in ('{"families": [{"user": 7}]', '{"families": [{"user": null, "camel": false, "fields": [], '
                 '"images": true, "limit": null, "types": null, "query": {"no_such_field": 1}, "asked": 0}]}'):
        record.write_text(text)
        live = start_server(tmp_path / "data", reply_cache_mib=0)
        try:
            time.sleep(1)
            assert not live.ctx.page_fill._families and live.ctx.page_fill.passes == 0
        finally:
            stop_server(live)


# -- the code stamp ----------------------------------------------------------------------------


def test_the_code_stamp_is_the_source_a_reinstall_keeps_it_and_a_change_starts_over(tmp_path: Path) -> None:
    """The stamp is a hash of the modules' source: the same files made again (a reinstall, a
    ``git pull`` that changed none of them: new mtimes) keep it and with it the store's shapes; one
    changed line in the DTO builder gives another stamp, so another shape for every DTO shape, and
    the store serves none of the old build's rows."""
    copy = tmp_path / "install"
    files = []
    for name in FRAGMENT_MODULES:
        target = copy / module_file(name).relative_to(module_file("server.db").parents[2])
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module_file(name), target)  # (new files: new inode and mtime)
        files.append(target)
    stamp = fragment_store.code_stamp(files, "1.0")
    assert stamp == fragment_code_stamp()  # (the running code's stamp is of these very files)
    time.sleep(0.01)
    for f in files:
        f.touch()
    assert fragment_store.code_stamp(files, "2.0") == stamp  # reinstalled, another version: kept
    dto = copy / "server" / "library" / "catalog" / "dto.py"
    dto.write_text(dto.read_text().replace('"UserData"', '"UserData" ', 1))
    changed = fragment_store.code_stamp(files, "1.0")
    assert changed != stamp
    (copy / "server" / "library" / "catalog" / "media_sources.py").unlink()  # (a frozen bundle: no files)
    assert fragment_store.code_stamp(files, "1.0") == f"1.0|{fragment_store.FORMAT}|frozen"

    store = fragment_store.FragmentStore(tmp_path / "fragments.sqlite3", 8 << 20, lambda: stamp)
    assert store.open()
    shape = store.shape(("a shape",))
    use = fragment_store.StoreUse(store, shape, store.epoch((1, 1)))
    store.put([(shape, "a" * 32, use.epoch, b"d" * 16, "Audio", 0, None, b'{"Name":"x"')])
    store.flush()
    store.close()
    for source, found in ((lambda: stamp, True), (lambda: changed, False)):
        store = fragment_store.FragmentStore(tmp_path / "fragments.sqlite3", 8 << 20, source)
        assert store.open()
        try:
            assert bool(store.fetch(store.shape(("a shape",)), ["a" * 32])) is found
        finally:
            store.close()


def test_the_stamped_modules_are_every_server_module_the_dto_modules_import() -> None:
    """FRAGMENT_MODULES is the closure of the seeds' imports of ``server`` modules (at the top or
    in a function): a module the DTO code comes to import is part of the stamp, or this fails."""
    import ast

    def imports(name: str) -> set[str]:
        path = module_file(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                out.add(base)
                out.update(f"{base}.{a.name}" for a in node.names)
        return {m for m in out if m.startswith("server.") and module_file(m).exists()}

    seen: set[str] = set()
    todo = list(FRAGMENT_SEEDS)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(imports(name))
    assert sorted(seen) == sorted(FRAGMENT_MODULES)


def test_a_pass_trims_the_heap_every_second_while_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          quick: None) -> None:
    """What a pass's pages allocate and free goes back to the system every ``TRIM_SECONDS`` (1 s)
    of the pass, not only when it ends: every 5 s, a 100k listing's pass kept 2-6 MiB of freed heap
    resident between two trims (RSS 77-82 MiB against 75-77 at 100k, bench/idle_memory.py)."""
    before, params = _first_run(tmp_path)
    _other_build(monkeypatch)
    monkeypatch.setattr(page_fill, "GAP", 0.7)  # (4 pages of 2 songs: a pass of ~3 s)
    monkeypatch.setattr(page_fill, "SETTLE_SECONDS", 1.0)  # (time to watch the trims before it starts)
    live = restarted(tmp_path, before)
    try:
        fill, db = live.ctx.page_fill, live.ctx.db
        during: list[float] = []
        trim = db.trim_heap

        def counted() -> object:
            if fill.busy:
                during.append(time.monotonic())
            return trim()

        db.trim_heap = counted
        assert fill.passes == 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not fill.passes:
            time.sleep(0.05)
        assert fill.passes >= 1 and fill.pages >= 4
        assert len(during) >= 2, during  # within the pass, a second apart at least
        with live.admin() as c:
            assert _page(c, params) == _built(live, c, params)
    finally:
        stop_server(live)
