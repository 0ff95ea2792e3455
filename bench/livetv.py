"""Live TV channel start: time to the first video bytes and to the first HLS segment after a
channel is opened, through a real (in-process) server, on a paced real-time source (ffmpeg -re,
H.264 + AAC, one keyframe a second, relayed over HTTP on 127.0.0.1: tests/livetv_source.py).

- before: the relay Reelroom used until now (``ffmpeg -i <url> -map 0 -c copy -f mpegts pipe:1``
  with ffmpeg's default input probing), timed from spawn to its first output bytes; it had no
  live HLS at all.
- after, cold: POST /LiveStreams/Open (the tuner stream starts, bounded probe) -> GET
  /LiveTv/LiveStreamFiles/{LiveStreamId}/stream.ts first bytes; and Open -> live.m3u8 -> first
  segment bytes. The stream is closed and the source idle between runs.
- after, shared: a second viewer of a channel already playing (Open -> first bytes / segment).

    python bench/livetv.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urljoin

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import complete_wizard, start_server, stop_server  # noqa: E402
from tests.livetv_source import LiveSource  # noqa: E402

PROFILE = {"TranscodingProfiles": [{"Container": "ts", "Type": "Video", "Protocol": "hls", "VideoCodec": "h264",
                                    "AudioCodec": "aac"}]}


def old_relay_first_bytes(url: str) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-i", url, "-map", "0",
                             "-c", "copy", "-f", "mpegts", "pipe:1"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        proc.stdout.read(1)
        return time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()


def source_first_bytes(url: str) -> float:
    """The source alone (ffmpeg -re starting its encoder): the floor of any channel start."""
    start = time.perf_counter()
    with httpx.stream("GET", url, timeout=30) as reply:
        next(reply.iter_raw())
    return time.perf_counter() - start


def open_stream(c: httpx.Client, channel_id: str) -> dict:
    r = c.post("/LiveStreams/Open", json={"OpenToken": channel_id, "DeviceProfile": PROFILE})
    r.raise_for_status()
    return r.json()["MediaSource"]


def first_bytes(c: httpx.Client, channel_id: str) -> tuple[float, float, str]:
    start = time.perf_counter()
    source = open_stream(c, channel_id)
    opened = time.perf_counter() - start
    with c.stream("GET", f"/LiveTv/LiveStreamFiles/{source['LiveStreamId']}/stream.ts") as reply:
        reply.raise_for_status()
        next(reply.iter_raw())
    return time.perf_counter() - start, opened, source["LiveStreamId"]


def first_segment(c: httpx.Client, base: str, channel_id: str) -> tuple[float, str]:
    start = time.perf_counter()
    source = open_stream(c, channel_id)
    url = urljoin(base, source["TranscodingUrl"])
    playlist = c.get(url)
    playlist.raise_for_status()
    uri = next(line for line in playlist.text.splitlines() if line and not line.startswith("#"))
    segment = c.get(urljoin(url, uri))
    segment.raise_for_status()
    assert segment.content[:1] == b"\x47"
    return time.perf_counter() - start, source["LiveStreamId"]


def close(c: httpx.Client, server, channel_id: str, *live_ids: str) -> None:
    for live_id in live_ids:
        c.post("/LiveStreams/Close", params={"liveStreamId": live_id})
    deadline = time.monotonic() + 10
    while server.ctx.live_streams.for_channel(channel_id) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)


def summary(name: str, values: list[float]) -> None:
    print(f"{name:<44} median {statistics.median(values):6.2f} s   best {min(values):6.2f} s   "
          f"runs {' '.join(f'{v:.2f}' for v in values)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    source = LiveSource()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        m3u = root / "channels.m3u"
        m3u.write_text(f"#EXTM3U\n#EXTINF:-1 tvg-chno=\"1\",Bench One\n{source.url}/bench.ts\n", encoding="utf-8")
        server = start_server(root / "data")
        try:
            complete_wizard(server)
            with server.admin() as c:
                c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(root)]}).raise_for_status()
                c.post("/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(m3u)}).raise_for_status()
                channel = c.get("/LiveTv/Channels").json()["Items"][0]["Id"]
                before, cold_bytes, cold_open, cold_segment, shared_bytes, shared_segment = [], [], [], [], [], []
                alone = []
                for _ in range(args.runs):
                    alone.append(source_first_bytes(f"{source.url}/bench.ts"))
                    time.sleep(0.3)
                    before.append(old_relay_first_bytes(f"{source.url}/bench.ts"))
                    time.sleep(0.3)
                    total, opened, live_id = first_bytes(c, channel)
                    cold_bytes.append(total)
                    cold_open.append(opened)
                    t, _, second = first_bytes(c, channel)
                    shared_bytes.append(t)
                    seg, third = first_segment(c, server.url, channel)  # the HLS encoder starts on a warm stream
                    shared_segment.append(seg)
                    close(c, server, channel, live_id, second, third)
                    seg, live_id = first_segment(c, server.url, channel)
                    cold_segment.append(seg)
                    close(c, server, channel, live_id)
                for live_id in list(server.ctx.live_streams.by_live_id):
                    c.post("/LiveStreams/Close", params={"liveStreamId": live_id})
            print(f"Live TV channel start, {args.runs} runs, paced real-time H.264/AAC TS source (1 s GOP)")
            summary("the source alone, first bytes", alone)
            summary("before: old ffmpeg relay, first bytes", before)
            summary("after, cold: Open alone (probe included)", cold_open)
            summary("after, cold: Open -> first bytes", cold_bytes)
            summary("after, cold: Open -> first HLS segment", cold_segment)
            summary("after, shared: Open -> first bytes", shared_bytes)
            summary("after, shared: Open -> first HLS segment (new encoder)", shared_segment)
        finally:
            stop_server(server)
            source.close()


if __name__ == "__main__":
    main()
