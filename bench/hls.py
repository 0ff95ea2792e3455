"""The HLS segment path through a real (in-process) server.

Generates a 30 s 1080p H.264 + AAC MKV (testsrc2) and scans it into a fresh server. Then:

1. **Per-segment overhead** (``--segment-requests``): a remux session whose segments are all on
   disk already; segment N is fetched over and over (keep-alive, as a player does), and so are
   the same bytes as a static file under ``/web/`` (the server's static site, no auth), and the
   same number of bytes from the item's file through the authorized static stream route
   (``/Videos/{id}/stream?static=true`` with a Range; the job-free baseline: same guard, item
   lookup and file read, no HLS). "HLS segment, planned" is the same segment right after a
   configuration save, which makes a server that looks up the running job plan the request
   again (the path of a miss that joins the running job). Prints medians and the overhead over
   each baseline.
2. **Thread hops per segment request**: every hand-off from the server's event-loop thread to a
   thread pool while a request is served (``ThreadPoolExecutor.submit``, which
   ``asyncio.to_thread``, ``run_in_executor`` and the database's reader/writer pools all go
   through, and anyio's worker threads), counted per request; also database reads
   (``Database.read``) and configuration reads (``ConfigurationStore.get``, on any thread: the
   guard reads the server configuration too). The baselines are counted the same way.
3. **First segment** (``--runs``, 0 to skip): for a remux (VideoCodec=h264, AudioCodec=aac:
   ``-c:v copy``) and a 1080p x264 transcode (allowVideoStreamCopy=false), master.m3u8 ->
   main.m3u8 -> segment 0 bytes received (a new play session each run), against ffmpeg alone
   writing its first segment with the job's own argv (into a scratch folder, timed from spawn
   until seg0 appears), alternating the two. Medians, bests and their ratios; on a busy machine
   the best of several runs is the steadier comparison.

    python bench/hls.py [--runs 3] [--segment-requests 200]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode, urljoin

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import complete_wizard, start_server, stop_server  # noqa: E402
from tests.library_helpers import add_library_and_scan  # noqa: E402


def make_source(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
         "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25:duration=30",
         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=30",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "50", "-keyint_min", "50",
         "-sc_threshold", "0", "-c:a", "aac", "-b:a", "128k", "-t", "30", str(path)],
        check=True, capture_output=True,
    )
    return path


def first_segment_via_server(base: str, item_id: str, token: str, extra: dict[str, str]) -> tuple[float, str]:
    session = uuid.uuid4().hex
    query = {"MediaSourceId": item_id, "PlaySessionId": session, "DeviceId": "bench-hls", "api_key": token,
             "VideoCodec": "h264", "AudioCodec": "aac", "SegmentContainer": "ts", "SegmentLength": "6", **extra}
    with httpx.Client(timeout=120) as c:
        start = time.perf_counter()
        master_url = f"{base}/videos/{item_id}/master.m3u8?{urlencode(query)}"
        master = c.get(master_url)
        master.raise_for_status()
        variant = next(line for line in master.text.splitlines() if line and not line.startswith("#"))
        main_url = urljoin(master_url, variant)
        main = c.get(main_url)
        main.raise_for_status()
        first = next(line for line in main.text.splitlines() if line and not line.startswith("#"))
        seg = c.get(urljoin(main_url, first))
        seg.raise_for_status()
        elapsed = time.perf_counter() - start
        assert len(seg.content) > 1000
    return elapsed, session


def first_segment_ffmpeg_alone(command: list[str], job_dir: Path) -> float:
    """Run the job's argv with its output paths moved into a scratch folder."""
    scratch = Path(tempfile.mkdtemp(prefix="hls-bench-"))
    argv = [a.replace(str(job_dir), str(scratch)) for a in command]
    target = scratch / "seg0.ts"
    start = time.perf_counter()
    # Its own session, like the server's jobs (with autogroup scheduling that changes its CPU share).
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=scratch, start_new_session=True)
    try:
        while not target.exists():
            if proc.poll() is not None and not target.exists():
                raise RuntimeError(f"ffmpeg exited {proc.returncode} without a segment")
            time.sleep(0.002)
        return time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(scratch, ignore_errors=True)


