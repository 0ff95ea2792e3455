"""Master and media playlists."""

from __future__ import annotations

import pytest

from server.playback.encoding import TICKS_PER_SECOND
from server.playback.hls_playlists import (
    HlsVariant,
    PlaylistTemplateError,
    build_master_playlist,
    build_media_playlist,
    segment_lengths_ticks,
)


def test_media_playlist_lists_every_segment_of_the_runtime() -> None:
    text = build_media_playlist(
        runtime_ticks=int(12.5 * TICKS_PER_SECOND),
        segment_seconds=6,
        segment_url_template="hls1/main/{index}.ts?api_key=k&runtimeTicks={start_ticks}"
        "&actualSegmentLengthTicks={length_ticks}",
    )
    lines = text.splitlines()
    assert lines[0] == "#EXTM3U"
    assert "#EXT-X-PLAYLIST-TYPE:VOD" in lines
    assert "#EXT-X-TARGETDURATION:6" in lines
    assert lines[-1] == "#EXT-X-ENDLIST"
    durations = [float(line.split(":")[1].rstrip(",")) for line in lines if line.startswith("#EXTINF")]
    assert durations == [6.0, 6.0, 0.5]
    urls = [line for line in lines if line.startswith("hls1/")]
    assert urls == [
        "hls1/main/0.ts?api_key=k&runtimeTicks=0&actualSegmentLengthTicks=60000000",
        "hls1/main/1.ts?api_key=k&runtimeTicks=60000000&actualSegmentLengthTicks=60000000",
        "hls1/main/2.ts?api_key=k&runtimeTicks=120000000&actualSegmentLengthTicks=5000000",
    ]
    assert "#EXT-X-MAP" not in text


def test_fmp4_playlist_names_the_init_segment() -> None:
    text = build_media_playlist(
        runtime_ticks=12 * TICKS_PER_SECOND, segment_seconds=6,
        segment_url_template="hls1/main/{index}.mp4", init_segment_url="hls1/main/-1.mp4",
    )
    assert '#EXT-X-MAP:URI="hls1/main/-1.mp4"' in text
    assert "#EXT-X-VERSION:7" in text
    assert text.count("#EXTINF") == 2


def test_bad_template_is_a_clear_error() -> None:
    with pytest.raises(PlaylistTemplateError):
        build_media_playlist(runtime_ticks=TICKS_PER_SECOND, segment_seconds=6, segment_url_template="{nope}.ts")


def test_segment_lengths() -> None:
    assert segment_lengths_ticks(12 * TICKS_PER_SECOND, 6) == [6 * TICKS_PER_SECOND] * 2
    with pytest.raises(ValueError):
        segment_lengths_ticks(0, 6)


def test_master_playlist() -> None:
    text = build_master_playlist([
        HlsVariant(url="main.m3u8?api_key=k", bandwidth=2_000_000, average_bandwidth=1_800_000,
                   codecs="avc1.640028,mp4a.40.2", resolution=(1280, 720), frame_rate=23.976, video_range="SDR"),
    ])
    assert text.splitlines() == [
        "#EXTM3U",
        '#EXT-X-STREAM-INF:BANDWIDTH=2000000,AVERAGE-BANDWIDTH=1800000,VIDEO-RANGE=SDR,'
        'CODECS="avc1.640028,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=23.976',
        "main.m3u8?api_key=k",
    ]
