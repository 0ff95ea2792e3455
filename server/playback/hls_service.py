"""HLS streaming for handlers: what a DynamicHls request asks for (``HlsParams``), the ffmpeg job
that serves it (``plan_hls`` -> EncodingRequest) and the playlists, and ``TranscodeService``
(``ctx.transcodes``), which owns the TranscodeJobManager: settings from the ``encoding`` and
``transcoding`` configuration sections, async waits for segments, stop on playback stopped,
keep-alive on pings, ``DELETE /Videos/ActiveEncodings`` and shutdown cleanup."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from server.errors import BadRequestError, NotFoundError, ServiceUnavailableError
from server.guid import normalize_guid
from server.media import spawn
from server.media.ffmpeg import FfmpegInfo, FfmpegNotFoundError, find_ffmpeg
from server.playback.encoding import (
    TICKS_PER_SECOND,
    AudioOutput,
    EncodingOptions,
    EncodingRequest,
    EncodingRequestError,
    HardwareAccelerationType,
    VideoOutput,
)
from server.playback.hls_playlists import HlsVariant, build_master_playlist, build_media_playlist
from server.playback.settings import TRANSCODING_DEFAULTS, validate_transcoding_settings
from server.playback.transcode_plan import hls_audio_codecs

if TYPE_CHECKING:  # the job manager and its jobs load with the first transcode (``manager``), not at start
    from server.library.catalog.query import ItemRow
    from server.playback.transcode_jobs import TranscodeJob, TranscodeJobKey, TranscodeJobManager

log = logging.getLogger("reelroom.hls")

DEFAULT_SEGMENT_SECONDS = 6
SEGMENT_TIMEOUT = 60.0
POLL_SECONDS = 0.02
MAX_PLAN_KEYS = 64  # request keys remembered per job (see TranscodeService.running_job)
_ENCODABLE_VIDEO = ("h264", "hevc")
_TS_VIDEO = ("h264", "hevc")
_MP4_VIDEO = ("h264", "hevc", "av1", "vp9")
_AUDIO_CODEC_TAGS = {"aac": "mp4a.40.2", "mp3": "mp4a.40.34", "ac3": "ac-3", "eac3": "ec-3", "opus": "Opus",
                     "flac": "fLaC", "alac": "alac"}
_H264_PROFILE_IDC = {"baseline": 66, "constrained baseline": 66, "main": 77, "extended": 88, "high": 100,
                     "high 10": 110, "high 4:2:2": 122, "high 4:4:4 predictive": 244}


# -- what the client asks for -------------------------------------------------------------------


def _codec_list(value: str | None) -> list[str]:
    return [c.strip().lower() for c in (value or "").split(",") if c.strip()]


@dataclass(frozen=True)
class HlsParams:
    """The DynamicHls query parameters Reelroom acts on."""

    media_source_id: str | None = None
    play_session_id: str | None = None
    device_id: str | None = None
    video_codecs: tuple[str, ...] = ()
    audio_codecs: tuple[str, ...] = ()
    video_bitrate: int | None = None
    audio_bitrate: int | None = None
    max_width: int | None = None
    max_height: int | None = None
    max_audio_channels: int | None = None
    audio_stream_index: int | None = None
    video_stream_index: int | None = None
    subtitle_method: str | None = None
    segment_container: str = "ts"
    segment_length: int = DEFAULT_SEGMENT_SECONDS
    start_ticks: int = 0
    allow_video_copy: bool = True
    allow_audio_copy: bool = True
    transcode_reasons: tuple[str, ...] = ()
    codec_options: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @classmethod
    def from_query(cls, q: dict[str, Any], raw: dict[str, str] | None = None) -> HlsParams:
        """From a handler's query values plus the raw query (for ``h264-level``...). Names are
        matched case-insensitively: clients spell them ``MaxWidth`` or ``maxWidth``."""
        lower = {k.lower(): v for k, v in q.items()}

        def get(name: str) -> Any:
            return lower.get(name.lower())

        def num(*names: str) -> int | None:
            for name in names:
                value = get(name)
                if value is not None:
                    try:
                        number = int(value)
                    except (TypeError, ValueError) as exc:
                        raise BadRequestError(f"{name} must be a number.") from exc
                    if number < 0:
                        raise BadRequestError(f"{name} must not be negative.")
                    return number
            return None

        container = str(get("segmentContainer") or "ts").lower()
        if container not in ("ts", "mpegts", "mp4", "fmp4"):
            raise BadRequestError(f"SegmentContainer must be ts or mp4, not {container!r}.")
        length = num("segmentLength")
        length = DEFAULT_SEGMENT_SECONDS if length is None else length
        if not 1 <= length <= 60:
            raise BadRequestError("SegmentLength must be between 1 and 60 seconds.")
        options = {k.lower(): v for k, v in (raw or {}).items() if "-" in k}
        reasons = tuple(r for r in str(get("transcodeReasons") or "").split(",") if r)
        return cls(
            media_source_id=get("mediaSourceId"),
            play_session_id=get("playSessionId"),
            device_id=get("deviceId"),
            video_codecs=tuple(_codec_list(get("videoCodec"))),
            audio_codecs=tuple(_codec_list(get("audioCodec"))),
            video_bitrate=num("videoBitRate"),
            audio_bitrate=num("audioBitRate"),
            max_width=num("maxWidth", "width"),
            max_height=num("maxHeight", "height"),
            max_audio_channels=num("transcodingMaxAudioChannels", "maxAudioChannels", "audioChannels"),
            audio_stream_index=num("audioStreamIndex"),
            video_stream_index=num("videoStreamIndex"),
            subtitle_method=get("subtitleMethod"),
            segment_container="mp4" if container in ("mp4", "fmp4") else "ts",
            segment_length=length,
            start_ticks=num("startTimeTicks") or 0,
            allow_video_copy=get("allowVideoStreamCopy") is not False,
            allow_audio_copy=get("allowAudioStreamCopy") is not False,
            transcode_reasons=reasons,
            codec_options=options,
        )


@dataclass(frozen=True)
class HlsPlan:
    """The ffmpeg request for one HLS stream and what its master playlist announces."""

    request: EncodingRequest
    bandwidth: int
    codecs: str | None
    resolution: tuple[int, int] | None
    runtime_ticks: int


def _streams(row: ItemRow) -> list[dict[str, Any]]:
    try:
        return [s for s in json.loads(row.media_streams_json or "[]") if not s.get("IsExternal")]
    except ValueError:
        return []


def _pick(streams: list[dict[str, Any]], kind: str, index: int | None) -> dict[str, Any] | None:
    of_kind = [s for s in streams if s.get("Type") == kind]
    if index is not None:
        for s in of_kind:
            if s.get("Index") == index:
                return s
        raise BadRequestError(f"The media has no {kind.lower()} stream with index {index}.")
    return next((s for s in of_kind if s.get("IsDefault")), of_kind[0] if of_kind else None)


def _scaled(width: int, height: int, max_w: int | None, max_h: int | None) -> tuple[int, int]:
    scale = 1.0
    if max_w and width > max_w:
        scale = min(scale, max_w / width)
    if max_h and height > max_h:
        scale = min(scale, max_h / height)
    if scale >= 1.0:
        return width, height
    return max(2, int(width * scale) // 2 * 2), max(2, int(height * scale) // 2 * 2)


def _h264_tag(profile: str | None, level: Any) -> str:
    idc = _H264_PROFILE_IDC.get((profile or "high").lower(), 100)
    try:
        lvl = int(float(level))
    except (TypeError, ValueError):
        lvl = 41
    if 0 < lvl < 10:  # "4.1" style
        lvl = int(round(float(level) * 10))
    return f"avc1.{idc:02x}00{max(lvl, 10):02x}"


def _video_tag(codec: str, profile: str | None, level: Any) -> str:
    if codec == "h264":
        return _h264_tag(profile, level)
    if codec == "hevc":
        try:
            lvl = int(float(level)) or 120
        except (TypeError, ValueError):
            lvl = 120
        main10 = "10" in (profile or "")
        return f"hvc1.{2 if main10 else 1}.{2 if main10 else 6}.L{lvl}.B0"
    return {"av1": "av01.0.08M.08", "vp9": "vp09.00.40.08"}.get(codec, codec)


MAX_VIDEO_BITRATE = 200_000_000  # an encoder target above this helps no client


def capped_video_bitrate(requested: int | None, source_rate: int | None) -> int | None:
    """The bitrate to encode at. Clients ask for their whole link (jellyfin-web measures loopback at
    over 1 Gbit/s); more than twice the source's own rate buys nothing, and ffmpeg refuses a
    rate-control buffer beyond 2^31 bits."""
    if not requested:
        return None
    cap = MAX_VIDEO_BITRATE if not source_rate else min(MAX_VIDEO_BITRATE, max(2 * source_rate, 2_000_000))
    return min(requested, cap)


def plan_hls(row: ItemRow, params: HlsParams, *, audio_only: bool, options: EncodingOptions,
             ffmpeg: FfmpegInfo) -> HlsPlan:
    """Decide copy vs encode for each stream and build the EncodingRequest."""
    runtime = row.run_time_ticks or 0
    if runtime <= 0:
        raise BadRequestError("The item has no known runtime, so it cannot be streamed with HLS.")
    if params.start_ticks >= runtime:
        raise BadRequestError("StartTimeTicks is past the end of the media.")
    streams = _streams(row)
    audio = _pick(streams, "Audio", params.audio_stream_index)
    video = None if audio_only else _pick(streams, "Video", params.video_stream_index)
    if not audio_only and video is None:
        raise BadRequestError("The item has no video stream; use the audio HLS routes.")
    if audio_only and audio is None:
        raise BadRequestError("The item has no audio stream.")
    reasons = {r.lower() for r in params.transcode_reasons}
    container = params.segment_container

    video_out = VideoOutput()
    resolution: tuple[int, int] | None = None
    video_rate = 0
    video_tag = None
    if video is not None:
        codec = (video.get("Codec") or "").lower()
        width, height = int(video.get("Width") or 0), int(video.get("Height") or 0)
        source_rate = int(video.get("BitRate") or 0)
        fits = (
            params.allow_video_copy
            and codec in params.video_codecs
            and codec in (_MP4_VIDEO if container == "mp4" else _TS_VIDEO)
            and not (params.max_width and width > params.max_width)
            and not (params.max_height and height > params.max_height)
            and not (params.video_bitrate and source_rate and source_rate > params.video_bitrate)
            and (params.subtitle_method or "").lower() != "encode"
            and not any(r.startswith(("video", "refframes", "anamorphic", "interlaced")) for r in reasons)
        )
        if fits:
            resolution = (width, height) if width and height else None
            video_rate = source_rate or (row.bitrate or 0)
            video_tag = _video_tag(codec, video.get("Profile"), video.get("Level"))
        else:
            target = next((c for c in params.video_codecs if c in _ENCODABLE_VIDEO), "h264")
            if target == "hevc" and not ffmpeg.has_encoder("libx265") and options.hardware_acceleration == \
                    HardwareAccelerationType.NONE:
                target = "h264"
            preset = options.encoder_preset
            bitrate = capped_video_bitrate(params.video_bitrate, source_rate)
            video_out = VideoOutput(copy=False, codec=target, bitrate=bitrate,
                                    max_width=params.max_width, max_height=params.max_height, preset=preset)
            if width and height:
                resolution = _scaled(width, height, params.max_width, params.max_height)
            video_rate = bitrate or min(source_rate or 8_000_000, 20_000_000)
            video_tag = _video_tag(target, params.codec_options.get(f"{target}-profile", "high").split(",")[0],
                                   params.codec_options.get(f"{target}-level", "41").split(",")[0])

    audio_out = AudioOutput()
    audio_rate = 0
    audio_tag = None
    if audio is not None:
        codec = (audio.get("Codec") or "").lower()
        channels = int(audio.get("Channels") or 0)
        source_rate = int(audio.get("BitRate") or 0)
        fits = (
            params.allow_audio_copy
            and codec in params.audio_codecs
            and codec in hls_audio_codecs(container)
            and not (params.max_audio_channels and channels > params.max_audio_channels)
            and not (params.audio_bitrate and source_rate and source_rate > params.audio_bitrate)
            and not any(r.startswith("audio") for r in reasons)
        )
        if fits:
            audio_out = AudioOutput(copy=True, codec=codec)
            audio_rate = source_rate or 192_000
            audio_tag = _AUDIO_CODEC_TAGS.get(codec, codec)
        else:
            allowed = hls_audio_codecs(container)
            target = next((c for c in params.audio_codecs if c in allowed and c in ("aac", "mp3", "ac3", "eac3",
                                                                                     "opus", "flac")), "aac")
            out_channels = min(channels, params.max_audio_channels) if params.max_audio_channels and channels \
                else (params.max_audio_channels or None)
            if target in ("aac", "mp3") and (out_channels or channels) > 2 and not params.max_audio_channels:
                out_channels = 2 if target == "mp3" else out_channels
            audio_rate = params.audio_bitrate or 192_000
            audio_out = AudioOutput(copy=False, codec=target, bitrate=audio_rate, channels=out_channels)
            audio_tag = _AUDIO_CODEC_TAGS.get(target, target)

    if not row.path:  # source_row only hands over items with a file
        raise NotFoundError("The item has no media file.")
    request = EncodingRequest(
        input_path=Path(row.path),
        start_ticks=params.start_ticks,
        runtime_ticks=runtime,
        video=video_out,
        audio=audio_out,
        audio_only=audio_only,
        segment_container=container,
        segment_seconds=params.segment_length,
        video_stream_index=video.get("Index") if video is not None and params.video_stream_index is not None
        else None,
        audio_stream_index=audio.get("Index") if audio is not None and params.audio_stream_index is not None
        else None,
    )
    codecs = ",".join(t for t in (video_tag, audio_tag) if t) or None
    return HlsPlan(request=request, bandwidth=max(video_rate + audio_rate, 64_000), codecs=codecs,
                   resolution=resolution, runtime_ticks=runtime)


def master_playlist(plan: HlsPlan, query: str) -> str:
    return build_master_playlist([HlsVariant(url=f"main.m3u8?{query}", bandwidth=plan.bandwidth,
                                             codecs=plan.codecs, resolution=plan.resolution)])


def main_playlist(plan: HlsPlan, query: str) -> str:
    ext = plan.request.segment_extension
    safe = query.replace("{", "{{").replace("}", "}}")
    sep = "&" if safe else ""
    template = f"hls1/main/{{index}}.{ext}?{safe}{sep}runtimeTicks={{start_ticks}}" \
               "&actualSegmentLengthTicks={length_ticks}"
    init = f"hls1/main/-1.mp4?{query}" if plan.request.is_fmp4 else None
    text = build_media_playlist(runtime_ticks=plan.runtime_ticks, segment_seconds=plan.request.segment_seconds,
                                segment_url_template=template, init_segment_url=init)
    if plan.request.start_ticks:
        offset = plan.request.start_ticks / TICKS_PER_SECOND
        head, _, rest = text.partition("\n")
        text = f"{head}\n#EXT-X-START:TIME-OFFSET={offset:.3f},PRECISE=YES\n{rest}"
    return text


def query_without(raw: list[tuple[str, str]], *names: str) -> str:
    drop = {n.lower() for n in names}
    return urlencode([(k, v) for k, v in raw if k.lower() not in drop])


# -- the service --------------------------------------------------------------------------------


def encoding_options_from(config: Any) -> EncodingOptions:
    """Reelroom's EncodingOptions from the ``encoding`` configuration section."""
    try:
        hw = HardwareAccelerationType((config.HardwareAccelerationType or "none").lower())
    except ValueError:
        log.warning("Unknown HardwareAccelerationType %r; encoding in software", config.HardwareAccelerationType)
        hw = HardwareAccelerationType.NONE
    preset = (config.EncoderPreset or "").lower()
    threads = config.EncodingThreadCount or 0
    return EncodingOptions(
        hardware_acceleration=hw,
        enable_hardware_encoding=config.EnableHardwareEncoding is not False,
        vaapi_device=config.VaapiDevice or "/dev/dri/renderD128",
        qsv_device=config.QsvDevice or "",
        encoder_preset=preset if preset and preset != "auto" else "veryfast",
        max_muxing_queue_size=config.MaxMuxingQueueSize or 2048,
        thread_count=threads if threads > 0 else 0,
    )


