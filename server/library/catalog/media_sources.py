"""MediaSourceInfo for stored items: what a client may play and how.

``media_source_for(row)`` works on any object with the ``items`` columns as attributes (an
``Item`` or a SQLAlchemy Row). Alternate versions (Movie rows whose ``owner_id`` is the primary
version) become additional sources: pass them as ``versions``. PlaybackInfo builds on this.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from server.wire import models as w

if TYPE_CHECKING:
    from server.library.catalog.query import ItemRow

_STREAMS = msgspec.json.Decoder(list[w.MediaStream])


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


def _default_audio_index(streams: list[w.MediaStream]) -> int | None:
    audio = [s for s in streams if s.Type == "Audio"]
    if not audio:
        return None
    chosen = next((s for s in audio if s.IsDefault), audio[0])
    return chosen.Index


def _default_subtitle_index(streams: list[w.MediaStream]) -> int | None:
    subs = [s for s in streams if s.Type == "Subtitle"]
    chosen = next((s for s in subs if s.IsForced), None) or next((s for s in subs if s.IsDefault), None)
    return chosen.Index if chosen is not None else None


def source_name(row: ItemRow) -> str | None:
    path = getattr(row, "path", None)
    if not path:
        return getattr(row, "name", None)
    return os.path.splitext(os.path.basename(path))[0]


def media_source_for(row: ItemRow, streams: list[w.MediaStream] | None = None) -> w.MediaSourceInfo:
    """The one media source of a stored item (its file)."""
    if streams is None:
        streams = streams_of(row)
    video_type = getattr(row, "video_type", None)
    is_disc = video_type in ("Dvd", "BluRay", "Iso")
    container = getattr(row, "container", None)
    return w.MediaSourceInfo(
        Protocol="File",
        Id=row.id,
        Path=getattr(row, "path", None),
        Type="Default",
        Container=container,
        Size=getattr(row, "size", None) or getattr(row, "file_size", None),
        Name=source_name(row),
        IsRemote=False,
        ETag=etag_for(row),
        RunTimeTicks=getattr(row, "run_time_ticks", None),
        ReadAtNativeFramerate=False,
        IgnoreDts=False,
        IgnoreIndex=False,
        GenPtsInput=False,
        SupportsTranscoding=True,
        SupportsDirectStream=not is_disc,
        SupportsDirectPlay=not is_disc,
        IsInfiniteStream=False,
        UseMostCompatibleTranscodingProfile=False,
        RequiresOpening=False,
        RequiresClosing=False,
        RequiresLooping=False,
        SupportsProbing=True,
        VideoType=video_type if getattr(row, "media_type", None) == "Video" else None,
        MediaStreams=streams,
        MediaAttachments=[],
        Formats=[],
        Bitrate=getattr(row, "bitrate", None),
        RequiredHttpHeaders={},
        TranscodingSubProtocol="http",
        DefaultAudioStreamIndex=_default_audio_index(streams),
        DefaultSubtitleStreamIndex=_default_subtitle_index(streams),
        HasSegments=False,
    )


def media_sources_for(row: ItemRow, versions: Iterable[ItemRow] = (), streams: list[w.MediaStream] | None = None,
                      ) -> list[w.MediaSourceInfo]:
    """The item's own source first, then its alternate versions (sorted by name)."""
    sources = [media_source_for(row, streams)]
    for version in sorted(versions, key=lambda v: (getattr(v, "path", "") or "")):
        sources.append(media_source_for(version))
    return sources
