"""Display preferences, stored per (user, preferences id, client), on the Core table
(``server/db/schema.py``): jellyfin-web asks for them on every home screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from sqlalchemy import insert, select, update

from server.db.database import Database
from server.db.schema import display_preferences
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.engine import Row
    from sqlalchemy.sql.elements import ColumnElement

    from server.db.database import CoreSession


def default_preferences(prefs_id: str, client: str) -> w.DisplayPreferencesDto:
    return w.DisplayPreferencesDto(
        Id=prefs_id, ViewType=None, SortBy="SortName", IndexBy=None, RememberIndexing=False, PrimaryImageHeight=250,
        PrimaryImageWidth=250, CustomPrefs={}, ScrollDirection="Horizontal", ShowBackdrop=True, RememberSorting=False,
        SortOrder="Ascending", ShowSidebar=False, Client=client)


async def get_preferences(db: Database, user_id: str, prefs_id: str, client: str) -> w.DisplayPreferencesDto:
    row = await db.read(_stored, user_id, prefs_id, client)
    base = default_preferences(prefs_id, client)
    if row is None:
        return base
    stored = msgspec.json.decode(row.data_json, type=w.DisplayPreferencesDto, strict=False)
    changes = {f: getattr(stored, f) for f in stored.__struct_fields__ if getattr(stored, f) is not None}
    changes.update(Id=prefs_id, Client=client)
    return msgspec.structs.replace(base, **changes)


async def save_preferences(db: Database, user_id: str, prefs_id: str, client: str,
                           prefs: w.DisplayPreferencesDto) -> None:
    data = msgspec.json.encode(prefs).decode()

    def write(s: CoreSession) -> None:
        row = _stored(s, user_id, prefs_id, client)
        if row is None:
            s.execute(insert(display_preferences).values(user_id=user_id, preferences_id=prefs_id, client=client,
                                                         data_json=data))
        elif row.data_json != data:  # (the same preferences again write nothing, as the ORM's flush did)
            s.execute(update(display_preferences).where(*_key(user_id, prefs_id, client)).values(data_json=data))

    await db.write(write)


def _key(user_id: str, prefs_id: str, client: str) -> tuple[ColumnElement[bool], ...]:
    c = display_preferences.c
    return c.user_id == user_id, c.preferences_id == prefs_id, c.client == client


def _stored(s: CoreSession, user_id: str, prefs_id: str, client: str) -> Row[Any] | None:
    return s.execute(select(display_preferences.c.data_json).where(*_key(user_id, prefs_id, client))).first()
