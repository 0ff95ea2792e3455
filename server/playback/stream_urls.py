"""Jellyfin-shaped stream URLs: the TranscodingUrl of a decision, the static stream URL of a
direct play, and the DeliveryUrl of an external subtitle. Paths are server-relative."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from server.playback.errors import PlaybackRequestError
from server.playback.transcode_plan import format_number
from server.wire.models import MediaSourceInfo

if TYPE_CHECKING:
    from server.playback.playback_decision import PlaybackDecision


def _query(pairs: list[tuple[str, str | None]]) -> str:
    return "&".join(f"{key}={quote(value, safe=',:')}" for key, value in pairs if value not in (None, ""))


def _bool(value: bool) -> str:
    return "true" if value else "false"


def subtitle_delivery_url(
    item_id: str, media_source_id: str, index: int, fmt: str, start_ticks: int = 0, api_key: str | None = None
) -> str:
    """Where a client fetches a subtitle stream delivered as an external file."""
    url = f"/Videos/{item_id}/{media_source_id}/Subtitles/{index}/{start_ticks}/Stream.{fmt}"
    return f"{url}?api_key={quote(api_key, safe='')}" if api_key else url


def build_transcoding_url(
    item_id: str,
    source: MediaSourceInfo,
    decision: PlaybackDecision,
    play_session_id: str | None = None,
    device_id: str | None = None,
    api_key: str | None = None,
    *,
    device_profile_id: str | None = None,
) -> str:
    """The URL that plays ``source`` as ``decision`` says.

    A direct play gives the static stream URL (``/videos/{id}/stream.mkv?Static=true...``); a remux
    or transcode gives ``/videos/{id}/master.m3u8?...`` for HLS or ``/videos/{id}/stream.ts?...``
    for HTTP (``/audio/...`` for audio items), with the parameters Jellyfin 10.10 puts there.
    """
    if decision.play_method is None:
        raise PlaybackRequestError("the source cannot be played with this profile, so it has no stream URL")
    if not item_id:
        raise PlaybackRequestError("an item id is required to build a stream URL")
    static = decision.play_method == "DirectPlay"
    hls = decision.sub_protocol == "hls" and not static
    prefix = "/audio" if decision.media_type == "Audio" else "/videos"
    path = f"{prefix}/{item_id}/master.m3u8" if hls else (
        f"{prefix}/{item_id}/stream" + (f".{decision.container}" if decision.container else ""))

    subtitle = decision.subtitle_delivery
    sub_in_stream = subtitle is not None and subtitle.method != "External"
    pairs: list[tuple[str, str | None]] = [
        ("DeviceProfileId", device_profile_id),
        ("DeviceId", device_id),
        ("MediaSourceId", source.Id),
        ("Static", "true" if static else None),
        ("VideoCodec", ",".join(decision.video_codecs)),
        ("AudioCodec", ",".join(decision.audio_codecs)),
        ("AudioStreamIndex", str(decision.audio_stream_index) if decision.audio_stream_index is not None
         and decision.media_type == "Video" else None),
        ("SubtitleStreamIndex", str(subtitle.index) if sub_in_stream and subtitle else None),
        ("VideoBitrate", str(decision.video_bitrate) if decision.video_bitrate and not static else None),
        ("AudioBitrate", str(decision.audio_bitrate) if decision.audio_bitrate and not static else None),
        ("AudioSampleRate", str(decision.audio_sample_rate) if decision.audio_sample_rate and not static else None),
        ("MaxFramerate", format_number(decision.max_framerate) if decision.max_framerate and not static else None),
        ("MaxWidth", str(decision.max_width) if decision.max_width and not static else None),
        ("MaxHeight", str(decision.max_height) if decision.max_height and not static else None),
        ("StartTimeTicks", str(decision.start_ticks) if decision.start_ticks and not hls else None),
        ("PlaySessionId", play_session_id),
        ("api_key", api_key),
        ("LiveStreamId", source.LiveStreamId),
        ("SubtitleMethod", subtitle.method if sub_in_stream and subtitle else None),
    ]
    if not static:
        pairs += [
            ("RequireNonAnamorphic", "true" if decision.require_non_anamorphic else None),
            ("TranscodingMaxAudioChannels", str(decision.max_audio_channels)
             if decision.max_audio_channels else None),
            ("EnableSubtitlesInManifest", "true" if decision.enable_subtitles_in_manifest else None),
            ("EnableMpegtsM2TsMode", "true" if decision.enable_mpegts_m2ts_mode else None),
            ("EstimateContentLength", "true" if decision.estimate_content_length else None),
            ("TranscodeSeekInfo", decision.transcode_seek_info.lower()
             if decision.transcode_seek_info and decision.transcode_seek_info != "Auto" else None),
            ("CopyTimestamps", "true" if decision.copy_timestamps else None),
            ("RequireAvc", _bool(decision.require_avc)),
            ("EnableAudioVbrEncoding", _bool(decision.enable_audio_vbr_encoding)),
        ]
    pairs += [
        ("Tag", source.ETag),
        ("SubtitleCodec", subtitle.format if subtitle and subtitle.method == "Embed" and not static else None),
    ]
    if hls:
        pairs += [
            ("SegmentContainer", decision.container),
            ("SegmentLength", str(decision.segment_length) if decision.segment_length else None),
            ("MinSegments", str(decision.min_segments) if decision.min_segments else None),
            ("BreakOnNonKeyFrames", "True" if decision.break_on_non_keyframes else "False"),
        ]
    if not static:
        pairs += list(decision.codec_options.items())
        pairs.append(("TranscodeReasons", ",".join(decision.transcode_reasons)))
        opts = decision.options
        pairs += [
            ("allowVideoStreamCopy", "false" if not opts.allow_video_stream_copy else None),
            ("allowAudioStreamCopy", "false" if not opts.allow_audio_stream_copy else None),
            ("alwaysBurnInSubtitleWhenTranscoding", "true" if opts.always_burn_in_subtitle_when_transcoding else None),
        ]
    query = _query(pairs)
    return f"{path}?{query}" if query else path
