"""The SQLModel classes of the database's tables, for the services that work with rows as objects
(``session.get(User, id)``, ``session.add(Device(...))``, ORM queries). Each class maps the Core
``Table`` of ``server/db/schema.py``, where the schema is defined once: ``__table__`` is that table
and every field's ``sa_column`` its column, so ``User.__table__ is schema.users`` and ORM and Core
statements mix freely. Python-side defaults (``default_factory=utcnow``) are the fields' own.

Importing this module builds 26 classes through pydantic (~85 ms, ~2.5 MiB) and loads SQLModel and
pydantic (~90 ms, ~8 MiB): modules import it inside the functions that use the classes, never at
the top, so a served start and the reader processes stay without it
(tests/system/test_startup_imports.py)."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel
from sqlmodel._compat import SQLModelConfig

from server.db import schema
from server.db.schema import utcnow

__all__ = ["utcnow"]  # (re-exported: older imports take it from here; new code takes it from schema)


class _Table(SQLModel):
    """The base of every table: pydantic's validator and serializer of a table class are built when
    first used (``defer_build``), not at import. Rows are made by SQLAlchemy and by the services'
    constructors (neither validates), so most servers never build them: ~0.5 MiB and ~10 ms of
    start-up for 26 tables."""

    model_config = SQLModelConfig(from_attributes=True, defer_build=True)


# ---------------------------------------------------------------- users and auth


class User(_Table, table=True):
    __table__ = schema.users

    id: str = Field(sa_column=schema.users.c.id)
    name: str = Field(sa_column=schema.users.c.name)
    password_hash: str | None = Field(default=None, sa_column=schema.users.c.password_hash)
    policy_json: str = Field(default="{}", sa_column=schema.users.c.policy_json)
    configuration_json: str = Field(default="{}", sa_column=schema.users.c.configuration_json)
    date_created: datetime = Field(default_factory=utcnow, sa_column=schema.users.c.date_created)
    last_login_date: datetime | None = Field(default=None, sa_column=schema.users.c.last_login_date)
    last_activity_date: datetime | None = Field(default=None, sa_column=schema.users.c.last_activity_date)
    invalid_login_attempts: int = Field(default=0, sa_column=schema.users.c.invalid_login_attempts)
    primary_image_path: str | None = Field(default=None, sa_column=schema.users.c.primary_image_path)
    primary_image_tag: str | None = Field(default=None, sa_column=schema.users.c.primary_image_tag)


class Device(_Table, table=True):
    """A signed-in device: one access token per (user, device id)."""

    __table__ = schema.devices

    id: int | None = Field(default=None, sa_column=schema.devices.c.id)
    access_token: str = Field(sa_column=schema.devices.c.access_token)
    user_id: str = Field(sa_column=schema.devices.c.user_id)
    device_id: str = Field(sa_column=schema.devices.c.device_id)
    device_name: str = Field(default="", sa_column=schema.devices.c.device_name)
    app_name: str = Field(default="", sa_column=schema.devices.c.app_name)
    app_version: str = Field(default="", sa_column=schema.devices.c.app_version)
    date_created: datetime = Field(default_factory=utcnow, sa_column=schema.devices.c.date_created)
    date_last_activity: datetime = Field(default_factory=utcnow, sa_column=schema.devices.c.date_last_activity)


class DeviceOptions(_Table, table=True):
    __table__ = schema.device_options

    device_id: str = Field(sa_column=schema.device_options.c.device_id)
    custom_name: str | None = Field(default=None, sa_column=schema.device_options.c.custom_name)


class ApiKey(_Table, table=True):
    __table__ = schema.api_keys

    id: int | None = Field(default=None, sa_column=schema.api_keys.c.id)
    access_token: str = Field(sa_column=schema.api_keys.c.access_token)
    name: str = Field(sa_column=schema.api_keys.c.name)
    date_created: datetime = Field(default_factory=utcnow, sa_column=schema.api_keys.c.date_created)
    date_last_activity: datetime = Field(default_factory=utcnow, sa_column=schema.api_keys.c.date_last_activity)


class DisplayPreferences(_Table, table=True):
    __table__ = schema.display_preferences

    user_id: str = Field(sa_column=schema.display_preferences.c.user_id)
    preferences_id: str = Field(sa_column=schema.display_preferences.c.preferences_id)
    client: str = Field(sa_column=schema.display_preferences.c.client)
    data_json: str = Field(default="{}", sa_column=schema.display_preferences.c.data_json)


# ---------------------------------------------------------------- system


class ActivityLogEntry(_Table, table=True):
    __table__ = schema.activity_log

    id: int | None = Field(default=None, sa_column=schema.activity_log.c.id)
    name: str = Field(sa_column=schema.activity_log.c.name)
    overview: str | None = Field(default=None, sa_column=schema.activity_log.c.overview)
    short_overview: str | None = Field(default=None, sa_column=schema.activity_log.c.short_overview)
    type: str = Field(sa_column=schema.activity_log.c.type)
    item_id: str | None = Field(default=None, sa_column=schema.activity_log.c.item_id)
    user_id: str | None = Field(default=None, sa_column=schema.activity_log.c.user_id)
    date: datetime = Field(default_factory=utcnow, sa_column=schema.activity_log.c.date)
    severity: str = Field(default="Information", sa_column=schema.activity_log.c.severity)


class TaskResult(_Table, table=True):
    """The last run of each scheduled task, and its triggers."""

    __table__ = schema.task_results

    task_key: str = Field(sa_column=schema.task_results.c.task_key)
    last_result_json: str | None = Field(default=None, sa_column=schema.task_results.c.last_result_json)
    triggers_json: str | None = Field(default=None, sa_column=schema.task_results.c.triggers_json)


# ---------------------------------------------------------------- library
#
# One row per item of any kind (movie, series, season, episode, audio, album, artist, folder,
# photo, book, ...) in ``items``. Lists that are filtered on (genres, studios, artists, tags)
# live in ``item_values`` so that filters are indexed SQL, never Python loops; the JSON columns
# keep their display order. Item ids are derived from the path (server.guid.guid_from_text), so
# clients' cached ids survive rescans. User data is keyed by item id and never deleted by a scan.


class Library(_Table, table=True):
    """A virtual folder: a named collection of paths with a content type."""

    __table__ = schema.libraries

    id: str = Field(sa_column=schema.libraries.c.id)
    name: str = Field(sa_column=schema.libraries.c.name)
    collection_type: str | None = Field(default=None, sa_column=schema.libraries.c.collection_type)  # movies, tvshows, music, ... ; None = mixed
    options_json: str = Field(default="{}", sa_column=schema.libraries.c.options_json)
    date_created: datetime = Field(default_factory=utcnow, sa_column=schema.libraries.c.date_created)


class LibraryPath(_Table, table=True):
    __table__ = schema.library_paths

    library_id: str = Field(sa_column=schema.library_paths.c.library_id)
    path: str = Field(sa_column=schema.library_paths.c.path)
    network_path: str | None = Field(default=None, sa_column=schema.library_paths.c.network_path)


class Item(_Table, table=True):
    __table__ = schema.items

    id: str = Field(sa_column=schema.items.c.id)
    type: str = Field(sa_column=schema.items.c.type)  # BaseItemKind spelling
    media_type: str = Field(default="Unknown", sa_column=schema.items.c.media_type)  # MediaType spelling
    is_folder: bool = Field(default=False, sa_column=schema.items.c.is_folder)
    library_id: str | None = Field(default=None, sa_column=schema.items.c.library_id)
    parent_id: str | None = Field(default=None, sa_column=schema.items.c.parent_id)
    path: str | None = Field(default=None, sa_column=schema.items.c.path)
    name: str = Field(default="", sa_column=schema.items.c.name)
    sort_name: str = Field(default="", sa_column=schema.items.c.sort_name)
    forced_sort_name: str | None = Field(default=None, sa_column=schema.items.c.forced_sort_name)
    original_title: str | None = Field(default=None, sa_column=schema.items.c.original_title)
    overview: str | None = Field(default=None, sa_column=schema.items.c.overview)
    tagline: str | None = Field(default=None, sa_column=schema.items.c.tagline)
    official_rating: str | None = Field(default=None, sa_column=schema.items.c.official_rating)
    community_rating: float | None = Field(default=None, sa_column=schema.items.c.community_rating)
    critic_rating: float | None = Field(default=None, sa_column=schema.items.c.critic_rating)
    production_year: int | None = Field(default=None, sa_column=schema.items.c.production_year)
    premiere_date: datetime | None = Field(default=None, sa_column=schema.items.c.premiere_date)
    end_date: datetime | None = Field(default=None, sa_column=schema.items.c.end_date)
    date_created: datetime = Field(default_factory=utcnow, sa_column=schema.items.c.date_created)
    date_modified: datetime | None = Field(default=None, sa_column=schema.items.c.date_modified)
    run_time_ticks: int | None = Field(default=None, sa_column=schema.items.c.run_time_ticks)  # 64-bit on PostgreSQL too
    size: int | None = Field(default=None, sa_column=schema.items.c.size)
    container: str | None = Field(default=None, sa_column=schema.items.c.container)
    bitrate: int | None = Field(default=None, sa_column=schema.items.c.bitrate)
    width: int | None = Field(default=None, sa_column=schema.items.c.width)
    height: int | None = Field(default=None, sa_column=schema.items.c.height)
    video_type: str | None = Field(default=None, sa_column=schema.items.c.video_type)  # VideoFile, Dvd, BluRay
    extra_type: str | None = Field(default=None, sa_column=schema.items.c.extra_type)  # ExtraType spelling when this item is an extra
    owner_id: str | None = Field(default=None, sa_column=schema.items.c.owner_id)  # the item an extra or version belongs to
    index_number: int | None = Field(default=None, sa_column=schema.items.c.index_number)
    index_number_end: int | None = Field(default=None, sa_column=schema.items.c.index_number_end)
    parent_index_number: int | None = Field(default=None, sa_column=schema.items.c.parent_index_number)
    series_id: str | None = Field(default=None, sa_column=schema.items.c.series_id)
    series_name: str | None = Field(default=None, sa_column=schema.items.c.series_name)
    season_id: str | None = Field(default=None, sa_column=schema.items.c.season_id)
    season_name: str | None = Field(default=None, sa_column=schema.items.c.season_name)
    album_id: str | None = Field(default=None, sa_column=schema.items.c.album_id)
    album: str | None = Field(default=None, sa_column=schema.items.c.album)
    genres_json: str = Field(default="[]", sa_column=schema.items.c.genres_json)
    studios_json: str = Field(default="[]", sa_column=schema.items.c.studios_json)
    tags_json: str = Field(default="[]", sa_column=schema.items.c.tags_json)
    artists_json: str = Field(default="[]", sa_column=schema.items.c.artists_json)
    album_artists_json: str = Field(default="[]", sa_column=schema.items.c.album_artists_json)
    provider_ids_json: str = Field(default="{}", sa_column=schema.items.c.provider_ids_json)
    media_streams_json: str = Field(default="[]", sa_column=schema.items.c.media_streams_json)  # list of MediaStream wire objects
    chapters_json: str = Field(default="[]", sa_column=schema.items.c.chapters_json)  # list of ChapterInfo wire objects
    images_json: str = Field(default="[]", sa_column=schema.items.c.images_json)  # list of {Type, Path, Tag, Width, Height, BlurHash, Index}
    lyrics_path: str | None = Field(default=None, sa_column=schema.items.c.lyrics_path)
    file_size: int | None = Field(default=None, sa_column=schema.items.c.file_size)  # for incremental scans: unchanged size + mtime = not re-probed
    file_mtime: float | None = Field(default=None, sa_column=schema.items.c.file_mtime)
    is_locked: bool = Field(default=False, sa_column=schema.items.c.is_locked)  # Identify/Apply results stick across rescans
    locked_fields_json: str = Field(default="[]", sa_column=schema.items.c.locked_fields_json)
    is_virtual: bool = Field(default=False, sa_column=schema.items.c.is_virtual)
    status: str | None = Field(default=None, sa_column=schema.items.c.status)  # SeriesStatus spelling (Continuing, Ended, Unreleased) for series
    # Scanner bookkeeping (server/library/scan/scanner.py): a hash of everything the scan read to
    # build this row (unchanged = the row is not rewritten) and a cheap content fingerprint of
    # the media file (size + head/tail hash) that recognises a renamed or moved file.
    scan_signature: str | None = Field(default=None, sa_column=schema.items.c.scan_signature)
    fingerprint: str | None = Field(default=None, sa_column=schema.items.c.fingerprint)


class MediaProbeCache(_Table, table=True):
    """What probing a media file found (streams, tags, embedded art), kept so that an unchanged
    file (same size and mtime) is never probed again, even when its item must be rebuilt."""

    __table__ = schema.media_probes

    item_id: str = Field(sa_column=schema.media_probes.c.item_id)
    size: int = Field(default=0, sa_column=schema.media_probes.c.size)
    mtime: float = Field(default=0.0, sa_column=schema.media_probes.c.mtime)
    data_json: str = Field(default="{}", sa_column=schema.media_probes.c.data_json)


class ScanUnit(_Table, table=True):
    """One top-level part of a library (a movie folder, a series, an artist, or the root's own
    files) and a hash of every file stat under it as of its last scan: an unchanged part is
    skipped by the next scan."""

    __table__ = schema.scan_units

    library_id: str = Field(sa_column=schema.scan_units.c.library_id)
    path: str = Field(sa_column=schema.scan_units.c.path)
    signature: str = Field(default="", sa_column=schema.scan_units.c.signature)


class ItemValue(_Table, table=True):
    """A filterable value of an item: kind is Genre, Studio, Tag, Artist or AlbumArtist."""

    __table__ = schema.item_values

    item_id: str = Field(sa_column=schema.item_values.c.item_id)
    kind: str = Field(sa_column=schema.item_values.c.kind)
    clean_value: str = Field(sa_column=schema.item_values.c.clean_value)  # lower-cased, for matching
    value: str = Field(default="", sa_column=schema.item_values.c.value)


class Person(_Table, table=True):
    __table__ = schema.people

    id: str = Field(sa_column=schema.people.c.id)
    name: str = Field(sa_column=schema.people.c.name)
    sort_name: str = Field(default="", sa_column=schema.people.c.sort_name)
    image_path: str | None = Field(default=None, sa_column=schema.people.c.image_path)
    image_tag: str | None = Field(default=None, sa_column=schema.people.c.image_tag)
    provider_ids_json: str = Field(default="{}", sa_column=schema.people.c.provider_ids_json)


class ItemPerson(_Table, table=True):
    __table__ = schema.item_people

    item_id: str = Field(sa_column=schema.item_people.c.item_id)
    person_id: str = Field(sa_column=schema.item_people.c.person_id)
    kind: str = Field(sa_column=schema.item_people.c.kind)  # PersonKind spelling: Actor, Director, Writer, ...
    role: str | None = Field(default=None, sa_column=schema.item_people.c.role)
    sort_order: int = Field(default=0, sa_column=schema.item_people.c.sort_order)


class UserData(_Table, table=True):
    """What a user did with an item. Scans never delete these rows."""

    __table__ = schema.user_data

    user_id: str = Field(sa_column=schema.user_data.c.user_id)
    item_id: str = Field(sa_column=schema.user_data.c.item_id)
    played: bool = Field(default=False, sa_column=schema.user_data.c.played)
    play_count: int = Field(default=0, sa_column=schema.user_data.c.play_count)
    is_favorite: bool = Field(default=False, sa_column=schema.user_data.c.is_favorite)
    playback_position_ticks: int = Field(default=0, sa_column=schema.user_data.c.playback_position_ticks)
    last_played_date: datetime | None = Field(default=None, sa_column=schema.user_data.c.last_played_date)
    rating: float | None = Field(default=None, sa_column=schema.user_data.c.rating)
    likes: bool | None = Field(default=None, sa_column=schema.user_data.c.likes)
    audio_stream_index: int | None = Field(default=None, sa_column=schema.user_data.c.audio_stream_index)
    subtitle_stream_index: int | None = Field(default=None, sa_column=schema.user_data.c.subtitle_stream_index)


# ---------------------------------------------------------------- live TV recordings
#
# A timer records one channel between two moments; a series timer makes timers for every
# guide programme of a series. A timer that has recorded is a recording (recording_path set).


class LiveTvSeriesTimer(_Table, table=True):
    __table__ = schema.livetv_series_timers

    id: str = Field(sa_column=schema.livetv_series_timers.c.id)
    name: str = Field(sa_column=schema.livetv_series_timers.c.name)  # the programme title to record
    channel_id: str | None = Field(default=None, sa_column=schema.livetv_series_timers.c.channel_id)  # None with record_any_channel
    program_id: str | None = Field(default=None, sa_column=schema.livetv_series_timers.c.program_id)
    record_any_time: bool = Field(default=True, sa_column=schema.livetv_series_timers.c.record_any_time)
    record_any_channel: bool = Field(default=False, sa_column=schema.livetv_series_timers.c.record_any_channel)
    record_new_only: bool = Field(default=False, sa_column=schema.livetv_series_timers.c.record_new_only)
    days_json: str = Field(default="[]", sa_column=schema.livetv_series_timers.c.days_json)  # DayOfWeek names; empty = every day
    pre_padding_seconds: int = Field(default=0, sa_column=schema.livetv_series_timers.c.pre_padding_seconds)
    post_padding_seconds: int = Field(default=0, sa_column=schema.livetv_series_timers.c.post_padding_seconds)
    priority: int = Field(default=0, sa_column=schema.livetv_series_timers.c.priority)
    keep_up_to: int = Field(default=0, sa_column=schema.livetv_series_timers.c.keep_up_to)
    keep_until: str = Field(default="UntilDeleted", sa_column=schema.livetv_series_timers.c.keep_until)
    date_created: datetime = Field(default_factory=utcnow, sa_column=schema.livetv_series_timers.c.date_created)


class LiveTvTimer(_Table, table=True):
    __table__ = schema.livetv_timers

    id: str = Field(sa_column=schema.livetv_timers.c.id)
    series_timer_id: str | None = Field(default=None, sa_column=schema.livetv_timers.c.series_timer_id)
    channel_id: str = Field(sa_column=schema.livetv_timers.c.channel_id)
    program_id: str | None = Field(default=None, sa_column=schema.livetv_timers.c.program_id)
    name: str = Field(default="", sa_column=schema.livetv_timers.c.name)
    overview: str | None = Field(default=None, sa_column=schema.livetv_timers.c.overview)
    start_date: datetime = Field(sa_column=schema.livetv_timers.c.start_date)
    end_date: datetime = Field(sa_column=schema.livetv_timers.c.end_date)
    pre_padding_seconds: int = Field(default=0, sa_column=schema.livetv_timers.c.pre_padding_seconds)
    post_padding_seconds: int = Field(default=0, sa_column=schema.livetv_timers.c.post_padding_seconds)
    priority: int = Field(default=0, sa_column=schema.livetv_timers.c.priority)
    keep_until: str = Field(default="UntilDeleted", sa_column=schema.livetv_timers.c.keep_until)
    status: str = Field(default="New", sa_column=schema.livetv_timers.c.status)  # RecordingStatus spelling
    recording_path: str | None = Field(default=None, sa_column=schema.livetv_timers.c.recording_path)
    error: str | None = Field(default=None, sa_column=schema.livetv_timers.c.error)
    date_created: datetime = Field(default_factory=utcnow, sa_column=schema.livetv_timers.c.date_created)


# ---------------------------------------------------------------- browsing: playlists, collections
#
# A playlist or a collection (BoxSet) is also an ``items`` row (type Playlist / BoxSet, no
# library) so that every item route and the DTO builder see it; these tables hold what the item
# row cannot: owners, shares, and the ordered entries.


class Playlist(_Table, table=True):
    __table__ = schema.playlists

    id: str = Field(sa_column=schema.playlists.c.id)  # = the Playlist item's id
    owner_user_id: str | None = Field(default=None, sa_column=schema.playlists.c.owner_user_id)
    is_public: bool = Field(default=False, sa_column=schema.playlists.c.is_public)
    media_type: str = Field(default="Unknown", sa_column=schema.playlists.c.media_type)  # MediaType spelling


class PlaylistEntry(_Table, table=True):
    """One entry of a playlist (its PlaylistItemId); the same item may appear twice."""

    __table__ = schema.playlist_entries
    # a playlist's entries in order with their item ids, read from the index alone (0011_lists_fast)

    id: str = Field(sa_column=schema.playlist_entries.c.id)
    playlist_id: str = Field(sa_column=schema.playlist_entries.c.playlist_id)
    item_id: str = Field(sa_column=schema.playlist_entries.c.item_id)
    sort_order: int = Field(default=0, sa_column=schema.playlist_entries.c.sort_order)


class PlaylistShare(_Table, table=True):
    """A user the playlist is shared with, and whether they may edit it."""

    __table__ = schema.playlist_users

    playlist_id: str = Field(sa_column=schema.playlist_users.c.playlist_id)
    user_id: str = Field(sa_column=schema.playlist_users.c.user_id)
    can_edit: bool = Field(default=False, sa_column=schema.playlist_users.c.can_edit)


class CollectionEntry(_Table, table=True):
    """An item in a collection (BoxSet)."""

    __table__ = schema.collection_items

    collection_id: str = Field(sa_column=schema.collection_items.c.collection_id)
    item_id: str = Field(sa_column=schema.collection_items.c.item_id)
    sort_order: int = Field(default=0, sa_column=schema.collection_items.c.sort_order)
    date_added: datetime = Field(default_factory=utcnow, sa_column=schema.collection_items.c.date_added)


# ---------------------------------------------------------------- trickplay


class TrickplayInfo(_Table, table=True):
    """Tile sheets made for one video at one width (see server/trickplay)."""

    __table__ = schema.trickplay_info

    item_id: str = Field(sa_column=schema.trickplay_info.c.item_id)
    width: int = Field(sa_column=schema.trickplay_info.c.width)
    height: int = Field(default=0, sa_column=schema.trickplay_info.c.height)
    tile_width: int = Field(default=10, sa_column=schema.trickplay_info.c.tile_width)
    tile_height: int = Field(default=10, sa_column=schema.trickplay_info.c.tile_height)
    thumbnail_count: int = Field(default=0, sa_column=schema.trickplay_info.c.thumbnail_count)
    interval: int = Field(default=10000, sa_column=schema.trickplay_info.c.interval)  # milliseconds between thumbnails
    bandwidth: int = Field(default=0, sa_column=schema.trickplay_info.c.bandwidth)  # bits per second a player needs to fetch the sheets in time
    signature: str = Field(default="", sa_column=schema.trickplay_info.c.signature)  # the file's size and mtime when the tiles were made


# ---------------------------------------------------------------- generated artwork


class ByNameArtwork(_Table, table=True):
    """Images of genres, music genres and artists that have no ``items`` row of their own: a
    collage or an album cover made by the artwork task (see server/artwork), or the by-name
    folder's own Primary when an administrator put one there. Keyed by the by-name id."""

    __table__ = schema.byname_artwork

    id: str = Field(sa_column=schema.byname_artwork.c.id)
    kind: str = Field(default="", sa_column=schema.byname_artwork.c.kind)  # Genre, MusicGenre, MusicArtist
    name: str = Field(default="", sa_column=schema.byname_artwork.c.name)
    images_json: str = Field(default="[]", sa_column=schema.byname_artwork.c.images_json)  # images_json-style entries ({Type, Path, Tag, Width, Height, BlurHash})
    key: str = Field(default="", sa_column=schema.byname_artwork.c.key)  # what the image was made from (unchanged key = nothing to redo)


