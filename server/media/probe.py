"""Probe media files in-process with PyAV and describe them in Jellyfin's terms.

``probe_file`` opens a file once (no ffprobe subprocess), reads the container header and
stream parameters, checks that media data follows, and returns a ``MediaProbe``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from server.media.languages import normalize_language
from server.media.streams import (
    AUDIO,
    DATA,
    EMBEDDED_IMAGE,
    SUBTITLE,
    VIDEO,
    ProbedAttachment,
    ProbedChapter,
    ProbedStream,
)

TICKS_PER_SECOND = 10_000_000

_WEBM_VIDEO_CODECS = frozenset({"av1", "vp8", "vp9"})
_WEBM_AUDIO_CODECS = frozenset({"opus", "vorbis"})
_IMAGE_CODECS = frozenset({"bmp", "gif", "png", "webp"})
_SUBTITLE_CODEC_NAMES = {
    "dvb_subtitle": "DVBSUB",
    "dvb_teletext": "DVBTXT",
    "dvd_subtitle": "DVDSUB",
    "hdmv_pgs_subtitle": "PGSSUB",
}

# FFmpeg's names for its colour enums (libavutil pixdesc); "unspecified" values are absent.
_COLOR_PRIMARIES = {
    1: "bt709", 4: "bt470m", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m", 8: "film",
    9: "bt2020", 10: "smpte428", 11: "smpte431", 12: "smpte432", 22: "ebu3213",
}
_COLOR_TRANSFERS = {
    1: "bt709", 4: "gamma22", 5: "gamma28", 6: "smpte170m", 7: "smpte240m", 8: "linear",
    9: "log100", 10: "log316", 11: "iec61966-2-4", 12: "bt1361e", 13: "iec61966-2-1",
    14: "bt2020-10", 15: "bt2020-12", 16: "smpte2084", 17: "smpte428", 18: "arib-std-b67",
}
_COLOR_SPACES = {
    0: "gbr", 1: "bt709", 4: "fcc", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m", 8: "ycgco",
    9: "bt2020nc", 10: "bt2020c", 11: "smpte2085", 12: "chroma-derived-nc",
    13: "chroma-derived-c", 14: "ictcp",
}
_COLOR_RANGES = {1: "tv", 2: "pc"}
_FIELD_PROGRESSIVE = 1

# Named display aspect ratios: (ratio, tolerance, label), checked in order.
_ASPECT_RATIOS: tuple[tuple[float, float, str], ...] = (
    (16 / 9, 0.03, "16:9"),
    (4 / 3, 0.05, "4:3"),
    (1.41, 0.005, "1.41:1"),
    (1.5, 0.005, "1.5:1"),
    (1.6, 0.005, "1.6:1"),
    (5 / 3, 0.005, "5:3"),
    (1.85, 0.02, "1.85:1"),
    (2.35, 0.025, "2.35:1"),
    (2.4, 0.025, "2.40:1"),
)

_PCM_BITS = re.compile(r"^pcm_[suf](8|16|24|32|64)")
_TAG_DURATION = re.compile(r"^(\d+):(\d{1,2}):(\d{1,2}(?:\.\d+)?)$")


class ProbeError(ValueError):
    """The file cannot be read as media (missing, unreadable, empty, corrupt or not media)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"cannot probe {os.fspath(path)!r}: {reason}")
        self.path = os.fspath(path)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class MediaProbe:
    """What a media file holds: container, runtime, bitrate, tags, chapters and streams.

    ``container`` is Jellyfin's container string (e.g. "mkv", "mov,mp4,m4a,3gp,3g2,mj2",
    "ts", "mkv,webm", "mp3", "flac", "ogg", "wav"); ``format_names`` are FFmpeg's raw names.
    ``tags`` merges the first video (or, for audio files, audio) stream's tags with the
    container's, keys lower-cased.
    """

    path: str
    container: str | None
    format_names: tuple[str, ...]
    run_time_ticks: int | None
    bitrate: int | None
    size: int
    is_audio: bool
    streams: tuple[ProbedStream, ...]
    chapters: tuple[ProbedChapter, ...] = ()
    attachments: tuple[ProbedAttachment, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)

    def tag(self, *names: str) -> str | None:
        """The first non-blank tag among ``names`` (case-insensitive)."""
        for name in names:
            value = self.tags.get(name.lower())
            if value and value.strip():
                return value.strip()
        return None

    @property
    def title(self) -> str | None:
        return self.tag("title", "title-eng")

    @property
    def video_streams(self) -> tuple[ProbedStream, ...]:
        return tuple(s for s in self.streams if s.type == VIDEO)

    @property
    def audio_streams(self) -> tuple[ProbedStream, ...]:
        return tuple(s for s in self.streams if s.type == AUDIO)

    @property
    def subtitle_streams(self) -> tuple[ProbedStream, ...]:
        return tuple(s for s in self.streams if s.type == SUBTITLE)

    @property
    def duration_seconds(self) -> float | None:
        return None if self.run_time_ticks is None else self.run_time_ticks / TICKS_PER_SECOND


