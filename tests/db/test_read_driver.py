"""Database.read_driver: statements on the DB-API cursor (query.driver_rows, get_user_data) run on
one pooled connection and no Session is made; the first thing that needs a Session makes it and
gives that connection back first (one connection per read); the connection is back in the pool
after the read, also when the read fails. read_lean's sessions keep using their Session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from server.db.database import CoreSession, Database, LeanSession, sqlite_url
from server.library.catalog.query import driver_rows


@pytest.fixture
def db(tmp_path: Path):
    database = Database(sqlite_url(tmp_path / "t.db"), readers=2)
    with database.engine.begin() as c:
        c.execute(text("CREATE TABLE t (id TEXT PRIMARY KEY, v INTEGER)"))
        c.execute(text("INSERT INTO t VALUES ('a', 1), ('b', 2), ('c', 3)"))
    yield database
    database.close()


def _sessions_made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many sessions (``CoreSession``: what a read's function is handed) get made."""
    made = [0]
    real = CoreSession.__init__

    def counting(self: CoreSession, *args: Any) -> None:
        made[0] += 1
        real(self, *args)

    monkeypatch.setattr(CoreSession, "__init__", counting)
    return made


def test_driver_statements_make_no_session_and_use_one_connection(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _sessions_made(monkeypatch)
    conns: list[int] = []

    def read(s: LeanSession) -> list[Any]:
        first = driver_rows(s, "SELECT id, v FROM t WHERE id IN ", ["a", "c"], " ORDER BY id")
        conns.append(id(s._raw))
        second = driver_rows(s, "SELECT v FROM t WHERE id IN ", ["b"])
        conns.append(id(s._raw))
        return [list(map(tuple, first or ())), list(map(tuple, second or ()))]

    got = asyncio.run(db.read_driver(read))
    assert got == [[("a", 1), ("c", 3)], [(2,)]]
    assert made == [0]
    assert len(set(conns)) == 1 and conns[0] != id(None)
    assert db.engine.pool.checkedout() == 0  # (given back)


def test_a_session_statement_takes_over_and_the_connection_goes_back(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _sessions_made(monkeypatch)

    def read(s: LeanSession) -> tuple[Any, ...]:
        before = driver_rows(s, "SELECT v FROM t WHERE id IN ", ["a"])
        assert s._raw is not None and db.engine.pool.checkedout() == 1
        total = s.execute(text("SELECT sum(v) FROM t")).scalar_one()  # makes the Session
        assert s._raw is None and db.engine.pool.checkedout() == 1  # (the Session's, not a second)
        after = driver_rows(s, "SELECT v FROM t WHERE id IN ", ["c"])  # now on the Session's connection
        return tuple(before or ()), total, tuple(after or ())

    before, total, after = asyncio.run(db.read_driver(read))
    assert [tuple(r) for r in before] == [(1,)] and total == 6 and [tuple(r) for r in after] == [(3,)]
    assert made == [1]
    assert db.engine.pool.checkedout() == 0


def test_a_failing_read_gives_the_connection_back(db: Database) -> None:
    def read(s: LeanSession) -> None:
        driver_rows(s, "SELECT v FROM t WHERE id IN ", ["a"])
        raise LookupError("no")

    with pytest.raises(LookupError):
        asyncio.run(db.read_driver(read))
    assert db.engine.pool.checkedout() == 0


def test_read_lean_keeps_its_session_for_driver_statements(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    made = _sessions_made(monkeypatch)

    def read(s: LeanSession) -> Any:
        found = driver_rows(s, "SELECT v FROM t WHERE id IN ", ["b"])
        assert s._raw is None  # (no pooled connection of its own: the Session's)
        return [tuple(r) for r in found or ()]

    assert asyncio.run(db.read_lean(read)) == [(2,)]
    assert made == [1]
    assert db.engine.pool.checkedout() == 0
