"""What to encode (EncodingRequest), encoder settings (EncodingOptions) and the ffmpeg HLS command."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from server.media.ffmpeg import FfmpegInfo

TICKS_PER_SECOND = 10_000_000


class EncodingRequestError(ValueError):
    """An EncodingRequest asks for something impossible (bad container, missing input, ...)."""


class HardwareAccelerationType(StrEnum):
    """Hardware acceleration kinds, spelled as Jellyfin's EncodingOptions spells them."""

    NONE = "none"
    AMF = "amf"
    QSV = "qsv"
    NVENC = "nvenc"
    V4L2M2M = "v4l2m2m"
    VAAPI = "vaapi"
    VIDEOTOOLBOX = "videotoolbox"
    RKMPP = "rkmpp"


@dataclass(frozen=True)
class EncodingOptions:
    """Server-wide encoder settings (a subset of Jellyfin's EncodingOptions)."""

    hardware_acceleration: HardwareAccelerationType = HardwareAccelerationType.NONE
    enable_hardware_encoding: bool = True
    vaapi_device: str = "/dev/dri/renderD128"
    qsv_device: str = ""
    encoder_preset: str = "veryfast"
    max_muxing_queue_size: int = 2048
    thread_count: int = 0


@dataclass(frozen=True)
class VideoOutput:
    """Copy the video stream, or encode it with these limits (bitrate in bits/s)."""

    copy: bool = True
    codec: str = "h264"
    bitrate: int | None = None
    max_width: int | None = None
    max_height: int | None = None
    preset: str | None = None


@dataclass(frozen=True)
class AudioOutput:
    """Copy the audio stream, or encode it (bitrate in bits/s)."""

    copy: bool = True
    codec: str = "aac"
    bitrate: int | None = None
    channels: int | None = None


@dataclass(frozen=True)
class EncodingRequest:
    """One HLS stream of one media file: what to copy or encode and how to cut segments.

    Segments are numbered from 0 over the whole runtime; ``start_ticks`` picks the first
    segment to produce. Stream indexes are absolute indexes in the input file.
    ``read_rate`` caps input reading at that multiple of real time (None: no cap).
    """

    input_path: Path
    start_ticks: int = 0
    runtime_ticks: int | None = None
    video: VideoOutput = field(default_factory=VideoOutput)
    audio: AudioOutput = field(default_factory=AudioOutput)
    audio_only: bool = False
    segment_container: str = "ts"
    segment_seconds: int = 6
    video_stream_index: int | None = None
    audio_stream_index: int | None = None
    read_rate: float | None = None

    def validate(self) -> None:
        """Raise EncodingRequestError when the request cannot be served."""
        if self.segment_container.lower() not in ("ts", "mpegts", "mp4", "fmp4"):
            raise EncodingRequestError(f"segment container must be ts or mp4, not {self.segment_container!r}")
        if not 1 <= self.segment_seconds <= 60:
            raise EncodingRequestError("segment length must be between 1 and 60 seconds")
        if self.start_ticks < 0:
            raise EncodingRequestError("start position cannot be negative")
        if self.runtime_ticks is not None and self.runtime_ticks <= 0:
            raise EncodingRequestError("runtime must be positive when given")
        if self.read_rate is not None and self.read_rate <= 0:
            raise EncodingRequestError("read rate must be positive")
        for index in (self.video_stream_index, self.audio_stream_index):
            if index is not None and index < 0:
                raise EncodingRequestError("stream indexes cannot be negative")
        if not self.input_path.is_file():
            raise EncodingRequestError(f"input file does not exist: {self.input_path}")

    @property
    def is_fmp4(self) -> bool:
        return self.segment_container.lower() in ("mp4", "fmp4")

    @property
    def segment_extension(self) -> str:
        return "mp4" if self.is_fmp4 else "ts"

    @property
    def segment_ticks(self) -> int:
        return self.segment_seconds * TICKS_PER_SECOND

    @property
    def start_segment(self) -> int:
        return self.start_ticks // self.segment_ticks

    @property
    def segment_count(self) -> int | None:
        """Number of segments over the runtime, when the runtime is known."""
        if self.runtime_ticks is None:
            return None
        return max(1, math.ceil(self.runtime_ticks / self.segment_ticks))

    @property
    def encodes_video(self) -> bool:
        return not self.audio_only and not self.video.copy


