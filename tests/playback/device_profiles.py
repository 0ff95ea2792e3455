"""Device profiles shaped like the ones real clients send in POST /Items/{id}/PlaybackInfo."""

from __future__ import annotations

from server.wire.models import (
    CodecProfile,
    DeviceProfile,
    DirectPlayProfile,
    ProfileCondition,
    SubtitleProfile,
    TranscodingProfile,
)


def cond(prop: str, op: str, value: str, required: bool = False) -> ProfileCondition:
    return ProfileCondition(Condition=op, Property=prop, Value=value, IsRequired=required)


def browser_profile() -> DeviceProfile:
    """What jellyfin-web 10.10 sends from desktop Chrome (HEVC capable, stereo output, TS HLS)."""
    video_audio = "aac,mp3,mp2,opus,flac,vorbis"
    audio_tp = dict(Type="Audio", Context="Streaming", Protocol="http", MaxAudioChannels="2")
    return DeviceProfile(
        MaxStreamingBitrate=120_000_000,
        MaxStaticBitrate=100_000_000,
        MusicStreamingTranscodingBitrate=384_000,
        DirectPlayProfiles=[
            DirectPlayProfile(Container="webm", Type="Video", VideoCodec="vp8,vp9,av1", AudioCodec="vorbis,opus"),
            DirectPlayProfile(Container="mp4,m4v", Type="Video", VideoCodec="h264,hevc,vp9,av1",
                              AudioCodec=video_audio),
            DirectPlayProfile(Container="opus", Type="Audio"),
            DirectPlayProfile(Container="webm", AudioCodec="opus", Type="Audio"),
            DirectPlayProfile(Container="ts", AudioCodec="mp3", Type="Audio"),
            DirectPlayProfile(Container="mp3", Type="Audio"),
            DirectPlayProfile(Container="aac", Type="Audio"),
            DirectPlayProfile(Container="m4a", AudioCodec="aac", Type="Audio"),
            DirectPlayProfile(Container="m4b", AudioCodec="aac", Type="Audio"),
            DirectPlayProfile(Container="flac", Type="Audio"),
            DirectPlayProfile(Container="webma", Type="Audio"),
            DirectPlayProfile(Container="wav", Type="Audio"),
            DirectPlayProfile(Container="ogg", Type="Audio"),
            DirectPlayProfile(Container="hls", Type="Video", VideoCodec="h264", AudioCodec="aac,mp3,mp2"),
        ],
        TranscodingProfiles=[
            TranscodingProfile(Container="ts", Type="Audio", AudioCodec="aac", Context="Streaming", Protocol="hls",
                               MaxAudioChannels="2", MinSegments=1, BreakOnNonKeyFrames=True,
                               EnableAudioVbrEncoding=True),
            TranscodingProfile(Container="aac", AudioCodec="aac", **audio_tp),
            TranscodingProfile(Container="mp3", AudioCodec="mp3", **audio_tp),
            TranscodingProfile(Container="opus", AudioCodec="opus", **audio_tp),
            TranscodingProfile(Container="mp3", Type="Audio", AudioCodec="mp3", Context="Static", Protocol="http",
                               MaxAudioChannels="2"),
            TranscodingProfile(Container="ts", Type="Video", AudioCodec="aac,mp3,mp2", VideoCodec="h264",
                               Context="Streaming", Protocol="hls", MaxAudioChannels="2", MinSegments=1,
                               BreakOnNonKeyFrames=True),
        ],
        ContainerProfiles=[],
        CodecProfiles=[
            CodecProfile(Type="VideoAudio", Codec="aac", Conditions=[cond("IsSecondaryAudio", "Equals", "false")]),
            CodecProfile(Type="VideoAudio", Conditions=[cond("IsSecondaryAudio", "Equals", "false")]),
            CodecProfile(Type="Video", Codec="h264", Conditions=[
                cond("IsAnamorphic", "NotEquals", "true"),
                cond("VideoProfile", "EqualsAny", "high|main|baseline|constrained baseline|high 10"),
                cond("VideoRangeType", "EqualsAny", "SDR"),
                cond("VideoLevel", "LessThanEqual", "52"),
                cond("IsInterlaced", "NotEquals", "true"),
            ]),
            CodecProfile(Type="Video", Codec="hevc", Conditions=[
                cond("IsAnamorphic", "NotEquals", "true"),
                cond("VideoProfile", "EqualsAny", "main|main 10"),
                cond("VideoRangeType", "EqualsAny", "SDR|HDR10|HLG"),
                cond("VideoLevel", "LessThanEqual", "183"),
                cond("IsInterlaced", "NotEquals", "true"),
            ]),
            CodecProfile(Type="Video", Codec="vp9", Conditions=[cond("VideoRangeType", "EqualsAny", "SDR|HDR10|HLG")]),
            CodecProfile(Type="Video", Codec="av1", Conditions=[
                cond("IsAnamorphic", "NotEquals", "true"),
                cond("VideoProfile", "EqualsAny", "main"),
                cond("VideoRangeType", "EqualsAny", "SDR|HDR10|HLG"),
                cond("VideoLevel", "LessThanEqual", "19"),
            ]),
        ],
        SubtitleProfiles=[
            SubtitleProfile(Format="vtt", Method="External"),
            SubtitleProfile(Format="ass", Method="External"),
            SubtitleProfile(Format="ssa", Method="External"),
        ],
    )


