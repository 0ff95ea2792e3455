"""PlaybackInfo decisions for real-shaped device profiles and probed sources."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import msgspec
import pytest

from server.playback import (
    InvalidDeviceProfile,
    PlaybackDecision,
    PlaybackOptions,
    PlaybackRequestError,
    apply_decision,
    build_transcoding_url,
    decide_playback,
)
from server.wire.models import (
    CodecProfile,
    ContainerProfile,
    DeviceProfile,
    DirectPlayProfile,
    MediaAttachment,
    MediaSourceInfo,
    MediaStream,
    PlaybackInfoDto,
    SubtitleProfile,
    TranscodingProfile,
    UserConfiguration,
    UserPolicy,
)
from tests.playback.device_profiles import (
    audio_player_profile,
    browser_profile,
    cond,
    permissive_profile,
    restrictive_tv_profile,
)
from tests.playback.media_sources import flac_track, h264_aac, hevc_hdr_mkv, mp3_track, vp9_opus_webm

ITEM = "f00dfeedf00dfeedf00dfeedf00dfeed"


def options(**overrides: object) -> PlaybackOptions:
    values: dict[str, object] = dict(item_id=ITEM, device_id="dev-1", play_session_id="sess-1", api_key="tok-1")
    values.update(overrides)
    return PlaybackOptions(**values)  # type: ignore[arg-type]


def query(url: str) -> dict[str, str]:
    """The URL's query as a flat dict (every key appears once)."""
    parsed = parse_qs(urlsplit(url).query, keep_blank_values=True)
    assert all(len(v) == 1 for v in parsed.values()), parsed
    return {k: v[0] for k, v in parsed.items()}


def with_streams(source: MediaSourceInfo, *extra: MediaStream) -> MediaSourceInfo:
    return msgspec.structs.replace(source, MediaStreams=[*(source.MediaStreams or []), *extra])


def decide(profile: DeviceProfile | None, source: MediaSourceInfo, **overrides: object) -> PlaybackDecision:
    return decide_playback(profile, source, options(**overrides))


# --- Which way each source plays on each client --------------------------------------------------------------

VIDEO_MATRIX: list[tuple[str, Callable[[], DeviceProfile], Callable[[], MediaSourceInfo], str, tuple[str, ...]]] = [
    ("kodi plays h264 mp4", permissive_profile, h264_aac, "DirectPlay", ()),
    ("kodi plays 4K HDR hevc mkv", permissive_profile, hevc_hdr_mkv, "DirectPlay", ()),
    ("kodi plays vp9 webm", permissive_profile, vp9_opus_webm, "DirectPlay", ()),
    ("browser plays h264 mp4", browser_profile, h264_aac, "DirectPlay", ()),
    ("browser plays h264 mov as mp4", browser_profile, lambda: h264_aac("mov"), "DirectPlay", ()),
    ("browser plays ffprobe's mp4 list", browser_profile, lambda: h264_aac("mov,mp4,m4a,3gp,3g2,mj2"),
     "DirectPlay", ()),
    ("browser plays vp9 webm", browser_profile, vp9_opus_webm, "DirectPlay", ()),
    ("browser remuxes h264 mkv", browser_profile, lambda: h264_aac("mkv"), "DirectStream",
     ("ContainerNotSupported",)),
    ("browser remuxes h264 matroska", browser_profile, lambda: h264_aac("matroska"), "DirectStream",
     ("ContainerNotSupported",)),
    ("browser transcodes eac3 audio of hevc mkv", browser_profile, hevc_hdr_mkv, "Transcode",
     ("ContainerNotSupported", "AudioCodecNotSupported")),
    ("tv plays h264 mp4", restrictive_tv_profile, h264_aac, "DirectPlay", ()),
    ("tv plays h264 m4v", restrictive_tv_profile, lambda: h264_aac("m4v"), "DirectPlay", ()),
    ("tv plays h264 mpegts", restrictive_tv_profile, lambda: h264_aac("mpegts"), "DirectPlay", ()),
    ("tv transcodes hevc 10-bit mkv", restrictive_tv_profile, hevc_hdr_mkv, "Transcode",
     ("ContainerNotSupported", "VideoCodecNotSupported", "AudioCodecNotSupported")),
    ("tv transcodes h264 high 10", restrictive_tv_profile, lambda: h264_aac(bit_depth=10, profile="High 10"),
     "Transcode", ("VideoProfileNotSupported", "VideoBitDepthNotSupported")),
    ("tv transcodes 4K h264", restrictive_tv_profile, lambda: h264_aac(width=3840, height=2160, level=51),
     "Transcode", ("VideoLevelNotSupported", "VideoResolutionNotSupported")),
    ("tv transcodes vp9 webm", restrictive_tv_profile, vp9_opus_webm, "Transcode",
     ("ContainerNotSupported", "VideoCodecNotSupported", "AudioCodecNotSupported")),
]


