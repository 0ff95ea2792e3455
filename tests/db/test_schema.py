"""The schema is defined once, in SQLAlchemy Core (server/db/schema.py); the SQLModel classes of
server/db/tables.py map those very tables. These tests keep the two in step: every class maps its
Core table and every field its column, with the type, nullability and default SQLModel would have
given the field itself, so that defining the tables in Core first changed no column, no statement
and no value read or written. (tests/db/test_migrations.py compares the Core metadata with what the
migrations make.)"""

from __future__ import annotations

import types
import typing
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import BigInteger, Integer, String, create_engine, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateTable
from sqlmodel import SQLModel
from sqlmodel.main import get_sqlalchemy_type
from sqlmodel.sql.sqltypes import AutoString
from sqlmodel.sql.sqltypes import UTCDateTime as SQLModelUTCDateTime

from server.db import schema, tables

ORM_CLASSES = [c for c in vars(tables).values()
               if isinstance(c, type) and issubclass(c, tables._Table) and c is not tables._Table]


def test_every_orm_class_maps_its_core_table_and_every_table_has_one():
    assert len(ORM_CLASSES) == len(schema.metadata.tables) == 26
    for cls in ORM_CLASSES:
        table = cls.__table__
        assert table is schema.metadata.tables[table.name], cls.__name__
    assert sorted(c.__table__.name for c in ORM_CLASSES) == sorted(schema.metadata.tables)
    assert tables.User.__table__ is schema.users and tables.Item.__table__ is schema.items
    # nothing is defined a second time on SQLModel's own metadata
    assert dict(SQLModel.metadata.tables) == {}


def _is_optional(annotation: typing.Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation)


@pytest.mark.parametrize("cls", ORM_CLASSES, ids=lambda c: c.__name__)
def test_each_field_maps_its_column_with_the_type_nullability_and_default_sqlmodel_would_give(cls):
    table = cls.__table__
    assert list(cls.model_fields) == list(table.c.keys())  # same columns, same order
    for name, field in cls.model_fields.items():
        column = table.c[name]
        assert field.metadata[0].sa_column is column, name  # the table's own Column object
        inferred = get_sqlalchemy_type(field)
        if inferred is AutoString:
            assert type(column.type) is String, name  # (AutoString is String outside MySQL)
        elif isinstance(inferred, SQLModelUTCDateTime) or inferred is SQLModelUTCDateTime:
            assert type(column.type) is schema.UTCDateTime, name
        elif inferred is Integer:
            assert type(column.type) in (Integer, BigInteger), name  # 64-bit where the schema says so
        else:
            assert type(column.type) is inferred, name
        assert column.nullable == (not column.primary_key and _is_optional(field.annotation)), name
        if field.default_factory is not None:
            assert column.default is not None and column.default.is_callable, name
            assert column.default.arg.__name__ == field.default_factory.__name__, name
        elif field.is_required() or field.default is None:
            assert column.default is None, name
        else:
            assert column.default is not None and column.default.arg == field.default, name


def test_the_core_utc_datetime_is_sqlmodels_in_ddl_and_in_values():
    ours, theirs = schema.UTCDateTime(), SQLModelUTCDateTime()
    assert repr(ours) == repr(theirs) == "UTCDateTime()"
    for dialect in (sqlite.dialect(), postgresql.dialect()):
        assert ours.compile(dialect=dialect) == theirs.compile(dialect=dialect)
    assert str(CreateTable(schema.users).compile(dialect=postgresql.dialect())).count("TIMESTAMP WITH TIME ZONE") == 3
    aware = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone(timedelta(hours=2)))
    for value in (None, aware, aware.astimezone(UTC)):
        assert ours.process_bind_param(value, sqlite.dialect()) == theirs.process_bind_param(value, sqlite.dialect())
        assert ours.process_result_value(value, sqlite.dialect()) == theirs.process_result_value(value, sqlite.dialect())
    naive = datetime(2024, 5, 6, 7, 8, 9)
    assert ours.process_result_value(naive, sqlite.dialect()) == theirs.process_result_value(naive, sqlite.dialect())
    with pytest.raises(ValueError):
        ours.process_bind_param(naive, sqlite.dialect())
    assert type(ours.coerce_compared_value(None, timedelta(1))) is type(theirs.coerce_compared_value(None, timedelta(1)))


def test_core_and_orm_statements_read_and_write_the_same_rows(tmp_path):
    """A row inserted through Core gets the Python-side defaults (utcnow, "{}") and reads back
    through the ORM class, in UTC; a row added through the ORM reads back through Core."""
    from sqlalchemy.orm import Session

    engine = create_engine(f"sqlite:///{tmp_path / 'schema.db'}")
    schema.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(schema.users).values(id="u1", name="core"))
    with Session(engine) as s:
        user = s.get(tables.User, "u1")
        assert user is not None and user.policy_json == "{}" and user.invalid_login_attempts == 0
        assert user.date_created.tzinfo is UTC
        s.add(tables.User(id="u2", name="orm"))
        s.commit()
    with engine.connect() as conn:
        row = conn.execute(select(schema.users).where(schema.users.c.id == "u2")).one()
    assert row.name == "orm" and row.configuration_json == "{}" and row.date_created.tzinfo is UTC
    engine.dispose()