def permissive_profile() -> DeviceProfile:
    """A Kodi/mpv-like player: any container, any codec, subtitles kept in the file."""
    embedded = ["srt", "subrip", "ass", "ssa", "vtt", "pgssub", "dvdsub", "dvbsub"]
    return DeviceProfile(
        Name="Kodi-like",
        DirectPlayProfiles=[DirectPlayProfile(Type="Video"), DirectPlayProfile(Type="Audio")],
        TranscodingProfiles=[
            TranscodingProfile(Type="Video", Container="mkv", Protocol="http", VideoCodec="h264,hevc",
                               AudioCodec="aac,ac3,eac3,flac", Context="Streaming", CopyTimestamps=True),
            TranscodingProfile(Type="Audio", Container="flac", Protocol="http", AudioCodec="flac",
                               Context="Streaming"),
        ],
        SubtitleProfiles=[SubtitleProfile(Format=f, Method="Embed") for f in embedded]
        + [SubtitleProfile(Format="srt", Method="External")],
    )


def restrictive_tv_profile() -> DeviceProfile:
    """A TV that plays only 8-bit SDR H.264 up to 1080p in mp4 or ts, with stereo AAC."""
    return DeviceProfile(
        Name="Old TV",
        MaxStreamingBitrate=20_000_000,
        DirectPlayProfiles=[DirectPlayProfile(Type="Video", Container="mp4,ts", VideoCodec="h264", AudioCodec="aac")],
        TranscodingProfiles=[
            TranscodingProfile(Type="Video", Container="ts", Protocol="hls", VideoCodec="h264", AudioCodec="aac",
                               Context="Streaming", MaxAudioChannels="2", MinSegments=1,
                               BreakOnNonKeyFrames=False),
        ],
        CodecProfiles=[
            CodecProfile(Type="Video", Codec="h264", Conditions=[
                cond("VideoBitDepth", "LessThanEqual", "8"),
                cond("Width", "LessThanEqual", "1920"),
                cond("Height", "LessThanEqual", "1080"),
                cond("VideoLevel", "LessThanEqual", "41"),
                cond("VideoProfile", "EqualsAny", "high|main"),
                cond("VideoRangeType", "EqualsAny", "SDR"),
            ]),
            CodecProfile(Type="VideoAudio", Codec="aac", Conditions=[cond("AudioChannels", "LessThanEqual", "2")]),
        ],
        SubtitleProfiles=[SubtitleProfile(Format="srt", Method="External")],
    )


def audio_player_profile() -> DeviceProfile:
    """A Finamp-like music player: lossy formats direct, the rest as AAC over HLS."""
    return DeviceProfile(
        Name="Finamp-like",
        MaxStreamingBitrate=320_000,
        MusicStreamingTranscodingBitrate=256_000,
        DirectPlayProfiles=[
            DirectPlayProfile(Type="Audio", Container="mp3", AudioCodec="mp3"),
            DirectPlayProfile(Type="Audio", Container="m4a,mp4", AudioCodec="aac"),
            DirectPlayProfile(Type="Audio", Container="ogg,webm", AudioCodec="opus,vorbis"),
        ],
        TranscodingProfiles=[
            TranscodingProfile(Type="Audio", Container="ts", Protocol="hls", AudioCodec="aac", Context="Streaming",
                               MaxAudioChannels="2", MinSegments=1, BreakOnNonKeyFrames=True),
        ],
        CodecProfiles=[
            CodecProfile(Type="Audio", Conditions=[cond("AudioChannels", "LessThanEqual", "2")]),
        ],
    )