def probe_file(path: str | os.PathLike[str], *, is_audio: bool | None = None,
               timeout: float = 10.0) -> MediaProbe:
    """Probe ``path`` with PyAV. Raises ``ProbeError`` when it is not readable media.

    ``is_audio`` says whether the file belongs to a music/audiobook library (all video
    streams become embedded images, runtime comes from the audio stream); None decides
    from the streams. ``timeout`` bounds each blocking open/read in seconds.
    """
    import av.error  # PyAV loads when the first file is probed, not at start-up
    path_str = os.fspath(path)
    try:
        size = os.stat(path_str).st_size
    except OSError as exc:
        raise ProbeError(path_str, exc.strerror or str(exc)) from exc
    if size == 0:
        raise ProbeError(path_str, "empty file")
    try:
        container = av.open(path_str, timeout=(timeout, timeout), metadata_errors="replace")
    except (av.error.FFmpegError, OSError, UnicodeError) as exc:
        raise ProbeError(path_str, str(exc)) from exc
    try:
        if not isinstance(container, av.container.InputContainer):
            raise ProbeError(path_str, "not an input container")
        return _describe(path_str, size, container, is_audio)
    except ProbeError:
        raise
    except (av.error.FFmpegError, OSError) as exc:
        raise ProbeError(path_str, str(exc)) from exc
    except (ValueError, TypeError, AttributeError, ArithmeticError, LookupError) as exc:
        # Odd streams must not escape as unexpected exception types.
        raise ProbeError(path_str, f"unsupported stream layout: {exc!r}") from exc
    finally:
        container.close()


def _describe(path: str, size: int, container: Any, is_audio: bool | None) -> MediaProbe:
    av_streams = list(container.streams)
    kinds = [s.type for s in av_streams]
    if "video" not in kinds and "audio" not in kinds:
        raise ProbeError(path, "no audio or video streams")
    _require_media_data(path, container)

    format_names = tuple(n for n in (container.format.name or "").split(",") if n)
    container_bitrate = container.bit_rate or None
    if is_audio is None:
        is_audio = not any(_is_real_video(s) for s in av_streams if s.type == "video")

    streams: list[ProbedStream] = []
    attachments: list[ProbedAttachment] = []
    for s in av_streams:
        attachment = _attachment(s)
        if attachment is not None:
            attachments.append(attachment)
        stream = _stream(s, is_audio, container_bitrate)
        if stream is not None:
            streams.append(stream)

    bitrate = container_bitrate
    if not is_audio:
        streams = [_with_estimated_audio_bitrate(s) for s in streams]
        video_sum = sum(s.bit_rate or 0 for s in streams if s.type == VIDEO)
        if video_sum == (bitrate or 0):
            # The container bitrate only repeats the video's: add up every stream instead.
            total = sum(s.bit_rate or 0 for s in streams)
            bitrate = total or bitrate

    return MediaProbe(
        path=path,
        container=_jellyfin_container(format_names, streams),
        format_names=format_names,
        run_time_ticks=_run_time_ticks(container, av_streams, is_audio),
        bitrate=bitrate,
        size=size,
        is_audio=is_audio,
        streams=tuple(streams),
        chapters=tuple(_chapters(container)),
        attachments=tuple(attachments),
        tags=_merged_tags(container, av_streams, is_audio),
    )


