"""Evaluation of DeviceProfile ProfileConditions against what is known about a stream.

Facts are a mapping from ProfileConditionValue names (``Width``, ``VideoLevel`` ...) to the
stream's value, or None when unknown. A condition on an unknown value holds unless the
condition is marked IsRequired. A condition on a property the engine does not track holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from server.playback.errors import InvalidDeviceProfile
from server.playback.formats import codec_matches, container_matches
from server.wire.models import (
    ENUMS,
    CodecProfile,
    DeviceProfile,
    MediaSourceInfo,
    MediaStream,
    ProfileCondition,
)

Facts = Mapping[str, Any]

_INT_PROPERTIES = frozenset({
    "AudioChannels", "AudioBitrate", "AudioSampleRate", "AudioBitDepth", "Width", "Height",
    "VideoBitDepth", "VideoBitrate", "RefFrames", "NumAudioStreams", "NumVideoStreams", "PacketLength",
})
_FLOAT_PROPERTIES = frozenset({"VideoLevel", "VideoFramerate"})
_BOOL_PROPERTIES = frozenset({"IsAnamorphic", "IsInterlaced", "IsAvc", "IsSecondaryAudio", "Has64BitOffsets"})
_CONDITION_TYPES = frozenset(ENUMS["ProfileConditionType"])

# A Dolby Vision stream with a compatible base layer plays as that base layer.
_RANGE_TYPE_FALLBACK = {"doviwithhdr10": "hdr10", "doviwithhlg": "hlg", "doviwithsdr": "sdr"}

# What a failed condition on each property tells the client; properties that only a remux can
# fix (stream counts, container details) count as container problems.
_REASON_BY_PROPERTY = {
    "AudioBitrate": "AudioBitrateNotSupported",
    "AudioChannels": "AudioChannelsNotSupported",
    "AudioProfile": "AudioProfileNotSupported",
    "AudioSampleRate": "AudioSampleRateNotSupported",
    "AudioBitDepth": "AudioBitDepthNotSupported",
    "IsSecondaryAudio": "SecondaryAudioNotSupported",
    "Width": "VideoResolutionNotSupported",
    "Height": "VideoResolutionNotSupported",
    "IsAnamorphic": "AnamorphicVideoNotSupported",
    "IsInterlaced": "InterlacedVideoNotSupported",
    "IsAvc": "VideoCodecNotSupported",
    "RefFrames": "RefFramesNotSupported",
    "VideoBitDepth": "VideoBitDepthNotSupported",
    "VideoBitrate": "VideoBitrateNotSupported",
    "VideoCodecTag": "VideoCodecTagNotSupported",
    "VideoFramerate": "VideoFramerateNotSupported",
    "VideoLevel": "VideoLevelNotSupported",
    "VideoProfile": "VideoProfileNotSupported",
    "VideoRangeType": "VideoRangeTypeNotSupported",
    "NumAudioStreams": "ContainerNotSupported",
    "NumVideoStreams": "ContainerNotSupported",
    "PacketLength": "ContainerNotSupported",
    "Has64BitOffsets": "ContainerNotSupported",
    "VideoTimestamp": "ContainerNotSupported",
}


def reason_for(condition: ProfileCondition) -> str | None:
    """The TranscodeReason a failure of this condition stands for."""
    return _REASON_BY_PROPERTY.get(condition.Property or "")


def _parse_int(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def _parse_float(text: str) -> float | None:
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return None


def _parse_bool(text: str) -> bool | None:
    lowered = text.strip().lower()
    return {"true": True, "false": False}.get(lowered)


def _compare(kind: str, operator: str, current: Any, expected: Any) -> bool:
    if operator == "Equals":
        return bool(current == expected)
    if operator == "NotEquals":
        return bool(current != expected)
    if kind in ("str", "bool"):
        raise InvalidDeviceProfile(f"{operator} cannot compare a {kind} value")
    if operator == "LessThanEqual":
        return bool(current <= expected)
    return bool(current >= expected)  # GreaterThanEqual


def _holds_for(condition: ProfileCondition, current: Any) -> bool:
    prop = condition.Property or ""
    operator = condition.Condition or ""
    raw = condition.Value or ""
    parse: Callable[[str], object]
    if prop in _INT_PROPERTIES:
        kind, parse = "int", _parse_int
    elif prop in _FLOAT_PROPERTIES:
        kind, parse = "float", _parse_float
    elif prop in _BOOL_PROPERTIES:
        kind, parse = "bool", _parse_bool
    else:
        kind, parse = "str", (lambda text: text.strip().lower())
        current = str(current).strip().lower()
    if kind == "float":
        current = float(current)
    if operator == "EqualsAny":
        return any(value is not None and value == current for value in map(parse, raw.split("|")))
    expected = parse(raw)
    if expected is None:
        return False
    return _compare(kind, operator, current, expected)


def condition_holds(condition: ProfileCondition, facts: Facts) -> bool:
    """Whether one condition holds for a stream described by ``facts``."""
    operator = condition.Condition
    if operator not in _CONDITION_TYPES:
        raise InvalidDeviceProfile(f"unknown profile condition type {operator!r}")
    prop = condition.Property or ""
    if prop not in facts:
        return True
    current = facts[prop]
    if current is None or current == "" or (prop == "VideoRangeType" and str(current).lower() == "unknown"):
        return not condition.IsRequired
    if _holds_for(condition, current):
        return True
    fallback = _RANGE_TYPE_FALLBACK.get(str(current).lower()) if prop == "VideoRangeType" else None
    return fallback is not None and _holds_for(condition, fallback)


def failed_conditions(conditions: Iterable[ProfileCondition] | None, facts: Facts) -> list[ProfileCondition]:
    """The conditions that do not hold."""
    return [c for c in conditions or () if not condition_holds(c, facts)]


def all_hold(conditions: Iterable[ProfileCondition] | None, facts: Facts) -> bool:
    """Whether every condition holds."""
    return not failed_conditions(conditions, facts)


def reasons_for(conditions: Iterable[ProfileCondition]) -> set[str]:
    """The TranscodeReasons for a set of failed conditions."""
    return {reason for reason in map(reason_for, conditions) if reason}


def _count(source: MediaSourceInfo, stream_type: str) -> int:
    return sum(1 for s in source.MediaStreams or () if s.Type == stream_type)


def video_facts(source: MediaSourceInfo, video: MediaStream | None) -> dict[str, Any]:
    """Facts for Video codec profiles and container profiles."""
    v = video or MediaStream()
    return {
        "Width": v.Width, "Height": v.Height, "VideoBitDepth": v.BitDepth, "VideoBitrate": v.BitRate,
        "VideoProfile": v.Profile, "VideoRangeType": v.VideoRangeType, "VideoLevel": v.Level,
        "VideoFramerate": v.AverageFrameRate or v.RealFrameRate, "PacketLength": v.PacketLength,
        "VideoTimestamp": source.Timestamp if video is not None else None,
        "IsAnamorphic": v.IsAnamorphic, "IsInterlaced": v.IsInterlaced, "RefFrames": v.RefFrames,
        "NumVideoStreams": _count(source, "Video"), "NumAudioStreams": _count(source, "Audio"),
        "VideoCodecTag": v.CodecTag, "IsAvc": v.IsAVC,
    }


def is_secondary_audio(source: MediaSourceInfo, audio: MediaStream) -> bool | None:
    """Whether an audio stream is not the first embedded audio stream of its source."""
    if audio.IsExternal:
        return False
    for stream in source.MediaStreams or ():
        if stream.Type == "Audio" and not stream.IsExternal:
            return stream.Index != audio.Index
    return None


def video_audio_facts(source: MediaSourceInfo, audio: MediaStream) -> dict[str, Any]:
    """Facts for VideoAudio codec profiles (the audio of a video)."""
    return {
        "AudioChannels": audio.Channels, "AudioBitrate": audio.BitRate, "AudioSampleRate": audio.SampleRate,
        "AudioBitDepth": audio.BitDepth, "AudioProfile": audio.Profile,
        "IsSecondaryAudio": is_secondary_audio(source, audio),
    }


def audio_facts(audio: MediaStream | None) -> dict[str, Any]:
    """Facts for Audio codec profiles (music and other audio items)."""
    a = audio or MediaStream()
    return {"AudioChannels": a.Channels, "AudioBitrate": a.BitRate, "AudioSampleRate": a.SampleRate,
            "AudioBitDepth": a.BitDepth}


def applicable_codec_profiles(
    profile: DeviceProfile, kind: str, codec: str | None, container: str | None, facts: Facts
) -> list[CodecProfile]:
    """CodecProfiles of a type ("Video", "VideoAudio", "Audio") that cover a codec in a container
    and whose ApplyConditions hold for the stream."""
    return [
        cp for cp in profile.CodecProfiles or ()
        if cp.Type == kind
        and codec_matches(cp.Codec, codec)
        and container_matches(cp.Container, container)
        and all_hold(cp.ApplyConditions, facts)
    ]


def codec_profile_failures(
    profile: DeviceProfile, kind: str, codec: str | None, container: str | None, facts: Facts
) -> list[ProfileCondition]:
    """The Conditions of the applicable CodecProfiles that the stream fails."""
    failures: list[ProfileCondition] = []
    for cp in applicable_codec_profiles(profile, kind, codec, container, facts):
        failures += failed_conditions(cp.Conditions, facts)
    return failures
