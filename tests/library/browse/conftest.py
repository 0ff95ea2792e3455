"""A live server over a scanned copy of the generated library, for the browsing tests.

The browse tests change state (played items, playlists, collections, edits), so they get their
own server rather than the read-only ``scanned`` one; each test uses its own items or undoes
what it did. A theme song and a theme video are added next to Inception before the scan.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library.conftest import items, one
from tests.library_helpers import add_library_and_scan
from tests.mediagen import make_audio, make_video

__all__ = ["items", "one", "new_user", "ids_by_name"]


def prepare_media(library_source: Path, target: Path) -> Path:
    shutil.copytree(library_source, target)
    inception = target / "movies" / "Inception (2010) [tmdbid-27205]"
    make_audio(inception / "theme.mp3", tags={"title": "Inception Theme"}, frequency=220)
    make_video(inception / "backdrops" / "Dream.mkv", seconds=1.0, width=160, height=120, fps=10)
    make_audio(target / "music" / "Other Band" / "Third Album" / "01 - Pop Song.mp3", frequency=660, tags={
        "title": "Pop Song", "artist": "Other Band", "album_artist": "Other Band", "album": "Third Album",
        "track": "1", "date": "2010", "genre": "Pop"})
    other = target / "shows" / "Other Show (2020)" / "Season 01"
    for n in (1, 2):
        make_video(other / f"Other Show S01E0{n}.mkv", seconds=1.0, width=160, height=120, fps=10)
    return target


def scan_all(live: LiveServer, media: Path) -> dict[str, str]:
    return {kind: add_library_and_scan(live, kind.title(), ctype, [media / kind])
            for kind, ctype in (("movies", "movies"), ("shows", "tvshows"), ("music", "music"))}


@pytest.fixture(scope="session")
def browse_server(tmp_path_factory: pytest.TempPathFactory, library_source: Path) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("browse")
    media = prepare_media(library_source, root / "media")
    live = start_server(root / "data")
    complete_wizard(live)
    live.extra["media"] = media
    live.extra["libraries"] = scan_all(live, media)
    yield live
    stop_server(live)


def new_user(live: LiveServer, name: str, password: str = "pw", **policy: object) -> tuple[str, str]:
    """Create a user (optionally changing policy flags); returns (user id, access token)."""
    with live.admin() as c:
        r = c.post("/Users/New", json={"Name": name, "Password": password})
        assert r.status_code == 200, r.text
        user = r.json()
        if policy:
            merged = {**user["Policy"], **policy}
            r = c.post(f"/Users/{user['Id']}/Policy", json=merged)
            assert r.status_code == 204, r.text
    with live.client(device=f"device-{name}") as c:
        r = c.post("/Users/AuthenticateByName", json={"Username": name, "Pw": password})
        assert r.status_code == 200, r.text
        return user["Id"], r.json()["AccessToken"]


def ids_by_name(live: LiveServer, kind: str) -> dict[str, str]:
    return {i.name: i.id for i in items(live, type=kind)}


def user_client(live: LiveServer, token: str, device: str = "browse-user") -> httpx.Client:
    return live.client(token, device)
