"""A row to change and write back as a plain object: what the ORM's mapped objects were to the
services that read a row, set a few attributes and let the session's flush write them, on the Core
tables of ``server/db/schema.py`` without SQLAlchemy's ORM, SQLModel or pydantic.

``Record.changes`` is what the flush wrote: the columns whose value differs from the row as read
(a column set to the value it had is left out; nothing changed, no statement). Write them with
``update(table).where(...).values(**changes)``: Core lists them in the table's column order, as the
ORM did, so the statements ``server/db/database.py`` classifies (a sign-in's ``UPDATE users SET
last_login_date=..., last_activity_date=... WHERE``) are spelled as before."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Record:
    """A row's columns as attributes (``Record(row._mapping)``, or a new row's values)."""

    def __init__(self, values: Mapping[Any, Any]) -> None:
        self.__dict__.update(values)
        self.__dict__["_before"] = dict(values)

    def changes(self) -> dict[str, Any]:
        """The columns set to a value they did not have."""
        before = self.__dict__["_before"]
        return {name: value for name, value in vars(self).items()
                if name != "_before" and (name not in before or value != before[name])}

    def values(self) -> dict[str, Any]:
        """Every column, as it is now."""
        return {name: value for name, value in vars(self).items() if name != "_before"}

    def __getattr__(self, name: str) -> Any:  # (a column the row did not have: the type checker's Any)
        raise AttributeError(name)
