"""Fixtures for remote metadata: fake providers on 127.0.0.1, a server configured to use them,
items inserted straight into the server's database, and the metadata log."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from server.db.tables import Item
from server.guid import guid_from_text
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.metadata.fakes import TMDB_KEY, FakeMusicBrainz, FakeTmdb


@pytest.fixture
def fake_tmdb() -> Iterator[FakeTmdb]:
    fake = FakeTmdb().start()
    yield fake
    fake.stop()


@pytest.fixture
def fake_musicbrainz() -> Iterator[FakeMusicBrainz]:
    fake = FakeMusicBrainz().start()
    yield fake
    fake.stop()


def configure_providers(server, tmdb_url: str, musicbrainz_url: str, **tmdb_extra: Any) -> None:
    with server.admin() as c:
        r = c.post("/System/Configuration/tmdb", json={"BaseUrl": tmdb_url, "ImageBaseUrl": tmdb_url + "/t/p/",
                                                       "ApiKey": TMDB_KEY, **tmdb_extra})
        assert r.status_code == 204, r.text
        r = c.post("/System/Configuration/musicbrainz", json={"BaseUrl": musicbrainz_url,
                                                              "CoverArtBaseUrl": musicbrainz_url})
        assert r.status_code == 204, r.text
        # TVmaze needs no key: keep it off the internet (the fake answers 404 to its paths)
        r = c.post("/System/Configuration/tvmaze", json={"BaseUrl": tmdb_url})
        assert r.status_code == 204, r.text


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One signed-in server for a test module (tests use distinct item paths and configure the
    providers themselves), so each test does not pay for a server start."""
    live = start_server(tmp_path_factory.mktemp("metadata") / "data")
    complete_wizard(live)
    yield live
    stop_server(live)


@pytest.fixture
def meta_server(shared_server: LiveServer, fake_tmdb: FakeTmdb, fake_musicbrainz: FakeMusicBrainz) -> LiveServer:
    """The shared server with both providers pointed at this test's fakes."""
    configure_providers(shared_server, fake_tmdb.url, fake_musicbrainz.url)
    return shared_server


class LogRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def warnings(self) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno >= logging.WARNING]


@pytest.fixture
def metadata_log() -> Iterator[LogRecords]:
    logger = logging.getLogger("reelroom.metadata")
    handler = LogRecords()
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(old_level)


def add_item(server, path: str, kind: str = "Movie", **fields: Any) -> str:
    """Insert an items row directly, the way the scanner would, and return its id."""
    item_id = guid_from_text(path)
    for key in ("provider_ids", "images", "genres", "locked_fields"):
        if key in fields:
            fields[f"{key}_json"] = json.dumps(fields.pop(key))

    def insert(session) -> None:
        session.add(Item(id=item_id, type=kind, path=path, **fields))

    server.ctx.db.write_sync(insert)
    return item_id


def get_item(server, item_id: str) -> Item:
    return server.ctx.db.read_sync(lambda s: s.get(Item, item_id))