@pytest.mark.parametrize(("profile", "source", "method", "reasons"),
                         [case[1:] for case in VIDEO_MATRIX], ids=[case[0] for case in VIDEO_MATRIX])
def test_video_play_method_and_reasons(profile, source, method, reasons) -> None:
    decision = decide(profile(), source())
    assert decision.play_method == method
    assert decision.transcode_reasons == reasons
    assert decision.error_code is None


AUDIO_MATRIX = [
    ("kodi plays mp3", permissive_profile, mp3_track, "DirectPlay", ()),
    ("kodi plays flac", permissive_profile, flac_track, "DirectPlay", ()),
    ("browser plays mp3", browser_profile, mp3_track, "DirectPlay", ()),
    ("browser plays flac", browser_profile, flac_track, "DirectPlay", ()),
    ("finamp plays mp3", audio_player_profile, mp3_track, "DirectPlay", ()),
    ("finamp transcodes flac", audio_player_profile, flac_track, "Transcode",
     ("ContainerNotSupported", "AudioCodecNotSupported", "ContainerBitrateExceedsLimit")),
]


@pytest.mark.parametrize(("profile", "source", "method", "reasons"),
                         [case[1:] for case in AUDIO_MATRIX], ids=[case[0] for case in AUDIO_MATRIX])
def test_audio_play_method_and_reasons(profile, source, method, reasons) -> None:
    decision = decide(profile(), source(), is_audio_item=True)
    assert decision.media_type == "Audio"
    assert decision.play_method == method
    assert decision.transcode_reasons == reasons


# --- What the PlaybackInfo response says -----------------------------------------------------------------------

def test_direct_play_response_offers_the_file_and_no_transcoding_url() -> None:
    source = h264_aac("mov,mp4,m4a,3gp,3g2,mj2")
    info = apply_decision(source, decide(browser_profile(), source))
    assert (info.SupportsDirectPlay, info.SupportsDirectStream, info.SupportsTranscoding) == (True, True, True)
    assert info.TranscodingUrl is None
    assert info.TranscodingContainer is None
    assert info.TranscodingSubProtocol == "http"
    assert info.Container == "mp4"
    assert info.DefaultAudioStreamIndex == 1
    assert info.DefaultSubtitleStreamIndex is None
    wire = msgspec.json.decode(msgspec.json.encode(info))
    assert "TranscodingUrl" not in wire and "TranscodeReasons" not in wire


def test_remux_of_h264_mkv_on_the_browser_copies_both_streams_into_hls() -> None:
    source = h264_aac("mkv")
    decision = decide(browser_profile(), source)
    assert (decision.copy_video, decision.copy_audio) == (True, True)
    info = apply_decision(source, decision)
    assert (info.SupportsDirectPlay, info.SupportsDirectStream, info.SupportsTranscoding) == (False, False, True)
    assert (info.TranscodingSubProtocol, info.TranscodingContainer) == ("hls", "ts")
    url = info.TranscodingUrl
    assert url is not None and url.startswith(f"/videos/{ITEM}/master.m3u8?")
    q = query(url)
    assert q["VideoCodec"] == "h264" and q["AudioCodec"] == "aac"
    assert q["AudioStreamIndex"] == "1"
    assert q["TranscodeReasons"] == "ContainerNotSupported"
    assert q["SegmentContainer"] == "ts" and q["MinSegments"] == "1" and q["BreakOnNonKeyFrames"] == "True"
    assert q["h264-level"] == "40" and q["h264-profile"] == "high"
    assert (q["DeviceId"], q["MediaSourceId"], q["PlaySessionId"], q["api_key"]) == ("dev-1", "a1", "sess-1", "tok-1")
    assert q["AudioBitrate"] == "128000"
    assert q["VideoBitrate"] == str(120_000_000 - 128_000)
    assert q["RequireAvc"] == "false" and q["EnableAudioVbrEncoding"] == "true"
    assert q["TranscodingMaxAudioChannels"] == "2"
    assert q["Tag"] == "etaga1"
    assert "Static" not in q and "StartTimeTicks" not in q and "SubtitleStreamIndex" not in q