def _require_media_data(path: str, container: Any) -> None:
    """Read packets until one carries data; a header with nothing after it is corrupt."""
    import av.error
    try:
        for count, packet in enumerate(container.demux()):
            if packet.size > 0:
                return
            if count > 64:
                break
    except av.error.FFmpegError as exc:
        raise ProbeError(path, f"unreadable media data: {exc}") from exc
    raise ProbeError(path, "no media data (truncated file?)")


def _is_real_video(s: Any) -> bool:
    import av
    if s.disposition & av.stream.Disposition.attached_pic:
        return False
    codec = _codec_name(s)
    if codec in _IMAGE_CODECS:
        return False
    return not (codec == "mjpeg" and _codec_tag(s) is None)


def _codec_name(s: Any) -> str | None:
    cc = s.codec_context
    if cc is not None and cc.codec is not None:
        return cc.codec.canonical_name
    return getattr(s, "name", None)


def _codec_tag(s: Any) -> str | None:
    cc = s.codec_context
    tag = getattr(cc, "codec_tag", None) if cc is not None else None
    if not tag or not all(ch.isprintable() and ch != "\x00" for ch in tag) or not tag.strip():
        return None
    return tag


def _tags(s: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (s.metadata or {}).items()}


def _stream(s: Any, is_audio: bool, container_bitrate: int | None) -> ProbedStream | None:
    import av
    kind = s.type
    tags = _tags(s)
    codec = _codec_name(s)
    cc = s.codec_context
    if cc is None and kind in ("audio", "video"):
        kind = "data"  # No decoder and no parameters: only its existence can be reported.
    common: dict[str, Any] = {
        "index": s.index,
        "codec": codec,
        "codec_tag": _codec_tag(s),
        "profile": s.profile or None,
        "time_base": _fraction_text(s.time_base),
        "language": normalize_language(tags.get("language")),
        "title": tags.get("title") or None,
        "comment": tags.get("comment") or None,
        "is_default": bool(s.disposition & av.stream.Disposition.default),
        "is_forced": bool(s.disposition & av.stream.Disposition.forced),
        "is_hearing_impaired": bool(s.disposition & av.stream.Disposition.hearing_impaired),
    }
    if kind == "audio":
        layout = cc.layout.name if cc.layout is not None else ""
        stream = ProbedStream(
            type=AUDIO,
            channels=cc.channels or None,
            channel_layout=_channel_layout(layout),
            sample_rate=cc.sample_rate or None,
            bit_depth=_audio_bit_depth(codec, cc.extradata),
            bit_rate=_stream_bitrate(s, tags, container_bitrate if is_audio else None),
            **_with_handler_title(common, tags, "SoundHandler"),
        )
    elif kind == "video":
        stream_type = VIDEO if (not is_audio and _is_real_video(s)) else EMBEDDED_IMAGE
        if stream_type == EMBEDDED_IMAGE:
            common["title"] = None
        stream = ProbedStream(
            type=stream_type,
            level=float(cc.level) if cc.level is not None and cc.level >= 0 else None,
            width=cc.width or None,
            height=cc.height or None,
            average_frame_rate=_rate(s.average_rate),
            real_frame_rate=_rate(s.base_rate),
            pixel_format=cc.format.name if cc.format is not None else None,
            bit_depth=_video_bit_depth(cc),
            color_range=_COLOR_RANGES.get(int(cc.color_range or 0)),
            color_space=_COLOR_SPACES.get(int(cc.colorspace if cc.colorspace is not None else 2)),
            color_transfer=_COLOR_TRANSFERS.get(int(cc.color_trc or 0)),
            color_primaries=_COLOR_PRIMARIES.get(int(cc.color_primaries or 0)),
            aspect_ratio=_aspect_ratio(s.display_aspect_ratio, cc.width, cc.height),
            is_anamorphic=False,
            is_interlaced=int(cc.field_order or 0) not in (0, _FIELD_PROGRESSIVE),
            is_avc=_is_avc(codec, cc.extradata),
            nal_length_size=_nal_length_size(codec, cc.extradata),
            bit_rate=_stream_bitrate(s, tags, container_bitrate if stream_type == VIDEO else None),
            **common,
        )
    elif kind == "subtitle":
        if not codec:
            return None  # Nothing can be done with a subtitle of unknown format.
        common["codec"] = _SUBTITLE_CODEC_NAMES.get(codec, codec)
        stream = ProbedStream(
            type=SUBTITLE,
            width=getattr(cc, "width", None) or None,
            height=getattr(cc, "height", None) or None,
            **_with_handler_title(common, tags, "SubtitleHandler"),
        )
    elif kind == "data":
        stream = ProbedStream(type=DATA, **common)
    else:
        return None
    if stream.title and stream.title.lower() == "cc":
        stream = replace(stream, title=None)
    return stream


