"""The database schema in SQLAlchemy Core, grouped by domain: every table, column, index and foreign
key is defined here once. Alembic migrations under server/db/migrations must follow every change
here (``tests/db/test_migrations.py`` compares this metadata with what they make; see
docs/architecture.md).

The query paths use these tables directly (``server/db/handles.py``); the SQLModel classes of
``server/db/tables.py`` map the same ``Table`` objects for the services that work with rows as
objects, and are imported only where that is done. So a served start and a reader process load
SQLAlchemy Core without SQLModel, pydantic and the 27 classes (~0.25 s and ~8 MiB of a start).

Column types are what SQLModel gave the classes when they defined the tables: ``str`` a
``VARCHAR`` (of 32 for ids), ``datetime`` ``UTCDateTime`` (below), 64-bit integers ``BigInteger``
(on PostgreSQL too). Python-side defaults (``default=``) are the ones inserts without the column get.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
)
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.types import Interval, TypeDecorator


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware moment: ``TIMESTAMP WITH TIME ZONE`` on PostgreSQL, text on SQLite. Values
    are written in UTC (a naive one is refused: it would be stored as if it were UTC) and read back
    in UTC, with SQLite's offset-less text taken as UTC. The column type SQLModel gives ``datetime``
    fields (its ``UTCDateTime``): the same bind and result handling, the same DDL, the same name
    (``server/library/catalog/query.py`` tells date columns by it), without importing SQLModel."""

    impl = DateTime
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(timezone=True)

    def __repr__(self) -> str:
        return "UTCDateTime()"

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError("a naive datetime cannot be stored: give it a timezone (datetime.now(UTC))")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def coerce_compared_value(self, op: Any, value: Any) -> Any:
        return Interval() if isinstance(value, timedelta) else self


metadata = MetaData()

# ---------------------------------------------------------------- users and auth

users = Table(
    "users", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("name", String, nullable=False, index=True, unique=True),
    Column("password_hash", String, nullable=True),
    Column("policy_json", String, nullable=False, default="{}"),
    Column("configuration_json", String, nullable=False, default="{}"),
    Column("date_created", UTCDateTime(), nullable=False, default=utcnow),
    Column("last_login_date", UTCDateTime(), nullable=True),
    Column("last_activity_date", UTCDateTime(), nullable=True),
    Column("invalid_login_attempts", Integer, nullable=False, default=0),
    Column("primary_image_path", String, nullable=True),
    Column("primary_image_tag", String, nullable=True),
)

