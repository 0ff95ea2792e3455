"""`--database-url`: a missing driver, an unreachable server or a bad URL is one clear line on
stderr and exit status 2 (reelroom-server and the tray app alike), never a traceback; with a real
PostgreSQL (REELROOM_TEST_DATABASE_URL, tests/with_postgres.sh) both programs serve from it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ON_POSTGRES, create_test_database, drop_test_database

ROOT = Path(__file__).resolve().parents[2]


_HELD_PORTS: list[socket.socket] = []


def closed_port() -> int:
    """Bound and never listening for the rest of the run: connections are refused, and no later
    ephemeral bind (another test's server) can take the port."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _HELD_PORTS.append(s)
    return s.getsockname()[1]


def free_port() -> int:
    """A port nothing listens on now, for a server the test starts (released at once, unlike
    ``closed_port``'s, which stays bound so that nothing can listen on it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(code: str, *args: str, tmp_path: Path, block_psycopg: bool = False) -> subprocess.CompletedProcess:
    prelude = "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg2'] = None\n" if block_psycopg else ""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("REELROOM_DATABASE_URL", None)
    return subprocess.run([sys.executable, "-c", prelude + code, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


SERVER = "import sys; from app.server_main import main; sys.exit(main(sys.argv[1:]))"
DESKTOP = "import sys; from app.desktop_main import main; sys.exit(main(sys.argv[1:]))"


def assert_one_clear_line(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("program", [SERVER, DESKTOP], ids=["reelroom-server", "reelroom"])
def test_unreachable_postgres_is_one_line_and_exit_2(program, tmp_path):
    url = f"postgresql://reelroom:hunter2@127.0.0.1:{closed_port()}/library"
    result = run(program, "--data-dir", str(tmp_path / "data"), "--port", "0", "--database-url", url,
                 tmp_path=tmp_path)
    assert_one_clear_line(result, "Could not connect to the database", "127.0.0.1")
    assert "hunter2" not in result.stderr  # the password is not printed


@pytest.mark.parametrize("program", [SERVER, DESKTOP], ids=["reelroom-server", "reelroom"])
def test_missing_driver_is_one_line_and_exit_2(program, tmp_path):
    result = run(program, "--data-dir", str(tmp_path / "data"), "--port", "0",
                 "--database-url", "postgresql://reelroom@127.0.0.1/library", tmp_path=tmp_path, block_psycopg=True)
    assert_one_clear_line(result, "psycopg", "reelroom[postgres]")


def test_a_url_that_is_not_one_is_one_line_and_exit_2(tmp_path):
    result = run(SERVER, "--data-dir", str(tmp_path / "data"), "--database-url", "not a url", tmp_path=tmp_path)
    assert_one_clear_line(result, "Not a database URL")


def test_driverless_postgres_urls_mean_psycopg():
    from server.db.dialect import normalize_url

    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("sqlite:///x.db") == "sqlite:///x.db"


@pytest.mark.skipif(not ON_POSTGRES, reason="REELROOM_TEST_DATABASE_URL does not name a PostgreSQL server")
def test_reelroom_server_serves_from_postgres(tmp_path):
    url = create_test_database()
    port = free_port()
    env = {**os.environ, "REELROOM_DATABASE_URL": url}
    proc = subprocess.Popen([sys.executable, "-m", "app.server_main", "--data-dir", str(tmp_path / "data"),
                             "--port", str(port), "--host", "127.0.0.1", "--no-lan"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        info = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/System/Info/Public", timeout=2)
                if r.status_code == 200:
                    info = r.json()
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        assert info is not None, proc.stderr.read() if proc.poll() is not None else "no answer"
        assert info["StartupWizardCompleted"] is False
        from sqlalchemy import create_engine, inspect

        engine = create_engine(url)
        assert {"items", "users", "user_data"} <= set(inspect(engine).get_table_names())
        engine.dispose()
        assert not (tmp_path / "data" / "data" / "reelroom.db").exists()  # no SQLite file beside it
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        drop_test_database(url)