_SOFTWARE_VIDEO_ENCODERS = {
    "h264": "libx264", "avc": "libx264", "hevc": "libx265", "h265": "libx265",
    "av1": "libsvtav1", "vp9": "libvpx-vp9", "mpeg4": "mpeg4",
}
_HARDWARE_CODEC_BASE = {"h264": "h264", "avc": "h264", "hevc": "hevc", "h265": "hevc", "av1": "av1", "vp9": "vp9"}
_AUDIO_ENCODERS = {
    "aac": "aac", "mp3": "libmp3lame", "opus": "libopus", "ac3": "ac3", "eac3": "eac3",
    "flac": "flac", "vorbis": "libvorbis", "alac": "alac",
}
# Pixel format each hardware encoder is fed with (software frames), and extra encoder flags.
_HARDWARE_INPUT_FORMAT = {
    HardwareAccelerationType.VAAPI: "nv12", HardwareAccelerationType.QSV: "nv12",
    HardwareAccelerationType.NVENC: "yuv420p", HardwareAccelerationType.AMF: "nv12",
    HardwareAccelerationType.VIDEOTOOLBOX: "nv12", HardwareAccelerationType.V4L2M2M: "yuv420p",
    HardwareAccelerationType.RKMPP: "nv12",
}


@dataclass(frozen=True)
class VideoEncoderChoice:
    encoder: str
    hardware: HardwareAccelerationType  # NONE for software


def choose_video_encoder(
    codec: str, options: EncodingOptions, ffmpeg: FfmpegInfo, *, allow_hardware: bool = True
) -> VideoEncoderChoice:
    """The ffmpeg encoder for ``codec``: the configured hardware one if ffmpeg has it, else software."""
    key = codec.lower()
    hw = options.hardware_acceleration
    if allow_hardware and options.enable_hardware_encoding and hw != HardwareAccelerationType.NONE:
        base = _HARDWARE_CODEC_BASE.get(key)
        if base and ffmpeg.has_encoder(f"{base}_{hw.value}"):
            return VideoEncoderChoice(f"{base}_{hw.value}", hw)
    software = _SOFTWARE_VIDEO_ENCODERS.get(key)
    if software is None:
        raise EncodingRequestError(f"no encoder known for video codec {codec!r}")
    if not ffmpeg.has_encoder(software):
        raise EncodingRequestError(f"this ffmpeg cannot encode {codec!r} (no {software})")
    return VideoEncoderChoice(software, HardwareAccelerationType.NONE)


def segment_file_name(index: int, extension: str) -> str:
    return f"seg{index}.{extension}"


INIT_SEGMENT_NAME = "init.mp4"


def segment_filename_pattern(output_dir: Path, extension: str) -> str:
    """ffmpeg's printf-style segment name; a literal % in the directory is escaped."""
    return os.path.join(str(output_dir).replace("%", "%%"), f"seg%d.{extension}")


def run_playlist_name(start_segment: int) -> str:
    """The playlist one ffmpeg run writes; it lists the segments that run has finished."""
    return f"run{start_segment}.m3u8"


def build_hls_command(
    ffmpeg: FfmpegInfo,
    request: EncodingRequest,
    options: EncodingOptions,
    *,
    output_dir: Path,
    start_segment: int,
    allow_hardware: bool = True,
) -> tuple[list[str], VideoEncoderChoice | None]:
    """The ffmpeg argv that writes HLS segments ``start_segment``, ``start_segment+1``, ... to ``output_dir``.

    Returns the argv and the video encoder used (None when video is copied or absent).
    """
    seconds = request.segment_seconds
    offset = start_segment * seconds
    choice = (
        choose_video_encoder(request.video.codec, options, ffmpeg, allow_hardware=allow_hardware)
        if request.encodes_video
        else None
    )
    hw = choice.hardware if choice else HardwareAccelerationType.NONE

    cmd = [ffmpeg.path, "-hide_banner", "-nostdin", "-nostats", "-loglevel", "info", "-y"]
    cmd += _hardware_device_args(hw, options)
    if request.read_rate is not None:
        cmd += ["-readrate", f"{request.read_rate:g}"]
    if offset > 0:
        cmd += ["-ss", str(offset)]
    cmd += ["-i", str(request.input_path)]

    if request.audio_only:
        cmd += ["-map", _stream_map(request.audio_stream_index, "a"), "-vn"]
    else:
        cmd += ["-map", _stream_map(request.video_stream_index, "v")]
        cmd += ["-map", _stream_map(request.audio_stream_index, "a", optional=True)]
    cmd += ["-map_metadata", "-1", "-map_chapters", "-1", "-sn", "-dn"]
    if options.thread_count > 0:
        cmd += ["-threads", str(options.thread_count)]

    if not request.audio_only:
        if choice is None:
            cmd += ["-c:v", "copy"]
        else:
            cmd += _video_encode_args(request, options, choice)
    cmd += _audio_args(request.audio, ffmpeg, request.is_fmp4)

    cmd += ["-max_muxing_queue_size", str(options.max_muxing_queue_size)]
    if offset > 0:
        cmd += ["-output_ts_offset", str(offset)]
    cmd += [
        "-f", "hls",
        "-hls_time", str(seconds),
        "-hls_list_size", "0",
        "-hls_playlist_type", "event",
        "-hls_flags", "temp_file",
        "-hls_segment_type", "fmp4" if request.is_fmp4 else "mpegts",
    ]
    if request.is_fmp4:
        cmd += ["-hls_fmp4_init_filename", INIT_SEGMENT_NAME]
    cmd += [
        "-start_number", str(start_segment),
        "-hls_segment_filename", segment_filename_pattern(output_dir, request.segment_extension),
        str(output_dir / run_playlist_name(start_segment)),
    ]
    return cmd, choice


