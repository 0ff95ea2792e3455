"""Display titles, video ranges and subtitle kinds as Jellyfin clients show them."""

from __future__ import annotations

import pytest

from server.media.languages import language_display_name, normalize_language
from server.media.streams import ProbedStream


def video(**kwargs: object) -> ProbedStream:
    return ProbedStream(index=0, type="Video", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("width", "height", "interlaced", "expected"), [
    (1920, 1080, False, "1080p H264 SDR"),
    (1920, 1080, True, "1080i H264 SDR"),
    (1920, 800, False, "1080p H264 SDR"),  # cinemascope crop keeps its class
    (1280, 720, False, "720p H264 SDR"),
    (720, 576, False, "576p H264 SDR"),
    (3840, 2160, False, "4K H264 SDR"),
    (320, 240, False, "240p H264 SDR"),
])
def test_video_display_title_resolution(width: int, height: int, interlaced: bool, expected: str) -> None:
    stream = video(codec="h264", width=width, height=height, is_interlaced=interlaced)
    assert stream.display_title == expected


def test_hdr10_and_hlg_video_ranges() -> None:
    hdr10 = video(codec="hevc", width=3840, height=2160, color_transfer="smpte2084")
    hlg = video(codec="hevc", width=3840, height=2160, color_transfer="arib-std-b67")
    assert (hdr10.video_range, hdr10.video_range_type) == ("HDR", "HDR10")
    assert (hlg.video_range, hlg.video_range_type) == ("HDR", "HLG")
    assert hdr10.display_title == "4K HEVC HDR"


def test_video_title_keeps_only_new_attributes() -> None:
    stream = video(codec="h264", width=1920, height=1080, title="Main Feature 1080p")
    assert stream.display_title == "Main Feature 1080p - H264 - SDR"


def test_audio_display_titles() -> None:
    stereo = ProbedStream(index=1, type="Audio", codec="aac", profile="LC", language="eng",
                          channels=2, channel_layout="stereo", is_default=True)
    assert stereo.display_title == "English - AAC - Stereo - Default"
    ac3 = ProbedStream(index=2, type="Audio", codec="ac3", language="ger", channels=6,
                       channel_layout="5.1")
    assert ac3.display_title == "German - Dolby Digital - 5.1"
    dts = ProbedStream(index=3, type="Audio", codec="dts", profile="DTS-HD MA", language="und",
                       channels=8)
    assert dts.display_title == "DTS-HD MA - 8 ch"
    commentary = ProbedStream(index=4, type="Audio", codec="aac", language="eng", title="Commentary",
                              channel_layout="stereo")
    assert commentary.display_title == "Commentary - English - AAC - Stereo"


def test_atmos_profile_is_a_spatial_format() -> None:
    stream = ProbedStream(index=1, type="Audio", codec="truehd", profile="Dolby TrueHD + Dolby Atmos")
    assert stream.audio_spatial_format == "DolbyAtmos"
    assert ProbedStream(index=1, type="Audio", codec="aac").audio_spatial_format == "None"


def test_subtitle_display_titles_and_kinds() -> None:
    srt = ProbedStream(index=2, type="Subtitle", codec="subrip", language="eng")
    assert srt.display_title == "English - SUBRIP"
    assert srt.is_text_subtitle_stream
    forced = ProbedStream(index=3, type="Subtitle", codec="ass", language="jpn", is_forced=True,
                          is_default=True, is_hearing_impaired=True)
    assert forced.display_title == "Japanese - Hearing Impaired - Default - Forced - ASS"
    unknown_language = ProbedStream(index=4, type="Subtitle", codec="webvtt")
    assert unknown_language.display_title == "Undefined - WEBVTT"
    for bitmap_codec in ("PGSSUB", "DVDSUB", "DVBSUB"):
        stream = ProbedStream(index=5, type="Subtitle", codec=bitmap_codec, language="eng")
        assert not stream.is_text_subtitle_stream
    assert not ProbedStream(index=6, type="Audio", codec="aac").is_text_subtitle_stream


def test_embedded_images_and_data_have_no_display_title() -> None:
    assert ProbedStream(index=1, type="EmbeddedImage", codec="mjpeg").display_title is None
    assert ProbedStream(index=2, type="Data", codec="bin_data").display_title is None


@pytest.mark.parametrize(("raw", "expected"), [
    ("eng", "eng"), ("EN", "eng"), ("en-US", "eng"), ("de", "ger"), ("fra", "fra"),
    ("", None), (None, None), ("english", None), ("x1", None),
])
def test_language_normalisation(raw: str | None, expected: str | None) -> None:
    assert normalize_language(raw) == expected


def test_language_names_cover_both_iso_639_2_forms() -> None:
    assert language_display_name("ger") == language_display_name("deu") == "German"
    assert language_display_name("fre") == language_display_name("fra") == "French"
    assert language_display_name("und") is None
