"""MediaSourceInfo for stored items: what a client may play and how.

``media_source_for(row)`` works on any object with the ``items`` columns as attributes (an
``Item`` or a SQLAlchemy Row). Alternate versions (Movie rows whose ``owner_id`` is the primary
version) become additional sources: pass them as ``versions``. PlaybackInfo builds on this.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from server.wire import models as w

if TYPE_CHECKING:
    from server.library.catalog.query import ItemRow

_STREAMS = msgspec.json.Decoder(list[w.MediaStream])
_POSIX = os.path is posixpath


def streams_of(row: ItemRow) -> list[w.MediaStream]:
    text = getattr(row, "media_streams_json", None) or "[]"
    try:
        return _STREAMS.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []


def etag_for(row: ItemRow) -> str:
    """Changes whenever the file does (size, mtime) or the row is rebuilt."""
    text = f"{row.id}|{getattr(row, 'file_size', None)}|{getattr(row, 'file_mtime', None)}|" \
           f"{getattr(row, 'date_modified', None)}"
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def _default_indexes(streams: list[w.MediaStream]) -> tuple[int | None, int | None]:
    """``_default_audio_index`` and ``_default_subtitle_index`` in one pass over the streams."""
    first_audio = default_audio = forced = default_sub = None
    for s in streams:
        kind = s.Type
        if kind == "Audio":
            if first_audio is None:
                first_audio = s
            if default_audio is None and s.IsDefault:
                default_audio = s
        elif kind == "Subtitle":
            if forced is None and s.IsForced:
                forced = s
            if default_sub is None and s.IsDefault:
                default_sub = s
    audio = default_audio or first_audio
    sub = forced or default_sub
    return (audio.Index if audio is not None else None), (sub.Index if sub is not None else None)


def source_name(row: ItemRow) -> str | None:
    path = getattr(row, "path", None)
    if not path:
        return getattr(row, "name", None)
    if _POSIX:  # os.path.splitext(os.path.basename(path))[0], without its four calls
        name: str = path[path.rfind("/") + 1:]
        dot = name.rfind(".")
        return name[:dot] if dot > 0 and name[:dot].lstrip(".") else name
    return os.path.splitext(os.path.basename(path))[0]


# What every file source says the same way. A source is a copy of this with its own values set
# (msgspec matches keyword arguments against the fields one by one: building MediaSourceInfo from
# 33 keywords cost ~5x a copy and assignments, per item of every Items page with MediaSources).
_FILE_SOURCE = w.MediaSourceInfo(
    Protocol="File", Type="Default", IsRemote=False, ReadAtNativeFramerate=False, IgnoreDts=False,
    IgnoreIndex=False, GenPtsInput=False, SupportsTranscoding=True, IsInfiniteStream=False,
    UseMostCompatibleTranscodingProfile=False, RequiresOpening=False, RequiresClosing=False,
    RequiresLooping=False, SupportsProbing=True, TranscodingSubProtocol="http", HasSegments=False)


def media_source_for(row: ItemRow, streams: list[w.MediaStream] | None = None) -> w.MediaSourceInfo:
    """The one media source of a stored item (its file)."""
    if streams is None:
        streams = streams_of(row)
    video_type = getattr(row, "video_type", None)
    playable = video_type not in ("Dvd", "BluRay", "Iso")
    source = msgspec.structs.replace(_FILE_SOURCE)  # a copy (only immutable values are shared: the
    # lists are set below)
    source.Id = row.id
    source.Path = getattr(row, "path", None)
    source.Container = getattr(row, "container", None)
    source.Size = getattr(row, "size", None) or getattr(row, "file_size", None)
    source.Name = source_name(row)
    source.ETag = etag_for(row)
    source.RunTimeTicks = getattr(row, "run_time_ticks", None)
    source.SupportsDirectStream = playable
    source.SupportsDirectPlay = playable
    source.VideoType = video_type if getattr(row, "media_type", None) == "Video" else None
    source.MediaStreams = streams
    source.MediaAttachments = []
    source.Formats = []
    source.Bitrate = getattr(row, "bitrate", None)
    source.RequiredHttpHeaders = {}
    source.DefaultAudioStreamIndex, source.DefaultSubtitleStreamIndex = _default_indexes(streams)
    return source


def media_sources_for(row: ItemRow, versions: Iterable[ItemRow] = (), streams: list[w.MediaStream] | None = None,
                      ) -> list[w.MediaSourceInfo]:
    """The item's own source first, then its alternate versions (sorted by name)."""
    sources = [media_source_for(row, streams)]
    for version in sorted(versions, key=lambda v: (getattr(v, "path", "") or "")):
        sources.append(media_source_for(version))
    return sources
