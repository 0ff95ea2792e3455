"""What a transcode (or remux) through one TranscodingProfile produces: target codecs, whether
each stream is copied or encoded, bitrates, size limits and the codec-qualified options that
go into the transcoding URL (``h264-level``, ``h264-profile`` ...)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from server.playback.conditions import (
    Facts,
    all_hold,
    applicable_codec_profiles,
    audio_facts,
    codec_profile_failures,
    video_audio_facts,
    video_facts,
)
from server.playback.formats import codec_in, split_list
from server.playback.playback_decision import StreamTarget
from server.wire.models import (
    ENUMS,
    DeviceProfile,
    MediaSourceInfo,
    MediaStream,
    ProfileCondition,
    TranscodingProfile,
)

HLS_VIDEO_CODECS = ("h264", "hevc", "vp9", "av1")
HLS_TS_AUDIO_CODECS = ("aac", "ac3", "eac3", "mp3")
HLS_MP4_AUDIO_CODECS = ("aac", "ac3", "eac3", "mp3", "alac", "flac", "opus", "dca", "truehd")
MIN_VIDEO_BITRATE = 64_000
_RANGE_TYPES = ENUMS["VideoRangeType"]

# Highest audio bitrate worth spending out of a total bitrate budget.
_AUDIO_SHARE_OF_TOTAL = (
    (640_000, 128_000), (2_000_000, 384_000), (3_000_000, 448_000), (4_000_000, 640_000),
    (5_000_000, 768_000), (10_000_000, 1_536_000), (15_000_000, 2_304_000), (20_000_000, 3_584_000),
)


@dataclass(kw_only=True)
class TranscodePlan(StreamTarget):
    """The output of one transcoding profile for one source, filled in step by step."""

    profile: TranscodingProfile
    container: str
    protocol: str
    audio_stream: MediaStream | None = None


def _to_int(text: str | None) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def _to_float(text: str | None) -> float | None:
    try:
        return float(str(text).strip())
    except (TypeError, ValueError):
        return None


def format_number(value: float) -> str:
    """A number as the URL carries it: ``40`` not ``40.0``, ``23.976`` not ``23.97602462``."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"


def protocol_of(tp: TranscodingProfile) -> str:
    """The profile's streaming protocol, "hls" or "http"."""
    return "hls" if (tp.Protocol or "").lower() == "hls" else "http"


def container_of(tp: TranscodingProfile) -> str:
    """The profile's output container (segment container for HLS)."""
    entries = split_list(tp.Container)
    return entries[0] if entries else "ts"


def default_audio_bitrate(codec: str | None, channels: int | None) -> int:
    """A sensible bitrate for an audio codec at a channel count."""
    name = (codec or "").lower()
    count = channels or 0
    if name in ("aac", "mp3", "ac3", "eac3"):
        return 128_000 if count < 2 else (640_000 if count >= 6 else 384_000)
    if name in ("flac", "alac"):
        return 768_000 if count < 2 else (3_584_000 if count >= 6 else 1_536_000)
    return 192_000


def audio_share_of_total(total: int) -> int:
    """The most bitrate the audio may take out of a total budget."""
    for limit, share in _AUDIO_SHARE_OF_TOTAL:
        if total <= limit:
            return share
    return 7_168_000


def hls_audio_codecs(container: str) -> tuple[str, ...]:
    """Audio codecs an HLS stream in this segment container may carry."""
    return HLS_MP4_AUDIO_CODECS if container in ("mp4", "m4s", "fmp4") else HLS_TS_AUDIO_CODECS


def _limit(current: int | float | None, operator: str, value: float) -> float | None:
    if operator == "Equals":
        return value
    if operator == "LessThanEqual":
        return value if current is None else min(current, value)
    return current


def _choose_values(plan: TranscodePlan, key: str, operator: str, values: list[str], all_values: Sequence[str]) -> None:
    if operator == "NotEquals":
        values = [v for v in all_values if v.lower() not in {x.lower() for x in values}]
    elif operator not in ("Equals", "EqualsAny"):
        return
    current = plan.codec_options.get(key)
    if current and any(current.lower() == v.lower() for v in values) and operator == "EqualsAny":
        return
    plan.codec_options[key] = ",".join(values)