# a signed-in device: one access token per (user, device id)
devices = Table(
    "devices", metadata,
    Column("id", Integer, primary_key=True, nullable=False),
    Column("access_token", String, nullable=False, index=True, unique=True),
    Column("user_id", String, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("device_id", String, nullable=False, index=True),
    Column("device_name", String, nullable=False, default=""),
    Column("app_name", String, nullable=False, default=""),
    Column("app_version", String, nullable=False, default=""),
    Column("date_created", UTCDateTime(), nullable=False, default=utcnow),
    Column("date_last_activity", UTCDateTime(), nullable=False, default=utcnow),
)

device_options = Table(
    "device_options", metadata,
    Column("device_id", String, primary_key=True, nullable=False),
    Column("custom_name", String, nullable=True),
)

api_keys = Table(
    "api_keys", metadata,
    Column("id", Integer, primary_key=True, nullable=False),
    Column("access_token", String, nullable=False, index=True, unique=True),
    Column("name", String, nullable=False),
    Column("date_created", UTCDateTime(), nullable=False, default=utcnow),
    Column("date_last_activity", UTCDateTime(), nullable=False, default=utcnow),
)

display_preferences = Table(
    "display_preferences", metadata,
    Column("user_id", String, primary_key=True, nullable=False),
    Column("preferences_id", String, primary_key=True, nullable=False),
    Column("client", String, primary_key=True, nullable=False),
    Column("data_json", String, nullable=False, default="{}"),
)

# ---------------------------------------------------------------- system

activity_log = Table(
    "activity_log", metadata,
    Column("id", Integer, primary_key=True, nullable=False),
    Column("name", String, nullable=False),
    Column("overview", String, nullable=True),
    Column("short_overview", String, nullable=True),
    Column("type", String, nullable=False),
    Column("item_id", String, nullable=True),
    Column("user_id", String, nullable=True, index=True),
    Column("date", UTCDateTime(), nullable=False, index=True, default=utcnow),
    Column("severity", String, nullable=False, default="Information"),
)

# the last run of each scheduled task, and its triggers
task_results = Table(
    "task_results", metadata,
    Column("task_key", String, primary_key=True, nullable=False),
    Column("last_result_json", String, nullable=True),
    Column("triggers_json", String, nullable=True),
)

# ---------------------------------------------------------------- library
#
# One row per item of any kind (movie, series, season, episode, audio, album, artist, folder,
# photo, book, ...) in ``items``. Lists that are filtered on (genres, studios, artists, tags)
# live in ``item_values`` so that filters are indexed SQL, never Python loops; the JSON columns
# keep their display order. Item ids are derived from the path (server.guid.guid_from_text), so
# clients' cached ids survive rescans. User data is keyed by item id and never deleted by a scan.

# a virtual folder: a named collection of paths with a content type
libraries = Table(
    "libraries", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("name", String, nullable=False, index=True, unique=True),
    Column("collection_type", String, nullable=True),
    Column("options_json", String, nullable=False, default="{}"),
    Column("date_created", UTCDateTime(), nullable=False, default=utcnow),
)

library_paths = Table(
    "library_paths", metadata,
    Column("library_id", String, ForeignKey("libraries.id", ondelete="CASCADE"), primary_key=True, nullable=False),
    Column("path", String, primary_key=True, nullable=False),
    Column("network_path", String, nullable=True),
)

items = Table(
    "items", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("type", String, nullable=False, index=True),  # BaseItemKind spelling
    Column("media_type", String, nullable=False, default="Unknown"),  # MediaType spelling
    Column("is_folder", Boolean, nullable=False, default=False),
    Column("library_id", String, nullable=True, index=True),
    Column("parent_id", String, nullable=True, index=True),
    Column("path", String, nullable=True, index=True),
    Column("name", String, nullable=False, default=""),
    Column("sort_name", String, nullable=False, index=True, default=""),
    Column("forced_sort_name", String, nullable=True),
    Column("original_title", String, nullable=True),
    Column("overview", String, nullable=True),
    Column("tagline", String, nullable=True),
    Column("official_rating", String, nullable=True),
    Column("community_rating", Float, nullable=True),
    Column("critic_rating", Float, nullable=True),
    Column("production_year", Integer, nullable=True, index=True),
    Column("premiere_date", UTCDateTime(), nullable=True, index=True),
    Column("end_date", UTCDateTime(), nullable=True),
    Column("date_created", UTCDateTime(), nullable=False, index=True, default=utcnow),
    Column("date_modified", UTCDateTime(), nullable=True),
    Column("run_time_ticks", BigInteger, nullable=True),  # 64-bit on PostgreSQL too
    Column("size", BigInteger, nullable=True),
    Column("container", String, nullable=True),
    Column("bitrate", Integer, nullable=True),
    Column("width", Integer, nullable=True),
    Column("height", Integer, nullable=True),
    Column("video_type", String, nullable=True),  # VideoFile, Dvd, BluRay
    Column("extra_type", String, nullable=True),  # ExtraType spelling when this item is an extra
    Column("owner_id", String, nullable=True, index=True),  # the item an extra or version belongs to
    Column("index_number", Integer, nullable=True),
    Column("index_number_end", Integer, nullable=True),
    Column("parent_index_number", Integer, nullable=True),
    Column("series_id", String, nullable=True, index=True),
    Column("series_name", String, nullable=True),
    Column("season_id", String, nullable=True, index=True),
    Column("season_name", String, nullable=True),
    Column("album_id", String, nullable=True, index=True),
    Column("album", String, nullable=True),
    Column("genres_json", String, nullable=False, default="[]"),
    Column("studios_json", String, nullable=False, default="[]"),
    Column("tags_json", String, nullable=False, default="[]"),
    Column("artists_json", String, nullable=False, default="[]"),
    Column("album_artists_json", String, nullable=False, default="[]"),
    Column("provider_ids_json", String, nullable=False, default="{}"),
    Column("media_streams_json", String, nullable=False, default="[]"),  # MediaStream wire objects
    Column("chapters_json", String, nullable=False, default="[]"),  # ChapterInfo wire objects
    Column("images_json", String, nullable=False, default="[]"),
    Column("lyrics_path", String, nullable=True),
    Column("file_size", BigInteger, nullable=True),  # unchanged size + mtime = not re-probed
    Column("file_mtime", Float, nullable=True),
    Column("is_locked", Boolean, nullable=False, default=False),  # Identify/Apply results stick across rescans
    Column("locked_fields_json", String, nullable=False, default="[]"),
    Column("is_virtual", Boolean, nullable=False, default=False),
    Column("status", String, nullable=True),  # SeriesStatus spelling (Continuing, Ended, Unreleased) for series
    # Scanner bookkeeping (server/library/scan/scanner.py): a hash of everything the scan read to build
    # this row (unchanged = the row is not rewritten) and a cheap content fingerprint of the media file
    # (size + head/tail hash) that recognises a renamed or moved file.
    Column("scan_signature", String, nullable=True),
    Column("fingerprint", String, nullable=True, index=True),
    Index("ix_items_type_sort_name", "type", "sort_name"),
    Index("ix_items_parent_sort_name", "parent_id", "sort_name"),
    Index("ix_items_library_type_created", "library_id", "type", "date_created"),
    # the query engine's typical pages (migration 0003_query)
    Index("ix_items_library_type_owner_sort", "library_id", "type", "owner_id", "sort_name", "id"),
    Index("ix_items_series_sort_name", "series_id", "sort_name"),
    Index("ix_items_album_sort_name", "album_id", "sort_name"),
    # narrow covering indexes (0005_query_covering): scope checks of joined rows by id, the facets of a
    # library (ratings, years) without reading the wide rows
    Index("ix_items_scope", "id", "library_id", "type", "owner_id", "is_folder", "media_type", "production_year",
          "official_rating"),
    Index("ix_items_library_facets", "library_id", "type", "owner_id", "official_rating", "production_year"),
    # a searchTerm page ranks its full-text matches by name and SortName, and judges them by the viewer's
    # parental rules and libraries (0012_search_cover, 0013_search_rated)
    Index("ix_items_search_rated", "id", "type", "owner_id", "sort_name", "name", "official_rating", "series_id",
          "library_id"),
    # pages of a library in the other usual sort orders (0006_query_sorts)
    *(Index(f"ix_items_library_sort_{c}", "library_id", "type", "owner_id", c, "id")
      for c in ("date_created", "premiere_date", "production_year", "community_rating", "run_time_ticks")),
)

# What probing a media file found (streams, tags, embedded art), kept so that an unchanged file (same
# size and mtime) is never probed again, even when its item must be rebuilt.
media_probes = Table(
    "media_probes", metadata,
    Column("item_id", String(32), primary_key=True, nullable=False),
    Column("size", BigInteger, nullable=False, default=0),
    Column("mtime", Float, nullable=False, default=0.0),
    Column("data_json", String, nullable=False, default="{}"),
)

# One top-level part of a library (a movie folder, a series, an artist, or the root's own files) and
# a hash of every file stat under it as of its last scan: an unchanged part is skipped by the next scan.
scan_units = Table(
    "scan_units", metadata,
    Column("library_id", String, ForeignKey("libraries.id", ondelete="CASCADE"), primary_key=True, nullable=False),
    Column("path", String, primary_key=True, nullable=False),
    Column("signature", String, nullable=False, default=""),
)

# a filterable value of an item: kind is Genre, Studio, Tag, Artist or AlbumArtist
item_values = Table(
    "item_values", metadata,
    Column("item_id", String, ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, nullable=False),
    Column("kind", String, primary_key=True, nullable=False),
    Column("clean_value", String, primary_key=True, nullable=False),  # lower-cased, for matching
    Column("value", String, nullable=False, default=""),
    Index("ix_item_values_kind_clean", "kind", "clean_value"),
    Index("ix_item_values_listing", "kind", "clean_value", "item_id", "value"),
)

people = Table(
    "people", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("name", String, nullable=False, index=True, unique=True),
    Column("sort_name", String, nullable=False, default=""),
    Column("image_path", String, nullable=True),
    Column("image_tag", String, nullable=True),
    Column("provider_ids_json", String, nullable=False, default="{}"),
)

item_people = Table(
    "item_people", metadata,
    Column("item_id", String, ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, nullable=False),
    Column("person_id", String, ForeignKey("people.id", ondelete="CASCADE"), primary_key=True, nullable=False),
    Column("kind", String, primary_key=True, nullable=False),  # PersonKind spelling: Actor, Director, ...
    Column("role", String, nullable=True),
    Column("sort_order", Integer, nullable=False, default=0),
    Index("ix_item_people_person", "person_id", "kind"),
)

# what a user did with an item; scans never delete these rows
user_data = Table(
    "user_data", metadata,
    Column("user_id", String, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, nullable=False),
    Column("item_id", String, primary_key=True, nullable=False, index=True),
    Column("played", Boolean, nullable=False, default=False),
    Column("play_count", Integer, nullable=False, default=0),
    Column("is_favorite", Boolean, nullable=False, default=False),
    Column("playback_position_ticks", BigInteger, nullable=False, default=0),
    Column("last_played_date", UTCDateTime(), nullable=True, index=True),
    Column("rating", Float, nullable=True),
    Column("likes", Boolean, nullable=True),
    Column("audio_stream_index", Integer, nullable=True),
    Column("subtitle_stream_index", Integer, nullable=True),
    Index("ix_user_data_user_favorite", "user_id", "is_favorite"),
    Index("ix_user_data_user_played", "user_id", "last_played_date"),
)

# ---------------------------------------------------------------- live TV recordings
#
# A timer records one channel between two moments; a series timer makes timers for every
# guide programme of a series. A timer that has recorded is a recording (recording_path set).

livetv_series_timers = Table(
    "livetv_series_timers", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("name", String, nullable=False),
    Column("channel_id", String, nullable=True),
    Column("program_id", String, nullable=True),
    Column("record_any_time", Boolean, nullable=False, default=True),
    Column("record_any_channel", Boolean, nullable=False, default=False),
    Column("record_new_only", Boolean, nullable=False, default=False),
    Column("days_json", String, nullable=False, default="[]"),
    Column("pre_padding_seconds", Integer, nullable=False, default=0),
    Column("post_padding_seconds", Integer, nullable=False, default=0),
    Column("priority", Integer, nullable=False, default=0),
    Column("keep_up_to", Integer, nullable=False, default=0),
    Column("keep_until", String, nullable=False, default="UntilDeleted"),
    Column("date_created", UTCDateTime(), nullable=False, default=utcnow),
)

livetv_timers = Table(
    "livetv_timers", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("series_timer_id", String, nullable=True, index=True),
    Column("channel_id", String, nullable=False),
    Column("program_id", String, nullable=True),
    Column("name", String, nullable=False, default=""),
    Column("overview", String, nullable=True),
    Column("start_date", UTCDateTime(), nullable=False),
    Column("end_date", UTCDateTime(), nullable=False),
    Column("pre_padding_seconds", Integer, nullable=False, default=0),
    Column("post_padding_seconds", Integer, nullable=False, default=0),
    Column("priority", Integer, nullable=False, default=0),
    Column("keep_until", String, nullable=False, default="UntilDeleted"),
    Column("status", String, nullable=False, default="New"),
    Column("recording_path", String, nullable=True),
    Column("error", String, nullable=True),
    Column("date_created", UTCDateTime(), nullable=False, default=utcnow),
    Index("ix_livetv_timers_status_start", "status", "start_date"),
)

# ---------------------------------------------------------------- browsing: playlists, collections
#
# A playlist or a collection (BoxSet) is also an ``items`` row (type Playlist / BoxSet, no
# library) so that every item route and the DTO builder see it; these tables hold what the item
# row cannot: owners, shares, and the ordered entries.

playlists = Table(
    "playlists", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("owner_user_id", String, nullable=True, index=True),
    Column("is_public", Boolean, nullable=False, default=False),
    Column("media_type", String, nullable=False, default="Unknown"),
)

# one entry of a playlist (its PlaylistItemId); the same item may appear twice
playlist_entries = Table(
    "playlist_entries", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("playlist_id", String, ForeignKey("playlists.id", ondelete="CASCADE"), nullable=False),
    Column("item_id", String, nullable=False, index=True),
    Column("sort_order", Integer, nullable=False, default=0),
    # a playlist's entries in order with their item ids, read from the index alone (0011_lists_fast)
    Index("ix_playlist_entries_listing", "playlist_id", "sort_order", "id", "item_id"),
)

# a user a playlist is shared with, and whether they may edit it
playlist_users = Table(
    "playlist_users", metadata,
    Column("playlist_id", String, ForeignKey("playlists.id", ondelete="CASCADE"), primary_key=True, nullable=False),
    Column("user_id", String, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, nullable=False),
    Column("can_edit", Boolean, nullable=False, default=False),
)

# an item in a collection (BoxSet)
collection_items = Table(
    "collection_items", metadata,
    Column("collection_id", String(32), primary_key=True, nullable=False),
    Column("item_id", String(32), primary_key=True, nullable=False, index=True),
    Column("sort_order", Integer, nullable=False, default=0),
    Column("date_added", UTCDateTime(), nullable=False, default=utcnow),
    Index("ix_collection_items_collection_order", "collection_id", "sort_order"),
)

# ---------------------------------------------------------------- trickplay

# tile sheets made for one video at one width (see server/trickplay)
trickplay_info = Table(
    "trickplay_info", metadata,
    Column("item_id", String(32), primary_key=True, nullable=False),
    Column("width", Integer, primary_key=True, nullable=False),
    Column("height", Integer, nullable=False, default=0),
    Column("tile_width", Integer, nullable=False, default=10),
    Column("tile_height", Integer, nullable=False, default=10),
    Column("thumbnail_count", Integer, nullable=False, default=0),
    Column("interval", Integer, nullable=False, default=10000),
    Column("bandwidth", Integer, nullable=False, default=0),
    Column("signature", String, nullable=False, default=""),
)

# ---------------------------------------------------------------- generated artwork and kept aggregates

# Images of genres, music genres and artists that have no ``items`` row of their own: a collage or
# an album cover made by the artwork task (see server/artwork), or the by-name folder's own Primary
# when an administrator put one there. Keyed by the by-name id.
byname_artwork = Table(
    "byname_artwork", metadata,
    Column("id", String(32), primary_key=True, nullable=False),
    Column("kind", String, nullable=False, default=""),
    Column("name", String, nullable=False, default=""),
    Column("images_json", String, nullable=False, default="[]"),
    Column("key", String, nullable=False, default=""),
)

# Kept aggregate (server/library/catalog/facets.py, maintained by triggers): how many items (not
# owned rows) of a library and type carry a value in this spelling. ``AnyArtist`` rows count items
# with the name as artist or album artist once.
item_value_counts = Table(
    "item_value_counts", metadata,
    Column("kind", String, primary_key=True, nullable=False),
    Column("clean_value", String, primary_key=True, nullable=False),
    Column("value", String, primary_key=True, nullable=False),
    Column("library_id", String, primary_key=True, nullable=False),  # "" for rows without a library
    Column("item_type", String, primary_key=True, nullable=False),
    Column("item_count", Integer, nullable=False, default=0),
    Index("ix_item_value_counts_type", "item_type", "kind"),
)

# Kept aggregate (server/library/catalog/facets.py): items per production year or official rating
# (``facet`` Year / OfficialRating), library and type.
item_field_counts = Table(
    "item_field_counts", metadata,
    Column("facet", String, primary_key=True, nullable=False),
    Column("value", String, primary_key=True, nullable=False),
    Column("library_id", String, primary_key=True, nullable=False),
    Column("item_type", String, primary_key=True, nullable=False),
    Column("item_count", Integer, nullable=False, default=0),
    Index("ix_item_field_counts_type", "item_type", "facet"),
)
