"""How each subtitle stream reaches the client: Embed, External, Hls or Encode (burn-in).

Order of preference, per the client's SubtitleProfiles: kept inside the container it plays
(Embed, same format, then a convertible text format), then a side file or HLS rendition with no
conversion, then with a text conversion, and otherwise burnt into the video by the encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.playback.formats import (
    can_convert_subtitle,
    container_matches,
    is_text_subtitle,
    split_list,
    subtitle_format_matches,
)
from server.wire.models import MediaStream, SubtitleProfile

# Output containers that can carry embedded subtitles when the server writes them.
_EMBED_CAPABLE_OUTPUT = "mkv,matroska"


@dataclass(frozen=True)
class SubtitleDelivery:
    """The delivery chosen for one subtitle stream."""

    index: int
    method: str
    format: str


def _is_text(stream: MediaStream) -> bool:
    if stream.IsTextSubtitleStream is not None:
        return stream.IsTextSubtitleStream
    return is_text_subtitle(stream.Codec)


def _supports_language(profile: SubtitleProfile, language: str | None) -> bool:
    languages = split_list(profile.Language)
    return not languages or (language or "und").lower() in languages


def _embedded_profile(
    stream: MediaStream, profiles: Sequence[SubtitleProfile], transcoding: bool, output_container: str | None
) -> SubtitleProfile | None:
    usable = [
        p for p in profiles
        if p.Method == "Embed"
        and _supports_language(p, stream.Language)
        and container_matches(p.Container, output_container)
        and (not transcoding or container_matches(_EMBED_CAPABLE_OUTPUT, output_container))
    ]
    text = _is_text(stream)
    for p in usable:
        if text == is_text_subtitle(p.Format) and subtitle_format_matches(p.Format, stream.Codec):
            return p
    for p in usable:
        if text and can_convert_subtitle(stream.Codec, p.Format):
            return p
    return None


def _side_profile(
    stream: MediaStream,
    profiles: Sequence[SubtitleProfile],
    transcoding: bool,
    allow_conversion: bool,
    source_is_infinite: bool,
) -> SubtitleProfile | None:
    text = _is_text(stream)
    extractable = stream.SupportsExternalStream if stream.SupportsExternalStream is not None else text
    for p in profiles:
        if p.Method not in ("External", "Hls") or (p.Method == "Hls" and not transcoding):
            continue
        if not _supports_language(p, stream.Language):
            continue
        fits = (p.Method == "External" and text == is_text_subtitle(p.Format)) or (p.Method == "Hls" and text)
        if not fits:
            continue
        if subtitle_format_matches(p.Format, stream.Codec):
            return p
        if allow_conversion and not source_is_infinite and text and extractable and can_convert_subtitle(
            stream.Codec, p.Format
        ):
            return p
    return None


def choose_subtitle_delivery(
    stream: MediaStream,
    profiles: Sequence[SubtitleProfile] | None,
    *,
    transcoding: bool,
    output_container: str | None,
    protocol: str | None,
    source_is_infinite: bool = False,
) -> SubtitleDelivery:
    """Pick the delivery of one subtitle stream for a given way of playing the source."""
    profiles = list(profiles or ())
    index = stream.Index if stream.Index is not None else -1
    if not stream.IsExternal and not (transcoding and protocol == "hls"):
        embedded = _embedded_profile(stream, profiles, transcoding, output_container)
        if embedded is not None:
            return SubtitleDelivery(index, "Embed", (embedded.Format or stream.Codec or "").lower())
    for allow_conversion in (False, True):
        side = _side_profile(stream, profiles, transcoding, allow_conversion, source_is_infinite)
        if side is not None:
            return SubtitleDelivery(index, side.Method or "External", (side.Format or "").lower())
    return SubtitleDelivery(index, "Encode", (stream.Codec or "").lower())
