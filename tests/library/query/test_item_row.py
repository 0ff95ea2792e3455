"""``ItemRow`` (server/library/catalog/query.py) is the typed row of the ``items`` table: its fields
are the table's columns in their order with the model's types, and both ways of reading rows (the
hot path's ``get_rows`` and ``item_rows`` over ``select(items)``) give equal ItemRows."""

from __future__ import annotations

import typing
from datetime import UTC, datetime

from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from server.db.handles import items
from server.db.schema import metadata
from server.db.tables import Item
from server.library.catalog.query import ItemRow, get_row, get_rows, item_rows


def test_item_row_fields_are_the_items_columns_with_their_types():
    assert ItemRow._fields == tuple(Item.__table__.columns.keys())
    hints = typing.get_type_hints(ItemRow)
    for name in ItemRow._fields:
        model = Item.model_fields[name].annotation
        expected = int if model is bool else model  # SQLite hands booleans over as 0/1
        assert hints[name] == expected, (name, hints[name], model)


def test_get_rows_and_item_rows_agree_on_a_real_database(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'rows.db'}")
    metadata.create_all(engine)
    premiere = datetime(1979, 5, 25, tzinfo=UTC)
    with Session(engine) as s:
        s.add(Item(id="a" * 32, type="Movie", name="Alien", media_type="Video", premiere_date=premiere,
                   is_folder=False, run_time_ticks=70_000_000_000))
        s.add(Item(id="b" * 32, type="Folder", name="Films", is_folder=True))
        s.commit()
    with Session(engine) as s:
        fast = get_rows(s, ["b" * 32, "a" * 32, "c" * 32])
        slow = {r.id: r for r in item_rows(s.execute(select(items)).all())}
        one = get_row(s, "a" * 32)
    engine.dispose()
    assert set(fast) == set(slow) == {"a" * 32, "b" * 32}
    for key in fast:
        assert isinstance(fast[key], ItemRow) and isinstance(slow[key], ItemRow)
        assert fast[key] == slow[key]
    assert one == fast["a" * 32]
    assert one.premiere_date == premiere and one.premiere_date.tzinfo is not None
    assert isinstance(one.date_created, datetime) and one.run_time_ticks == 70_000_000_000
    assert bool(fast["b" * 32].is_folder) and not fast["a" * 32].is_folder
