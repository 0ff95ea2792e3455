"""Reading items for lookups and writing provider metadata and images back to them.

Plain functions of a Session, run through ``ctx.db.read`` / ``ctx.db.write``. People (the
``people`` table) can be identified too: they take provider ids and a primary image.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete

from server.guid import guid_from_text
from server.library.scan.merge import LOCKABLE_FIELDS, locked_fields
from server.metadata.providers.base import ItemMetadata, LookupItem

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


@dataclass(frozen=True)
class SortRules:
    """The server configuration's sort-name rules."""

    remove_words: tuple[str, ...] = ("the", "a", "an")
    remove_characters: tuple[str, ...] = (",", "&", "-", "{", "}", "'")
    replace_characters: tuple[str, ...] = (".", "+", "%")


def sort_name_for(name: str, rules: SortRules) -> str:
    """Lower-cased, punctuation removed or blanked, a leading article dropped."""
    text = name.lower()
    for ch in rules.remove_characters:
        text = text.replace(ch, "")
    for ch in rules.replace_characters:
        text = text.replace(ch, " ")
    text = " ".join(text.split())
    for word in rules.remove_words:
        if text.startswith(word.lower() + " ") and len(text) > len(word) + 1:
            text = text[len(word) + 1:]
            break
    return text


def person_id(name: str) -> str:
    """The id of the person with this name (names are unique in ``people``)."""
    return guid_from_text("Person", name)


def _ids(text: str | None) -> dict[str, str]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items() if v} if isinstance(value, dict) else {}


def find_lookup_item(session: Session, item_id: str, language: str, country: str) -> LookupItem | None:
    """The item (or person) with this id as providers see it, or None."""
    from server.db.tables import Item, Person

    item = session.get(Item, item_id)
    if item is not None:
        series_ids: dict[str, str] = {}
        if item.series_id:
            series = session.get(Item, item.series_id)
            series_ids = _ids(series.provider_ids_json) if series else {}
        return LookupItem(kind=item.type, name=item.name, year=item.production_year,
                          provider_ids=_ids(item.provider_ids_json), index_number=item.index_number,
                          parent_index_number=item.parent_index_number, series_provider_ids=series_ids,
                          language=language, country=country, library_id=item.library_id)
    person = session.get(Person, item_id)
    if person is not None:
        return LookupItem(kind="Person", name=person.name, provider_ids=_ids(person.provider_ids_json),
                          language=language, country=country)
    return None


def item_images(session: Session, item_id: str) -> list[dict[str, Any]]:
    from server.db.tables import Item, Person

    item = session.get(Item, item_id)
    if item is not None:
        try:
            value = json.loads(item.images_json or "[]")
        except ValueError:
            return []
        return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
    person = session.get(Person, item_id)
    if person is not None and person.image_path:
        return [{"Type": "Primary", "Path": person.image_path, "Tag": person.image_tag}]
    return []


def _replace_values(session: Session, item_id: str, kind: str, values: list[str]) -> None:
    from server.db.tables import ItemValue

    session.execute(delete(ItemValue).where(ItemValue.item_id == item_id, ItemValue.kind == kind))
    seen: set[str] = set()
    for value in values:
        clean = value.strip().lower()
        if clean and clean not in seen:
            seen.add(clean)
            session.add(ItemValue(item_id=item_id, kind=kind, clean_value=clean, value=value.strip()))


def _upsert_person(session: Session, name: str, provider_ids: dict[str, str]) -> str:
    from sqlmodel import select

    from server.db.tables import Person

    person = session.scalars(select(Person).where(Person.name == name)).first()
    if person is None:
        person = Person(id=person_id(name), name=name, sort_name=name.lower(),
                        provider_ids_json=json.dumps(provider_ids))
        session.add(person)
        session.flush()
    elif provider_ids:
        merged = {**_ids(person.provider_ids_json), **provider_ids}
        person.provider_ids_json = json.dumps(merged)
        session.add(person)
    return person.id


