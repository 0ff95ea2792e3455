"""server/db/database.py ``CoreSession``: what ``Database``'s reads and writes hand their function.
Core statements run on one pooled connection of its own, in one transaction, without SQLAlchemy's
ORM; the first ORM use (``add``, ``get``, a statement on an ORM class) makes the real ``Session`` on
that same connection and transaction, so a write that mixes both commits (or rolls back) as one,
as a plain ``Session`` did. Real databases: a SQLite file, or the PostgreSQL server of
tests/with_postgres.sh."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, insert, select, text

from server.db import schema
from server.db.database import CoreSession, Database, sqlite_url
from tests.conftest import ON_POSTGRES, create_test_database, drop_test_database

ROOT = Path(__file__).resolve().parents[2]


def _url(tmp_path: Path) -> str:
    return create_test_database() if ON_POSTGRES else sqlite_url(tmp_path / "t.db")


@pytest.fixture
def db(tmp_path: Path):
    url = _url(tmp_path)
    database = Database(url)
    schema.metadata.create_all(database.engine, tables=[schema.task_results, schema.activity_log])
    yield database
    database.close()
    if ON_POSTGRES:
        drop_test_database(url)


def _keys(db: Database) -> list[str]:
    return asyncio.run(db.read(lambda s: list(s.scalars(select(schema.task_results.c.task_key)
                                                         .order_by(schema.task_results.c.task_key)))))


def test_core_statements_run_on_one_connection_in_one_transaction(db: Database) -> None:
    seen: dict[str, Any] = {}

    def write(s: CoreSession) -> int:
        seen["type"] = type(s).__name__
        seen["before"] = s.in_transaction()
        s.execute(insert(schema.task_results), [{"task_key": "a"}, {"task_key": "b"}])
        seen["during"] = s.in_transaction()
        seen["same"] = s.connection() is s.connection()
        seen["bind"] = s.get_bind() is db.engine
        seen["info"] = s.info["database"] is db
        return s.scalar(select(func.count()).select_from(schema.task_results))

    assert asyncio.run(db.write(write)) == 2
    assert seen == {"type": "CoreSession", "before": False, "during": True, "same": True, "bind": True,
                    "info": True}
    assert _keys(db) == ["a", "b"]
    assert db.engine.pool.checkedout() == 0  # (given back)


def test_a_failed_write_leaves_nothing(db: Database) -> None:
    def write(s: CoreSession) -> None:
        s.execute(insert(schema.task_results).values(task_key="kept?"))
        raise RuntimeError("fails after its first statement")

    with pytest.raises(RuntimeError):
        asyncio.run(db.write(write))
    assert _keys(db) == []
    assert db.engine.pool.checkedout() == 0


def test_core_then_orm_in_one_write_is_one_transaction(db: Database) -> None:
    from server.db.tables import TaskResult

    def write(s: CoreSession) -> list[str]:
        s.execute(insert(schema.task_results).values(task_key="core"))
        s.add(TaskResult(task_key="orm", last_result_json="{}"))  # makes the Session, on the same connection
        s.flush()
        # the ORM's statement sees the Core row: the same transaction
        return sorted(r.task_key for r in s.scalars(select(TaskResult)))

    assert asyncio.run(db.write(write)) == ["core", "orm"]
    assert _keys(db) == ["core", "orm"]

    def failing(s: CoreSession) -> None:
        s.execute(insert(schema.task_results).values(task_key="core2"))
        s.add(TaskResult(task_key="orm2"))
        s.flush()
        raise RuntimeError("after both")

    with pytest.raises(RuntimeError):
        asyncio.run(db.write(failing))
    assert _keys(db) == ["core", "orm"]  # both rolled back together
    assert db.engine.pool.checkedout() == 0


def test_a_statement_on_an_orm_class_gives_orm_objects(db: Database) -> None:
    from server.db.tables import TaskResult

    asyncio.run(db.write(lambda s: s.execute(insert(schema.task_results).values(task_key="x", triggers_json="[]"))))
    got = asyncio.run(db.read(lambda s: [(type(r).__name__, r.task_key, r.triggers_json)
                                         for r in s.scalars(select(TaskResult))]))
    assert got == [("TaskResult", "x", "[]")]
    row = asyncio.run(db.read(lambda s: s.get(TaskResult, "x")))
    assert (row.task_key, row.triggers_json) == ("x", "[]")  # expire_on_commit=False: readable after
    plain = asyncio.run(db.read(lambda s: list(s.execute(select(schema.task_results.c.task_key)).all())))
    assert [tuple(r) for r in plain] == [("x",)]


SCRIPT = """
import asyncio, json, sys
from sqlalchemy import insert, select, text
from server.db import schema
from server.db.database import Database
db = Database(sys.argv[1])
schema.metadata.create_all(db.engine, tables=[schema.task_results])
asyncio.run(db.write(lambda s: s.execute(insert(schema.task_results).values(task_key="k"))))
keys = asyncio.run(db.read(lambda s: list(s.scalars(select(schema.task_results.c.task_key)))))
one = asyncio.run(db.read(lambda s: s.scalar(text("SELECT 1"))))
core_only = "sqlalchemy.orm" not in sys.modules
from server.db.tables import TaskResult
row = asyncio.run(db.read(lambda s: s.get(TaskResult, "k")))
db.close()
print(json.dumps({"keys": keys, "one": one, "core_only": core_only, "orm": row.task_key}))
"""


def test_core_reads_and_writes_import_no_orm(tmp_path: Path) -> None:
    """In a fresh interpreter: a database's reads and writes of Core statements never import
    ``sqlalchemy.orm`` (~0.26 G instructions of a start); the first ORM read works as before."""
    url = _url(tmp_path)
    try:
        out = subprocess.run([sys.executable, "-c", SCRIPT, url], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    finally:
        if ON_POSTGRES:
            drop_test_database(url)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"keys": ["k"], "one": 1, "core_only": True,
                                                               "orm": "k"}


def test_a_read_uses_no_connection_until_its_first_statement(db: Database) -> None:
    def read(s: CoreSession) -> tuple[int, int]:
        idle = db.engine.pool.checkedout()
        s.execute(text("SELECT 1"))
        return idle, db.engine.pool.checkedout()

    assert asyncio.run(db.read(read)) == (0, 1)
    assert db.engine.pool.checkedout() == 0