class HopCounter:
    """Counts hand-offs from one thread (the server's event loop) to worker threads and the
    database reads made on it, plus configuration reads made on any thread."""

    def __init__(self, thread: threading.Thread) -> None:
        self.thread = thread
        self.counts = {"hops": 0, "db_reads": 0, "config_reads": 0}
        self._undo: list = []

    def _on_loop(self) -> bool:
        return threading.current_thread() is self.thread

    def _wrap(self, owner, name: str, counter: str, any_thread: bool = False) -> None:
        original = owner.__dict__[name]
        func = original.__func__ if isinstance(original, classmethod) else original
        counts, on_loop = self.counts, self._on_loop

        def counted(*a, **kw):
            if any_thread or on_loop():
                counts[counter] += 1
            return func(*a, **kw)

        wrapped = classmethod(counted) if isinstance(original, classmethod) else counted
        setattr(owner, name, wrapped)
        self._undo.append((owner, name, original))

    def install(self) -> None:
        from anyio._backends._asyncio import AsyncIOBackend

        from server.db.database import Database
        from server.system.configuration import ConfigurationStore

        self._wrap(concurrent.futures.ThreadPoolExecutor, "submit", "hops")
        self._wrap(AsyncIOBackend, "run_sync_in_worker_thread", "hops")
        self._wrap(Database, "read", "db_reads")
        self._wrap(ConfigurationStore, "get", "config_reads", any_thread=True)  # also in worker threads

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)
        self._undo.clear()

    def snapshot(self) -> dict[str, int]:
        return dict(self.counts)


def timed_request(client: httpx.Client, counter: HopCounter, url: str, headers: dict | None,
                  expect: int | None) -> tuple[float, dict[str, int]]:
    """One request: its time and what it cost the event-loop thread."""
    before = counter.snapshot()
    start = time.perf_counter()
    reply = client.get(url, headers=headers)
    elapsed = time.perf_counter() - start
    reply.raise_for_status()
    if expect is not None:
        assert len(reply.content) == expect, (len(reply.content), expect)
    time.sleep(0.002)  # let the server finish the request's tail (response sent, task done)
    after = counter.snapshot()
    return elapsed, {k: after[k] - before[k] for k in after}


def _hops_text(per_request: dict[str, list[int]]) -> str:
    parts = []
    for key, label in (("hops", "thread hops"), ("db_reads", "db reads"), ("config_reads", "config reads")):
        values = per_request[key]
        parts.append(f"{label} {statistics.mean(values):.2f} (min {min(values)}, max {max(values)})")
    return ", ".join(parts)


