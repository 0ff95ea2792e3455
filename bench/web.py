"""The web client at /web/: cold first load (requests, bytes on the wire, with and without
compression) and per-asset latency, against a real `reelroom-server` hosting jellyfin-web's dist,
with nginx serving the same folder as the baseline where nginx is installed.

A "cold first load" here is what a browser fetches before any script runs: index.html and every
script, stylesheet, manifest and icon it names (not the iOS start-up images). The web app then
loads more chunks as it goes; the real-browser tests measure those.

    python bench/web.py [--dist ../shared/jellyfin-web/jellyfin-web-10.10.7-dist.tar.xz] [--requests 400]

Prints, for Reelroom (and nginx): the cold load as identity, as br/gzip on the first request
(compressing) and again (from the cache); asset p50/p99 (ms, one client, keep-alive) for
identity, br and a 304 revalidation.
"""

from __future__ import annotations

import argparse
import html.parser
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import free_port, start_server, stop_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.web.conftest import SHARED_DIST as SHARED  # noqa: E402  (REELROOM_WEB_DIST, else ../shared)

COMPRESSED = "gzip, deflate, br"




class _Refs(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"])
        elif tag == "link" and a.get("href"):
            rel = (a.get("rel") or "").lower()
            if rel in ("stylesheet", "manifest", "icon", "shortcut icon"):
                self.urls.append(a["href"])


def first_load_urls(index_html: str) -> list[str]:
    parser = _Refs()
    parser.feed(index_html)
    return ["/web/"] + ["/web/" + u for u in parser.urls if not urlsplit(u).scheme and not u.startswith("/")]


def cold_load(base: str, urls: list[str], accept: str) -> tuple[int, int, float]:
    """(requests, bytes on the wire, seconds) for fetching every URL once with a fresh client."""
    total = 0
    start = time.perf_counter()
    with httpx.Client(base_url=base, timeout=60) as c:
        for url in urls:
            with c.stream("GET", url, headers={"Accept-Encoding": accept}) as r:
                r.raise_for_status()
                for _ in r.iter_raw():
                    pass
                total += r.num_bytes_downloaded
    return len(urls), total, time.perf_counter() - start


def latencies(base: str, urls: list[str], n: int, headers: dict[str, str], revalidate: bool = False) -> list[float]:
    out = []
    with httpx.Client(base_url=base, timeout=60) as c:
        etags = {}
        if revalidate:
            for url in urls:
                etags[url] = c.get(url, headers=headers).headers.get("etag", "")
        for i in range(n):
            url = urls[i % len(urls)]
            h = dict(headers)
            if revalidate:
                h["If-None-Match"] = etags[url]
            t = time.perf_counter()
            with c.stream("GET", url, headers=h) as r:
                for _ in r.iter_raw():
                    pass
            out.append((time.perf_counter() - t) * 1000)
            if revalidate:
                assert r.status_code == 304, (url, r.status_code)
    return out


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]




def start_nginx(dist: Path, work: Path) -> tuple[subprocess.Popen, str] | None:
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        return None
    work.chmod(0o755)  # nginx's workers run as nobody
    work.parent.chmod(0o755)
    port = free_port()
    (work / "www").mkdir()
    os.symlink(dist, work / "www" / "web")
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
    include /etc/nginx/mime.types;
    gzip on;
    gzip_comp_level 6;
    gzip_types text/css application/javascript text/javascript application/json image/svg+xml application/wasm;
    client_body_temp_path {work};
    proxy_temp_path {work};
    fastcgi_temp_path {work};
    uwsgi_temp_path {work};
    scgi_temp_path {work};
    server {{
        listen 127.0.0.1:{port};
        root {work}/www;
        disable_symlinks off;
        location = /web/ {{ try_files /web/index.html =404; }}
    }}
}}
""")
    proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(work), "-g", "daemon off;"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    return None




def unpack(source: Path, work: Path) -> Path:
    if source.is_dir():
        return source
    from server.web.install import find_dist_root

    out = work / "dist"
    out.mkdir()
    with tarfile.open(source) as tf:
        tf.extractall(out, filter="data")
    return find_dist_root(out)


def report(name: str, base: str, urls: list[str], assets: list[str], n: int, compressed_twice: bool) -> None:
    reqs, plain, secs = cold_load(base, urls, "identity")
    print(f"{name}: cold first load, {reqs} requests (load average {os.getloadavg()[0]:.1f})")
    print(f"  {'identity':<24}{plain / 1e6:8.2f} MB   {secs * 1000:7.0f} ms")
    reqs, packed, secs = cold_load(base, urls, COMPRESSED)
    label = "br (first: compressing)" if compressed_twice else "gzip (on the fly)"
    print(f"  {label:<24}{packed / 1e6:8.2f} MB   {secs * 1000:7.0f} ms")
    if compressed_twice:
        reqs, packed, secs = cold_load(base, urls, COMPRESSED)
        print(f"  {'br (cached)':<24}{packed / 1e6:8.2f} MB   {secs * 1000:7.0f} ms")
    for label, headers, reval in (("identity", {"Accept-Encoding": "identity"}, False),
                                  ("br/gzip", {"Accept-Encoding": COMPRESSED}, False),
                                  ("304", {"Accept-Encoding": COMPRESSED}, True)):
        ms = latencies(base, assets, n, headers, reval)
        print(f"  asset {label:<9} p50 {statistics.median(ms):6.2f} ms   p99 {pct(ms, 99):6.2f} ms   ({n} requests)")
    if compressed_twice:  # the API on the same server, for scale
        ms = latencies(base, ["/System/Ping"], n, {}, False)
        print(f"  /System/Ping    p50 {statistics.median(ms):6.2f} ms   p99 {pct(ms, 99):6.2f} ms   (the API, for scale)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=SHARED, help="jellyfin-web's dist: a tarball or a folder")
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reelroom-bench-web-"))
    procs: list[subprocess.Popen] = []
    try:
        if args.dist.exists():
            dist = unpack(args.dist, work)
            print(f"dist: {args.dist}")
        else:
            from tests.web.conftest import make_dist

            dist = make_dist(work / "small")
            print(f"dist: {args.dist} is not here; using a small generated one (figures not comparable)")
        urls = first_load_urls((dist / "index.html").read_text(encoding="utf-8"))
        assets = [u for u in urls if u != "/web/"]
        proc, url = start_server(work / "data", "--web-dir", str(dist), "--log-level", "WARNING")
        procs.append(proc)
        report("Reelroom", url, urls, assets, args.requests, compressed_twice=True)
        (work / "nginx").mkdir()
        started = start_nginx(dist, work / "nginx")
        if started:
            procs.append(started[0])
            report("nginx (baseline, same folder)", started[1], urls, assets, args.requests, compressed_twice=False)
        else:
            print("nginx is not installed: no baseline")
    finally:
        for proc in procs:
            stop_server(proc)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
