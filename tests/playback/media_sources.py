"""Probed media sources, built by hand the way the library layer fills MediaSourceInfo."""

from __future__ import annotations

from server.wire.models import MediaSourceInfo, MediaStream


def _source(source_id: str, container: str, bitrate: int, streams: list[MediaStream]) -> MediaSourceInfo:
    return MediaSourceInfo(Protocol="File", Id=source_id, Path=f"/media/{source_id}.{container}", Type="Default",
                           Container=container, Bitrate=bitrate, IsRemote=False, RunTimeTicks=60 * 10**7,
                           ETag=f"etag{source_id}", MediaStreams=streams)


def h264_aac(container: str = "mp4", *, bitrate: int = 8_000_000, width: int = 1920, height: int = 1080,
             bit_depth: int = 8, profile: str = "High", level: float = 40, source_id: str = "a1") -> MediaSourceInfo:
    """H.264 8-bit SDR 1080p with stereo AAC."""
    return _source(source_id, container, bitrate, [
        MediaStream(Type="Video", Index=0, Codec="h264", Width=width, Height=height, BitDepth=bit_depth,
                    Profile=profile, Level=level, VideoRange="SDR", VideoRangeType="SDR",
                    AverageFrameRate=23.976025, RealFrameRate=23.976025, BitRate=bitrate - 128_000,
                    IsInterlaced=False, IsAVC=True, RefFrames=4, PixelFormat="yuv420p"),
        MediaStream(Type="Audio", Index=1, Codec="aac", Profile="LC", Channels=2, ChannelLayout="stereo",
                    SampleRate=48_000, BitRate=128_000, Language="eng", IsDefault=True),
    ])


def hevc_hdr_mkv(*, bitrate: int = 18_000_000) -> MediaSourceInfo:
    """HEVC Main 10 HDR10 2160p with E-AC-3 5.1, an English PGS track and an English SRT track."""
    return _source("b2", "mkv", bitrate, [
        MediaStream(Type="Video", Index=0, Codec="hevc", Width=3840, Height=2160, BitDepth=10, Profile="Main 10",
                    Level=153, VideoRange="HDR", VideoRangeType="HDR10", AverageFrameRate=23.976025,
                    IsInterlaced=False, PixelFormat="yuv420p10le", IsDefault=True),
        MediaStream(Type="Audio", Index=1, Codec="eac3", Channels=6, ChannelLayout="5.1", SampleRate=48_000,
                    BitRate=640_000, Language="eng", IsDefault=True),
        MediaStream(Type="Subtitle", Index=2, Codec="PGSSUB", Language="eng", IsTextSubtitleStream=False,
                    SupportsExternalStream=False),
        MediaStream(Type="Subtitle", Index=3, Codec="subrip", Language="eng", IsTextSubtitleStream=True,
                    SupportsExternalStream=True),
    ])


def vp9_opus_webm() -> MediaSourceInfo:
    """VP9 1080p with Opus stereo in WebM."""
    return _source("c3", "webm", 3_000_000, [
        MediaStream(Type="Video", Index=0, Codec="vp9", Width=1920, Height=1080, BitDepth=8, Profile="Profile 0",
                    VideoRangeType="SDR", AverageFrameRate=30.0, IsInterlaced=False),
        MediaStream(Type="Audio", Index=1, Codec="opus", Channels=2, SampleRate=48_000, Language="eng",
                    IsDefault=True),
    ])


def mp3_track() -> MediaSourceInfo:
    """A 320 kbps stereo MP3."""
    return _source("d4", "mp3", 320_000, [
        MediaStream(Type="Audio", Index=0, Codec="mp3", Channels=2, SampleRate=44_100, BitRate=320_000),
    ])


def flac_track(*, channels: int = 2) -> MediaSourceInfo:
    """A 24-bit 96 kHz FLAC."""
    return _source("e5", "flac", 2_400_000, [
        MediaStream(Type="Audio", Index=0, Codec="flac", Channels=channels, SampleRate=96_000, BitDepth=24),
    ])