def apply_limits(plan: TranscodePlan, conditions: Iterable[ProfileCondition] | None, qualifier: str | None) -> None:
    """Fold profile conditions into output limits and codec-qualified options."""
    for cond in conditions or ():
        prop, operator, raw = cond.Property or "", cond.Condition or "", (cond.Value or "").strip()
        if not raw or operator == "GreaterThanEqual":
            continue
        number = _to_float(raw)
        key = f"{qualifier}-" if qualifier else ""
        if prop in ("Width", "Height", "VideoBitrate", "AudioBitrate", "AudioSampleRate") and number is not None:
            attr = {"Width": "max_width", "Height": "max_height", "VideoBitrate": "video_bitrate",
                    "AudioBitrate": "audio_bitrate", "AudioSampleRate": "audio_sample_rate"}[prop]
            limited = _limit(getattr(plan, attr), operator, number)
            setattr(plan, attr, int(limited) if limited is not None else None)
        elif prop == "VideoFramerate" and number is not None:
            plan.max_framerate = _limit(plan.max_framerate, operator, number)
        elif prop in ("VideoLevel", "VideoBitDepth", "RefFrames", "AudioChannels") and number is not None and qualifier:
            name = {"VideoLevel": "level", "VideoBitDepth": "videobitdepth", "RefFrames": "maxrefframes",
                    "AudioChannels": "audiochannels"}[prop]
            limited = _limit(_to_float(plan.codec_options.get(key + name)), operator, number)
            if limited is not None:
                plan.codec_options[key + name] = format_number(limited)
        elif prop == "VideoProfile" and qualifier:
            _choose_values(plan, key + "profile", operator, [v.strip() for v in raw.split("|") if v.strip()], ())
        elif prop == "VideoRangeType" and qualifier:
            _choose_values(plan, key + "rangetype", operator, [v.strip() for v in raw.split("|") if v.strip()],
                           _RANGE_TYPES)
        elif prop == "VideoCodecTag" and qualifier:
            _choose_values(plan, key + "codectag", operator, [v.strip() for v in raw.split("|") if v.strip()], ())
        elif prop in ("IsInterlaced", "IsAnamorphic", "IsAvc"):
            wanted = raw.lower() == "true"
            must_be_true = (operator == "Equals" and wanted) or (operator == "NotEquals" and not wanted)
            if prop == "IsAvc" and must_be_true:
                plan.require_avc = True
            elif prop == "IsAnamorphic" and not must_be_true:
                plan.require_non_anamorphic = True
            elif prop == "IsInterlaced" and not must_be_true and qualifier:
                plan.codec_options[key + "deinterlace"] = "true"


def source_video_bitrate(source: MediaSourceInfo, video: MediaStream | None) -> int | None:
    """The video stream's bitrate, or the container's minus its audio when the stream has none."""
    if video is not None and video.BitRate:
        return video.BitRate
    if source.Bitrate:
        audio = sum(s.BitRate or 0 for s in source.MediaStreams or () if s.Type == "Audio")
        return max(source.Bitrate - audio, 0) or None
    return None


def _target_channels(*limits: int | None) -> int | None:
    known = [n for n in limits if n]
    return min(known) if known else None


def _audio_bitrate_for(audio: MediaStream | None, codec: str, channels: int | None, total_cap: int | None) -> int:
    if audio is None:
        rate = 192_000
    else:
        source_channels = audio.Channels
        if channels and source_channels and source_channels > channels:
            rate = default_audio_bitrate(codec, channels)
        elif channels and source_channels and audio.Codec and not codec_in([codec], audio.Codec):
            rate = default_audio_bitrate(codec, source_channels)
        else:
            rate = audio.BitRate or default_audio_bitrate(codec, channels)
        if audio.Channels == 1 and (audio.BitRate or 0) < 64_000:
            rate = min(rate, 64_000)
    if total_cap:
        rate = min(rate, audio_share_of_total(total_cap))
    return rate


def _plan_video_audio(
    plan: TranscodePlan,
    device: DeviceProfile,
    source: MediaSourceInfo,
    audio: MediaStream | None,
    candidates: Sequence[MediaStream],
    cap: int | None,
    allow_copy: bool,
    max_audio_channels: int | None,
) -> None:
    plan.max_audio_channels = _target_channels(_to_int(plan.profile.MaxAudioChannels), max_audio_channels)
    if audio is None:
        return
    copyable = next((c for c in candidates if codec_in(plan.audio_codecs, c.Codec)), None)
    if copyable is not None:
        audio = copyable
    plan.audio_stream = audio
    facts = video_audio_facts(source, audio)

    def target_for(codec: str) -> tuple[int | None, int]:
        trial = TranscodePlan(profile=plan.profile, container=plan.container, protocol=plan.protocol)
        for cp in applicable_codec_profiles(device, "VideoAudio", codec, plan.container, facts):
            apply_limits(trial, cp.Conditions, codec)
        channels = _target_channels(audio.Channels, plan.max_audio_channels,
                                    _to_int(trial.codec_options.get(f"{codec}-audiochannels")))
        rate = _audio_bitrate_for(audio, codec, channels, cap)
        if trial.audio_bitrate:
            rate = min(rate, trial.audio_bitrate)
        plan.audio_sample_rate = trial.audio_sample_rate
        if f"{codec}-audiochannels" in trial.codec_options and channels:
            plan.codec_options[f"{codec}-audiochannels"] = str(channels)
        return channels, rate

    source_codec = (audio.Codec or "").lower()
    if allow_copy and not audio.IsExternal and codec_in(plan.audio_codecs, source_codec) and not (
        codec_profile_failures(device, "VideoAudio", source_codec, plan.container, facts)
    ):
        channels, rate = target_for(source_codec)
        fits = (not channels or not audio.Channels or audio.Channels <= channels) and (
            not audio.BitRate or audio.BitRate <= rate)
        if fits:
            plan.copy_audio, plan.audio_codecs = True, (source_codec,)
            plan.audio_channels, plan.audio_bitrate = audio.Channels, rate
            return
        plan.codec_options.pop(f"{source_codec}-audiochannels", None)
    target = plan.audio_codecs[0]
    plan.audio_channels, plan.audio_bitrate = target_for(target)


