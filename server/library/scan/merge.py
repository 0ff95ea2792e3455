"""Merging what a scan found into an existing ``items`` row without undoing the user's work.

- A locked item (``is_locked``, set by Identify/Apply or the metadata editor) keeps every
  descriptive field; the scan still refreshes the technical ones (path, size, streams, ...).
- An unlocked item keeps only the fields named in ``locked_fields_json`` (MetadataField names,
  and "~column" entries for single columns edited in the metadata editor).
- Images that were downloaded from a provider (entries carrying "Provider") always stay; images
  found next to the media fill the types they do not cover.
- Generated images (entries carrying "Generated", made by server/artwork) stay only while
  nothing else covers their type; a frame grabbed from a video also goes when the file changed
  (its "Source", the file's size and mtime, no longer matches), so the artwork task grabs anew.

The scanner calls ``merge_scanned_fields`` for every item it finds again, and asks
``people_locked`` before replacing an item's cast.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from server.db.tables import Item


# Descriptive fields: what Identify/Apply writes and a locked item keeps.
METADATA_FIELDS = frozenset({
    "name", "sort_name", "forced_sort_name", "original_title", "overview", "tagline", "official_rating",
    "community_rating", "critic_rating", "production_year", "premiere_date", "end_date", "genres_json",
    "studios_json", "tags_json", "artists_json", "album_artists_json", "provider_ids_json",
})

# MetadataField (the spec's enum) -> the item columns it protects.
LOCKABLE_FIELDS: dict[str, frozenset[str]] = {
    "Name": frozenset({"name", "sort_name", "forced_sort_name"}),
    "Overview": frozenset({"overview"}),
    "Genres": frozenset({"genres_json"}),
    "Studios": frozenset({"studios_json"}),
    "Tags": frozenset({"tags_json"}),
    "OfficialRating": frozenset({"official_rating"}),
    "Runtime": frozenset({"run_time_ticks"}),
    "Cast": frozenset(),  # people live in item_people: see people_locked
    "ProductionLocations": frozenset(),  # not stored
    # Reelroom's own: versions merged or split by hand (MergeVersions, DeleteAlternateSources).
    "Versions": frozenset({"owner_id", "parent_id"}),
}

# Never taken from a scan of an existing row: identity and user decisions.
_NEVER_SCANNED = frozenset({"id", "date_created", "is_locked", "locked_fields_json"})


def locked_fields(row: Item) -> list[str]:
    try:
        value = json.loads(row.locked_fields_json or "[]")
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


#: Prefix of the entries in ``locked_fields_json`` that lock one column the user edited in the
#: metadata editor (UpdateItem) and that no MetadataField covers, e.g. "~tagline". They are
#: internal: clients only ever see the MetadataField names (``public_locked_fields``).
COLUMN_LOCK_PREFIX = "~"


def public_locked_fields(row: Item) -> list[str]:
    return [f for f in locked_fields(row) if not f.startswith(COLUMN_LOCK_PREFIX)]


def protected_fields(row: Item) -> frozenset[str]:
    """The columns a scan must not overwrite on this row."""
    protected: set[str] = set(METADATA_FIELDS) if row.is_locked else set()
    for field in locked_fields(row):
        if field.startswith(COLUMN_LOCK_PREFIX):
            column = field[len(COLUMN_LOCK_PREFIX):]
            if column in METADATA_FIELDS or column in ("index_number", "parent_index_number", "album"):
                protected.add(column)
            continue
        protected |= LOCKABLE_FIELDS.get(field, frozenset())
    return frozenset(protected)


def people_locked(row: Item) -> bool:
    """True when a scan must leave the item's people (item_people rows) alone."""
    return row.is_locked or "Cast" in locked_fields(row)


class FileFacts(Protocol):
    """What file_source reads of a row (an Item, a selected row, the artwork run's _Video)."""

    @property
    def file_size(self) -> int | None: ...
    @property
    def size(self) -> int | None: ...
    @property
    def file_mtime(self) -> float | None: ...


def file_source(row: FileFacts | Mapping[str, Any]) -> str:
    """The media file's identity for generated frames: size and mtime (a row or a fields dict)."""
    if isinstance(row, Mapping):
        return f"{row.get('file_size') or row.get('size') or 0}:{row.get('file_mtime') or 0}"
    return f"{row.file_size or row.size or 0}:{row.file_mtime or 0}"


def merge_images(existing_json: str, scanned_json: str, source: str | None = None) -> str:
    """Downloaded images first (kept as they are), then scanned images of types they do not
    cover (backdrops: all of them, after the downloaded ones), backdrops re-indexed; generated
    images last, for types still uncovered (a frame only while its Source equals ``source``)."""
    existing = _image_list(existing_json)
    scanned = _image_list(scanned_json)
    kept = [img for img in existing if img.get("Provider") and not img.get("Generated")]
    kept_types = {img.get("Type") for img in kept}
    kept_paths = {img.get("Path") for img in kept}
    merged = list(kept)
    for img in scanned:
        if img.get("Path") in kept_paths:
            continue
        if img.get("Type") in kept_types and img.get("Type") != "Backdrop":
            continue
        merged.append(img)
    covered = {img.get("Type") for img in merged}
    for img in existing:
        if not img.get("Generated") or img.get("Type") in covered:
            continue
        if img.get("Source") is not None and source is not None and img["Source"] != source:
            continue
        merged.append(img)
        covered.add(img.get("Type"))
    backdrop = 0
    for img in merged:
        if img.get("Type") == "Backdrop":
            img["Index"] = backdrop
            backdrop += 1
    return json.dumps(merged)


def _image_list(text: str | None) -> list[dict[str, Any]]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [dict(v) for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def merge_scanned_fields(existing_row: Item | None, scanned_fields: dict[str, Any]) -> Item:
    """The row to store after a scan: a new Item when there was none, else ``existing_row``
    updated in place with every scanned field it does not protect."""
    from server.db.tables import Item

    unknown = set(scanned_fields) - set(Item.model_fields)
    if unknown:
        raise ValueError(f"not Item columns: {sorted(unknown)}")
    if existing_row is None:
        return Item(**scanned_fields)
    protected = protected_fields(existing_row)
    for field, value in scanned_fields.items():
        if field in _NEVER_SCANNED or field in protected:
            continue
        if field == "images_json":
            value = merge_images(existing_row.images_json, value, file_source({**existing_row.model_dump(
                include={"file_size", "size", "file_mtime"}), **scanned_fields}))
        setattr(existing_row, field, value)
    return existing_row
