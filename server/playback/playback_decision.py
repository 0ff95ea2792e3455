"""``PlaybackDecision``: how one media source will be played by one client (made by
``decision.decide_playback``; read by ``stream_urls``, ``decision.apply_decision`` and the stream
handlers). A module of its own so that the URL builders need not import the decision engine."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from server.playback.options import PlaybackOptions
from server.playback.subtitles import SubtitleDelivery


@dataclass(kw_only=True)
class StreamTarget:
    """What a stream is turned into: the codecs offered (first = the one produced), whether each
    stream is copied, the bitrates, size and rate limits and the codec-qualified options
    (``h264-level`` ...). ``TranscodePlan`` fills one in from a TranscodingProfile; a
    ``PlaybackDecision`` is one, plus how and where it plays."""

    video_codecs: tuple[str, ...] = ()
    audio_codecs: tuple[str, ...] = ()
    copy_video: bool = False
    copy_audio: bool = False
    video_bitrate: int | None = None
    audio_bitrate: int | None = None
    audio_sample_rate: int | None = None
    audio_channels: int | None = None
    max_audio_channels: int | None = None  # TranscodingMaxAudioChannels
    max_width: int | None = None
    max_height: int | None = None
    max_framerate: float | None = None
    codec_options: dict[str, str] = field(default_factory=dict)
    require_avc: bool = False
    require_non_anamorphic: bool = False

    def target_fields(self) -> dict[str, Any]:
        """This target's own fields (not a subclass's), e.g. to build a decision from a plan."""
        return {f.name: getattr(self, f.name) for f in fields(StreamTarget)}


@dataclass(kw_only=True)
class PlaybackDecision(StreamTarget):
    """How one media source will be played by one client."""

    options: PlaybackOptions
    media_type: str
    play_method: str | None
    error_code: str | None = None
    transcode_reasons: tuple[str, ...] = ()
    container: str | None = None
    sub_protocol: str = "http"
    source_container: str | None = None
    transcoding_container: str | None = None
    audio_stream_index: int | None = None
    subtitle_stream_index: int | None = None
    subtitle_deliveries: tuple[SubtitleDelivery, ...] = ()
    min_segments: int | None = None
    segment_length: int | None = None
    break_on_non_keyframes: bool = False
    enable_subtitles_in_manifest: bool = False
    enable_mpegts_m2ts_mode: bool = False
    estimate_content_length: bool = False
    copy_timestamps: bool = False
    transcode_seek_info: str | None = None
    enable_audio_vbr_encoding: bool = True
    supports_direct_play: bool = False
    supports_direct_stream: bool = False
    supports_transcoding: bool = False
    max_bitrate: int | None = None

    @property
    def start_ticks(self) -> int:
        return self.options.start_ticks

    @property
    def subtitle_delivery(self) -> SubtitleDelivery | None:
        """The delivery of the selected subtitle stream, if one is selected."""
        return next((d for d in self.subtitle_deliveries if d.index == self.subtitle_stream_index), None)

    def codec_option(self, key: str) -> str | None:
        """One codec-qualified option, e.g. ``codec_option("h264-level")``."""
        return self.codec_options.get(key)
