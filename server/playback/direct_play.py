"""Whether a source satisfies one of the client's DirectPlayProfiles, and if not, why (the
TranscodeReasons of the profile that came closest)."""

from __future__ import annotations

from collections.abc import Sequence

from server.playback.conditions import (
    audio_facts,
    codec_profile_failures,
    failed_conditions,
    reasons_for,
    video_audio_facts,
    video_facts,
)
from server.playback.formats import codec_matches, container_matches
from server.playback.subtitles import choose_subtitle_delivery
from server.wire.models import DeviceProfile, DirectPlayProfile, MediaSourceInfo, MediaStream

_VIDEO_REASONS = frozenset({
    "VideoCodecNotSupported", "VideoProfileNotSupported", "VideoLevelNotSupported", "VideoResolutionNotSupported",
    "VideoBitDepthNotSupported", "VideoFramerateNotSupported", "RefFramesNotSupported",
    "AnamorphicVideoNotSupported", "InterlacedVideoNotSupported", "VideoBitrateNotSupported",
    "VideoRangeTypeNotSupported", "VideoCodecTagNotSupported",
})
_AUDIO_REASONS = frozenset({
    "AudioCodecNotSupported", "AudioIsExternal", "SecondaryAudioNotSupported", "AudioChannelsNotSupported",
    "AudioProfileNotSupported", "AudioSampleRateNotSupported", "AudioBitDepthNotSupported",
    "AudioBitrateNotSupported",
})
_CONTAINER_REASONS = frozenset({"ContainerNotSupported", "ContainerBitrateExceedsLimit"})


def _rank(reasons: set[str]) -> int:
    """Lower is worse: video problems, then audio, then container-only, then none."""
    if reasons & _VIDEO_REASONS:
        return 1
    if reasons & _AUDIO_REASONS:
        return 2
    if reasons & _CONTAINER_REASONS:
        return 3
    return 4


def analyse_video_direct_play(
    profile: DeviceProfile,
    source: MediaSourceInfo,
    video: MediaStream | None,
    candidates: Sequence[MediaStream],
    subtitle: MediaStream | None,
) -> tuple[DirectPlayProfile | None, MediaStream | None, set[str]]:
    """The first Video DirectPlayProfile the source satisfies and the audio stream it plays, or
    no profile and the TranscodeReasons of the closest one.

    ``candidates`` are the audio streams that may play (the chosen one first); ``subtitle`` is
    the selected subtitle stream, which must be deliverable without burning it in.
    """
    container = source.Container
    vfacts = video_facts(source, video)
    video_codec = video.Codec if video else None
    container_reasons = reasons_for([
        c for cp in profile.ContainerProfiles or ()
        if cp.Type == "Video" and container_matches(cp.Container, container)
        for c in failed_conditions(cp.Conditions, vfacts)
    ])
    codec_reasons = reasons_for(codec_profile_failures(profile, "Video", video_codec, container, vfacts))
    audio_reasons: dict[int, set[str]] = {}
    for stream in candidates:
        found = reasons_for(codec_profile_failures(
            profile, "VideoAudio", stream.Codec, container, video_audio_facts(source, stream)))
        audio_reasons[id(stream)] = found | ({"AudioIsExternal"} if stream.IsExternal else set())
    subtitle_reasons: set[str] = set()
    if subtitle is not None:
        delivery = choose_subtitle_delivery(subtitle, profile.SubtitleProfiles, transcoding=False,
                                            output_container=container, protocol=None)
        if delivery.method not in ("Embed", "External", "Drop"):
            subtitle_reasons.add("SubtitleCodecNotSupported")

    analysed: list[tuple[int, DirectPlayProfile, MediaStream | None, set[str], bool]] = []
    for order, dp in enumerate(p for p in profile.DirectPlayProfiles or () if p.Type == "Video"):
        reasons: set[str] = set()
        container_ok = container_matches(dp.Container, container)
        if not container_ok:
            reasons.add("ContainerNotSupported")
        video_ok = codec_matches(dp.VideoCodec, video_codec)
        if not video_ok:
            reasons.add("VideoCodecNotSupported")
        selected = next((s for s in candidates if codec_matches(dp.AudioCodec, s.Codec)), None)
        if candidates and selected is None:
            reasons.add("AudioCodecNotSupported")
        reasons |= container_reasons | subtitle_reasons
        if video_ok:
            reasons |= codec_reasons
        if selected is not None:
            reasons |= audio_reasons[id(selected)]
        analysed.append((order, dp, selected, reasons, container_ok))

    for _order, dp, selected, reasons, _ok in analysed:
        if not reasons:
            return dp, selected, set()
    if not analysed:
        return None, None, {"DirectPlayError"}
    any_container_ok = any(ok for *_rest, ok in analysed)
    closest = sorted((a for a in analysed if a[4] or not any_container_ok), key=lambda a: (-_rank(a[3]), a[0]))
    return None, None, closest[0][3] or {"DirectPlayError"}


def analyse_audio_direct_play(
    profile: DeviceProfile, source: MediaSourceInfo, audio: MediaStream | None
) -> tuple[DirectPlayProfile | None, set[str]]:
    """The Audio DirectPlayProfile an audio item satisfies, with the reasons it still cannot
    direct play (failed codec conditions); or no profile and the reasons none fits."""
    container = source.Container
    codec = audio.Codec if audio else None
    audio_profiles = [p for p in profile.DirectPlayProfiles or () if p.Type == "Audio"]
    match = next((p for p in audio_profiles
                  if container_matches(p.Container, container) and codec_matches(p.AudioCodec, codec)), None)
    if match is not None:
        failures = codec_profile_failures(profile, "Audio", codec, container, audio_facts(audio))
        return match, reasons_for(failures)
    # A container the client takes means the codec is the problem; otherwise the codec is fine
    # if some profile names it, so that only the container stands in the way.
    if any(container_matches(p.Container, container) for p in audio_profiles):
        return None, {"AudioCodecNotSupported"}
    reasons = {"ContainerNotSupported"}
    codec_known = any(
        (p.AudioCodec and codec_matches(p.AudioCodec, codec))
        or (not p.AudioCodec and codec and container_matches(p.Container, codec))
        for p in audio_profiles)
    if not codec_known:
        reasons.add("AudioCodecNotSupported")
    return None, reasons