def _attachment(s: Any) -> ProbedAttachment | None:
    import av
    is_cover = bool(s.disposition & av.stream.Disposition.attached_pic)
    if s.type != "attachment" and not is_cover:
        return None
    tags = _tags(s)
    mime_type = tags.get("mimetype") or getattr(s, "mimetype", None) or None
    file_name = tags.get("filename") or None
    return ProbedAttachment(
        index=s.index,
        codec=_attachment_codec(mime_type, file_name) if s.type == "attachment" else _codec_name(s),
        codec_tag=_codec_tag(s) if s.codec_context is not None else None,
        comment=tags.get("comment") or None,
        file_name=file_name,
        mime_type=mime_type,
    )


def _attachment_codec(mime_type: str | None, file_name: str | None) -> str | None:
    """FFmpeg's codec name for an attached file (fonts mostly), from its MIME type or name."""
    mime = (mime_type or "").lower()
    if "truetype" in mime or mime in ("font/ttf", "font/sfnt"):
        return "ttf"
    if "opentype" in mime or mime == "font/otf":
        return "otf"
    extension = os.path.splitext(file_name or "")[1].lower().lstrip(".")
    return extension or None


def _with_handler_title(common: dict[str, Any], tags: dict[str, str], default: str) -> dict[str, Any]:
    """MP4 tracks without a title: use the handler name unless it is the muxer's default."""
    if common["title"]:
        return common
    handler = tags.get("handler_name")
    if handler and handler.lower() != default.lower():
        return {**common, "title": handler}
    return common


def _with_estimated_audio_bitrate(stream: ProbedStream) -> ProbedStream:
    """Audio in a video file without a known bitrate gets a typical figure for its codec."""
    if stream.type != AUDIO or stream.bit_rate or not stream.channels:
        return stream
    codec, channels = (stream.codec or "").lower(), stream.channels
    table = {"aac": (192000, 320000), "mp3": (192000, 320000), "ac3": (192000, 640000),
             "eac3": (192000, 640000), "flac": (960000, 2880000), "alac": (960000, 2880000)}
    if codec not in table:
        return stream
    stereo, surround = table[codec]
    estimate = stereo if channels <= 2 else surround if channels >= 5 else None
    return replace(stream, bit_rate=estimate) if estimate else stream


def _stream_bitrate(s: Any, tags: dict[str, str], fallback: int | None) -> int | None:
    cc = s.codec_context
    if cc is not None and cc.bit_rate and cc.bit_rate > 0:
        return int(cc.bit_rate)
    bps = tags.get("bps-eng") or tags.get("bps")
    if bps and bps.strip().isdigit() and int(bps) > 0:
        return int(bps)
    seconds = _tag_seconds(tags.get("duration-eng") or tags.get("duration"))
    nbytes = tags.get("number_of_bytes-eng") or tags.get("number_of_bytes")
    if seconds and nbytes and nbytes.strip().isdigit():
        estimate = int(int(nbytes) * 8 / seconds)
        if estimate > 0:
            return estimate
    return fallback or None