def plan_video(
    device: DeviceProfile,
    tp: TranscodingProfile,
    source: MediaSourceInfo,
    video: MediaStream | None,
    audio: MediaStream | None,
    candidates: Sequence[MediaStream],
    *,
    cap: int | None,
    allow_video_copy: bool,
    allow_audio_copy: bool,
    burn_in_subtitle: bool,
    max_audio_channels: int | None,
    encodable_video_codecs: Sequence[str],
) -> TranscodePlan | None:
    """Plan a video transcode through ``tp``; None when no listed video codec can be produced."""
    plan = TranscodePlan(profile=tp, container=container_of(tp), protocol=protocol_of(tp))
    video_codecs = split_list(tp.VideoCodec) or ["h264"]
    audio_codecs = split_list(tp.AudioCodec) or ["aac"]
    if plan.protocol == "hls":
        video_codecs = [c for c in video_codecs if codec_in(HLS_VIDEO_CODECS, c)]
        audio_codecs = [c for c in audio_codecs if codec_in(hls_audio_codecs(plan.container), c)]
    plan.video_codecs, plan.audio_codecs = tuple(video_codecs), tuple(audio_codecs or ["aac"])

    _plan_video_audio(plan, device, source, audio, candidates, cap, allow_audio_copy, max_audio_channels)

    facts: Facts = video_facts(source, video)
    source_codec = ((video.Codec if video else None) or "").lower()
    copyable = (
        allow_video_copy and video is not None and not burn_in_subtitle
        and codec_in(video_codecs, source_codec)
        and not codec_profile_failures(device, "Video", source_codec, plan.container, facts)
        and all_hold(tp.Conditions, facts)
    )
    budget = None
    if cap:
        budget = max(cap - (plan.audio_bitrate or 0), MIN_VIDEO_BITRATE)
    if copyable and budget is not None:
        current = source_video_bitrate(source, video)
        copyable = current is None or current <= budget
    if copyable:
        target = source_codec
    else:
        target = next((c for c in video_codecs if codec_in(encodable_video_codecs, c)), None)
        if target is None:
            return None
    plan.copy_video = copyable
    plan.video_codecs = (target, *(c for c in video_codecs if c != target and (
        copyable or codec_in(encodable_video_codecs, c))))

    if video is not None:
        plan.max_framerate = video.AverageFrameRate or video.RealFrameRate
        if source_codec == target:
            if video.Level:
                plan.codec_options[f"{target}-level"] = format_number(video.Level)
            if video.BitDepth:
                plan.codec_options[f"{target}-videobitdepth"] = str(video.BitDepth)
            if video.Profile:
                plan.codec_options[f"{target}-profile"] = video.Profile.lower()
    for cp in applicable_codec_profiles(device, "Video", target, plan.container, facts):
        apply_limits(plan, cp.Conditions, target)
    if not copyable:
        apply_limits(plan, tp.Conditions, target)
    if budget is not None:
        plan.video_bitrate = max(min(budget, plan.video_bitrate or budget), MIN_VIDEO_BITRATE)
    return plan


def plan_audio(
    device: DeviceProfile,
    tp: TranscodingProfile,
    audio: MediaStream | None,
    *,
    cap: int | None,
    allow_copy: bool,
    max_audio_channels: int | None,
) -> TranscodePlan:
    """Plan a transcode (or remux) of an audio item through ``tp``."""
    plan = TranscodePlan(profile=tp, container=container_of(tp), protocol=protocol_of(tp), audio_stream=audio)
    codecs = split_list(tp.AudioCodec) or [plan.container]
    if plan.protocol == "hls":
        codecs = [c for c in codecs if codec_in(hls_audio_codecs(plan.container), c)] or ["aac"]
    plan.audio_codecs = tuple(codecs)
    plan.max_audio_channels = _target_channels(_to_int(tp.MaxAudioChannels), max_audio_channels)
    facts = audio_facts(audio)
    source_codec = ((audio.Codec if audio else None) or "").lower()
    if (allow_copy and audio is not None and codec_in(codecs, source_codec)
            and not codec_profile_failures(device, "Audio", source_codec, plan.container, facts)
            and (not plan.max_audio_channels or not audio.Channels or audio.Channels <= plan.max_audio_channels)):
        plan.copy_audio, plan.audio_codecs = True, (source_codec,)
        plan.audio_channels, plan.audio_bitrate = audio.Channels, audio.BitRate
        return plan
    target = codecs[0]
    for cp in applicable_codec_profiles(device, "Audio", target, plan.container, facts):
        apply_limits(plan, cp.Conditions, None)
    rate = device.MusicStreamingTranscodingBitrate or cap or 128_000
    if cap:
        rate = min(rate, cap)
    plan.audio_bitrate = min(rate, plan.audio_bitrate) if plan.audio_bitrate else rate
    plan.audio_channels = _target_channels(audio.Channels if audio else None, plan.max_audio_channels)
    return plan