def write_item_metadata(session: Session, item_id: str, meta: ItemMetadata, rules: SortRules,
                        *, lock: bool = True) -> bool:
    """Write ``meta`` onto the item (fields the provider leaves empty keep their value; fields
    the user locked are kept), merge the provider ids and lock the item so a rescan keeps it.
    A person takes the provider ids only. Returns False when no such item or person exists."""
    from server.db.tables import Item, ItemPerson, Person

    item = session.get(Item, item_id)
    if item is None:
        person = session.get(Person, item_id)
        if person is None:
            return False
        person.provider_ids_json = json.dumps({**_ids(person.provider_ids_json), **meta.provider_ids})
        session.add(person)
        return True

    locked = set(locked_fields(item))
    protected: set[str] = set()
    for field in locked:
        protected |= LOCKABLE_FIELDS.get(field, frozenset())

    def put(column: str, value: Any) -> bool:
        if value is None or column in protected:
            return False
        setattr(item, column, value)
        return True

    if put("name", meta.name) and not item.forced_sort_name:
        item.sort_name = sort_name_for(meta.name or "", rules)
    for column in ("original_title", "overview", "tagline", "official_rating", "community_rating",
                   "production_year", "premiere_date", "end_date", "run_time_ticks"):
        put(column, getattr(meta, column))
    for column, kind, values in (("genres_json", "Genre", meta.genres), ("studios_json", "Studio", meta.studios),
                                 ("tags_json", "Tag", meta.tags), ("artists_json", "Artist", meta.artists),
                                 ("album_artists_json", "AlbumArtist", meta.album_artists)):
        if values and put(column, json.dumps(values)):
            _replace_values(session, item_id, kind, values)
    item.provider_ids_json = json.dumps({**_ids(item.provider_ids_json), **meta.provider_ids})
    if lock:
        item.is_locked = True
    session.add(item)

    if meta.people and "Cast" not in locked:
        session.execute(delete(ItemPerson).where(ItemPerson.item_id == item_id))
        seen: set[tuple[str, str]] = set()
        for credit in meta.people:
            pid = _upsert_person(session, credit.name, credit.provider_ids)
            if (pid, credit.kind) in seen:
                continue
            seen.add((pid, credit.kind))
            session.add(ItemPerson(item_id=item_id, person_id=pid, kind=credit.kind, role=credit.role,
                                   sort_order=credit.sort_order))
    return True


def record_item_image(session: Session, item_id: str, entry: dict[str, Any], add: bool = False) -> list[str]:
    """Store a downloaded image: it replaces the item's image(s) of its type, or is appended
    (``add``, for backdrops). Returns the paths of the image files it replaced."""
    from server.db.tables import Item, Person

    item = session.get(Item, item_id)
    if item is None:
        person = session.get(Person, item_id)
        if person is None:
            return []
        old = [person.image_path] if person.image_path and person.image_path != entry["Path"] else []
        person.image_path, person.image_tag = entry["Path"], entry["Tag"]
        session.add(person)
        return old
    images = item_images(session, item_id)
    same_type = [img for img in images if img.get("Type") == entry["Type"]]
    if add:
        entry = {**entry, "Index": len(same_type)}
        replaced: list[dict[str, Any]] = []
    else:
        entry = {**entry, "Index": 0}
        replaced = same_type
    kept = [img for img in images if img not in replaced]
    item.images_json = json.dumps([*kept, entry])
    session.add(item)
    return [str(img["Path"]) for img in replaced if img.get("Path") and img.get("Path") != entry["Path"]]


def series_children(session: Session, series_id: str) -> list[tuple[str, str, int | None, int | None]]:
    """(id, type, index_number, parent_index_number) of a series' seasons and episodes."""
    from sqlmodel import select

    from server.db.tables import Item

    rows = session.execute(select(Item.id, Item.type, Item.index_number, Item.parent_index_number)
                        .where(Item.series_id == series_id, Item.type.in_(("Season", "Episode")))).all()
    return [(r[0], r[1], r[2], r[3]) for r in rows]
