"""HLS playlists as Jellyfin clients expect them.

The media playlist lists every segment of the runtime up front (a VOD playlist), so a
player can seek anywhere; the segments themselves are produced on demand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from server.playback.encoding import TICKS_PER_SECOND

HLS_PLAYLIST_MEDIA_TYPE = "application/x-mpegURL"


class PlaylistTemplateError(ValueError):
    """A segment URL template names a placeholder that does not exist."""


@dataclass(frozen=True)
class HlsVariant:
    """One ``#EXT-X-STREAM-INF`` entry of a master playlist (bandwidths in bits/s)."""

    url: str
    bandwidth: int
    average_bandwidth: int | None = None
    codecs: str | None = None
    resolution: tuple[int, int] | None = None
    frame_rate: float | None = None
    video_range: str | None = None


def segment_lengths_ticks(runtime_ticks: int, segment_seconds: int) -> list[int]:
    """Equal segments over the runtime; the last one holds the remainder."""
    if runtime_ticks <= 0 or segment_seconds <= 0:
        raise ValueError("runtime and segment length must be positive")
    segment_ticks = segment_seconds * TICKS_PER_SECOND
    full, remainder = divmod(runtime_ticks, segment_ticks)
    lengths = [segment_ticks] * full
    if remainder:
        lengths.append(remainder)
    return lengths


def build_media_playlist(
    *,
    runtime_ticks: int,
    segment_seconds: int,
    segment_url_template: str,
    init_segment_url: str | None = None,
) -> str:
    """The main (media) playlist listing all segments of the runtime.

    ``segment_url_template`` is formatted with ``{index}``, ``{start_ticks}`` and
    ``{length_ticks}``, e.g. ``"hls1/main/{index}.ts?{query}&runtimeTicks={start_ticks}"``
    after the caller has filled in its own parts. ``init_segment_url`` (fMP4 only) adds
    ``#EXT-X-MAP``.
    """
    lengths = segment_lengths_ticks(runtime_ticks, segment_seconds)
    target = max(segment_seconds, math.ceil(max(lengths) / TICKS_PER_SECOND))
    lines = [
        "#EXTM3U",
        "#EXT-X-PLAYLIST-TYPE:VOD",
        f"#EXT-X-VERSION:{7 if init_segment_url else 3}",
        f"#EXT-X-TARGETDURATION:{target}",
        "#EXT-X-MEDIA-SEQUENCE:0",
    ]
    if init_segment_url:
        lines.append(f'#EXT-X-MAP:URI="{init_segment_url}"')
    start = 0
    for index, length in enumerate(lengths):
        lines.append(f"#EXTINF:{length / TICKS_PER_SECOND:.6f},")
        lines.append(_format_url(segment_url_template, index=index, start_ticks=start, length_ticks=length))
        start += length
    lines.append("#EXT-X-ENDLIST")
    return "\n".join(lines) + "\n"


def build_master_playlist(variants: Sequence[HlsVariant]) -> str:
    """A master playlist pointing at one or more media playlists."""
    if not variants:
        raise ValueError("a master playlist needs at least one variant")
    lines = ["#EXTM3U"]
    for variant in variants:
        attributes = [f"BANDWIDTH={variant.bandwidth}"]
        if variant.average_bandwidth:
            attributes.append(f"AVERAGE-BANDWIDTH={variant.average_bandwidth}")
        if variant.video_range:
            attributes.append(f"VIDEO-RANGE={variant.video_range}")
        if variant.codecs:
            attributes.append(f'CODECS="{variant.codecs}"')
        if variant.resolution:
            attributes.append(f"RESOLUTION={variant.resolution[0]}x{variant.resolution[1]}")
        if variant.frame_rate:
            attributes.append(f"FRAME-RATE={variant.frame_rate:.3f}")
        lines.append("#EXT-X-STREAM-INF:" + ",".join(attributes))
        lines.append(variant.url)
    return "\n".join(lines) + "\n"


def _format_url(template: str, **values: int) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise PlaylistTemplateError(f"bad segment URL template {template!r}: {exc}") from exc
