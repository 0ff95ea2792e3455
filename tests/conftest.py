"""Shared fixtures: a real Reelroom server (uvicorn on 127.0.0.1, ephemeral port, fresh data
folder) and small helpers for talking to it like a Jellyfin client does."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _share_one_ssl_context() -> None:
    """httpx builds a new SSL context (the CA bundle loaded and parsed) for every client left
    at its default ``verify``: ~20-60 ms each, and the suite makes thousands of clients (most
    of them plain http to 127.0.0.1). Here every such client in the test process (the tests',
    the fakes', and the in-process server's own) gets one context, made once the way httpx makes
    its default (same CA bundle, same settings); a client given ``verify``, ``cert`` or
    ``trust_env=False`` builds its own as before."""
    shared: list[object] = []

    def default_context() -> object:
        if not shared:
            shared.append(httpx.create_ssl_context())
        return shared[0]

    for cls in (httpx.Client, httpx.AsyncClient):
        original = cls.__init__

        def init(self, *args, __original=original, **kwargs) -> None:
            if kwargs.get("verify", True) is True and kwargs.get("cert") is None and kwargs.get("trust_env", True):
                kwargs["verify"] = default_context()
            __original(self, *args, **kwargs)

        cls.__init__ = init


_share_one_ssl_context()

# Set (by tests/with_postgres.sh) to a PostgreSQL server's maintenance database: every test server
# then gets a database of its own on that server, created at start and dropped at stop.
TEST_DATABASE_URL = os.environ.get("REELROOM_TEST_DATABASE_URL") or None
ON_POSTGRES = bool(TEST_DATABASE_URL and TEST_DATABASE_URL.startswith("postgres"))
sqlite_only = pytest.mark.skipif(ON_POSTGRES, reason="checks SQLite itself (its file, pragmas or FTS5 "
                                                     "index); REELROOM_TEST_DATABASE_URL is set")


def create_test_database() -> str:
    """A new, empty database on the REELROOM_TEST_DATABASE_URL server; returns its URL."""
    from sqlalchemy import create_engine

    from server.db.dialect import normalize_url

    base = create_engine(normalize_url(TEST_DATABASE_URL), isolation_level="AUTOCOMMIT")
    name = f"reelroom_test_{uuid.uuid4().hex[:12]}"
    with base.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    base.dispose()
    return base.url.set(database=name).render_as_string(hide_password=False)


_TEST_DATABASES: dict[str, str] = {}  # data folder -> its database (PostgreSQL runs)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for url in _TEST_DATABASES.values():
        try:
            drop_test_database(url)
        except Exception as exc:  # noqa: BLE001  (the cluster is thrown away anyway)
            print(f"could not drop the test database {url}: {exc}")
    _TEST_DATABASES.clear()


def drop_test_database(url: str) -> None:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    name = make_url(url).database
    base = create_engine(make_url(url).set(database=make_url(TEST_DATABASE_URL).database),
                         isolation_level="AUTOCOMMIT")
    with base.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    base.dispose()


AUTH_BASE = 'MediaBrowser Client="Reelroom Tests", Device="pytest", DeviceId="{device}", Version="1.0.0"'


def auth_header(token: str | None = None, device: str = "test-device") -> dict[str, str]:
    value = AUTH_BASE.format(device=device)
    if token:
        value += f', Token="{token}"'
    return {"Authorization": value}


@dataclass
class LiveServer:
    url: str
    data_dir: Path
    runner: object
    thread: threading.Thread
    admin_token: str | None = None
    admin_id: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def ctx(self):
        return self.runner.ctx

    def client(self, token: str | None = None, device: str = "test-device") -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=auth_header(token, device), timeout=30)

    def admin(self) -> httpx.Client:
        assert self.admin_token, "use the `server` fixture (wizard completed) for an admin client"
        return self.client(self.admin_token, "admin-device")


OFFLINE_URL = "http://127.0.0.1:9"  # nothing listens there: online providers fail fast


def keep_providers_offline(data_dir: Path) -> None:
    """A new test server's online providers (TMDb, TVmaze, MusicBrainz, LrcLib, ...) point at
    127.0.0.1 until a test points them at its fake: no test reaches the internet."""
    import json

    from server.metadata.settings import DEFAULTS, validate_provider_settings

    config = data_dir / "config"
    config.mkdir(parents=True, exist_ok=True)
    for section, defaults in DEFAULTS.items():
        path = config / f"{section}.json"
        if not path.exists():
            urls = {k: OFFLINE_URL + ("/t/p/" if k == "ImageBaseUrl" else "") for k in defaults if k.endswith("Url")}
            path.write_text(json.dumps(validate_provider_settings(section, urls)), encoding="utf-8")


def outside_write(data_dir: Path, statement: str) -> int:
    """Run one SQL statement on a stopped server's database behind its back (as the sqlite3
    shell or a restored backup would), on whichever backend the tests use; returns the rows it
    changed."""
    import sqlite3

    from sqlalchemy import create_engine, text

    from server.db.dialect import normalize_url
    from server.paths import ServerPaths

    url = _TEST_DATABASES.get(str(Path(data_dir).resolve())) if ON_POSTGRES else None
    if url is None:
        with sqlite3.connect(ServerPaths(data_dir).database_file) as conn:
            count = conn.execute(statement).rowcount
        conn.close()
        return count
    engine = create_engine(normalize_url(url))
    try:
        with engine.begin() as conn:
            return conn.execute(text(statement)).rowcount
    finally:
        engine.dispose()


def start_server(data_dir: Path, **options) -> LiveServer:
    from server.context import ServerOptions
    from server.runner import ServerRunner

    keep_providers_offline(data_dir)
    if ON_POSTGRES and options.get("database_url") is None:
        # one database per data folder, so a server restarted on the same folder finds its data
        key = str(Path(data_dir).resolve())
        if key not in _TEST_DATABASES:
            _TEST_DATABASES[key] = create_test_database()
        options["database_url"] = _TEST_DATABASES[key]
    opts = ServerOptions(data_dir=data_dir, port=0, host="127.0.0.1", enable_lan=False, **options)
    runner = ServerRunner(opts)
    thread = threading.Thread(target=runner.serve, name="reelroom-test-server", daemon=True)
    thread.start()
    if not runner.ready.wait(120):
        raise RuntimeError("the test server did not become ready")
    return LiveServer(url=f"http://127.0.0.1:{runner.port}", data_dir=data_dir, runner=runner, thread=thread)


def stop_server(live: LiveServer) -> None:
    live.runner.request_shutdown()
    live.thread.join(20)
    assert not live.thread.is_alive(), f"the server thread did not stop; its threads now:\n{thread_stacks()}"


def thread_stacks() -> str:
    """Every thread's stack (for a test that waited for one in vain)."""
    import sys
    import traceback

    names = {t.ident: t.name for t in threading.enumerate()}
    return "\n".join(f"--- {names.get(ident, ident)}\n" + "".join(traceback.format_stack(frame))
                     for ident, frame in sys._current_frames().items())


def complete_wizard(live: LiveServer, name: str = "admin", password: str = "s3cret!") -> None:
    with live.client() as c:
        assert c.post("/Startup/Configuration", json={"UICulture": "en-US", "MetadataCountryCode": "US",
                                                      "PreferredMetadataLanguage": "en"}).status_code == 204
        assert c.get("/Startup/User").status_code == 200
        assert c.post("/Startup/User", json={"Name": name, "Password": password}).status_code == 204
        assert c.post("/Startup/Complete").status_code == 204
        r = c.post("/Users/AuthenticateByName", json={"Username": name, "Pw": password})
        assert r.status_code == 200, r.text
        live.admin_token = r.json()["AccessToken"]
        live.admin_id = r.json()["User"]["Id"]


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A server whose startup wizard has not run."""
    live = start_server(tmp_path / "data")
    yield live
    stop_server(live)


@pytest.fixture
def server(fresh_server: LiveServer) -> LiveServer:
    """A server with the wizard completed and an admin signed in (``server.admin()``)."""
    complete_wizard(fresh_server)
    return fresh_server
