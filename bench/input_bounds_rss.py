"""Peak memory of a real Reelroom server under the long-name / long-term / huge-header attack.

    python bench/input_bounds_rss.py

Starts ``reelroom-server`` in its own process (127.0.0.1, a fresh data folder), signs in a plain
user and then, while sampling the server's resident memory (/proc/<pid>/status):

1. tries to create playlists named with 100,000 characters (refused: 400);
2. creates 200 playlists with names of the longest allowed length (1,024 characters);
3. searches ``/Items`` and ``/Search/Hints`` with 10,000-character terms (refused: 400);
4. searches with the longest allowed term (512 characters) that shares its start with every
   playlist name, so the full-text index matches them all and the whole term is checked;
5. sends three 64 MiB request headers (refused early: 431).

Prints the RSS before, the peak (VmHWM) and after, and the latency of the allowed searches.
Linux only (reads /proc).
"""

from __future__ import annotations

import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schemathesis_run import AUTH, start_server  # noqa: E402


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


class Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, status_kib(self.pid, "VmRSS"))
            except OSError:
                return
            time.sleep(0.02)


def huge_header(url: str, size: int) -> bytes:
    host, port = url.rsplit("/", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        try:
            s.sendall(b"GET /System/Info/Public HTTP/1.1\r\nHost: x\r\nX-Big: ")
            chunk = b"a" * 65536
            for _ in range(size // len(chunk)):
                s.sendall(chunk)
        except OSError:
            pass
        try:
            return s.recv(64)
        except OSError:
            return b""


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="reelroom-rss-"))
    proc, url = start_server(work / "data")
    try:
        with httpx.Client(base_url=url, headers={"Authorization": AUTH}, timeout=120) as anon:
            anon.post("/Startup/Configuration", json={"UICulture": "en-US"}).raise_for_status()
            anon.get("/Startup/User").raise_for_status()
            anon.post("/Startup/User", json={"Name": "admin", "Password": "pw"}).raise_for_status()
            anon.post("/Startup/Complete").raise_for_status()
            admin_token = anon.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "pw"}).json()[
                "AccessToken"]
        with httpx.Client(base_url=url, timeout=120,
                          headers={"Authorization": f'{AUTH}, Token="{admin_token}"'}) as admin:
            admin.post("/Users/New", json={"Name": "plain", "Password": "pw"}).raise_for_status()
        user_auth = AUTH.replace("fuzz-1", "plain-1")
        with httpx.Client(base_url=url, headers={"Authorization": user_auth}, timeout=120) as c:
            r = c.post("/Users/AuthenticateByName", json={"Username": "plain", "Pw": "pw"})
            r.raise_for_status()
            c.headers["Authorization"] = f'{user_auth}, Token="{r.json()["AccessToken"]}"'
            user_id = r.json()["User"]["Id"]
            time.sleep(2)  # let start-up work (planner statistics, tasks) settle
            before = status_kib(proc.pid, "VmRSS")
            sampler = Sampler(proc.pid)
            sampler.start()
            codes: dict[str, set[int]] = {}
            for _ in range(20):
                codes.setdefault("playlist 100,000 chars", set()).add(
                    c.post("/Playlists", json={"Name": "p" * 100_000, "UserId": user_id}).status_code)
            prefix = "attack " * 10
            for i in range(200):
                name = (prefix + str(i)).ljust(1024, "n")
                codes.setdefault("playlist 1,024 chars", set()).add(
                    c.post("/Playlists", json={"Name": name, "UserId": user_id}).status_code)
            for path in ("/Items", "/Search/Hints"):
                for _ in range(20):
                    r = c.get(path, params={"searchTerm": "a" * 10_000, "recursive": "true", "userId": user_id})
                    codes.setdefault(f"{path} term 10,000 chars", set()).add(r.status_code)
            timings: dict[str, list[float]] = {}
            term = (prefix + "0").ljust(512, "n")[:512]
            for path in ("/Items", "/Search/Hints"):
                for _ in range(30):
                    t0 = time.perf_counter()
                    r = c.get(path, params={"searchTerm": term, "recursive": "true", "userId": user_id})
                    timings.setdefault(path, []).append((time.perf_counter() - t0) * 1000)
                    codes.setdefault(f"{path} term 512 chars", set()).add(r.status_code)
            for _ in range(3):
                codes.setdefault("64 MiB header", set()).add(int(huge_header(url, 64 * 1024 * 1024)[9:12] or 0))
            sampler.stop.set()
            sampler.join()
            after = status_kib(proc.pid, "VmRSS")
            hwm = status_kib(proc.pid, "VmHWM")
        print("replies:")
        for label, seen in codes.items():
            print(f"  {label:32s} {sorted(seen)}")
        for path, values in timings.items():
            print(f"search {path:14s} 512-char term: median {statistics.median(values):.1f} ms, "
                  f"max {max(values):.1f} ms")
        print(f"RSS before the attack: {before / 1024:.1f} MiB")
        print(f"RSS peak (sampled):    {sampler.peak / 1024:.1f} MiB")
        print(f"RSS peak (VmHWM, whole life incl. start-up): {hwm / 1024:.1f} MiB")
        print(f"RSS after the attack:  {after / 1024:.1f} MiB")
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except Exception:
            proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