def test_hevc_hdr_on_the_tv_is_transcoded_to_sdr_h264_within_its_limits() -> None:
    source = hevc_hdr_mkv()
    decision = decide(restrictive_tv_profile(), source)
    assert (decision.copy_video, decision.copy_audio) == (False, False)
    assert decision.video_codecs == ("h264",) and decision.audio_codecs == ("aac",)
    assert (decision.max_width, decision.max_height) == (1920, 1080)
    assert decision.audio_channels == 2
    q = query(apply_decision(source, decision).TranscodingUrl or "")
    assert q["MaxWidth"] == "1920" and q["MaxHeight"] == "1080"
    assert q["h264-level"] == "41"
    assert q["h264-videobitdepth"] == "8"
    assert q["h264-profile"] == "high,main"
    assert q["h264-rangetype"] == "SDR"
    assert q["TranscodingMaxAudioChannels"] == "2"
    assert q["AudioBitrate"] == "384000"  # 5.1 E-AC-3 downmixed to stereo AAC
    assert q["VideoBitrate"] == str(20_000_000 - 384_000)
    assert q["BreakOnNonKeyFrames"] == "False"
    assert q["MaxFramerate"] == "23.976"
    assert q["TranscodeReasons"] == "ContainerNotSupported,VideoCodecNotSupported,AudioCodecNotSupported"


def test_decision_and_transcode_plan_share_one_stream_target() -> None:
    """The output fields are declared once (StreamTarget): a transcoding decision carries its
    plan's target as planned (codec options without spaces), nothing renamed on the way."""
    from server.playback.playback_decision import StreamTarget
    from server.playback.transcode_plan import TranscodePlan, plan_video

    assert issubclass(PlaybackDecision, StreamTarget) and issubclass(TranscodePlan, StreamTarget)
    profile, source = restrictive_tv_profile(), hevc_hdr_mkv()
    decision = decide(profile, source)
    streams = source.MediaStreams or []
    video = next(s for s in streams if s.Type == "Video")
    audio = next(s for s in streams if s.Type == "Audio")
    tp = next(t for t in profile.TranscodingProfiles or [] if t.Type == "Video")
    plan = plan_video(profile, tp, source, video, audio, [audio], cap=decision.max_bitrate, allow_video_copy=True,
                      allow_audio_copy=True, burn_in_subtitle=False, max_audio_channels=None,
                      encodable_video_codecs=("h264", "hevc"))
    assert plan is not None
    planned = plan.target_fields()
    planned["codec_options"] = {k: v.replace(" ", "") for k, v in plan.codec_options.items()}
    assert decision.target_fields() == planned


def test_browser_keeps_hevc_conditions_but_encodes_to_the_transcoding_profiles_codec() -> None:
    decision = decide(browser_profile(), hevc_hdr_mkv())
    assert decision.video_codecs[0] == "h264" and not decision.copy_video
    assert decision.codec_option("h264-profile") == "high,main,baseline,constrainedbaseline,high10"
    assert decision.codec_option("h264-rangetype") == "SDR"
    assert decision.codec_option("h264-deinterlace") == "true"


def test_transcode_picks_the_first_codec_the_server_can_encode() -> None:
    profile = restrictive_tv_profile()
    profile.TranscodingProfiles = [TranscodingProfile(
        Type="Video", Container="ts", Protocol="hls", VideoCodec="hevc,h264", AudioCodec="aac", Context="Streaming")]
    source = vp9_opus_webm()
    assert decide(profile, source).video_codecs[0] == "h264"
    assert decide(profile, source, encodable_video_codecs=("hevc", "h264")).video_codecs[0] == "hevc"
    stuck = decide(profile, source, encodable_video_codecs=("mpeg4",))
    assert stuck.play_method is None and stuck.error_code == "NoCompatibleStream"


def test_direct_play_switches_to_another_default_audio_track_the_client_can_play() -> None:
    source = with_streams(msgspec.structs.replace(h264_aac(), MediaStreams=[
        *h264_aac().MediaStreams[:1],
        MediaStream(Type="Audio", Index=1, Codec="eac3", Channels=6, Language="eng", IsDefault=True),
        MediaStream(Type="Audio", Index=2, Codec="aac", Channels=2, Language="eng", IsDefault=True),
    ]))
    decision = decide(restrictive_tv_profile(), source)
    assert decision.play_method == "DirectPlay"
    assert apply_decision(source, decision).DefaultAudioStreamIndex == 2
    pinned = decide(restrictive_tv_profile(), source, audio_stream_index=1)
    assert pinned.play_method == "Transcode" and pinned.audio_stream_index == 1
    assert pinned.transcode_reasons == ("AudioCodecNotSupported",)


