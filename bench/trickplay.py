"""Trickplay generation speed: seconds of work per minute of 1080p video, through the real task.

    python bench/trickplay.py [--seconds 60]

Makes a 1080p x264 clip (testsrc2), scans it into a fresh server, runs RefreshTrickplayImages
with Jellyfin's defaults (one thumbnail every 10 s, width 320, 10x10 tiles) and prints the time.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import complete_wizard, start_server, stop_server  # noqa: E402
from tests.library_helpers import add_library_and_scan  # noqa: E402
from tests.mediagen import make_video  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="reelroom-bench-trickplay-"))
    try:
        make_video(root / "Movies" / "Clip (2024)" / "Clip (2024).mkv", seconds=args.seconds, width=1920,
                   height=1080, fps=24)
        live = start_server(root / "data")
        try:
            complete_wizard(live)
            add_library_and_scan(live, "Movies", "movies", [root / "Movies"])
            with live.admin() as c:
                task = next(t for t in c.get("/ScheduledTasks").json() if t["Key"] == "RefreshTrickplayImages")
                t0 = time.perf_counter()
                c.post(f"/ScheduledTasks/Running/{task['Id']}")
                while True:
                    time.sleep(0.1)
                    info = c.get(f"/ScheduledTasks/{task['Id']}").json()
                    if info["State"] == "Idle" and info.get("LastExecutionResult"):
                        break
                elapsed = time.perf_counter() - t0
            print(f"trickplay for {args.seconds} s of 1080p video: {elapsed:.2f} s "
                  f"({elapsed * 60 / args.seconds:.2f} s per minute of video)")
        finally:
            stop_server(live)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