@dataclass(frozen=True)
class TranscoderSettings:
    """Everything the transcoder takes from the configuration (the ``encoding`` section and
    Reelroom's ``transcoding`` section), made when a section is saved (see
    ``TranscodeService``), never per request. ``generation`` counts the changes: a plan made
    under an older one is made again."""

    encoder_path: str | None
    transcode_root: Path | None  # None: the data folder's transcode folder
    options: EncodingOptions
    max_concurrent: int | None
    idle_timeout: float
    throttle_ahead_segments: int | None
    keep_segments_behind: int | None
    generation: int = 0

    @classmethod
    def from_config(cls, encoding: Any, transcoding: Any, generation: int = 0) -> TranscoderSettings:
        try:
            values = validate_transcoding_settings(transcoding if isinstance(transcoding, dict) else {})
        except BadRequestError as exc:
            log.warning("Ignoring the transcoding configuration: %s", exc)
            values = dict(TRANSCODING_DEFAULTS)
        ahead = values["ThrottleAheadSegments"]
        if encoding.EnableThrottling and encoding.ThrottleDelaySeconds:
            ahead = max(2, encoding.ThrottleDelaySeconds // DEFAULT_SEGMENT_SECONDS)
        keep = (max(2, (encoding.SegmentKeepSeconds or 720) // DEFAULT_SEGMENT_SECONDS)
                if encoding.EnableSegmentDeletion else None)
        return cls(
            encoder_path=encoding.EncoderAppPath or None,
            transcode_root=Path(encoding.TranscodingTempPath) if encoding.TranscodingTempPath else None,
            options=encoding_options_from(encoding),
            max_concurrent=values["MaxConcurrentTranscodes"] or None,
            idle_timeout=float(values["IdleTimeoutSeconds"]),
            throttle_ahead_segments=ahead or None,
            keep_segments_behind=keep,
            generation=generation,
        )

    def apply(self, manager: TranscodeJobManager) -> None:
        manager.options = self.options
        manager.max_concurrent = self.max_concurrent
        manager.idle_timeout = self.idle_timeout
        manager.throttle_ahead_segments = self.throttle_ahead_segments
        manager.keep_segments_behind = self.keep_segments_behind


SETTINGS_SECTIONS = ("encoding", "transcoding")  # section_saved listens to these (wired in context.py)


def _segment_media_type(container: str, audio_only: bool) -> str:
    if container == "mp4":
        return "audio/mp4" if audio_only else "video/mp4"
    return "video/mp2t"


@dataclass(frozen=True)
class Segment:
    """A segment's bytes and their media type."""

    data: bytes
    media_type: str


class TranscodeService:
    """``ctx.transcodes``: the HLS requests of this server and their ffmpeg jobs (one
    TranscodeJobManager, made on first use).

    - Settings: ``settings`` (a TranscoderSettings) is rebuilt by a configuration listener when
      the ``encoding`` or ``transcoding`` section is saved and applied to the job manager at
      once; a request only reads it.
    - A segment request looks for its running job first (``running_job``: the play session's
      job, when the very same request, by item, query and settings generation, was planned onto
      it before) and is then served with one thread hop (poll and read together). Only a miss
      (a new session, other parameters, a job that ended or failed, a settings change) plans:
      the source row (database), the plan and the job start, as the playlists do.
    - ``source_row(item_id, media_source_id)`` is StreamService.source_row (the item or one of
      its versions, its file checked).
    """

    def __init__(self, config: Any, paths: Any, source_row: Callable[[str, str | None], Awaitable[Any]]) -> None:
        self._config = config
        self._paths = paths
        self._source_row = source_row
        self._manager: TranscodeJobManager | None = None
        self._ffmpeg: FfmpegInfo | None = None
        self._ffmpeg_path: str | None = None
        self._lock = threading.Lock()  # first use of the manager and ffmpeg discovery (worker threads)
        self.settings = self._read_settings(0)

    # -- settings -----------------------------------------------------------------------

    def _read_settings(self, generation: int) -> TranscoderSettings:
        return TranscoderSettings.from_config(self._config.get("encoding"), self._config.get("transcoding"),
                                              generation)

    def section_saved(self, _value: Any) -> None:
        """The configuration listener (``encoding`` or ``transcoding`` saved, on the saving
        thread): rebuild the settings and apply them to the running manager."""
        settings = self._read_settings(self.settings.generation + 1)
        self.settings = settings
        manager = self._manager
        if manager is not None:
            settings.apply(manager)

    def _transcode_root(self) -> Path:
        return self.settings.transcode_root or self._paths.transcode_dir

    def clean_start(self) -> int:
        """At start-up (blocking): end any ffmpeg an earlier server recorded in the transcode
        folder and did not stop (it was killed), and clear the folder's job directories.
        Returns how many ffmpeg processes were ended."""
        root = self._transcode_root()
        killed = spawn.end_recorded(root)
        if root.is_dir():
            for entry in root.iterdir():
                if entry.is_dir() and entry.name.startswith("job-"):
                    shutil.rmtree(entry, ignore_errors=True)
        return killed

    def ffmpeg(self) -> FfmpegInfo:
        """ffmpeg as configured (blocking: call from a worker thread)."""
        configured = self.settings.encoder_path
        with self._lock:
            if self._ffmpeg is None or self._ffmpeg_path != configured:
                try:
                    self._ffmpeg = find_ffmpeg(configured)
                except FfmpegNotFoundError as exc:
                    raise ServiceUnavailableError(f"ffmpeg is not available: {exc}") from exc
                self._ffmpeg_path = configured
                if self._manager is not None:
                    self._manager.ffmpeg = self._ffmpeg
            return self._ffmpeg

    def manager(self) -> TranscodeJobManager:
        """The job manager (blocking on first use: finds ffmpeg, clears stale job folders)."""
        from server.playback.transcode_jobs import TranscodeJobManager

        ffmpeg = self.ffmpeg()
        with self._lock:
            if self._manager is None:
                manager = TranscodeJobManager(ffmpeg, self._transcode_root(), log_dir=self._paths.log_dir)
                manager.remove_stale_job_dirs()
                self.settings.apply(manager)
                self._manager = manager
            return self._manager

    # -- planning (a playlist request, or a segment request that found no job) -------------

    def _key(self, session: str, row: ItemRow, params: HlsParams) -> TranscodeJobKey:
        from server.playback.transcode_jobs import TranscodeJobKey

        return TranscodeJobKey(play_session_id=session, item_id=row.id,
                               media_source_id=params.media_source_id or row.id, device_id=params.device_id)

    @staticmethod
    def _session(params: HlsParams, source_id: str | None) -> str:
        return params.play_session_id or f"{params.device_id or 'anonymous'}:{source_id}"

    @staticmethod
    def _request_key(item_id: str, params: HlsParams, audio_only: bool, settings: TranscoderSettings) -> tuple:
        """What makes two segment requests plan the same: the item in the path, the query
        (HlsParams plus its codec options), audio or video, and the settings generation."""
        return (normalize_guid(item_id) or item_id, audio_only, params, frozenset(params.codec_options.items()),
                settings.generation)

    def _start(self, row: ItemRow, params: HlsParams, plan: HlsPlan) -> TranscodeJob:
        """The play session's job (blocking), started if needed; errors as ProblemDetails."""
        from server.playback.transcode_jobs import TranscodeFailedError, TranscodeLimitError

        key = self._key(self._session(params, row.id), row, params)
        try:
            return self.manager().start_job(key, plan.request)
        except TranscodeLimitError as exc:
            raise ServiceUnavailableError(f"The server is transcoding as much as it may: {exc}.") from exc
        except EncodingRequestError as exc:
            raise BadRequestError(str(exc)) from exc
        except TranscodeFailedError as exc:
            raise ServiceUnavailableError(f"The transcode could not start: {exc}") from exc

    async def open(self, item_id: str, params: HlsParams, *, audio_only: bool, start: bool,
                   check: Callable[[HlsPlan], None] | None = None) -> tuple[Any, HlsPlan, TranscodeJob | None]:
        """Plan a stream and, with ``start``, start or join its job, in one thread hop after the
        source row is read. ``check`` may refuse the plan before any job starts. A started job
        remembers the request's key (with the generation of the settings the plan used), so the
        same request finds it next time (``running_job``)."""
        row = await self._source_row(item_id, params.media_source_id)
        settings = self.settings

        def build() -> tuple[HlsPlan, TranscodeJob | None]:
            manager = self.manager()
            plan = plan_hls(row, params, audio_only=audio_only, options=settings.options, ffmpeg=manager.ffmpeg)
            if check is not None:
                check(plan)
            return plan, (self._start(row, params, plan) if start else None)

        plan, job = await asyncio.to_thread(build)
        if job is not None:
            if len(job.plan_keys) >= MAX_PLAN_KEYS:  # a session that keeps changing its query
                job.plan_keys.clear()
            job.plan_keys.add(self._request_key(item_id, params, audio_only, settings))
        return row, plan, job

    # -- playlists ----------------------------------------------------------------------

    async def master_playlist(self, item_id: str, params: HlsParams, query: str, *, audio_only: bool) -> str:
        _row, plan, _job = await self.open(item_id, params, audio_only=audio_only, start=False)
        return master_playlist(plan, query)

    async def main_playlist(self, item_id: str, params: HlsParams, query: str, *, audio_only: bool) -> str:
        """The VOD playlist; ffmpeg is started now, as the first segment request follows within
        milliseconds."""
        _row, plan, _job = await self.open(item_id, params, audio_only=audio_only, start=True)
        return main_playlist(plan, query)

    async def legacy_playlist(self, item_id: str, params: HlsParams) -> str:
        """The old playlist route: segment URLs relative to the playlist's own folder."""
        _row, plan, _job = await self.open(item_id, params, audio_only=False, start=True)
        return main_playlist(plan, "").replace("hls1/main/", "")

    # -- segments -----------------------------------------------------------------------

    def running_job(self, item_id: str, params: HlsParams, *, audio_only: bool) -> TranscodeJob | None:
        """The job this request was planned onto before, if it still runs (no thread, no lock:
        a snapshot read of the manager's table)."""
        manager = self._manager
        if manager is None:
            return None
        source_id = normalize_guid(params.media_source_id) if params.media_source_id else normalize_guid(item_id)
        job = manager.peek_job(self._session(params, source_id))
        if job is None or job.closed or job.failure is not None:
            return None
        return job if self._request_key(item_id, params, audio_only, self.settings) in job.plan_keys else None

    async def segment_for(self, item_id: str, params: HlsParams, index: int, container: str, *,
                          audio_only: bool) -> Segment:
        """A DynamicHls segment: from the running job when there is one, else planned (and the
        job started or joined) as the main playlist does."""
        container = container.lower()
        if container not in ("ts", "mp4"):
            raise BadRequestError(f"Segments are .ts or .mp4, not .{container}.")

        def check(request: EncodingRequest) -> None:
            if request.segment_extension != container:
                raise BadRequestError(f"This stream's segments are .{request.segment_extension}, not .{container}.")
            if index == -1 and container != "mp4":
                raise BadRequestError("Only fMP4 streams have an init segment (-1.mp4).")
            if index < -1:
                raise BadRequestError("The segment number must not be negative.")

        media_type = _segment_media_type(container, audio_only)
        job = self.running_job(item_id, params, audio_only=audio_only)
        if job is not None:
            check(job.request)
            try:
                return Segment(await self.segment(job, index), media_type)
            except NotFoundError:
                if not job.closed:
                    raise
                # it ended under us (idle, stopped): plan, as a request that found no job does
        _row, _plan, job = await self.open(item_id, params, audio_only=audio_only, start=True,
                                           check=lambda plan: check(plan.request))
        assert job is not None
        return Segment(await self.segment(job, index), media_type)

    def find_job(self, item_id: str, session: str | None, audio_only: bool | None = None) -> TranscodeJob | None:
        """A running job of the item (and play session; audio or video), for the legacy routes."""
        key = normalize_guid(item_id)
        manager = self._manager
        if key is None or manager is None:
            return None
        for job in manager.peek_jobs():
            if job.key.item_id != key or job.closed:
                continue
            if session is not None and job.key.play_session_id != session:
                continue
            if audio_only is not None and job.request.audio_only != audio_only:
                continue
            return job
        return None

    async def legacy_video_segment(self, item_id: str, session: str, segment: str, container: str) -> Segment:
        """A segment of a running video job named by its play session (the anonymous legacy route)."""
        job = self.find_job(item_id, session, audio_only=False)
        if job is None or not segment.lstrip("-").isdigit():
            raise NotFoundError("No such segment: the legacy route only serves segments of a running transcode.")
        if job.request.segment_extension != container.lower():
            raise NotFoundError(f"This transcode has no .{container} segments.")
        return Segment(await self.segment(job, int(segment)), _segment_media_type(container.lower(), False))

    async def legacy_audio_segment(self, item_id: str, segment: str) -> Segment:
        """A segment an audio job of the item has already written (the anonymous legacy route)."""
        job = self.find_job(item_id, None, audio_only=True)
        if job is None or not segment.isdigit():
            raise NotFoundError("No such segment: the legacy route only serves segments already written.")
        data = await self.segment(job, int(segment), written_only=True)
        return Segment(data, _segment_media_type(job.request.segment_extension, True))

    def _poll_and_read(self, manager: TranscodeJobManager, job: TranscodeJob, index: int,
                       written_only: bool) -> bytes | None:
        """One step of waiting for a segment (blocking): its bytes, or None while it is on its
        way. Polling and reading share one thread hop."""
        from server.playback.transcode_jobs import SegmentNotFoundError

        if written_only and (index < 0 or not job.segment_path(index).is_file()):
            raise SegmentNotFoundError("No such segment: the legacy route only serves segments already written.")
        path = manager.poll_init_segment(job) if index == -1 else manager.poll_segment(job, index)
        if path is None:
            return None
        try:
            return path.read_bytes()
        except OSError:
            return None  # deleted under us (job stopped or cleaned up): poll again

    async def segment(self, job: TranscodeJob, index: int, timeout: float = SEGMENT_TIMEOUT,
                      written_only: bool = False) -> bytes:
        """The bytes of segment ``index`` (-1: the fMP4 init segment) once ffmpeg has written it.

        Waits with asyncio.sleep between non-blocking polls: no thread is held meanwhile.
        ``written_only``: 404 unless the segment is on disk already.
        """
        from server.playback.transcode_jobs import (
            SegmentNotFoundError,
            TranscodeFailedError,
            TranscodeJobClosedError,
        )

        manager = self._manager or await asyncio.to_thread(self.manager)
        deadline = time.monotonic() + timeout
        while True:
            try:
                data = await asyncio.to_thread(self._poll_and_read, manager, job, index, written_only)
            except SegmentNotFoundError as exc:
                raise NotFoundError(str(exc)) from exc
            except TranscodeJobClosedError as exc:
                raise NotFoundError(f"The transcode was stopped: {exc}") from exc
            except TranscodeFailedError as exc:
                raise ServiceUnavailableError(f"The transcode failed: {exc}") from exc
            if data is not None:
                return data
            written_only = False
            if time.monotonic() > deadline:
                raise ServiceUnavailableError(f"Segment {index} was not ready within {timeout:g} seconds.")
            await asyncio.sleep(POLL_SECONDS)

    # -- hooks for play-state reports and ActiveEncodings -------------------------------

    def ping(self, play_session_id: str) -> None:
        if self._manager is not None:
            self._manager.ping_session(play_session_id)

    def on_playback_stopped(self, play_session_id: str) -> None:
        """Stop the session's job; from the event loop the kill runs on a worker thread."""
        if self._manager is None or not play_session_id:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._manager.stop_session(play_session_id)
            return
        loop.run_in_executor(None, self._manager.stop_session, play_session_id)

    async def stop_encoding(self, device_id: str | None, play_session_id: str | None) -> int:
        if not device_id and not play_session_id:
            raise BadRequestError("Give a deviceId or a playSessionId.")
        if self._manager is None:
            return 0
        return await asyncio.to_thread(self._manager.stop_matching, device_id=device_id,
                                       play_session_id=play_session_id)

    @property
    def jobs(self) -> list[TranscodeJob]:
        return self._manager.jobs if self._manager is not None else []

    async def close(self) -> None:
        if self._manager is not None:
            await asyncio.to_thread(self._manager.kill_all)