def test_no_profile_offers_the_source_unchanged() -> None:
    source = hevc_hdr_mkv()
    decision = decide(None, source)
    info = apply_decision(source, decision)
    assert (info.SupportsDirectPlay, info.SupportsDirectStream, info.SupportsTranscoding) == (True, True, True)
    assert info.TranscodingUrl is None
    assert info.DefaultAudioStreamIndex == 1
    assert all(s.DeliveryMethod is None for s in info.MediaStreams or ())


def test_dvd_folders_never_direct_play() -> None:
    source = msgspec.structs.replace(h264_aac(), VideoType="Dvd")
    assert decide(permissive_profile(), source).play_method == "DirectStream"


def test_container_profile_conditions_block_direct_play() -> None:
    profile = restrictive_tv_profile()
    profile.ContainerProfiles = [ContainerProfile(Type="Video", Container="mp4",
                                                  Conditions=[cond("NumAudioStreams", "LessThanEqual", "1")])]
    two_tracks = with_streams(h264_aac(), MediaStream(Type="Audio", Index=2, Codec="aac", Channels=2))
    assert decide(profile, h264_aac()).play_method == "DirectPlay"
    decision = decide(profile, two_tracks)
    assert decision.play_method == "DirectStream"
    assert decision.transcode_reasons == ("ContainerNotSupported",)


# --- Bitrate limits ---------------------------------------------------------------------------------------------

def test_client_bitrate_cap_forces_a_transcode_that_fits_under_it() -> None:
    source = h264_aac(bitrate=8_000_000)
    decision = decide(browser_profile(), source, max_streaming_bitrate=4_000_000)
    assert decision.play_method == "Transcode"
    assert decision.transcode_reasons == ("ContainerBitrateExceedsLimit",)
    assert decision.copy_audio and not decision.copy_video
    assert decision.video_bitrate == 4_000_000 - 128_000
    q = query(apply_decision(source, decision).TranscodingUrl or "")
    assert q["TranscodeReasons"] == "ContainerBitrateExceedsLimit"
    assert int(q["VideoBitrate"]) + int(q["AudioBitrate"]) <= 4_000_000


def test_profile_bitrate_applies_when_the_request_has_none() -> None:
    source = h264_aac(bitrate=30_000_000)
    decision = decide(restrictive_tv_profile(), source)
    assert decision.transcode_reasons == ("ContainerBitrateExceedsLimit",)
    assert decision.video_bitrate is not None and decision.video_bitrate <= 20_000_000


def test_remote_client_limit_applies_only_outside_the_lan() -> None:
    source = h264_aac(bitrate=8_000_000)
    local = decide(browser_profile(), source, remote_client_bitrate_limit=2_000_000)
    remote = decide(browser_profile(), source, remote_client_bitrate_limit=2_000_000, is_remote_client=True)
    assert local.play_method == "DirectPlay"
    assert remote.play_method == "Transcode" and remote.max_bitrate == 2_000_000
    assert remote.video_bitrate is not None and remote.video_bitrate + (remote.audio_bitrate or 0) <= 2_000_000


def test_unknown_bitrate_counts_as_40_mbps_and_remote_sources_are_never_capped() -> None:
    unknown = msgspec.structs.replace(h264_aac(), Bitrate=None)
    assert decide(restrictive_tv_profile(), unknown).transcode_reasons == ("ContainerBitrateExceedsLimit",)
    assert decide(browser_profile(), unknown).play_method == "DirectPlay"
    remote = msgspec.structs.replace(h264_aac(bitrate=90_000_000), IsRemote=True)
    assert decide(restrictive_tv_profile(), remote).play_method == "DirectPlay"


def test_low_total_bitrate_limits_the_audio_share() -> None:
    decision = decide(restrictive_tv_profile(), hevc_hdr_mkv(), max_streaming_bitrate=600_000)
    assert decision.audio_bitrate == 128_000
    assert decision.video_bitrate == 600_000 - 128_000


# --- Subtitles --------------------------------------------------------------------------------------------------

def _deliveries(info: MediaSourceInfo) -> dict[int, tuple[str | None, str | None]]:
    return {s.Index: (s.DeliveryMethod, s.DeliveryUrl) for s in info.MediaStreams or () if s.Type == "Subtitle"}


