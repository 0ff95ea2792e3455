"""A generated library (ffmpeg, once per session) and a live server that scanned it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from server.db.tables import Item
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan, wait_for_artwork
from tests.mediagen import make_test_library


@pytest.fixture(scope="session")
def library_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("library-src")
    make_test_library(root)
    return root


@pytest.fixture(scope="session")
def scanned(tmp_path_factory: pytest.TempPathFactory, library_source: Path) -> Iterator[LiveServer]:
    """A server with the generated movies, shows and music scanned (read-only for tests)."""
    root = tmp_path_factory.mktemp("scanned")
    media = root / "media"
    shutil.copytree(library_source, media)
    live = start_server(root / "data")
    complete_wizard(live)
    live.extra["media"] = media
    live.extra["libraries"] = {
        kind: add_library_and_scan(live, kind.title(), ctype, [media / kind])
        for kind, ctype in (("movies", "movies"), ("shows", "tvshows"), ("music", "music"))
    }
    wait_for_artwork(live)  # frames grabbed after the scans become Primary images: let them land first
    yield live
    stop_server(live)


def items(live: LiveServer, **where: object) -> list[Item]:
    def read(s):
        q = select(Item)
        for key, value in where.items():
            q = q.where(getattr(Item, key) == value)
        return list(s.execute(q).scalars())

    return live.ctx.db.read_sync(read)


def one(live: LiveServer, **where: object) -> Item:
    found = items(live, **where)
    assert len(found) == 1, (where, [(i.type, i.name, i.path) for i in found])
    return found[0]


def streams(item: Item) -> list[dict]:
    return json.loads(item.media_streams_json)


def images(item: Item) -> list[dict]:
    return json.loads(item.images_json)
