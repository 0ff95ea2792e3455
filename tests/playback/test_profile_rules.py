"""The rules a DeviceProfile is made of: conditions, container/codec lists, subtitle delivery."""

from __future__ import annotations

import pytest

from server.playback.conditions import condition_holds, reason_for
from server.playback.errors import InvalidDeviceProfile
from server.playback.formats import (
    can_convert_subtitle,
    codec_matches,
    container_matches,
    is_text_subtitle,
    single_container,
)
from server.playback.subtitles import choose_subtitle_delivery
from server.wire.models import MediaStream, ProfileCondition, SubtitleProfile


def cond(prop: str, op: str, value: str, required: bool | None = None) -> ProfileCondition:
    return ProfileCondition(Condition=op, Property=prop, Value=value, IsRequired=required)


@pytest.mark.parametrize(("condition", "facts", "holds"), [
    (cond("Width", "LessThanEqual", "1920"), {"Width": 1920}, True),
    (cond("Width", "LessThanEqual", "1920"), {"Width": 3840}, False),
    (cond("Height", "GreaterThanEqual", "720"), {"Height": 480}, False),
    (cond("VideoBitDepth", "Equals", "8"), {"VideoBitDepth": 8}, True),
    (cond("VideoBitDepth", "NotEquals", "10"), {"VideoBitDepth": 10}, False),
    (cond("AudioChannels", "EqualsAny", "2|6"), {"AudioChannels": 6}, True),
    (cond("AudioChannels", "EqualsAny", "2|6"), {"AudioChannels": 8}, False),
    (cond("VideoLevel", "LessThanEqual", "41"), {"VideoLevel": 40.0}, True),
    (cond("VideoLevel", "LessThanEqual", "41"), {"VideoLevel": 51.0}, False),
    (cond("VideoFramerate", "LessThanEqual", "30"), {"VideoFramerate": 59.94}, False),
    (cond("VideoProfile", "EqualsAny", "high|main|constrained baseline"), {"VideoProfile": "High"}, True),
    (cond("VideoProfile", "EqualsAny", "high|main"), {"VideoProfile": "High 10"}, False),
    (cond("VideoProfile", "Equals", "main"), {"VideoProfile": "MAIN"}, True),
    (cond("VideoRangeType", "EqualsAny", "SDR"), {"VideoRangeType": "HDR10"}, False),
    (cond("VideoRangeType", "EqualsAny", "SDR|HDR10"), {"VideoRangeType": "DOVIWithHDR10"}, True),
    (cond("VideoRangeType", "EqualsAny", "SDR"), {"VideoRangeType": "DOVI"}, False),
    (cond("IsInterlaced", "NotEquals", "true"), {"IsInterlaced": True}, False),
    (cond("IsInterlaced", "NotEquals", "true"), {"IsInterlaced": False}, True),
    (cond("IsSecondaryAudio", "Equals", "false"), {"IsSecondaryAudio": True}, False),
    (cond("NumAudioStreams", "LessThanEqual", "1"), {"NumAudioStreams": 2}, False),
    # Unknown values: fine unless the condition says it is required.
    (cond("Width", "LessThanEqual", "1920"), {"Width": None}, True),
    (cond("Width", "LessThanEqual", "1920", required=True), {"Width": None}, False),
    (cond("VideoRangeType", "EqualsAny", "SDR", required=True), {"VideoRangeType": "Unknown"}, False),
    (cond("VideoProfile", "Equals", "high"), {"VideoProfile": ""}, True),
    # A value the condition cannot parse fails; a property nobody tracks is ignored.
    (cond("Width", "LessThanEqual", "wide"), {"Width": 1280}, False),
    (cond("AudioProfile", "Equals", "LC"), {"Width": 1280}, True),
])
def test_condition_holds(condition: ProfileCondition, facts: dict, holds: bool) -> None:
    assert condition_holds(condition, facts) is holds


@pytest.mark.parametrize("condition", [
    cond("Width", "Between", "1"),
    cond("VideoProfile", "LessThanEqual", "high"),
    cond("IsAnamorphic", "GreaterThanEqual", "true"),
])
def test_meaningless_conditions_are_rejected(condition: ProfileCondition) -> None:
    with pytest.raises(InvalidDeviceProfile):
        condition_holds(condition, {"Width": 1, "VideoProfile": "high", "IsAnamorphic": True})


def test_failed_conditions_name_their_transcode_reason() -> None:
    assert reason_for(cond("Height", "LessThanEqual", "1")) == "VideoResolutionNotSupported"
    assert reason_for(cond("VideoRangeType", "EqualsAny", "SDR")) == "VideoRangeTypeNotSupported"
    assert reason_for(cond("AudioChannels", "LessThanEqual", "2")) == "AudioChannelsNotSupported"
    assert reason_for(cond("NumAudioStreams", "LessThanEqual", "1")) == "ContainerNotSupported"


