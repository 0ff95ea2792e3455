"""The database schema: SQLModel tables, grouped by domain. Alembic migrations under
server/db/migrations must follow every change here (see docs/architecture.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import BigInteger, Index
from sqlmodel import Field, SQLModel
from sqlmodel._compat import SQLModelConfig


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Table(SQLModel):
    """The base of every table: pydantic's validator and serializer of a table class are built when
    first used (``defer_build``), not at import. Rows are made by SQLAlchemy and by the services'
    constructors (neither validates), so most servers never build them: ~0.5 MiB and ~10 ms of
    start-up for 26 tables."""

    model_config = SQLModelConfig(from_attributes=True, defer_build=True)


# ---------------------------------------------------------------- users and auth


class User(_Table, table=True):
    __tablename__ = "users"

    id: str = Field(primary_key=True, max_length=32)
    name: str = Field(index=True, unique=True)
    password_hash: str | None = None
    policy_json: str = "{}"
    configuration_json: str = "{}"
    date_created: datetime = Field(default_factory=utcnow)
    last_login_date: datetime | None = None
    last_activity_date: datetime | None = None
    invalid_login_attempts: int = 0
    primary_image_path: str | None = None
    primary_image_tag: str | None = None


class Device(_Table, table=True):
    """A signed-in device: one access token per (user, device id)."""

    __tablename__ = "devices"

    id: int | None = Field(default=None, primary_key=True)
    access_token: str = Field(index=True, unique=True)
    user_id: str = Field(index=True, foreign_key="users.id", ondelete="CASCADE")
    device_id: str = Field(index=True)
    device_name: str = ""
    app_name: str = ""
    app_version: str = ""
    date_created: datetime = Field(default_factory=utcnow)
    date_last_activity: datetime = Field(default_factory=utcnow)


class DeviceOptions(_Table, table=True):
    __tablename__ = "device_options"

    device_id: str = Field(primary_key=True)
    custom_name: str | None = None


class ApiKey(_Table, table=True):
    __tablename__ = "api_keys"

    id: int | None = Field(default=None, primary_key=True)
    access_token: str = Field(index=True, unique=True)
    name: str
    date_created: datetime = Field(default_factory=utcnow)
    date_last_activity: datetime = Field(default_factory=utcnow)


class DisplayPreferences(_Table, table=True):
    __tablename__ = "display_preferences"

    user_id: str = Field(primary_key=True)
    preferences_id: str = Field(primary_key=True)
    client: str = Field(primary_key=True)
    data_json: str = "{}"


# ---------------------------------------------------------------- system


class ActivityLogEntry(_Table, table=True):
    __tablename__ = "activity_log"

    id: int | None = Field(default=None, primary_key=True)
    name: str
    overview: str | None = None
    short_overview: str | None = None
    type: str
    item_id: str | None = None
    user_id: str | None = Field(default=None, index=True)
    date: datetime = Field(default_factory=utcnow, index=True)
    severity: str = "Information"


class TaskResult(_Table, table=True):
    """The last run of each scheduled task, and its triggers."""

    __tablename__ = "task_results"

    task_key: str = Field(primary_key=True)
    last_result_json: str | None = None
    triggers_json: str | None = None


# ---------------------------------------------------------------- library
#
# One row per item of any kind (movie, series, season, episode, audio, album, artist, folder,
# photo, book, ...) in ``items``. Lists that are filtered on (genres, studios, artists, tags)
# live in ``item_values`` so that filters are indexed SQL, never Python loops; the JSON columns
# keep their display order. Item ids are derived from the path (server.guid.guid_from_text), so
# clients' cached ids survive rescans. User data is keyed by item id and never deleted by a scan.


class Library(_Table, table=True):
    """A virtual folder: a named collection of paths with a content type."""

    __tablename__ = "libraries"

    id: str = Field(primary_key=True, max_length=32)
    name: str = Field(index=True, unique=True)
    collection_type: str | None = None  # movies, tvshows, music, ... ; None = mixed
    options_json: str = "{}"
    date_created: datetime = Field(default_factory=utcnow)


class LibraryPath(_Table, table=True):
    __tablename__ = "library_paths"

    library_id: str = Field(primary_key=True, foreign_key="libraries.id", ondelete="CASCADE")
    path: str = Field(primary_key=True)
    network_path: str | None = None


class Item(_Table, table=True):
    __tablename__ = "items"
    __table_args__ = (
        Index("ix_items_type_sort_name", "type", "sort_name"),
        Index("ix_items_parent_sort_name", "parent_id", "sort_name"),
        Index("ix_items_library_type_created", "library_id", "type", "date_created"),
        # the query engine's typical pages (migration 0003_query)
        Index("ix_items_library_type_owner_sort", "library_id", "type", "owner_id", "sort_name", "id"),
        Index("ix_items_series_sort_name", "series_id", "sort_name"),
        Index("ix_items_album_sort_name", "album_id", "sort_name"),
        # narrow covering indexes (0005_query_covering): scope checks of joined rows by id, the
        # facets of a library (ratings, years) without reading the wide rows
        Index("ix_items_scope", "id", "library_id", "type", "owner_id", "is_folder", "media_type", "production_year",
              "official_rating"),
        Index("ix_items_library_facets", "library_id", "type", "owner_id", "official_rating", "production_year"),
        # a searchTerm page ranks its full-text matches by name and SortName, and judges them by
        # the viewer's parental rules and libraries (0012_search_cover, 0013_search_rated)
        Index("ix_items_search_rated", "id", "type", "owner_id", "sort_name", "name", "official_rating", "series_id",
              "library_id"),
        # pages of a library in the other usual sort orders (0006_query_sorts)
        *(Index(f"ix_items_library_sort_{c}", "library_id", "type", "owner_id", c, "id")
          for c in ("date_created", "premiere_date", "production_year", "community_rating", "run_time_ticks")),
    )

    id: str = Field(primary_key=True, max_length=32)
    type: str = Field(index=True)  # BaseItemKind spelling
    media_type: str = "Unknown"  # MediaType spelling
    is_folder: bool = False
    library_id: str | None = Field(default=None, index=True)
    parent_id: str | None = Field(default=None, index=True)
    path: str | None = Field(default=None, index=True)
    name: str = ""
    sort_name: str = Field(default="", index=True)
    forced_sort_name: str | None = None
    original_title: str | None = None
    overview: str | None = None
    tagline: str | None = None
    official_rating: str | None = None
    community_rating: float | None = None
    critic_rating: float | None = None
    production_year: int | None = Field(default=None, index=True)
    premiere_date: datetime | None = Field(default=None, index=True)
    end_date: datetime | None = None
    date_created: datetime = Field(default_factory=utcnow, index=True)
    date_modified: datetime | None = None
    run_time_ticks: int | None = Field(default=None, sa_type=BigInteger)  # 64-bit on PostgreSQL too
    size: int | None = Field(default=None, sa_type=BigInteger)
    container: str | None = None
    bitrate: int | None = None
    width: int | None = None
    height: int | None = None
    video_type: str | None = None  # VideoFile, Dvd, BluRay
    extra_type: str | None = None  # ExtraType spelling when this item is an extra
    owner_id: str | None = Field(default=None, index=True)  # the item an extra or version belongs to
    index_number: int | None = None
    index_number_end: int | None = None
    parent_index_number: int | None = None
    series_id: str | None = Field(default=None, index=True)
    series_name: str | None = None
    season_id: str | None = Field(default=None, index=True)
    season_name: str | None = None
    album_id: str | None = Field(default=None, index=True)
    album: str | None = None
    genres_json: str = "[]"
    studios_json: str = "[]"
    tags_json: str = "[]"
    artists_json: str = "[]"
    album_artists_json: str = "[]"
    provider_ids_json: str = "{}"
    media_streams_json: str = "[]"  # list of MediaStream wire objects
    chapters_json: str = "[]"  # list of ChapterInfo wire objects
    images_json: str = "[]"  # list of {Type, Path, Tag, Width, Height, BlurHash, Index}
    lyrics_path: str | None = None
    file_size: int | None = Field(default=None, sa_type=BigInteger)  # for incremental scans: unchanged size + mtime = not re-probed
    file_mtime: float | None = None
    is_locked: bool = False  # Identify/Apply results stick across rescans
    locked_fields_json: str = "[]"
    is_virtual: bool = False
    status: str | None = None  # SeriesStatus spelling (Continuing, Ended, Unreleased) for series
    # Scanner bookkeeping (server/library/scan/scanner.py): a hash of everything the scan read to
    # build this row (unchanged = the row is not rewritten) and a cheap content fingerprint of
    # the media file (size + head/tail hash) that recognises a renamed or moved file.
    scan_signature: str | None = None
    fingerprint: str | None = Field(default=None, index=True)


class MediaProbeCache(_Table, table=True):
    """What probing a media file found (streams, tags, embedded art), kept so that an unchanged
    file (same size and mtime) is never probed again, even when its item must be rebuilt."""

    __tablename__ = "media_probes"

    item_id: str = Field(primary_key=True, max_length=32)
    size: int = Field(default=0, sa_type=BigInteger)
    mtime: float = 0.0
    data_json: str = "{}"


class ScanUnit(_Table, table=True):
    """One top-level part of a library (a movie folder, a series, an artist, or the root's own
    files) and a hash of every file stat under it as of its last scan: an unchanged part is
    skipped by the next scan."""

    __tablename__ = "scan_units"

    library_id: str = Field(primary_key=True, foreign_key="libraries.id", ondelete="CASCADE")
    path: str = Field(primary_key=True)
    signature: str = ""


class ItemValue(_Table, table=True):
    """A filterable value of an item: kind is Genre, Studio, Tag, Artist or AlbumArtist."""

    __tablename__ = "item_values"
    __table_args__ = (Index("ix_item_values_kind_clean", "kind", "clean_value"),
                      Index("ix_item_values_listing", "kind", "clean_value", "item_id", "value"))

    item_id: str = Field(primary_key=True, foreign_key="items.id", ondelete="CASCADE")
    kind: str = Field(primary_key=True)
    clean_value: str = Field(primary_key=True)  # lower-cased, for matching
    value: str = ""


class Person(_Table, table=True):
    __tablename__ = "people"

    id: str = Field(primary_key=True, max_length=32)
    name: str = Field(index=True, unique=True)
    sort_name: str = ""
    image_path: str | None = None
    image_tag: str | None = None
    provider_ids_json: str = "{}"


class ItemPerson(_Table, table=True):
    __tablename__ = "item_people"
    __table_args__ = (Index("ix_item_people_person", "person_id", "kind"),)

    item_id: str = Field(primary_key=True, foreign_key="items.id", ondelete="CASCADE")
    person_id: str = Field(primary_key=True, foreign_key="people.id", ondelete="CASCADE")
    kind: str = Field(primary_key=True)  # PersonKind spelling: Actor, Director, Writer, ...
    role: str | None = None
    sort_order: int = 0


class UserData(_Table, table=True):
    """What a user did with an item. Scans never delete these rows."""

    __tablename__ = "user_data"
    __table_args__ = (Index("ix_user_data_user_played", "user_id", "last_played_date"),
                      Index("ix_user_data_user_favorite", "user_id", "is_favorite"))

    user_id: str = Field(primary_key=True, foreign_key="users.id", ondelete="CASCADE")
    item_id: str = Field(primary_key=True, index=True)
    played: bool = False
    play_count: int = 0
    is_favorite: bool = False
    playback_position_ticks: int = Field(default=0, sa_type=BigInteger)
    last_played_date: datetime | None = Field(default=None, index=True)
    rating: float | None = None
    likes: bool | None = None
    audio_stream_index: int | None = None
    subtitle_stream_index: int | None = None


# ---------------------------------------------------------------- live TV recordings
#
# A timer records one channel between two moments; a series timer makes timers for every
# guide programme of a series. A timer that has recorded is a recording (recording_path set).


class LiveTvSeriesTimer(_Table, table=True):
    __tablename__ = "livetv_series_timers"

    id: str = Field(primary_key=True, max_length=32)
    name: str  # the programme title to record
    channel_id: str | None = None  # None with record_any_channel
    program_id: str | None = None
    record_any_time: bool = True
    record_any_channel: bool = False
    record_new_only: bool = False
    days_json: str = "[]"  # DayOfWeek names; empty = every day
    pre_padding_seconds: int = 0
    post_padding_seconds: int = 0
    priority: int = 0
    keep_up_to: int = 0
    keep_until: str = "UntilDeleted"
    date_created: datetime = Field(default_factory=utcnow)


class LiveTvTimer(_Table, table=True):
    __tablename__ = "livetv_timers"
    __table_args__ = (Index("ix_livetv_timers_status_start", "status", "start_date"),)

    id: str = Field(primary_key=True, max_length=32)
    series_timer_id: str | None = Field(default=None, index=True)
    channel_id: str
    program_id: str | None = None
    name: str = ""
    overview: str | None = None
    start_date: datetime
    end_date: datetime
    pre_padding_seconds: int = 0
    post_padding_seconds: int = 0
    priority: int = 0
    keep_until: str = "UntilDeleted"
    status: str = "New"  # RecordingStatus spelling
    recording_path: str | None = None
    error: str | None = None
    date_created: datetime = Field(default_factory=utcnow)


# ---------------------------------------------------------------- browsing: playlists, collections
#
# A playlist or a collection (BoxSet) is also an ``items`` row (type Playlist / BoxSet, no
# library) so that every item route and the DTO builder see it; these tables hold what the item
# row cannot: owners, shares, and the ordered entries.


class Playlist(_Table, table=True):
    __tablename__ = "playlists"

    id: str = Field(primary_key=True, max_length=32)  # = the Playlist item's id
    owner_user_id: str | None = Field(default=None, index=True)
    is_public: bool = False
    media_type: str = "Unknown"  # MediaType spelling


class PlaylistEntry(_Table, table=True):
    """One entry of a playlist (its PlaylistItemId); the same item may appear twice."""

    __tablename__ = "playlist_entries"
    # a playlist's entries in order with their item ids, read from the index alone (0011_lists_fast)
    __table_args__ = (Index("ix_playlist_entries_listing", "playlist_id", "sort_order", "id", "item_id"),)

    id: str = Field(primary_key=True, max_length=32)
    playlist_id: str = Field(foreign_key="playlists.id", ondelete="CASCADE")
    item_id: str = Field(index=True)
    sort_order: int = 0


class PlaylistShare(_Table, table=True):
    """A user the playlist is shared with, and whether they may edit it."""

    __tablename__ = "playlist_users"

    playlist_id: str = Field(primary_key=True, foreign_key="playlists.id", ondelete="CASCADE")
    user_id: str = Field(primary_key=True, foreign_key="users.id", ondelete="CASCADE")
    can_edit: bool = False


class CollectionEntry(_Table, table=True):
    """An item in a collection (BoxSet)."""

    __tablename__ = "collection_items"
    __table_args__ = (Index("ix_collection_items_collection_order", "collection_id", "sort_order"),)

    collection_id: str = Field(primary_key=True, max_length=32)
    item_id: str = Field(primary_key=True, max_length=32, index=True)
    sort_order: int = 0
    date_added: datetime = Field(default_factory=utcnow)


# ---------------------------------------------------------------- trickplay


class TrickplayInfo(_Table, table=True):
    """Tile sheets made for one video at one width (see server/trickplay)."""

    __tablename__ = "trickplay_info"

    item_id: str = Field(primary_key=True, max_length=32)
    width: int = Field(primary_key=True)
    height: int = 0
    tile_width: int = 10
    tile_height: int = 10
    thumbnail_count: int = 0
    interval: int = 10000  # milliseconds between thumbnails
    bandwidth: int = 0  # bits per second a player needs to fetch the sheets in time
    signature: str = ""  # the file's size and mtime when the tiles were made


# ---------------------------------------------------------------- generated artwork


class ByNameArtwork(_Table, table=True):
    """Images of genres, music genres and artists that have no ``items`` row of their own: a
    collage or an album cover made by the artwork task (see server/artwork), or the by-name
    folder's own Primary when an administrator put one there. Keyed by the by-name id."""

    __tablename__ = "byname_artwork"

    id: str = Field(primary_key=True, max_length=32)
    kind: str = ""  # Genre, MusicGenre, MusicArtist
    name: str = ""
    images_json: str = "[]"  # images_json-style entries ({Type, Path, Tag, Width, Height, BlurHash})
    key: str = ""  # what the image was made from (unchanged key = nothing to redo)


class ItemValueCount(_Table, table=True):
    """Kept aggregate (server/library/facets.py, maintained by triggers): how many items (not
    owned rows) of a library and type carry a value in this spelling. ``AnyArtist`` rows count
    items with the name as artist or album artist once."""

    __tablename__ = "item_value_counts"
    __table_args__ = (Index("ix_item_value_counts_type", "item_type", "kind"),)

    kind: str = Field(primary_key=True)
    clean_value: str = Field(primary_key=True)
    value: str = Field(primary_key=True)
    library_id: str = Field(primary_key=True)  # '' for rows without a library
    item_type: str = Field(primary_key=True)
    item_count: int = 0


class ItemFieldCount(_Table, table=True):
    """Kept aggregate (server/library/facets.py): items per production year or official rating
    (``facet`` Year / OfficialRating), library and type."""

    __tablename__ = "item_field_counts"
    __table_args__ = (Index("ix_item_field_counts_type", "item_type", "facet"),)

    facet: str = Field(primary_key=True)
    value: str = Field(primary_key=True)
    library_id: str = Field(primary_key=True)
    item_type: str = Field(primary_key=True)
    item_count: int = 0
