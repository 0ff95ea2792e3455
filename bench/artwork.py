"""Offline artwork speed, through the real RefreshArtwork task on a real server.

    python bench/artwork.py [--videos 8] [--seconds 30] [--posters 24]

Makes ``--videos`` 1080p x264 clips without art (a keyframe every 2 s, as streaming encodes have;
every other one black for its first 30%, so the grabber has to skip dark candidates) and ``--posters`` movies with a poster (sources for the
collages), each with one of four genres; scans them into a fresh server, runs the task and prints:
- time per grabbed frame (ffmpeg seek + decode + black check, BlurHash, write) and candidates
  tried per frame;
- time per collage (library tile, genres, views) and per album cover copy;
- the second run's time, when nothing changed (every key equal: nothing is redone).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import LiveServer, complete_wizard, start_server, stop_server  # noqa: E402
from tests.library_helpers import add_library_and_scan  # noqa: E402
from tests.mediagen import make_image, make_video, write_nfo  # noqa: E402

GENRES = ("Drama", "Comedy", "Western", "Noir")


def run_task(live: LiveServer) -> float:
    with live.admin() as c:
        task = next(t for t in c.get("/ScheduledTasks").json() if t["Key"] == "RefreshArtwork")
        while task["State"] != "Idle":  # the run the scan asked for
            time.sleep(0.1)
            task = c.get(f"/ScheduledTasks/{task['Id']}").json()
        before = (task.get("LastExecutionResult") or {}).get("EndTimeUtc")
        t0 = time.perf_counter()
        c.post(f"/ScheduledTasks/Running/{task['Id']}")
        while True:
            time.sleep(0.05)
            info = c.get(f"/ScheduledTasks/{task['Id']}").json()
            last = info.get("LastExecutionResult") or {}
            if info["State"] == "Idle" and last.get("EndTimeUtc") != before:
                return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--videos", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--posters", type=int, default=24)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="reelroom-bench-artwork-"))
    try:
        movies = root / "Movies"
        for n in range(args.videos):
            folder = movies / f"Clip {n} (2024)"
            make_video(folder / f"Clip {n} (2024).mkv", seconds=args.seconds, width=1920, height=1080, acodec=None,
                       black_seconds=args.seconds * 0.3 if n % 2 else 0, keyint=48)
            write_nfo(folder / f"Clip {n} (2024).nfo", "movie", title=f"Clip {n}", genres=[GENRES[n % 4]])
        for n in range(args.posters):
            folder = movies / f"Poster {n} (2010)"
            make_video(folder / f"Poster {n} (2010).mkv", seconds=1, width=160, height=120, acodec=None)
            make_image(folder / "poster.jpg", 1000, 1500, color=("red", "green", "blue", "yellow")[n % 4])
            write_nfo(folder / f"Poster {n} (2010).nfo", "movie", title=f"Poster {n}", genres=[GENRES[n % 4]])
        live = start_server(root / "data")
        try:
            complete_wizard(live)
            artwork = live.ctx.artwork
            while artwork._running:  # the start-up run (an empty library: nothing to do)
                time.sleep(0.05)
            runs = artwork.runs
            add_library_and_scan(live, "Movies", "movies", [movies], timeout=600)
            # the scan asked for a run (after a 2 s debounce): that run does the work
            deadline = time.monotonic() + 1800
            while artwork.runs <= runs or artwork._running:
                if time.monotonic() > deadline:
                    raise SystemExit("the artwork task did not run after the scan")
                time.sleep(0.1)
            stats = live.ctx.artwork.last
            first = stats.seconds
            again = run_task(live)
            unchanged = live.ctx.artwork.last
            frames = max(1, stats.frames)
            collages = max(1, stats.collages)
            print(f"first run: {first:.2f} s for {stats.frames} frames and {stats.collages} collages")
            print(f"per frame (1080p, {args.seconds} s clips, half of them black at 10% and 25%): "
                  f"{stats.frame_seconds / frames * 1000:.0f} ms, {stats.frame_attempts / frames:.2f} candidates")
            print(f"per collage: {stats.collage_seconds / collages * 1000:.0f} ms")
            print(f"second run, nothing changed: {again:.2f} s, {unchanged.frames} frames, "
                  f"{unchanged.collages} collages redone, {unchanged.collages_unchanged} kept")
        finally:
            stop_server(live)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
