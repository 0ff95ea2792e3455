"""Reading and changing ``items.images_json`` (and the people / users image columns).

Plain functions of a Session, run through ``ctx.db.read`` / ``ctx.db.write``. Within one image
type, entries are ordered by their ``Index`` (list position when missing); every change here
renumbers the changed type 0..n-1 in list order, so Index and order always agree.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from server.errors import BadRequestError, NotFoundError
from server.library.catalog.ids import by_name_id

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.tables import ByNameArtwork, Item, Person

MULTIPLE_TYPES = frozenset({"Backdrop", "Screenshot", "Chapter"})


def parse_images(text: str | None) -> list[dict[str, Any]]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [dict(v) for v in value if isinstance(v, dict) and v.get("Type") and v.get("Path")] \
        if isinstance(value, list) else []


def of_type(images: list[dict[str, Any]], image_type: str) -> list[dict[str, Any]]:
    """The images of one type in index order."""
    typed = [(img.get("Index") if isinstance(img.get("Index"), int) else pos, pos, img)
             for pos, img in enumerate(images) if img.get("Type") == image_type]
    typed.sort(key=lambda t: (t[0], t[1]))
    return [img for _i, _p, img in typed]


def _with_type(images: list[dict[str, Any]], image_type: str, ordered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    others = [img for img in images if img.get("Type") != image_type]
    return [*others, *({**img, "Index": i} for i, img in enumerate(ordered))]


def item_row(session: Session, item_id: str) -> Item | None:
    from server.db.tables import Item

    return session.get(Item, item_id)


def person_row(session: Session, item_id: str) -> Person | None:
    from server.db.tables import Person

    return session.get(Person, item_id)


def person_by_name(session: Session, name: str) -> Person | None:
    from sqlmodel import select

    from server.db.tables import Person

    row = session.scalars(select(Person).where(Person.name == name)).first()
    if row is None:
        row = session.get(Person, by_name_id("Person", name))
    return row


def name_for_value_id(session: Session, item_id: str) -> tuple[str, str] | None:
    """(kind, name) of a Genre, MusicGenre or Studio id among the library's values. Hashes each
    distinct genre and studio name once: only used by uploads, never by image reads."""
    from sqlmodel import col, select

    from server.db.tables import ItemValue

    rows = session.execute(select(ItemValue.kind, ItemValue.value)
                        .where(col(ItemValue.kind).in_(("Genre", "Studio"))).distinct())
    for kind, value in rows:
        kinds = ("Genre", "MusicGenre") if kind == "Genre" else ("Studio",)
        for candidate in kinds:
            if by_name_id(candidate, value) == item_id:
                return candidate, value
    return None


def store_item_image(session: Session, item_id: str, entry: dict[str, Any], index: int | None,
                     append: bool) -> list[str]:
    """Put ``entry`` at ``index`` of its type (replacing what was there), or append it, or (no
    index, not append) make it the only image of its type. Returns replaced file paths."""
    from server.db.tables import Item

    item = session.get(Item, item_id)
    if item is None:
        raise NotFoundError(f"Item {item_id} not found.")
    if index is not None and index < 0:
        raise BadRequestError(f"The image index must be 0 or more, not {index}.")
    images = parse_images(item.images_json)
    image_type = entry["Type"]
    typed = of_type(images, image_type)
    replaced: list[dict[str, Any]]
    if append:
        ordered, replaced = [*typed, entry], []
    elif index is None:
        ordered, replaced = [entry], typed
    elif index < len(typed):
        ordered, replaced = [*typed[:index], entry, *typed[index + 1:]], [typed[index]]
    else:
        ordered, replaced = [*typed, entry], []
    item.images_json = json.dumps(_with_type(images, image_type, ordered))
    session.add(item)
    return [str(img["Path"]) for img in replaced if img.get("Path") != entry["Path"]]


def delete_item_image(session: Session, item_id: str, image_type: str, index: int | None) -> list[str]:
    """Remove the image (all of the type when ``index`` is None); returns their paths."""
    from server.db.tables import Item

    item = session.get(Item, item_id)
    if item is None:
        raise NotFoundError(f"Item {item_id} not found.")
    images = parse_images(item.images_json)
    typed = of_type(images, image_type)
    if index is None:
        removed, kept = typed, []
    else:
        if not 0 <= index < len(typed):
            raise NotFoundError(f"The item has no {image_type} image with index {index}.")
        removed, kept = [typed[index]], [*typed[:index], *typed[index + 1:]]
    if not removed:
        raise NotFoundError(f"The item has no {image_type} image.")
    item.images_json = json.dumps(_with_type(images, image_type, kept))
    session.add(item)
    return [str(img["Path"]) for img in removed]


def move_item_image(session: Session, item_id: str, image_type: str, index: int, new_index: int) -> None:
    from server.db.tables import Item

    item = session.get(Item, item_id)
    if item is None:
        raise NotFoundError(f"Item {item_id} not found.")
    images = parse_images(item.images_json)
    typed = of_type(images, image_type)
    if not 0 <= index < len(typed):
        raise NotFoundError(f"The item has no {image_type} image with index {index}.")
    if not 0 <= new_index < len(typed):
        raise NotFoundError(f"newIndex {new_index} is outside the item's {len(typed)} {image_type} images.")
    moving = typed.pop(index)
    typed.insert(new_index, moving)
    item.images_json = json.dumps(_with_type(images, image_type, typed))
    session.add(item)


def set_person_image(session: Session, person_id: str, path: str | None, tag: str | None) -> str | None:
    """Set (or clear) a person's Primary image; returns the replaced path."""
    from server.db.tables import Person

    person = session.get(Person, person_id)
    if person is None:
        raise NotFoundError(f"Person {person_id} not found.")
    old = person.image_path if person.image_path != path else None
    person.image_path, person.image_tag = path, tag
    session.add(person)
    return old


def byname_artwork_row(session: Session, item_id: str) -> ByNameArtwork | None:
    """The generated (or folder) image record of a genre, music genre or row-less artist."""
    from server.db.tables import ByNameArtwork

    return session.get(ByNameArtwork, item_id)


def delete_byname_artwork(session: Session, item_id: str) -> list[str]:
    """Forget a by-name item's generated image; returns its generated files (the artwork task
    makes a new one on its next run, as Jellyfin's dynamic images come back)."""
    from server.db.tables import ByNameArtwork

    row = session.get(ByNameArtwork, item_id)
    if row is None:
        return []
    paths = [str(img["Path"]) for img in parse_images(row.images_json) if img.get("Generated")]
    session.delete(row)
    return paths