def _stream_map(index: int | None, kind: str, optional: bool = False) -> str:
    if index is not None:
        return f"0:{index}"
    return f"0:{kind}:0" + ("?" if optional else "")


def _hardware_device_args(hw: HardwareAccelerationType, options: EncodingOptions) -> list[str]:
    if hw == HardwareAccelerationType.VAAPI:
        return ["-init_hw_device", f"vaapi=va:{options.vaapi_device}", "-filter_hw_device", "va"]
    if hw == HardwareAccelerationType.QSV:
        device = f"qsv=qs:{options.qsv_device}" if options.qsv_device else "qsv=qs"
        return ["-init_hw_device", device, "-filter_hw_device", "qs"]
    return []


def _scale_filter(video: VideoOutput) -> str | None:
    width, height = video.max_width, video.max_height
    if width and height:
        return (
            f"scale=w='min({width},iw)':h='min({height},ih)'"
            ":force_original_aspect_ratio=decrease:force_divisible_by=2"
        )
    if width:
        return f"scale=w='min({width},iw)':h=-2"
    if height:
        return f"scale=w=-2:h='min({height},ih)'"
    return None


def _video_encode_args(request: EncodingRequest, options: EncodingOptions, choice: VideoEncoderChoice) -> list[str]:
    video = request.video
    filters = [f for f in (_scale_filter(video),) if f]
    hw = choice.hardware
    if hw == HardwareAccelerationType.NONE:
        filters.append("format=yuv420p")
    else:
        filters.append(f"format={_HARDWARE_INPUT_FORMAT[hw]}")
        if hw == HardwareAccelerationType.VAAPI:
            filters.append("hwupload")
    args = ["-vf", ",".join(filters), "-c:v", choice.encoder]
    if choice.encoder in ("libx264", "libx265"):
        args += ["-preset", video.preset or options.encoder_preset]
        if choice.encoder == "libx264":
            args += ["-sc_threshold", "0"]
        else:
            args += ["-x265-params", "scenecut=0:log-level=error"]
    if hw == HardwareAccelerationType.NVENC:
        args += ["-forced-idr", "1"]
    if video.bitrate:
        # Per stream: a bare -maxrate/-bufsize would reach the audio encoder too.
        args += ["-b:v", str(video.bitrate), "-maxrate:v", str(video.bitrate), "-bufsize:v", str(video.bitrate * 2)]
    elif choice.encoder in ("libx264", "libx265"):
        args += ["-crf", "23"]
    args += ["-force_key_frames:0", f"expr:gte(t,n_forced*{request.segment_seconds})"]
    if request.is_fmp4 and choice.encoder.startswith(("hevc", "libx265")):
        args += ["-tag:v", "hvc1"]
    return args


def _audio_args(audio: AudioOutput, ffmpeg: FfmpegInfo, fmp4: bool = False) -> list[str]:
    if audio.copy:
        # AAC from MPEG-TS (a Live TV recording, say) is ADTS; MP4 segments need it as raw AAC with
        # an AudioSpecificConfig, or the mp4 muxer refuses the first packet. The filter passes
        # AAC that is already raw (from MP4 or MKV) through unchanged.
        if fmp4 and audio.codec.lower() == "aac":
            return ["-c:a", "copy", "-bsf:a", "aac_adtstoasc"]
        return ["-c:a", "copy"]
    encoder = _AUDIO_ENCODERS.get(audio.codec.lower())
    if encoder is None:
        raise EncodingRequestError(f"no encoder known for audio codec {audio.codec!r}")
    if not ffmpeg.has_encoder(encoder):
        raise EncodingRequestError(f"this ffmpeg cannot encode {audio.codec!r} (no {encoder})")
    args = ["-c:a", encoder]
    if audio.bitrate:
        args += ["-b:a", str(audio.bitrate)]
    if audio.channels:
        args += ["-ac", str(audio.channels)]
    return args
