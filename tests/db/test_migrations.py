"""The Alembic migrations build exactly the schema server/db/tables.py declares (so a change to a
table without a migration, or the reverse, fails here), every head is reached, and upgrading an
up-to-date database does nothing."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect
from sqlmodel import SQLModel

import server.db.tables  # noqa: F401  (registers the tables on SQLModel.metadata)
from server.db import migrate


def _upgraded(tmp_path):
    url = f"sqlite:///{tmp_path / 'schema.db'}"
    engine = create_engine(url)
    migrate.upgrade(engine, url)
    return engine, url


def test_migrations_match_the_tables(tmp_path):
    engine, _ = _upgraded(tmp_path)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": False})
        diff = compare_metadata(context, SQLModel.metadata)
    # Tables the migrations create outside SQLModel (the full-text search index) are not drift.
    diff = [d for d in diff if not (d[0] == "remove_table" and d[1].name.startswith("item_search"))]
    assert diff == [], f"schema drift between tables.py and the migrations: {diff}"
    engine.dispose()


def test_every_head_is_applied_and_a_second_upgrade_is_a_no_op(tmp_path):
    engine, url = _upgraded(tmp_path)
    heads = set(ScriptDirectory.from_config(migrate.alembic_config(url)).get_heads())
    with engine.connect() as conn:
        assert set(MigrationContext.configure(conn).get_current_heads()) == heads
    tables = set(inspect(engine).get_table_names())
    assert not migrate.pending(engine, url)
    migrate.upgrade(engine, url)
    assert set(inspect(engine).get_table_names()) == tables
    engine.dispose()
