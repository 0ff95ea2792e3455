"""Time to the first HLS segment through a real (in-process) server, against ffmpeg alone.

Generates a 30 s 1080p H.264 + AAC MKV (testsrc2), scans it into a fresh server, then for
- a remux (VideoCodec=h264, AudioCodec=aac: ``-c:v copy``),
- a 1080p x264 transcode (allowVideoStreamCopy=false, the configured preset),
measures master.m3u8 -> main.m3u8 -> segment 0 bytes received (a new play session each run),
and ffmpeg alone writing its first segment with the job's own argv (into a scratch folder, timed
from spawn until seg0 appears), alternating the two. Prints medians, bests and their ratios; on a
busy machine the best of several runs is the steadier comparison.

    python bench/hls.py [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reelroom-hls-bench-"))
    try:
        print("generating a 30 s 1080p source ...", flush=True)
        make_source(work / "Movies" / "Bench Movie (2020)" / "Bench Movie (2020).mkv")
        live = start_server(work / "data")
        try:
            complete_wizard(live)
            add_library_and_scan(live, "Movies", "movies", [work / "Movies"])
            with live.admin() as c:
                items = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}).json()["Items"]
            item_id = items[0]["Id"]
            # Warm-up (ffmpeg discovery, first import of the HLS code paths); not counted.
            _, warm = first_segment_via_server(live.url, item_id, live.admin_token, {})
            live.ctx.transcodes.on_playback_stopped(warm)
            cases = {
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