def test_browser_gets_srt_as_external_vtt_without_changing_the_play_method() -> None:
    source = hevc_hdr_mkv()
    decision = decide(browser_profile(), source, subtitle_stream_index=3)
    assert decision.transcode_reasons == ("ContainerNotSupported", "AudioCodecNotSupported")
    info = apply_decision(source, decision)
    assert info.DefaultSubtitleStreamIndex == 3
    method, url = _deliveries(info)[3]
    assert method == "External"
    assert url == f"/Videos/{ITEM}/b2/Subtitles/3/0/Stream.vtt?api_key=tok-1"
    assert _deliveries(info)[2] == ("Encode", None)
    q = query(info.TranscodingUrl or "")
    assert "SubtitleStreamIndex" not in q and "SubtitleMethod" not in q


def test_browser_burns_in_pgs_which_forces_a_video_encode() -> None:
    source = with_streams(h264_aac("mkv"), MediaStream(Type="Subtitle", Index=2, Codec="PGSSUB", Language="eng"))
    plain = decide(browser_profile(), source)
    assert plain.play_method == "DirectStream"
    burnt = decide(browser_profile(), source, subtitle_stream_index=2)
    assert burnt.play_method == "Transcode" and not burnt.copy_video
    assert burnt.transcode_reasons == ("ContainerNotSupported", "SubtitleCodecNotSupported")
    q = query(apply_decision(source, burnt).TranscodingUrl or "")
    assert q["SubtitleStreamIndex"] == "2" and q["SubtitleMethod"] == "Encode"


def test_external_subtitle_keeps_a_remux_a_remux() -> None:
    source = with_streams(h264_aac("mkv"), MediaStream(Type="Subtitle", Index=2, Codec="subrip", Language="eng"))
    decision = decide(browser_profile(), source, subtitle_stream_index=2)
    assert decision.play_method == "DirectStream"
    assert decision.subtitle_delivery is not None and decision.subtitle_delivery.method == "External"


def test_kodi_keeps_every_subtitle_in_the_file() -> None:
    source = msgspec.structs.replace(hevc_hdr_mkv(), MediaAttachments=[
        MediaAttachment(Index=4, Codec="ttf", FileName="font.ttf", MimeType="font/ttf")])
    info = apply_decision(source, decide(permissive_profile(), source, subtitle_stream_index=2))
    assert info.SupportsDirectPlay is True
    assert _deliveries(info) == {2: ("Embed", None), 3: ("Embed", None)}
    assert [a.DeliveryUrl for a in info.MediaAttachments or ()] == [f"/Videos/{ITEM}/b2/Attachments/4"]


def test_tv_fetches_srt_as_srt_and_cannot_take_ass() -> None:
    source = with_streams(h264_aac(), MediaStream(Type="Subtitle", Index=2, Codec="subrip", Language="eng"),
                          MediaStream(Type="Subtitle", Index=3, Codec="ass", Language="eng"))
    info = apply_decision(source, decide(restrictive_tv_profile(), source, subtitle_stream_index=2))
    assert info.SupportsDirectPlay is True
    assert _deliveries(info)[2] == ("External", f"/Videos/{ITEM}/a1/Subtitles/2/0/Stream.srt?api_key=tok-1")
    assert _deliveries(info)[3] == ("Encode", None)
    ass = decide(restrictive_tv_profile(), source, subtitle_stream_index=3)
    assert ass.play_method == "Transcode" and ass.transcode_reasons == ("SubtitleCodecNotSupported",)


def test_hls_subtitle_profile_puts_text_subtitles_in_the_manifest() -> None:
    profile = browser_profile()
    profile.SubtitleProfiles = [SubtitleProfile(Format="vtt", Method="Hls")]
    profile.TranscodingProfiles = [msgspec.structs.replace(tp, EnableSubtitlesInManifest=True)
                                   for tp in profile.TranscodingProfiles or ()]
    source = hevc_hdr_mkv()
    decision = decide(profile, source, subtitle_stream_index=3)
    assert decision.subtitle_delivery is not None and decision.subtitle_delivery.method == "Hls"
    q = query(apply_decision(source, decision).TranscodingUrl or "")
    assert q["SubtitleMethod"] == "Hls" and q["SubtitleStreamIndex"] == "3"
    assert q["EnableSubtitlesInManifest"] == "true"


def test_always_burn_in_applies_when_the_video_is_encoded_anyway() -> None:
    source = hevc_hdr_mkv()
    decision = decide(browser_profile(), source, subtitle_stream_index=3, always_burn_in_subtitle_when_transcoding=True)
    assert decision.subtitle_delivery is not None and decision.subtitle_delivery.method == "Encode"
    q = query(apply_decision(source, decision).TranscodingUrl or "")
    assert q["SubtitleMethod"] == "Encode" and q["alwaysBurnInSubtitleWhenTranscoding"] == "true"