class ItemValueCount(_Table, table=True):
    """Kept aggregate (server/library/facets.py, maintained by triggers): how many items (not
    owned rows) of a library and type carry a value in this spelling. ``AnyArtist`` rows count
    items with the name as artist or album artist once."""

    __table__ = schema.item_value_counts

    kind: str = Field(sa_column=schema.item_value_counts.c.kind)
    clean_value: str = Field(sa_column=schema.item_value_counts.c.clean_value)
    value: str = Field(sa_column=schema.item_value_counts.c.value)
    library_id: str = Field(sa_column=schema.item_value_counts.c.library_id)  # '' for rows without a library
    item_type: str = Field(sa_column=schema.item_value_counts.c.item_type)
    item_count: int = Field(default=0, sa_column=schema.item_value_counts.c.item_count)


class ItemFieldCount(_Table, table=True):
    """Kept aggregate (server/library/facets.py): items per production year or official rating
    (``facet`` Year / OfficialRating), library and type."""

    __table__ = schema.item_field_counts

    facet: str = Field(sa_column=schema.item_field_counts.c.facet)
    value: str = Field(sa_column=schema.item_field_counts.c.value)
    library_id: str = Field(sa_column=schema.item_field_counts.c.library_id)
    item_type: str = Field(sa_column=schema.item_field_counts.c.item_type)
    item_count: int = Field(default=0, sa_column=schema.item_field_counts.c.item_count)