def segment_path_bench(live, item_id: str, token: str, web_dir: Path, requests: int, kind: str) -> None:
    """Segment N already on disk: its time and thread hops, against the same bytes served as a
    static file and through the job-free static stream route. ``kind``: "videos" (a 1080p
    remux, big segments) or "audio" (the audio HLS routes, AAC copied: small segments, where
    the per-request work shows)."""
    session = uuid.uuid4().hex
    query = {"MediaSourceId": item_id, "PlaySessionId": session, "DeviceId": "bench-hls-seg", "api_key": token,
             "VideoCodec": "h264", "AudioCodec": "aac", "SegmentContainer": "ts", "SegmentLength": "6"}
    counter = HopCounter(live.thread)
    with httpx.Client(timeout=120) as c:
        master_url = f"{live.url}/{kind}/{item_id}/master.m3u8?{urlencode(query)}"
        master = c.get(master_url)
        master.raise_for_status()
        variant = next(line for line in master.text.splitlines() if line and not line.startswith("#"))
        main_url = urljoin(master_url, variant)
        main = c.get(main_url)
        main.raise_for_status()
        segments = [urljoin(main_url, line) for line in main.text.splitlines() if line and not line.startswith("#")]
        for url in segments[:-1]:  # on disk now (a remux of 30 s takes well under a second); the last
            c.get(url).raise_for_status()  # one is a sliver of 21 ms ffmpeg may not cut
        n = min(2, len(segments) - 1)
        seg_url = segments[n]
        data = c.get(seg_url).content
        job = next(j for j in live.ctx.transcodes.jobs if j.key.play_session_id == session)
        assert len(job.runs) == 1, "the job restarted ffmpeg"
        (web_dir / "segment.ts").write_bytes(data)
        static_url = f"{live.url}/web/segment.ts"
        stream_url = f"{live.url}/Videos/{item_id}/stream?static=true&api_key={token}"
        stream_headers = {"Range": f"bytes=0-{len(data) - 1}"}
        ping_url = f"{live.url}/System/Ping"
        print(f"{kind} segment {n} of {len(segments)}: {len(data)} bytes; {requests} requests each (keep-alive)",
              flush=True)
        # warm-up of each path, not counted
        for url, headers in ((seg_url, None), (static_url, None), (stream_url, stream_headers), (ping_url, None)):
            for _ in range(5):
                c.get(url, headers=headers).raise_for_status()
        config = live.ctx.config

        def settings_saved() -> None:  # a configuration save: the next segment request plans again
            config.save("transcoding", config.get("transcoding"))

        paths = (("HLS segment (on disk)", seg_url, None, len(data), None),
                 ("HLS segment, planned", seg_url, None, len(data), settings_saved),
                 ("static file /web/", static_url, None, len(data), None),
                 ("static stream (Range)", stream_url, stream_headers, len(data), None),
                 ("/System/Ping", ping_url, None, None, None))
        rows: dict[str, tuple[list[float], dict[str, list[int]]]] = {
            name: ([], {k: [] for k in counter.counts}) for name, *_ in paths}
        counter.install()
        try:
            for _ in range(requests):  # interleaved, so a busy moment of the machine hits every path alike
                for name, url, headers, expect, prepare in paths:
                    if prepare is not None:
                        prepare()
                    elapsed, hops = timed_request(c, counter, url, headers, expect)
                    rows[name][0].append(elapsed)
                    for k, v in hops.items():
                        rows[name][1][k].append(v)
        finally:
            counter.uninstall()
        live.ctx.transcodes.on_playback_stopped(session)
    medians = {name: statistics.median(t) for name, (t, _) in rows.items()}
    for name, (times, hops) in rows.items():
        ordered = sorted(times)
        p90 = ordered[int(len(ordered) * 0.9) - 1]
        print(f"  {name:24s} median {medians[name] * 1000:7.2f} ms, best {ordered[0] * 1000:6.2f} ms, "
              f"p90 {p90 * 1000:7.2f} ms; {_hops_text(hops)}",
              flush=True)
    seg = rows["HLS segment (on disk)"][0]

    def paired(name: str) -> str:  # the median of request-by-request differences: steadier than medians' difference
        diffs = [a - b for a, b in zip(seg, rows[name][0], strict=True)]
        return f"{statistics.median(diffs) * 1000:+.2f} ms"

    print(f"  per-segment overhead (median of paired differences): {paired('static file /web/')} over the static "
          f"file, {paired('static stream (Range)')} over the static stream route, {paired('/System/Ping')} over "
          f"/System/Ping", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3, help="first-segment runs per case (0: skip)")
    parser.add_argument("--segment-requests", type=int, default=200,
                        help="requests per path in the segment-overhead part (0: skip)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reelroom-hls-bench-"))
    try:
        print("generating a 30 s 1080p source ...", flush=True)
        make_source(work / "Movies" / "Bench Movie (2020)" / "Bench Movie (2020).mkv")
        web_dir = work / "web"
        web_dir.mkdir()
        (web_dir / "index.html").write_text("<!doctype html><title>bench</title>")
        live = start_server(work / "data", web_dir=web_dir)
        try:
            complete_wizard(live)
            add_library_and_scan(live, "Movies", "movies", [work / "Movies"])
            with live.admin() as c:
                items = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}).json()["Items"]
            item_id = items[0]["Id"]
            # Warm-up (ffmpeg discovery, first import of the HLS code paths); not counted.
            _, warm = first_segment_via_server(live.url, item_id, live.admin_token, {})
            live.ctx.transcodes.on_playback_stopped(warm)
            if args.segment_requests:
                for kind in ("audio", "videos"):
                    segment_path_bench(live, item_id, live.admin_token, web_dir, args.segment_requests, kind)
            cases = {} if not args.runs else {
                "remux (copy)": {},
                "1080p x264 transcode": {"allowVideoStreamCopy": "false", "VideoBitrate": "8000000"},
            }
            for name, extra in cases.items():
                server_times, alone_times = [], []
                for _ in range(args.runs):
                    elapsed, session = first_segment_via_server(live.url, item_id, live.admin_token, extra)
                    server_times.append(elapsed)
                    job = next(j for j in live.ctx.transcodes.jobs if j.key.play_session_id == session)
                    command, job_dir = list(job.runs[0].command), job.directory
                    assert len(job.runs) == 1, "the job restarted ffmpeg"
                    live.ctx.transcodes.on_playback_stopped(session)
                    alone_times.append(first_segment_ffmpeg_alone(command, job_dir))
                server_median, alone_median = statistics.median(server_times), statistics.median(alone_times)
                server_best, alone_best = min(server_times), min(alone_times)
                encoder = command[command.index("-c:v") + 1]
                print(f"{name:24s} (-c:v {encoder}): median server {server_median:.3f} s / ffmpeg alone "
                      f"{alone_median:.3f} s = {server_median / alone_median:.2f}x; best {server_best:.3f} s / "
                      f"{alone_best:.3f} s = {server_best / alone_best:.2f}x  "
                      f"(runs: server {', '.join(f'{t:.3f}' for t in server_times)}; "
                      f"alone {', '.join(f'{t:.3f}' for t in alone_times)})", flush=True)
        finally:
            stop_server(live)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