def test_http_transcode_subtitle_url_starts_at_the_resume_point() -> None:
    profile = restrictive_tv_profile()
    profile.TranscodingProfiles = [TranscodingProfile(Type="Video", Container="ts", Protocol="http",
                                                      VideoCodec="h264", AudioCodec="aac", Context="Streaming")]
    source = with_streams(hevc_hdr_mkv())
    info = apply_decision(source, decide(profile, source, start_ticks=600_000_000))
    assert _deliveries(info)[3][1] == f"/Videos/{ITEM}/b2/Subtitles/3/600000000/Stream.srt?api_key=tok-1"
    assert info.TranscodingUrl is not None and info.TranscodingUrl.startswith(f"/videos/{ITEM}/stream.ts?")
    assert query(info.TranscodingUrl)["StartTimeTicks"] == "600000000"


# --- Default streams --------------------------------------------------------------------------------------------

def _bilingual() -> MediaSourceInfo:
    return msgspec.structs.replace(h264_aac(), MediaStreams=[
        *h264_aac().MediaStreams[:1],
        MediaStream(Type="Audio", Index=1, Codec="aac", Channels=2, Language="eng", IsDefault=True),
        MediaStream(Type="Audio", Index=2, Codec="aac", Channels=2, Language="fre"),
        MediaStream(Type="Subtitle", Index=3, Codec="subrip", Language="eng"),
        MediaStream(Type="Subtitle", Index=4, Codec="subrip", Language="eng", IsForced=True),
        MediaStream(Type="Subtitle", Index=5, Codec="subrip", Language="fre", IsDefault=True),
    ])


@pytest.mark.parametrize(("prefs", "expected"), [
    ({}, 1),
    ({"audio_language_preference": "fre"}, 1),
    ({"audio_language_preference": "fre", "play_default_audio_track": False}, 2),
    ({"audio_stream_index": 2}, 2),
    ({"audio_stream_index": 9}, 1),
])
def test_default_audio_stream_index(prefs: dict, expected: int) -> None:
    source = _bilingual()
    info = apply_decision(source, decide(browser_profile(), source, subtitle_mode="None", **prefs))
    assert info.DefaultAudioStreamIndex == expected


@pytest.mark.parametrize(("mode", "language", "audio_index", "expected"), [
    ("Default", None, None, 5),
    ("Default", "eng", None, 4),
    ("None", "eng", None, None),
    ("Always", "eng", None, 3),
    ("Always", "ger", None, None),
    ("OnlyForced", "eng", None, 4),
    ("OnlyForced", "fre", None, None),
    ("Smart", "eng", None, 4),
    ("Smart", "fre", None, 5),
    ("Smart", "eng", 2, 3),
])
def test_default_subtitle_stream_index(mode: str, language: str | None, audio_index: int | None,
                                       expected: int | None) -> None:
    source = _bilingual()
    decision = decide(browser_profile(), source, subtitle_mode=mode, subtitle_language_preference=language,
                      audio_stream_index=audio_index)
    assert apply_decision(source, decision).DefaultSubtitleStreamIndex == expected


def test_client_can_turn_subtitles_off() -> None:
    source = _bilingual()
    info = apply_decision(source, decide(browser_profile(), source, subtitle_stream_index=-1))
    assert info.DefaultSubtitleStreamIndex == -1
    assert info.SupportsDirectPlay is True


# --- User policy and client switches ---------------------------------------------------------------------------

def test_without_remux_permission_the_browser_transcodes_mkv() -> None:
    decision = decide(browser_profile(), h264_aac("mkv"), enable_playback_remuxing=False)
    assert decision.play_method == "Transcode"
    assert not decision.copy_video and not decision.copy_audio


def test_without_video_transcoding_permission_a_remux_still_works() -> None:
    decision = decide(browser_profile(), h264_aac("mkv"), enable_video_playback_transcoding=False)
    assert decision.play_method == "DirectStream"


def test_without_video_transcoding_permission_the_tv_gets_nothing_to_play() -> None:
    source = hevc_hdr_mkv()
    decision = decide(restrictive_tv_profile(), source, enable_video_playback_transcoding=False)
    assert decision.play_method is None and decision.error_code == "NotAllowed"
    info = apply_decision(source, decision)
    assert (info.SupportsDirectPlay, info.SupportsDirectStream, info.SupportsTranscoding) == (False, False, False)
    assert info.TranscodingUrl is None
    with pytest.raises(PlaybackRequestError):
        build_transcoding_url(ITEM, source, decision)


