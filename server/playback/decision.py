"""The PlaybackInfo decision: direct play, direct stream (remux) or transcode, for one media
source, one client DeviceProfile and one request.

``decide_playback`` is pure: it reads the profile, the probed source and the options and returns
a ``PlaybackDecision``. ``apply_decision`` copies that decision onto a MediaSourceInfo the way
Jellyfin 10.10 fills a PlaybackInfo response (SupportsDirectPlay, TranscodingUrl, per-subtitle
DeliveryMethod ...).

Flags follow Jellyfin 10.10: SupportsDirectStream is true only when direct playing (clients read
it as "fetch the file with Static=true"), so a remux is offered through TranscodingUrl with both
streams copied, and reported here as play method "DirectStream".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from msgspec.structs import replace

from server.playback.conditions import codec_profile_failures, video_facts
from server.playback.direct_play import analyse_audio_direct_play, analyse_video_direct_play
from server.playback.formats import codec_in, single_container, split_list
from server.playback.options import PlaybackOptions
from server.playback.playback_decision import PlaybackDecision
from server.playback.stream_selection import (
    default_audio_stream_index,
    default_subtitle_stream_index,
    resolve_audio_stream,
)
from server.playback.stream_urls import build_transcoding_url, subtitle_delivery_url
from server.playback.subtitles import SubtitleDelivery, choose_subtitle_delivery
from server.playback.transcode_plan import (
    HLS_VIDEO_CODECS,
    TranscodePlan,
    container_of,
    plan_audio,
    plan_video,
    protocol_of,
)
from server.wire.models import ENUMS, DeviceProfile, MediaSourceInfo, MediaStream, TranscodingProfile

__all__ = [
    "PlaybackDecision",
    "PlaybackOptions",
    "apply_decision",
    "build_transcoding_url",
    "decide_playback",
]

TRANSCODE_REASONS: tuple[str, ...] = ENUMS["TranscodeReason"]
# Without a known bitrate, a source is assumed to need this much.
UNKNOWN_SOURCE_BITRATE = 40_000_000


@dataclass
class _Inputs:
    """What every step needs to know about the source."""

    profile: DeviceProfile
    source: MediaSourceInfo
    options: PlaybackOptions
    streams: list[MediaStream]
    video: MediaStream | None
    audio: MediaStream | None
    candidates: list[MediaStream]
    subtitle: MediaStream | None
    cap: int | None
    bitrate_exceeded: bool


def _ordered(reasons: set[str]) -> tuple[str, ...]:
    return tuple(r for r in TRANSCODE_REASONS if r in reasons)


def _max_bitrate(profile: DeviceProfile | None, options: PlaybackOptions) -> int | None:
    cap = options.max_streaming_bitrate or (profile.MaxStreamingBitrate if profile else None) or None
    remote = options.remote_client_bitrate_limit
    if options.is_remote_client and remote:
        cap = min(cap or remote, remote)
    return cap


def _bitrate_exceeded(source: MediaSourceInfo, cap: int | None) -> bool:
    if source.IsRemote or not cap:
        return False
    return (source.Bitrate or UNKNOWN_SOURCE_BITRATE) > cap


def _candidate_audio(streams: Sequence[MediaStream], chosen: MediaStream | None, explicit: bool) -> list[MediaStream]:
    """Audio streams that may stand in for the chosen one when it cannot be played as is:
    with no explicit choice, the other default-flagged streams, or those in the same language."""
    if chosen is None:
        return []
    if explicit:
        return [chosen]
    audio = [s for s in streams if s.Type == "Audio"]
    if chosen.IsDefault:
        group = [s for s in audio if s.IsDefault]
    else:
        group = [s for s in audio if (s.Language or "") == (chosen.Language or "")]
    return [chosen] + [s for s in group if s is not chosen]


def _select_streams(source: MediaSourceInfo, options: PlaybackOptions) -> tuple[
        list[MediaStream], MediaStream | None, list[MediaStream], int | None, MediaStream | None]:
    streams = list(source.MediaStreams or ())
    default_audio = default_audio_stream_index(
        streams, options.audio_language_preference, options.play_default_audio_track)
    audio = resolve_audio_stream(streams, options.audio_stream_index, default_audio)
    explicit = audio is not None and options.audio_stream_index is not None and audio.Index == options.audio_stream_index
    candidates = _candidate_audio(streams, audio, explicit)
    if options.is_audio_item:
        return streams, audio, candidates, None, None
    if options.subtitle_stream_index is not None:
        wanted = options.subtitle_stream_index
        subtitle = next((s for s in streams if s.Type == "Subtitle" and s.Index == wanted), None)
        return streams, audio, candidates, (wanted if subtitle else -1), subtitle
    index = default_subtitle_stream_index(
        streams, options.subtitle_mode, options.subtitle_language_preference, audio.Language if audio else None)
    subtitle = next((s for s in streams if s.Type == "Subtitle" and s.Index == index), None)
    return streams, audio, candidates, index, subtitle


def _transcoding_profiles(ins: _Inputs, media_type: str) -> list[TranscodingProfile]:
    profiles = [tp for tp in ins.profile.TranscodingProfiles or ()
                if tp.Type == media_type and (tp.Context or "Streaming") == "Streaming"]
    video = ins.video
    if media_type == "Video" and ins.options.allow_video_stream_copy and video is not None:
        vfacts = video_facts(ins.source, video)

        def copy_rank(tp: TranscodingProfile) -> int:
            codecs = split_list(tp.VideoCodec) or ["h264"]
            if protocol_of(tp) == "hls":
                codecs = [c for c in codecs if codec_in(HLS_VIDEO_CODECS, c)]
            if not codec_in(codecs, video.Codec):
                return 3
            failures = codec_profile_failures(ins.profile, "Video", video.Codec, tp.Container, vfacts)
            return 2 if failures else 1

        profiles.sort(key=copy_rank)
    return profiles


def _subtitle_deliveries(ins: _Inputs, transcoding: bool, container: str | None, protocol: str | None,
                         burn_in_selected: bool) -> tuple[SubtitleDelivery, ...]:
    deliveries = []
    for stream in ins.streams:
        if stream.Type != "Subtitle":
            continue
        delivery = choose_subtitle_delivery(
            stream, ins.profile.SubtitleProfiles, transcoding=transcoding, output_container=container,
            protocol=protocol, source_is_infinite=bool(ins.source.IsInfiniteStream))
        if burn_in_selected and stream is ins.subtitle:
            delivery = SubtitleDelivery(delivery.index, "Encode", (stream.Codec or "").lower())
        deliveries.append(delivery)
    return tuple(deliveries)


def _policy_allows_transcoding(options: PlaybackOptions) -> bool:
    if options.is_audio_item:
        return options.enable_audio_playback_transcoding
    return (options.enable_audio_playback_transcoding or options.enable_video_playback_transcoding
            or options.enable_playback_remuxing)


def _base(ins: _Inputs, media_type: str, audio_index: int | None, subtitle_index: int | None) -> dict:
    """Fields every decision carries; the source container is reduced to the one name the
    client's profiles know it by (ffprobe's "mov,mp4,m4a,..." becomes "mp4")."""
    known = [p.Container for p in ins.profile.DirectPlayProfiles or () if p.Type == media_type]
    return dict(options=ins.options, media_type=media_type, audio_stream_index=audio_index,
                subtitle_stream_index=subtitle_index, max_bitrate=ins.cap,
                source_container=single_container(ins.source.Container, known))


def _from_plan(ins: _Inputs, plan: TranscodePlan, play_method: str, reasons: set[str], base: dict,
               deliveries: tuple[SubtitleDelivery, ...]) -> PlaybackDecision:
    tp = plan.profile
    audio_index = plan.audio_stream.Index if plan.audio_stream is not None else base["audio_stream_index"]
    target = plan.target_fields()
    target.update(
        audio_codecs=plan.audio_codecs if ins.audio is not None or ins.options.is_audio_item else (),
        codec_options={k: v.replace(" ", "") for k, v in plan.codec_options.items()})
    return PlaybackDecision(
        **{**base, "audio_stream_index": audio_index},
        **target,
        play_method=play_method,
        transcode_reasons=_ordered(reasons),
        container=plan.container,
        sub_protocol=plan.protocol,
        transcoding_container=plan.container,
        subtitle_deliveries=deliveries,
        min_segments=tp.MinSegments or None,
        segment_length=tp.SegmentLength or None,
        break_on_non_keyframes=bool(tp.BreakOnNonKeyFrames),
        enable_subtitles_in_manifest=bool(tp.EnableSubtitlesInManifest),
        enable_mpegts_m2ts_mode=bool(tp.EnableMpegtsM2TsMode),
        estimate_content_length=bool(tp.EstimateContentLength),
        copy_timestamps=bool(tp.CopyTimestamps),
        transcode_seek_info=tp.TranscodeSeekInfo,
        enable_audio_vbr_encoding=tp.EnableAudioVbrEncoding is not False,
        supports_transcoding=True,
    )


def _refusal(ins: _Inputs, base: dict, error_code: str, reasons: set[str],
             deliveries: tuple[SubtitleDelivery, ...]) -> PlaybackDecision:
    return PlaybackDecision(**base, play_method=None, error_code=error_code, transcode_reasons=_ordered(reasons),
                            subtitle_deliveries=deliveries)


def _can_transcode(ins: _Inputs) -> bool:
    source = ins.source
    return ins.options.enable_transcoding and (
        source.SupportsTranscoding is not False or source.SupportsDirectStream is not False)


def _decide_video(ins: _Inputs, subtitle_index: int | None) -> PlaybackDecision:
    opts, source = ins.options, ins.source
    audio_index = ins.audio.Index if ins.audio else None
    base = _base(ins, "Video", audio_index, subtitle_index)
    dp, dp_audio, reasons = analyse_video_direct_play(
        ins.profile, source, ins.video, ins.candidates, ins.subtitle)
    if ins.bitrate_exceeded:
        reasons.add("ContainerBitrateExceedsLimit")
    direct_ok = (opts.enable_direct_play and not ins.bitrate_exceeded and source.SupportsDirectPlay is not False
                 and source.VideoType not in ("Dvd", "BluRay"))
    if dp is not None and direct_ok:
        container = single_container(source.Container, [dp.Container])
        deliveries = _subtitle_deliveries(ins, False, container, None, False)
        chosen_audio = dp_audio.Index if dp_audio is not None else audio_index
        return PlaybackDecision(
            **{**base, "audio_stream_index": chosen_audio, "source_container": container},
            play_method="DirectPlay", container=container,
            subtitle_deliveries=deliveries,
            video_codecs=(ins.video.Codec.lower(),) if ins.video and ins.video.Codec else (),
            audio_codecs=(dp_audio.Codec.lower(),) if dp_audio and dp_audio.Codec else (),
            copy_video=True, copy_audio=True, supports_direct_play=True, supports_direct_stream=True,
            supports_transcoding=bool(_transcoding_profiles(ins, "Video")) and _can_transcode(ins)
            and _policy_allows_transcoding(opts),
        )

    tps = _transcoding_profiles(ins, "Video") if _can_transcode(ins) else []
    if not tps:
        deliveries = _subtitle_deliveries(ins, False, source.Container, None, False)
        return _refusal(ins, base, "NoCompatibleStream", reasons, deliveries)
    tp = tps[0]
    container, protocol = container_of(tp), protocol_of(tp)
    sub_delivery = (choose_subtitle_delivery(ins.subtitle, ins.profile.SubtitleProfiles, transcoding=True,
                                             output_container=container, protocol=protocol)
                    if ins.subtitle is not None else None)
    burn_in = sub_delivery is not None and sub_delivery.method == "Encode"
    remux_allowed = opts.enable_playback_remuxing
    plan = plan_video(
        ins.profile, tp, source, ins.video, ins.audio, ins.candidates, cap=ins.cap,
        allow_video_copy=opts.allow_video_stream_copy and remux_allowed,
        allow_audio_copy=opts.allow_audio_stream_copy and remux_allowed, burn_in_subtitle=burn_in,
        max_audio_channels=opts.max_audio_channels, encodable_video_codecs=opts.encodable_video_codecs)
    if burn_in:
        reasons.add("SubtitleCodecNotSupported")
    burn_in = burn_in or (ins.subtitle is not None and plan is not None and not plan.copy_video
                          and opts.always_burn_in_subtitle_when_transcoding)
    deliveries = _subtitle_deliveries(ins, True, container, protocol, burn_in)
    if plan is None:
        return _refusal(ins, base, "NoCompatibleStream", reasons, deliveries)
    encodes_audio = ins.audio is not None and not plan.copy_audio
    if (not plan.copy_video and not opts.enable_video_playback_transcoding) or (
            encodes_audio and not opts.enable_audio_playback_transcoding):
        return _refusal(ins, base, "NotAllowed", reasons, deliveries)
    remux = (plan.copy_video and not encodes_audio and reasons <= {"ContainerNotSupported"}
             and opts.enable_direct_stream)
    return _from_plan(ins, plan, "DirectStream" if remux else "Transcode", reasons, base, deliveries)


def _decide_audio(ins: _Inputs) -> PlaybackDecision:
    opts, source = ins.options, ins.source
    base = _base(ins, "Audio", ins.audio.Index if ins.audio else None, None)
    dp, reasons = analyse_audio_direct_play(ins.profile, source, ins.audio)
    if ins.bitrate_exceeded:
        reasons.add("ContainerBitrateExceedsLimit")
    has_tp = bool(_transcoding_profiles(ins, "Audio"))
    if dp is not None and not reasons and opts.enable_direct_play and source.SupportsDirectPlay is not False:
        container = single_container(source.Container, [dp.Container]) or base["source_container"]
        return PlaybackDecision(
            **{**base, "source_container": container}, play_method="DirectPlay", container=container,
            audio_codecs=(ins.audio.Codec.lower(),) if ins.audio and ins.audio.Codec else (), copy_audio=True,
            supports_direct_play=True, supports_direct_stream=True,
            supports_transcoding=has_tp and _can_transcode(ins) and _policy_allows_transcoding(opts))
    tps = _transcoding_profiles(ins, "Audio") if _can_transcode(ins) else []
    if not tps:
        return _refusal(ins, base, "NoCompatibleStream", reasons, ())
    plan = plan_audio(ins.profile, tps[0], ins.audio, cap=ins.cap,
                      allow_copy=opts.allow_audio_stream_copy and opts.enable_playback_remuxing,
                      max_audio_channels=opts.max_audio_channels)
    if not plan.copy_audio and not opts.enable_audio_playback_transcoding:
        return _refusal(ins, base, "NotAllowed", reasons, ())
    remux = plan.copy_audio and reasons <= {"ContainerNotSupported"} and opts.enable_direct_stream
    return _from_plan(ins, plan, "DirectStream" if remux else "Transcode", reasons, base, ())


def decide_playback(profile: DeviceProfile | None, source: MediaSourceInfo, options: PlaybackOptions) -> PlaybackDecision:
    """Decide how ``source`` plays on the client that sent ``profile``.

    Without a profile nothing is negotiated: the source is offered as it is (Jellyfin answers a
    PlaybackInfo without DeviceProfile the same way), with the default streams chosen.
    Raises InvalidDeviceProfile when the profile holds a condition with no meaning.
    """
    streams, audio, candidates, subtitle_index, subtitle = _select_streams(source, options)
    media_type = "Audio" if options.is_audio_item else "Video"
    cap = _max_bitrate(profile, options)
    if profile is None:
        return PlaybackDecision(
            options=options, media_type=media_type, play_method="DirectPlay", container=source.Container,
            source_container=source.Container, audio_stream_index=audio.Index if audio else None,
            subtitle_stream_index=subtitle_index, max_bitrate=cap,
            supports_direct_play=options.enable_direct_play and source.SupportsDirectPlay is not False,
            supports_direct_stream=options.enable_direct_stream and source.SupportsDirectStream is not False,
            supports_transcoding=options.enable_transcoding and source.SupportsTranscoding is not False
            and _policy_allows_transcoding(options),
        )
    ins = _Inputs(profile=profile, source=source, options=options, streams=streams,
                  video=next((s for s in streams if s.Type == "Video"), None), audio=audio,
                  candidates=candidates, subtitle=subtitle, cap=cap,
                  bitrate_exceeded=_bitrate_exceeded(source, cap))
    if options.is_audio_item:
        return _decide_audio(ins)
    return _decide_video(ins, subtitle_index)


def apply_decision(source: MediaSourceInfo, decision: PlaybackDecision) -> MediaSourceInfo:
    """A copy of ``source`` with the PlaybackInfo fields filled in from ``decision``."""
    opts = decision.options
    transcoding = decision.play_method in ("DirectStream", "Transcode")
    url = build_transcoding_url(opts.item_id, source, decision, opts.play_session_id, opts.device_id,
                                opts.api_key) if transcoding else None
    start = decision.start_ticks if transcoding and decision.sub_protocol != "hls" and not decision.copy_timestamps else 0
    by_index = {d.index: d for d in decision.subtitle_deliveries}
    source_id = source.Id or opts.item_id
    streams = []
    for stream in source.MediaStreams or ():
        delivery = by_index.get(stream.Index) if stream.Type == "Subtitle" else None
        if delivery is not None:
            external = delivery.method == "External"
            stream = replace(
                stream, DeliveryMethod=delivery.method,
                DeliveryUrl=subtitle_delivery_url(opts.item_id, source_id, delivery.index,
                                                  delivery.format, start, opts.api_key) if external else None,
                IsExternalUrl=False if external else stream.IsExternalUrl)
        streams.append(stream)
    attachments = [replace(a, DeliveryUrl=f"/Videos/{opts.item_id}/{source_id}/Attachments/{a.Index}")
                   for a in source.MediaAttachments or ()]
    return replace(
        source,
        Container=decision.source_container or source.Container,
        MediaStreams=streams if source.MediaStreams is not None else None,
        MediaAttachments=attachments if source.MediaAttachments is not None else None,
        SupportsDirectPlay=decision.supports_direct_play,
        SupportsDirectStream=decision.supports_direct_stream,
        SupportsTranscoding=decision.supports_transcoding,
        TranscodingUrl=url,
        TranscodingSubProtocol=decision.sub_protocol if transcoding else "http",
        TranscodingContainer=decision.transcoding_container if transcoding else None,
        DefaultAudioStreamIndex=decision.audio_stream_index,
        DefaultSubtitleStreamIndex=decision.subtitle_stream_index,
    )
