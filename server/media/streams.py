"""Media streams, chapters and attachments in Jellyfin's MediaStream terms.

Field names are snake_case here; ``to_wire()`` gives the spec's PascalCase names
(MediaStream, ChapterInfo, MediaAttachment schemas) with unset values left out.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from server.media.languages import SPECIAL_LANGUAGE_CODES, language_display_name

# MediaStreamType members from the spec.
VIDEO = "Video"
AUDIO = "Audio"
SUBTITLE = "Subtitle"
EMBEDDED_IMAGE = "EmbeddedImage"
DATA = "Data"
LYRIC = "Lyric"

# Words Jellyfin's English localisation puts into display titles.
_DEFAULT = "Default"
_FORCED = "Forced"
_EXTERNAL = "External"
_HEARING_IMPAIRED = "Hearing Impaired"
_UNDEFINED = "Undefined"

_AUDIO_CODEC_NAMES = {"ac3": "Dolby Digital", "eac3": "Dolby Digital+", "dca": "DTS"}

# (max width, max height, progressive label, interlaced label); first box that fits wins.
_RESOLUTIONS: tuple[tuple[int, int, str, str], ...] = (
    (256, 144, "144p", "144i"),
    (426, 240, "240p", "240i"),
    (640, 360, "360p", "360i"),
    (682, 384, "384p", "384i"),
    (720, 404, "404p", "404i"),
    (854, 480, "480p", "480i"),
    (960, 544, "540p", "540i"),
    (1024, 576, "576p", "576i"),
    (1280, 962, "720p", "720i"),
    (2560, 1440, "1080p", "1080i"),
    (4096, 3072, "4K", "4K"),
    (8192, 6144, "8K", "8K"),
)

def _pascal(name: str) -> str:
    special = {"is_avc": "IsAVC"}
    if name in special:
        return special[name]
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def is_text_subtitle_codec(codec: str | None) -> bool:
    """Whether a subtitle codec name is text based (Jellyfin's rule: not PGS, DVD, DVB or .sub/.sup)."""
    name = (codec or "").lower()
    if "microdvd" in name:
        return True
    return not (
        "pgs" in name or "dvdsub" in name or "dvbsub" in name or name in ("sup", "sub")
    )


@dataclass(frozen=True, slots=True)
class ProbedStream:
    """One stream of a media file, as Jellyfin describes it in MediaStream."""

    index: int
    type: str
    codec: str | None = None
    codec_tag: str | None = None
    profile: str | None = None
    level: float | None = None
    time_base: str | None = None
    language: str | None = None
    title: str | None = None
    comment: str | None = None
    is_default: bool = False
    is_forced: bool = False
    is_hearing_impaired: bool = False
    is_external: bool = False
    width: int | None = None
    height: int | None = None
    average_frame_rate: float | None = None
    real_frame_rate: float | None = None
    bit_rate: int | None = None
    bit_depth: int | None = None
    pixel_format: str | None = None
    color_range: str | None = None
    color_space: str | None = None
    color_transfer: str | None = None
    color_primaries: str | None = None
    aspect_ratio: str | None = None
    is_anamorphic: bool | None = None
    is_interlaced: bool = False
    is_avc: bool | None = None
    nal_length_size: str | None = None
    channels: int | None = None
    channel_layout: str | None = None
    sample_rate: int | None = None

    @property
    def video_range(self) -> str:
        return self._range()[0]

    @property
    def video_range_type(self) -> str:
        return self._range()[1]

    def _range(self) -> tuple[str, str]:
        if self.type != VIDEO:
            return "Unknown", "Unknown"
        # Dolby Vision needs the DOVI configuration record, which PyAV does not expose;
        # such streams are classified by their base layer's transfer function.
        transfer = (self.color_transfer or "").lower()
        if transfer == "smpte2084":
            return "HDR", "HDR10"
        if transfer == "arib-std-b67":
            return "HDR", "HLG"
        return "SDR", "SDR"

    @property
    def is_text_subtitle_stream(self) -> bool:
        if self.type != SUBTITLE:
            return False
        if not self.codec and not self.is_external:
            return False
        return is_text_subtitle_codec(self.codec)

    @property
    def audio_spatial_format(self) -> str:
        if self.type != AUDIO or not self.profile:
            return "None"
        profile = self.profile.lower()
        if "dolby atmos" in profile:
            return "DolbyAtmos"
        if "dts:x" in profile:
            return "DTSX"
        return "None"

    def resolution_text(self) -> str | None:
        """"1080p", "720i", "4K"... from the frame size, or None when unknown or huge."""
        if self.width is None or self.height is None:
            return None
        for max_w, max_h, progressive, interlaced in _RESOLUTIONS:
            if self.width <= max_w and self.height <= max_h:
                return interlaced if self.is_interlaced else progressive
        return None

    @property
    def display_title(self) -> str | None:
        """The title Jellyfin shows in stream pickers, e.g. "English - AAC - Stereo - Default"."""
        if self.type == AUDIO:
            return self._join_with_title(self._audio_attributes(), " - ")
        if self.type == VIDEO:
            attributes = [a for a in (self.resolution_text(), (self.codec or "").upper()) if a]
            if self.video_range != "Unknown":
                attributes.append(self.video_range)
            return self._join_with_title(attributes, " ")
        if self.type == SUBTITLE:
            return self._join_with_title(self._subtitle_attributes(), " - ")
        return None

    def _audio_attributes(self) -> list[str]:
        attributes: list[str] = []
        if self.language and self.language.lower() not in SPECIAL_LANGUAGE_CODES:
            attributes.append(_first_upper(language_display_name(self.language) or self.language))
        if self.profile and self.profile.lower() != "lc":
            attributes.append(self.profile)
        elif self.codec:
            attributes.append(_AUDIO_CODEC_NAMES.get(self.codec.lower(), self.codec.upper()))
        if self.channel_layout:
            attributes.append(_first_upper(self.channel_layout))
        elif self.channels is not None:
            attributes.append(f"{self.channels} ch")
        if self.is_default:
            attributes.append(_DEFAULT)
        if self.is_external:
            attributes.append(_EXTERNAL)
        return attributes

    def _subtitle_attributes(self) -> list[str]:
        attributes: list[str] = []
        if self.language:
            attributes.append(_first_upper(language_display_name(self.language) or self.language))
        else:
            attributes.append(_UNDEFINED)
        if self.is_hearing_impaired:
            attributes.append(_HEARING_IMPAIRED)
        if self.is_default:
            attributes.append(_DEFAULT)
        if self.is_forced:
            attributes.append(_FORCED)
        if self.codec:
            attributes.append(self.codec.upper())
        if self.is_external:
            attributes.append(_EXTERNAL)
        return attributes

    def _join_with_title(self, attributes: list[str], separator: str) -> str:
        if not self.title:
            return separator.join(attributes)
        # With a title, only attributes the title does not already mention are appended.
        lowered = self.title.lower()
        extra = [a for a in attributes if a.lower() not in lowered]
        return " - ".join([self.title, *extra])

    def to_wire(self) -> dict[str, Any]:
        """MediaStream fields with the spec's names; None values are left out."""
        wire: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                wire[_pascal(f.name)] = value
        wire["VideoRange"] = self.video_range
        wire["VideoRangeType"] = self.video_range_type
        wire["AudioSpatialFormat"] = self.audio_spatial_format
        wire["IsTextSubtitleStream"] = self.is_text_subtitle_stream
        display_title = self.display_title
        if display_title is not None:
            wire["DisplayTitle"] = display_title
        return wire


@dataclass(frozen=True, slots=True)
class ProbedChapter:
    """A chapter mark: start position in ticks (millisecond precision) and its name."""

    start_position_ticks: int
    name: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"StartPositionTicks": self.start_position_ticks}
        if self.name is not None:
            wire["Name"] = self.name
        return wire


@dataclass(frozen=True, slots=True)
class ProbedAttachment:
    """An attached file (font, cover) as in the spec's MediaAttachment."""

    index: int
    codec: str | None = None
    codec_tag: str | None = None
    comment: str | None = None
    file_name: str | None = None
    mime_type: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {_pascal(f.name): getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None}