def test_audio_transcoding_permission_governs_music() -> None:
    refused = decide(audio_player_profile(), flac_track(), is_audio_item=True, enable_audio_playback_transcoding=False)
    assert refused.error_code == "NotAllowed"
    direct = decide(audio_player_profile(), mp3_track(), is_audio_item=True, enable_audio_playback_transcoding=False)
    info = apply_decision(mp3_track(), direct)
    assert info.SupportsDirectPlay is True and info.SupportsTranscoding is False


def test_client_switches() -> None:
    no_transcode = decide(restrictive_tv_profile(), hevc_hdr_mkv(), enable_transcoding=False)
    assert no_transcode.play_method is None and no_transcode.error_code == "NoCompatibleStream"

    no_direct = decide(browser_profile(), h264_aac(), enable_direct_play=False)
    assert no_direct.play_method == "DirectStream" and no_direct.transcode_reasons == ()

    no_copy = decide(browser_profile(), h264_aac("mkv"), allow_video_stream_copy=False)
    assert no_copy.play_method == "Transcode" and not no_copy.copy_video and no_copy.copy_audio
    q = query(apply_decision(h264_aac("mkv"), no_copy).TranscodingUrl or "")
    assert q["allowVideoStreamCopy"] == "false" and "allowAudioStreamCopy" not in q


def test_options_from_a_playback_info_request() -> None:
    dto = msgspec.convert({"MaxStreamingBitrate": 3_000_000, "AudioStreamIndex": 2, "SubtitleStreamIndex": -1,
                           "EnableDirectPlay": False, "AllowAudioStreamCopy": False}, PlaybackInfoDto)
    policy = UserPolicy(EnablePlaybackRemuxing=False, RemoteClientBitrateLimit=1_000_000)
    config = UserConfiguration(SubtitleMode="Smart", SubtitleLanguagePreference="eng", PlayDefaultAudioTrack=False)
    opts = PlaybackOptions.from_request(ITEM, dto, policy=policy, configuration=config, is_remote_client=True,
                                        api_key="k")
    assert (opts.max_streaming_bitrate, opts.audio_stream_index, opts.subtitle_stream_index) == (3_000_000, 2, -1)
    assert (opts.enable_direct_play, opts.enable_direct_stream, opts.allow_audio_stream_copy) == (False, True, False)
    assert (opts.enable_playback_remuxing, opts.enable_video_playback_transcoding) == (False, True)
    assert (opts.subtitle_mode, opts.subtitle_language_preference, opts.play_default_audio_track) == (
        "Smart", "eng", False)
    decision = decide_playback(browser_profile(), h264_aac(), opts)
    assert decision.max_bitrate == 1_000_000
    defaults = PlaybackOptions.from_request(ITEM)
    assert defaults.enable_direct_play and defaults.allow_video_stream_copy and defaults.subtitle_mode == "Default"


# --- URLs -------------------------------------------------------------------------------------------------------

def test_direct_play_url_is_the_static_stream() -> None:
    source = h264_aac()
    decision = decide(browser_profile(), source)
    url = build_transcoding_url(ITEM, source, decision, "sess-1", "dev-1", "tok-1")
    assert url.startswith(f"/videos/{ITEM}/stream.mp4?")
    q = query(url)
    assert q["Static"] == "true" and q["MediaSourceId"] == "a1" and q["api_key"] == "tok-1"
    assert "TranscodeReasons" not in q and "VideoBitrate" not in q and "RequireAvc" not in q


def test_audio_urls_follow_the_profile_protocol() -> None:
    hls = decide(audio_player_profile(), flac_track(), is_audio_item=True)
    url = build_transcoding_url(ITEM, flac_track(), hls, "s", "d", "t")
    assert url.startswith(f"/audio/{ITEM}/master.m3u8?")
    q = query(url)
    assert q["AudioCodec"] == "aac" and q["AudioBitrate"] == "256000" and q["SegmentContainer"] == "ts"
    assert q["TranscodingMaxAudioChannels"] == "2"

    profile = audio_player_profile()
    profile.TranscodingProfiles = [TranscodingProfile(Type="Audio", Container="mp3", Protocol="http",
                                                      AudioCodec="mp3", Context="Streaming")]
    http = decide(profile, flac_track(), is_audio_item=True, start_ticks=10**7)
    q = query(build_transcoding_url(ITEM, flac_track(), http, "s", "d", "t"))
    assert build_transcoding_url(ITEM, flac_track(), http).startswith(f"/audio/{ITEM}/stream.mp3?")
    assert q["AudioCodec"] == "mp3" and q["StartTimeTicks"] == "10000000"


