"""Display preferences, stored per (user, preferences id, client)."""

from __future__ import annotations

import msgspec

from server.db.database import Database
from server.wire import models as w


def default_preferences(prefs_id: str, client: str) -> w.DisplayPreferencesDto:
    return w.DisplayPreferencesDto(
        Id=prefs_id, ViewType=None, SortBy="SortName", IndexBy=None, RememberIndexing=False, PrimaryImageHeight=250,
        PrimaryImageWidth=250, CustomPrefs={}, ScrollDirection="Horizontal", ShowBackdrop=True, RememberSorting=False,
        SortOrder="Ascending", ShowSidebar=False, Client=client)


async def get_preferences(db: Database, user_id: str, prefs_id: str, client: str) -> w.DisplayPreferencesDto:
    from server.db.tables import DisplayPreferences

    row = await db.read(lambda s: s.get(DisplayPreferences, (user_id, prefs_id, client)))
    base = default_preferences(prefs_id, client)
    if row is None:
        return base
    stored = msgspec.json.decode(row.data_json, type=w.DisplayPreferencesDto, strict=False)
    changes = {f: getattr(stored, f) for f in stored.__struct_fields__ if getattr(stored, f) is not None}
    changes.update(Id=prefs_id, Client=client)
    return msgspec.structs.replace(base, **changes)


async def save_preferences(db: Database, user_id: str, prefs_id: str, client: str,
                           prefs: w.DisplayPreferencesDto) -> None:
    from server.db.tables import DisplayPreferences

    data = msgspec.json.encode(prefs).decode()

    def write(s) -> None:
        row = s.get(DisplayPreferences, (user_id, prefs_id, client)) or DisplayPreferences(
            user_id=user_id, preferences_id=prefs_id, client=client)
        row.data_json = data
        s.add(row)

    await db.write(write)
