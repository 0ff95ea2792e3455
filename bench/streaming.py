"""Direct streaming through Reelroom against nginx serving the same file, in the same run.

    python bench/streaming.py [--size-mib 1024] [--clients 32] [--seconds 10] [--baseline DIR]

1. Makes a ~1 GiB Matroska file (raw video, so it is quick to write), starts `reelroom-server`
   with a fresh data folder, completes the wizard, scans the file, and starts nginx (Debian's
   nginx-light) on another port with the file's folder as its root.
2. Throughput: curl downloads the whole file from each (3 runs, best and median MB/s), and the
   ratio Reelroom / nginx.
3. Concurrency: N players each read at a video bitrate (20 Mbit/s) for a few seconds from
   Reelroom; a stall is a gap of more than 1 s between two chunks. Prints the slowest player's
   rate and the stalls.
"""

from __future__ import annotations

import argparse
import asyncio
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ffmpeg() -> str:
    found = shutil.which("ffmpeg")
    if found:
        return found
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def make_file(folder: Path, size_mib: int) -> Path:
    path = folder / "Big Movie (2020)" / "Big Movie (2020).mkv"
    path.parent.mkdir(parents=True)
    frame = 1920 * 1080 * 3 // 2
    seconds = size_mib * 1024 * 1024 / (frame * 25)
    subprocess.run([ffmpeg(), "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25",
                    "-t", f"{seconds:.2f}", "-pix_fmt", "yuv420p", "-c:v", "rawvideo", "-y", str(path)], check=True)
    return path


def start_reelroom(data: Path, root: Path = ROOT) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.server_main", "--data-dir", str(data), "--port", str(port),
                             "--host", "127.0.0.1", "--no-lan"], cwd=root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(root)})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/System/Ping", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("reelroom-server did not start")


AUTH = 'MediaBrowser Client="bench", Device="bench", DeviceId="bench", Version="1"'


def prepare(url: str, library: Path) -> str:
    """Wizard, library, scan; returns the item's direct stream URL."""
    with httpx.Client(base_url=url, headers={"Authorization": AUTH}, timeout=60) as c:
        c.post("/Startup/Configuration", json={"UICulture": "en-US"})
        c.get("/Startup/User")
        c.post("/Startup/User", json={"Name": "bench", "Password": "bench"})
        c.post("/Startup/Complete")
        token = c.post("/Users/AuthenticateByName", json={"Username": "bench", "Pw": "bench"}).json()["AccessToken"]
        c.headers["Authorization"] = AUTH + f', Token="{token}"'
        c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(library)]})
        c.post("/Library/VirtualFolders", params={"name": "Movies", "collectionType": "movies",
                                                  "paths": str(library), "refreshLibrary": "true"})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}).json()["Items"]
            if found:
                return f"{url}/Videos/{found[0]['Id']}/stream?static=true"
            time.sleep(0.5)
    raise RuntimeError("the file was not scanned")


def start_nginx(root: Path, work: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    conf = work / "nginx.conf"
    conf.write_text(f"""
worker_processes 1;
error_log {work}/error.log;
pid {work}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    client_body_temp_path {work};
    proxy_temp_path {work};
    fastcgi_temp_path {work};
    uwsgi_temp_path {work};
    scgi_temp_path {work};
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
""")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(work), "-g", "daemon off;"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start")


def curl_mb_per_s(url: str) -> float:
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{speed_download}", url], capture_output=True,
                         text=True, check=True)
    return float(out.stdout) / 1e6


async def player(url: str, rate: float, seconds: float) -> tuple[float, float]:
    """Read at ``rate`` bytes/s; returns (achieved bytes/s, longest gap between chunks)."""
    got, worst = 0, 0.0
    async with httpx.AsyncClient(timeout=30) as client, client.stream("GET", url) as reply:
        start = last = time.monotonic()
        async for chunk in reply.aiter_bytes(256 * 1024):
            now = time.monotonic()
            worst = max(worst, now - last)
            got += len(chunk)
            ahead = got / rate - (now - start)
            if ahead > 0:
                await asyncio.sleep(ahead)
            last = time.monotonic()
            if last - start >= seconds:
                break
    return got / (time.monotonic() - start), worst


async def concurrent(url: str, clients: int, seconds: float, rate: float) -> list[tuple[float, float]]:
    return await asyncio.gather(*(player(url, rate, seconds) for _ in range(clients)))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout, served side by side (curl runs interleaved with this one and nginx)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reelroom-bench-stream-"))
    procs: list[subprocess.Popen] = []
    try:
        library = work / "Movies"
        t0 = time.perf_counter()
        media = make_file(library, args.size_mib)
        size = media.stat().st_size
        print(f"file: {size / 2**20:.0f} MiB raw-video mkv, made in {time.perf_counter() - t0:.1f} s; "
              f"load average {os.getloadavg()[0]:.1f}")
        servers: dict[str, tuple[subprocess.Popen, str]] = {}
        for label, root in ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("reelroom", ROOT)]:
            server, url = start_reelroom(work / f"data-{label}", root)
            procs.append(server)
            servers[label] = (server, prepare(url, library))
        nginx, nport = start_nginx(library, work)
        procs.append(nginx)
        relative = media.relative_to(library).as_posix().replace(" ", "%20").replace("(", "%28").replace(")", "%29")
        nginx_url = f"http://127.0.0.1:{nport}/{relative}"
        curl_mb_per_s(nginx_url)  # warm the page cache
        speeds: dict[str, list[float]] = {label: [] for label in [*servers, "nginx"]}
        cpu: dict[str, float] = dict.fromkeys(servers, 0.0)
        for _ in range(args.runs):  # interleaved: the machine's load changes alike for all
            for label, (server, stream) in servers.items():
                c0 = cpu_seconds(server.pid)
                speeds[label].append(curl_mb_per_s(stream))
                cpu[label] += cpu_seconds(server.pid) - c0
            speeds["nginx"].append(curl_mb_per_s(nginx_url))
        print(f"direct stream, whole file with curl ({args.runs} runs, interleaved):")
        for label, values in speeds.items():
            extra = (f"  server CPU {cpu[label] * 1000 / (size * args.runs / 1e6):.2f} ms per MB"
                     if label in cpu else "")
            print(f"  {label:<9} best {max(values):8.0f} MB/s  median {statistics.median(values):8.0f} MB/s{extra}")
        for label in servers:
            print(f"  ratio {label} / nginx (median) "
                  f"{statistics.median(speeds[label]) / statistics.median(speeds['nginx']):.2f} (target >= 0.70)")

        rate = 20e6 / 8
        for label, (_server, stream) in servers.items():
            results = asyncio.run(concurrent(stream, args.clients, args.seconds, rate))
            slowest = min(r for r, _ in results)
            worst_gap = max(g for _, g in results)
            stalls = sum(1 for _, g in results if g > 1.0)
            print(f"{label}: {args.clients} concurrent players at 20 Mbit/s for {args.seconds:.0f} s: "
                  f"slowest player {slowest * 8 / 1e6:.1f} Mbit/s, longest gap {worst_gap * 1000:.0f} ms, "
                  f"players with a stall > 1 s: {stalls}")
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if os.name != "posix":
        sys.exit("bench/streaming.py runs on Linux (nginx, curl)")
    main()