@pytest.mark.parametrize(("profile", "value", "matches"), [
    ("mkv", "matroska", True),
    ("matroska", "mkv", True),
    ("mp4,m4v", "mov", True),
    ("mp4", "mov,mp4,m4a,3gp,3g2,mj2", True),
    ("webm", "matroska,webm", True),
    ("ts", "mpegts", True),
    ("MP4", "mp4", True),
    (" mp4 , ts ", "ts", True),
    ("mp4,ts", "mkv", False),
    ("-mkv", "mp4", True),
    ("-mkv", "matroska", False),
    ("", "anything", True),
    (None, "avi", True),
    ("mp4", None, False),
])
def test_container_lists(profile: str | None, value: str | None, matches: bool) -> None:
    assert container_matches(profile, value) is matches


def test_codec_lists() -> None:
    assert codec_matches("h264,hevc", "HEVC")
    assert codec_matches("h265", "hevc")
    assert codec_matches("dts", "dca")
    assert not codec_matches("h264", "hevc")
    assert codec_matches(None, "anything")


def test_single_container_prefers_the_name_the_client_uses() -> None:
    assert single_container("mov,mp4,m4a,3gp,3g2,mj2", ["mp4,m4v"]) == "mp4"
    assert single_container("mov", ["mp4,m4v"]) == "mov"
    assert single_container("matroska,webm", ["webm"]) == "webm"
    assert single_container("avi", []) == "avi"
    assert single_container(None, ["mp4"]) is None


def test_subtitle_formats() -> None:
    assert is_text_subtitle("subrip") and is_text_subtitle("ass") and is_text_subtitle("mov_text")
    assert not is_text_subtitle("PGSSUB") and not is_text_subtitle("dvd_subtitle") and not is_text_subtitle("dvbsub")
    assert can_convert_subtitle("subrip", "vtt")
    assert not can_convert_subtitle("ass", "vtt")
    assert not can_convert_subtitle("srt", "ass")
    assert not can_convert_subtitle("pgssub", "srt")


SRT = MediaStream(Type="Subtitle", Index=4, Codec="subrip", Language="eng")
PGS = MediaStream(Type="Subtitle", Index=5, Codec="PGSSUB", Language="eng")
EXTERNAL_SRT = MediaStream(Type="Subtitle", Index=6, Codec="srt", Language="fre", IsExternal=True)


@pytest.mark.parametrize(("stream", "profiles", "transcoding", "container", "protocol", "expected"), [
    (SRT, [SubtitleProfile(Format="srt", Method="Embed")], False, "mkv", None, ("Embed", "srt")),
    (SRT, [SubtitleProfile(Format="vtt", Method="Embed")], False, "mkv", None, ("Embed", "vtt")),
    (SRT, [SubtitleProfile(Format="ass", Method="Embed")], False, "mkv", None, ("Encode", "subrip")),
    (SRT, [SubtitleProfile(Format="srt", Method="Embed", Container="mp4")], False, "mkv", None, ("Encode", "subrip")),
    (SRT, [SubtitleProfile(Format="srt", Method="Embed")], True, "ts", "http", ("Encode", "subrip")),
    (SRT, [SubtitleProfile(Format="srt", Method="Embed")], True, "mkv", "http", ("Embed", "srt")),
    (SRT, [SubtitleProfile(Format="srt", Method="Embed"), SubtitleProfile(Format="vtt", Method="External")],
     True, "ts", "hls", ("External", "vtt")),
    (SRT, [SubtitleProfile(Format="vtt", Method="External"), SubtitleProfile(Format="srt", Method="External")],
     False, "mp4", None, ("External", "srt")),
    (SRT, [SubtitleProfile(Format="vtt", Method="Hls")], False, "mp4", None, ("Encode", "subrip")),
    (SRT, [SubtitleProfile(Format="vtt", Method="Hls")], True, "ts", "hls", ("Hls", "vtt")),
    (SRT, [SubtitleProfile(Format="vtt", Method="External", Language="fre")], False, "mp4", None,
     ("Encode", "subrip")),
    (EXTERNAL_SRT, [SubtitleProfile(Format="srt", Method="Embed"), SubtitleProfile(Format="srt", Method="External",
                                                                                   Language="fre,eng")],
     False, "mkv", None, ("External", "srt")),
    (PGS, [SubtitleProfile(Format="vtt", Method="External")], False, "mkv", None, ("Encode", "pgssub")),
    (PGS, [SubtitleProfile(Format="pgssub", Method="External")], False, "mkv", None, ("External", "pgssub")),
    (PGS, [SubtitleProfile(Format="pgssub", Method="Embed")], False, "mkv", None, ("Embed", "pgssub")),
])
def test_subtitle_delivery(stream, profiles, transcoding, container, protocol, expected) -> None:
    delivery = choose_subtitle_delivery(stream, profiles, transcoding=transcoding, output_container=container,
                                        protocol=protocol)
    assert (delivery.method, delivery.format) == expected
    assert delivery.index == stream.Index
