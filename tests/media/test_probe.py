"""probe_file on real media: containers, streams, runtime, chapters, and broken files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from server.media.probe import TICKS_PER_SECOND, ProbeError, probe_file
from tests.mediagen import ffmpeg_binary, make_srt, make_video

# Property names of the spec's MediaStream schema (openapi 10.10.7).
SPEC_MEDIA_STREAM_FIELDS = {
    "Codec", "CodecTag", "Language", "ColorRange", "ColorSpace", "ColorTransfer", "ColorPrimaries",
    "DvVersionMajor", "DvVersionMinor", "DvProfile", "DvLevel", "RpuPresentFlag", "ElPresentFlag",
    "BlPresentFlag", "DvBlSignalCompatibilityId", "Rotation", "Comment", "TimeBase", "CodecTimeBase",
    "Title", "VideoRange", "VideoRangeType", "VideoDoViTitle", "AudioSpatialFormat",
    "LocalizedUndefined", "LocalizedDefault", "LocalizedForced", "LocalizedExternal",
    "LocalizedHearingImpaired", "DisplayTitle", "NalLengthSize", "IsInterlaced", "IsAVC",
    "ChannelLayout", "BitRate", "BitDepth", "RefFrames", "PacketLength", "Channels", "SampleRate",
    "IsDefault", "IsForced", "IsHearingImpaired", "Height", "Width", "AverageFrameRate",
    "RealFrameRate", "ReferenceFrameRate", "Profile", "Type", "AspectRatio", "Index", "Score",
    "IsExternal", "DeliveryMethod", "DeliveryUrl", "IsExternalUrl", "IsTextSubtitleStream",
    "SupportsExternalStream", "Path", "PixelFormat", "Level", "IsAnamorphic",
}


def seconds(ticks: int | None) -> float:
    assert ticks is not None
    return ticks / TICKS_PER_SECOND


def test_mkv_with_two_subtitles_and_chapters(movie_mkv: Path) -> None:
    probe = probe_file(movie_mkv)

    assert probe.container == "mkv"
    assert probe.format_names == ("matroska", "webm")
    assert probe.is_audio is False
    assert seconds(probe.run_time_ticks) == pytest.approx(2.0, abs=0.1)
    assert probe.size == movie_mkv.stat().st_size
    assert probe.bitrate and probe.bitrate > 0
    assert probe.title == "My Movie"
    assert [(c.start_position_ticks, c.name) for c in probe.chapters] == [
        (0, "Opening"), (1 * TICKS_PER_SECOND, "Ending")]

    assert [(s.index, s.type, s.codec) for s in probe.streams] == [
        (0, "Video", "h264"), (1, "Audio", "aac"), (2, "Subtitle", "subrip"), (3, "Subtitle", "subrip")]
    video, audio, english, french = probe.streams
    assert (video.width, video.height, video.average_frame_rate) == (320, 240, 24.0)
    assert video.pixel_format == "yuv420p" and video.bit_depth == 8
    assert video.profile == "Constrained Baseline" and video.level == 13
    assert video.aspect_ratio == "4:3"
    assert (video.video_range, video.video_range_type) == ("SDR", "SDR")
    assert video.is_interlaced is False and video.is_avc is True
    assert video.display_title == "240p H264 SDR"

    assert (audio.language, audio.channels, audio.channel_layout, audio.sample_rate) == (
        "eng", 1, "mono", 48000)
    assert audio.display_title == "English - AAC - Mono"

    assert (english.language, english.is_default, english.is_text_subtitle_stream) == ("eng", True, True)
    assert english.display_title == "English - Default - SUBRIP"
    assert (french.language, french.is_default) == ("fre", False)
    assert french.display_title == "French - SUBRIP"
    assert all(s.is_external is False for s in probe.streams)


def test_mp4_with_mov_text(clip_mp4: Path) -> None:
    probe = probe_file(clip_mp4)

    assert probe.container == "mov,mp4,m4a,3gp,3g2,mj2"
    assert seconds(probe.run_time_ticks) == pytest.approx(2.0, abs=0.1)
    assert [c.name for c in probe.chapters] == ["Opening", "Ending"]
    subtitles = probe.subtitle_streams
    assert len(subtitles) == 1
    assert subtitles[0].codec == "mov_text"
    assert subtitles[0].language == "eng"
    assert subtitles[0].is_text_subtitle_stream
    audio = probe.audio_streams[0]
    assert audio.codec_tag == "mp4a" and audio.is_default
    assert audio.display_title == "English - AAC - Mono - Default"
    assert probe.video_streams[0].codec_tag == "avc1"
    assert probe.video_streams[0].bit_rate and probe.video_streams[0].bit_rate > 0


def test_ass_and_webvtt_with_dispositions_and_titles(tmp_path: Path, movie_mkv: Path) -> None:
    remuxed = tmp_path / "styled.mkv"
    subprocess.run(
        [ffmpeg_binary(), "-hide_banner", "-loglevel", "error", "-y", "-i", str(movie_mkv),
         "-map", "0", "-c:v", "copy", "-c:a", "copy", "-c:s:0", "ass", "-c:s:1", "webvtt",
         "-disposition:s:0", "forced+hearing_impaired", "-disposition:s:1", "0",
         "-metadata:s:s:1", "title=Signs", "-metadata:s:a:0", "title=Stereo mix", str(remuxed)],
        check=True, capture_output=True, timeout=60)

    probe = probe_file(remuxed)
    ass, vtt = probe.subtitle_streams
    assert (ass.codec, ass.is_forced, ass.is_hearing_impaired, ass.is_default) == ("ass", True, True, False)
    assert ass.is_text_subtitle_stream
    assert ass.display_title == "English - Hearing Impaired - Forced - ASS"
    assert (vtt.codec, vtt.title, vtt.is_forced) == ("webvtt", "Signs", False)
    assert vtt.display_title == "Signs - French - WEBVTT"
    assert probe.audio_streams[0].display_title == "Stereo mix - English - AAC - Mono"


def test_font_attachment_is_listed_separately(tmp_path: Path, movie_mkv: Path) -> None:
    font = tmp_path / "Sans.ttf"
    font.write_bytes(b"\x00\x01\x00\x00 not really a font")
    with_font = tmp_path / "with_font.mkv"
    subprocess.run(
        [ffmpeg_binary(), "-hide_banner", "-loglevel", "error", "-y", "-i", str(movie_mkv),
         "-map", "0", "-c", "copy", "-attach", str(font),
         "-metadata:s:t", "mimetype=application/x-truetype-font", str(with_font)],
        check=True, capture_output=True, timeout=60)

    probe = probe_file(with_font)
    assert [a.to_wire() for a in probe.attachments] == [
        {"Index": 4, "Codec": "ttf", "FileName": "Sans.ttf", "MimeType": "application/x-truetype-font"}]
    assert [s.index for s in probe.streams] == [0, 1, 2, 3]


def test_wire_dict_uses_spec_field_names(movie_mkv: Path) -> None:
    probe = probe_file(movie_mkv)
    for stream in probe.streams:
        wire = stream.to_wire()
        assert set(wire) <= SPEC_MEDIA_STREAM_FIELDS, set(wire) - SPEC_MEDIA_STREAM_FIELDS
        assert None not in wire.values()
        assert wire["Type"] in {"Audio", "Video", "Subtitle", "EmbeddedImage", "Data", "Lyric"}
    assert probe.streams[0].to_wire()["DisplayTitle"] == "240p H264 SDR"
    assert probe.chapters[1].to_wire() == {"StartPositionTicks": TICKS_PER_SECOND, "Name": "Ending"}


@pytest.mark.parametrize(("suffix", "container", "codec"), [
    (".mp3", "mp3", "mp3"),
    (".flac", "flac", "flac"),
    (".m4a", "mov,mp4,m4a,3gp,3g2,mj2", "aac"),
    (".ogg", "ogg", "vorbis"),
    (".opus", "ogg", "opus"),
])
def test_audio_files(songs: dict[str, Path], suffix: str, container: str, codec: str) -> None:
    probe = probe_file(songs[suffix])

    assert probe.is_audio is True
    assert probe.container == container
    assert seconds(probe.run_time_ticks) == pytest.approx(1.0, abs=0.08)
    assert probe.audio_streams[0].codec == codec
    assert probe.audio_streams[0].bit_rate and probe.audio_streams[0].bit_rate > 0
    assert probe.title == "Highway Song"
    assert probe.tag("album") == "Loud Album"
    if suffix in (".mp3", ".flac", ".m4a"):
        images = [s for s in probe.streams if s.type == "EmbeddedImage"]
        assert [s.codec for s in images] == ["mjpeg"]
        assert images[0].display_title is None and images[0].title is None
        assert [a.index for a in probe.attachments] == [images[0].index]
    else:
        assert not probe.video_streams


def test_flac_reports_bit_depth(songs: dict[str, Path]) -> None:
    assert probe_file(songs[".flac"]).audio_streams[0].bit_depth == 16


def test_webm_and_ts_container_names(tmp_path: Path) -> None:
    webm = make_video(tmp_path / "v.webm", vcodec="libvpx-vp9", acodec="libopus", seconds=0.5)
    ts = make_video(tmp_path / "v.ts", seconds=0.5)
    mkv_vp9_aac = make_video(tmp_path / "v.mkv", vcodec="libvpx-vp9", acodec="aac", seconds=0.5)

    assert probe_file(webm).container == "mkv,webm"
    assert probe_file(ts).container == "ts"
    assert probe_file(mkv_vp9_aac).container == "mkv"  # aac is not a WebM codec
    assert probe_file(webm).video_streams[0].codec == "vp9"


def test_forced_audio_only_probe_treats_video_as_embedded_image(movie_mkv: Path) -> None:
    probe = probe_file(movie_mkv, is_audio=True)
    assert probe.is_audio is True
    assert probe.streams[0].type == "EmbeddedImage"
    assert probe.tag("title") == "My Movie"


def test_missing_file_raises_probe_error(tmp_path: Path) -> None:
    with pytest.raises(ProbeError, match="No such file"):
        probe_file(tmp_path / "missing.mkv")


def test_empty_file_raises_probe_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mkv"
    empty.write_bytes(b"")
    with pytest.raises(ProbeError, match="empty"):
        probe_file(empty)


def test_text_file_renamed_mkv_raises_probe_error(tmp_path: Path) -> None:
    fake = tmp_path / "notes.mkv"
    fake.write_text("This is a shopping list, not a film.\n" * 20, encoding="utf-8")
    with pytest.raises(ProbeError):
        probe_file(fake)


def test_subtitle_file_renamed_mkv_is_not_media(tmp_path: Path) -> None:
    srt = make_srt(tmp_path / "subs.srt", [(0.0, 1.0, "Hello"), (1.5, 2.0, "Bye")])
    renamed = srt.rename(tmp_path / "subs.mkv")
    with pytest.raises(ProbeError, match="no audio or video"):
        probe_file(renamed)


def test_mp4_truncated_before_its_index_raises(tmp_path: Path, clip_mp4: Path) -> None:
    truncated = tmp_path / "truncated.mp4"
    truncated.write_bytes(clip_mp4.read_bytes()[:4000])
    with pytest.raises(ProbeError):
        probe_file(truncated)


@pytest.mark.parametrize("extra_bytes", [0, 12])
def test_mkv_truncated_after_its_header_raises(tmp_path: Path, movie_mkv: Path,
                                              extra_bytes: int) -> None:
    """A complete header followed by no media at all (or a torn first cluster) is not media."""
    data = movie_mkv.read_bytes()
    first_cluster = data.index(b"\x1f\x43\xb6\x75")  # Matroska Cluster element id
    truncated = tmp_path / "truncated.mkv"
    truncated.write_bytes(data[:first_cluster + extra_bytes])
    with pytest.raises(ProbeError):
        probe_file(truncated)


def test_mkv_with_header_but_no_packets_says_so(tmp_path: Path, movie_mkv: Path) -> None:
    data = movie_mkv.read_bytes()
    first_cluster = data.index(b"\x1f\x43\xb6\x75")
    truncated = tmp_path / "torn.mkv"
    truncated.write_bytes(data[:first_cluster + 12])
    with pytest.raises(ProbeError, match="no media data"):
        probe_file(truncated)


def test_probe_error_is_a_value_error(tmp_path: Path) -> None:
    assert issubclass(ProbeError, ValueError)
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(ValueError):
        probe_file(junk)
