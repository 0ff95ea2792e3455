"""Image serving through a real `reelroom-server` process: a movie with a 1080x1620 JPEG poster
(found by the scanner as poster.jpg), fetched at maxWidth=400.

Prints p50/p99 latency for
- cold: every request needs a resize (each uses another quality, so another cache key),
- cached: the same URL again and again (read from <data>/cache/images),
- 304: the same URL with If-None-Match,
and the cached throughput with 8 concurrent clients.

    python bench/images.py [--cold 40] [--cached 500]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from PIL import Image, ImageDraw, ImageFilter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.library.catalog.ids import item_id_for_path  # noqa: E402

AUTH = 'MediaBrowser Client="bench", Device="bench", DeviceId="bench-images", Version="1.0"'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_poster(path: Path) -> None:
    """A photo-like 1080x1620 JPEG (gradients, shapes and noise, so it compresses like art)."""
    img = Image.linear_gradient("L").resize((1080, 1620)).convert("RGB")
    draw = ImageDraw.Draw(img)
    for i in range(40):
        x, y = (i * 97) % 1000, (i * 151) % 1550
        draw.ellipse((x, y, x + 80 + i * 3, y + 60 + i * 2), fill=((i * 37) % 255, (i * 91) % 255, (i * 53) % 255))
    noise = Image.effect_noise((1080, 1620), 40).convert("RGB")
    img = Image.blend(img, noise, 0.25).filter(ImageFilter.SMOOTH)
    img.save(path, "JPEG", quality=92)


def make_video(path: Path) -> None:
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=size=160x120:duration=1:rate=10", "-c:v", "mpeg4", str(path)], check=True)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def report(name: str, samples: list[float]) -> None:
    ms = [s * 1000 for s in samples]
    print(f"{name:<8} n={len(ms):<4} p50={statistics.median(ms):7.2f} ms  p99={percentile(ms, 99):7.2f} ms  "
          f"mean={statistics.fmean(ms):7.2f} ms")


def wait_ok(client: httpx.Client, url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if client.get(url).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer 200 within {timeout} s")


def setup(base: str, media: Path) -> str:
    with httpx.Client(base_url=base, headers={"Authorization": AUTH}, timeout=30) as c:
        c.post("/Startup/Configuration", json={"UICulture": "en-US", "MetadataCountryCode": "US"})
        c.get("/Startup/User")
        c.post("/Startup/User", json={"Name": "bench", "Password": "bench"})
        c.post("/Startup/Complete")
        token = c.post("/Users/AuthenticateByName", json={"Username": "bench", "Pw": "bench"}).json()["AccessToken"]
    with httpx.Client(base_url=base, headers={"Authorization": f'{AUTH}, Token="{token}"'}, timeout=30) as c:
        r = c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(media)]})
        r.raise_for_status()
        r = c.post("/Library/VirtualFolders", params={"name": "Movies", "collectionType": "movies",
                                                      "refreshLibrary": "true", "paths": [str(media)]},
                   json={"LibraryOptions": {}})
        r.raise_for_status()
    return token


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cold", type=int, default=40)
    parser.add_argument("--cached", type=int, default=500)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reelroom-bench-images-"))
    media = work / "media"
    movie_dir = media / "Bench Movie (2020)"
    movie_dir.mkdir(parents=True)
    movie = movie_dir / "Bench Movie (2020).mp4"
    make_video(movie)
    make_poster(movie_dir / "poster.jpg")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "app.server_main", "--data-dir", str(work / "data"), "--port",
                             str(port), "--host", "127.0.0.1", "--no-lan"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=30) as c:
            wait_ok(c, "/System/Ping")
            setup(base, media)
            url = f"/Items/{item_id_for_path(str(movie))}/Images/Primary"
            wait_ok(c, url)  # the scan found the poster
            cpus = os.cpu_count()
            print(f"1080x1620 JPEG poster -> maxWidth=400 JPEG, server process, {cpus} CPUs")

            cold = []
            for i in range(args.cold):
                t0 = time.perf_counter()
                r = c.get(url, params={"maxWidth": 400, "quality": 99 - i % 60})
                cold.append(time.perf_counter() - t0)
                assert r.status_code == 200 and r.content[:2] == b"\xff\xd8"
            report("cold", cold)

            params = {"maxWidth": 400, "quality": 90}
            first = c.get(url, params=params)
            etag = first.headers["etag"]
            cached = []
            for _ in range(args.cached):
                t0 = time.perf_counter()
                r = c.get(url, params=params)
                cached.append(time.perf_counter() - t0)
                assert r.status_code == 200
            report("cached", cached)

            revalidated = []
            for _ in range(args.cached):
                t0 = time.perf_counter()
                r = c.get(url, params=params, headers={"If-None-Match": etag})
                revalidated.append(time.perf_counter() - t0)
                assert r.status_code == 304
            report("304", revalidated)
            print(f"reply size at maxWidth=400: {len(first.content) / 1024:.1f} KiB "
                  f"(source {os.path.getsize(movie_dir / 'poster.jpg') / 1024:.1f} KiB)")

        def worker(n: int) -> int:
            with httpx.Client(base_url=base, timeout=30) as client:
                for _ in range(n):
                    client.get(url, params=params).raise_for_status()
            return n

        total = 8 * 100
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            done = sum(pool.map(worker, [100] * 8))
        elapsed = time.perf_counter() - t0
        print(f"cached, 8 concurrent clients: {done / elapsed:.0f} requests/s ({total} requests)")

        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            def cold_one(q: int) -> None:
                with httpx.Client(base_url=base, timeout=60) as client:
                    client.get(url, params={"maxWidth": 400, "quality": q}).raise_for_status()
            list(pool.map(cold_one, range(20, 60)))
        elapsed = time.perf_counter() - t0
        print(f"cold, 8 concurrent clients: {40 / elapsed:.1f} resizes/s (40 distinct renderings)")
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