def test_music_remux_copies_the_codec_into_the_transcoding_container() -> None:
    profile = audio_player_profile()
    source = msgspec.structs.replace(mp3_track(), Container="mka")  # mp3 in a Matroska audio wrapper
    profile.TranscodingProfiles = [TranscodingProfile(Type="Audio", Container="ts", Protocol="hls",
                                                      AudioCodec="aac,mp3", Context="Streaming")]
    decision = decide(profile, source, is_audio_item=True)
    assert decision.play_method == "DirectStream" and decision.copy_audio
    assert decision.transcode_reasons == ("ContainerNotSupported",)
    assert query(build_transcoding_url(ITEM, source, decision))["AudioCodec"] == "mp3"
    in_mp4 = decide(profile, msgspec.structs.replace(mp3_track(), Container="mp4"), is_audio_item=True)
    assert in_mp4.transcode_reasons == ("AudioCodecNotSupported",) and in_mp4.play_method == "Transcode"


def test_url_values_are_escaped_so_they_survive_a_round_trip() -> None:
    device = "TW96aWxsYS81LjA+/x=="
    source = h264_aac("mkv")
    decision = decide(browser_profile(), source, device_id=device, api_key="a&b c")
    q = query(apply_decision(source, decision).TranscodingUrl or "")
    assert q["DeviceId"] == device and q["api_key"] == "a&b c"


def test_bad_requests_raise_typed_errors() -> None:
    with pytest.raises(PlaybackRequestError):
        PlaybackOptions(item_id="")
    with pytest.raises(PlaybackRequestError):
        options(max_streaming_bitrate=-1)
    with pytest.raises(PlaybackRequestError):
        options(subtitle_mode="Sometimes")
    profile = restrictive_tv_profile()
    profile.CodecProfiles = [CodecProfile(Type="Video", Codec="h264", Conditions=[cond("Width", "Between", "1")])]
    with pytest.raises(InvalidDeviceProfile):
        decide(profile, h264_aac())


def test_profile_without_video_direct_play_reports_direct_play_error() -> None:
    profile = DeviceProfile(DirectPlayProfiles=[DirectPlayProfile(Type="Audio")], TranscodingProfiles=[
        TranscodingProfile(Type="Video", Container="ts", Protocol="hls", VideoCodec="h264", AudioCodec="aac")])
    decision = decide(profile, h264_aac())
    assert decision.transcode_reasons == ("DirectPlayError",)
    assert decision.play_method == "Transcode"


def test_transcoded_source_container_is_reduced_to_one_name() -> None:
    source = msgspec.structs.replace(hevc_hdr_mkv(), Container="mov,mp4,m4a,3gp,3g2,mj2")
    info = apply_decision(source, decide(browser_profile(), source))
    assert info.SupportsDirectPlay is False  # E-AC-3 still needs an audio transcode
    assert info.Container == "mp4"


def test_transcoding_url_has_jellyfins_parameter_order() -> None:
    source = hevc_hdr_mkv()
    decision = decide(restrictive_tv_profile(), source, subtitle_stream_index=2)
    url = apply_decision(source, decision).TranscodingUrl or ""
    keys = [pair.split("=", 1)[0] for pair in urlsplit(url).query.split("&")]
    assert keys == [
        "DeviceId", "MediaSourceId", "VideoCodec", "AudioCodec", "AudioStreamIndex", "SubtitleStreamIndex",
        "VideoBitrate", "AudioBitrate", "MaxFramerate", "MaxWidth", "MaxHeight", "PlaySessionId", "api_key",
        "SubtitleMethod", "TranscodingMaxAudioChannels", "RequireAvc", "EnableAudioVbrEncoding", "Tag",
        "SegmentContainer", "MinSegments", "BreakOnNonKeyFrames", "aac-audiochannels", "h264-videobitdepth",
        "h264-level", "h264-profile", "h264-rangetype", "TranscodeReasons",
    ]
    q = query(url)
    assert q["SubtitleMethod"] == "Encode" and q["SubtitleStreamIndex"] == "2"
    assert q["TranscodeReasons"] == ("ContainerNotSupported,VideoCodecNotSupported,AudioCodecNotSupported,"
                                     "SubtitleCodecNotSupported")