def _tag_seconds(text: str | None) -> float | None:
    match = _TAG_DURATION.match(text.strip()) if text else None
    if not match:
        return None
    hours, minutes, seconds = match.groups()
    total = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    return total or None


def _channel_layout(name: str) -> str | None:
    if not name or re.fullmatch(r"\d+ channels?", name):
        return None
    return name.split("(", 1)[0] or None


def _audio_bit_depth(codec: str | None, extradata: bytes | None) -> int | None:
    codec = codec or ""
    pcm = _PCM_BITS.match(codec)
    if pcm:
        return int(pcm.group(1))
    if codec == "flac" and extradata and len(extradata) >= 18:
        # STREAMINFO: 5 bits of (bits per sample - 1) straddle bytes 12 and 13.
        return (((extradata[12] & 0x01) << 4) | (extradata[13] >> 4)) + 1
    if codec == "alac" and extradata and len(extradata) >= 36:
        return extradata[17] or None
    return None


def _video_bit_depth(cc: Any) -> int | None:
    fmt = cc.format
    if fmt is None or not fmt.components:
        return None
    return int(fmt.components[0].bits) or None


def _is_avc(codec: str | None, extradata: bytes | None) -> bool | None:
    if codec != "h264":
        return None
    return bool(extradata) and extradata[0] == 1


def _nal_length_size(codec: str | None, extradata: bytes | None) -> str | None:
    if codec == "h264" and extradata and len(extradata) > 4 and extradata[0] == 1:
        return str((extradata[4] & 0x03) + 1)
    return None


def _rate(value: Fraction | None) -> float | None:
    if not value or value.denominator == 0:
        return None
    return float(value)


def _fraction_text(value: Fraction | None) -> str | None:
    return f"{value.numerator}/{value.denominator}" if value else None


def _aspect_ratio(dar: Fraction | None, width: int | None, height: int | None) -> str | None:
    if dar and dar > 0:
        ratio = float(dar)
    elif width and height:
        ratio = width / height
    else:
        return None
    for target, tolerance, label in _ASPECT_RATIOS:
        if abs(ratio - target) <= tolerance:
            return label
    return f"{dar.numerator}:{dar.denominator}" if dar else None


def _jellyfin_container(format_names: tuple[str, ...], streams: list[ProbedStream]) -> str | None:
    renamed = {"mpegvideo": "mpeg", "mpegts": "ts", "matroska": "mkv"}
    webm_ok = all(
        (s.codec or "").lower() in _WEBM_VIDEO_CODECS if s.type == VIDEO
        else (s.codec or "").lower() in _WEBM_AUDIO_CODECS if s.type == AUDIO
        else True
        for s in streams
    )
    names = [renamed.get(n.lower(), n) for n in format_names if n.lower() != "webm" or webm_ok]
    return ",".join(names) or None


def _run_time_ticks(container: Any, av_streams: list[Any], is_audio: bool) -> int | None:
    import av
    seconds: float | None = None
    if is_audio:
        first_audio = next((s for s in av_streams if s.type == "audio"), None)
        if first_audio is not None and first_audio.duration and first_audio.time_base:
            seconds = float(first_audio.duration * first_audio.time_base)
    if seconds is None and container.duration is not None and container.duration > 0:
        seconds = container.duration / av.time_base
    if seconds is None:
        return None
    return round(seconds * TICKS_PER_SECOND)


def _chapters(container: Any) -> list[ProbedChapter]:
    chapters = []
    for chapter in container.chapters():
        start = Fraction(chapter["start"]) * Fraction(chapter["time_base"])
        milliseconds = round(start * 1000)
        title = (chapter.get("metadata") or {}).get("title")
        chapters.append(ProbedChapter(start_position_ticks=milliseconds * 10_000, name=title))
    return chapters


def _merged_tags(container: Any, av_streams: list[Any], is_audio: bool) -> dict[str, str]:
    wanted = "audio" if is_audio else "video"
    first = next((s for s in av_streams if s.type == wanted), None)
    tags = _tags(first) if first is not None else {}
    tags.update({str(k).lower(): str(v) for k, v in (container.metadata or {}).items()})
    return tags
