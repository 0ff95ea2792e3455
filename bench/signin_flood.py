"""Other requests' latency while 8 clients hammer sign-in, against a real `reelroom-server`.

Starts a server (from this checkout, or from another with --root, e.g. the main checkout for
a before/after comparison), completes the wizard, makes a user, then measures p50/p99/max (ms)
of a signed-in client's `GET /System/Ping` and `GET /Users/Me` (a database read):

- idle: nobody signs in;
- right: 8 clients loop on AuthenticateByName with the right password (every attempt is a
  full argon2 verification that no rate limit stops; runs before "wrong", whose failures
  empty the address's rate-limit bucket);
- wrong: 8 clients loop on AuthenticateByName with wrong passwords and unknown names (no real
  account is locked, so the probe keeps working on servers that disable accounts).

First, the time of a failed sign-in for a known and for an unknown user name (median of 4 each,
interleaved; the known user never locks), which should be the same. Each flood phase lasts
--seconds (default 10). Loopback only; the server is stopped at the end.

    python bench/signin_flood.py [--root /work/main] [--seconds 10] [--clients 8]
"""

from __future__ import annotations

import argparse
import collections
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import start_server, stop_server  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
AUTH = 'MediaBrowser Client="bench", Device="bench", DeviceId="bench-{n}", Version="1.0"'








def setup(url: str) -> str:
    with httpx.Client(base_url=url, headers={"Authorization": AUTH.format(n=0)}, timeout=60) as c:
        c.post("/Startup/Configuration", json={"UICulture": "en-US", "MetadataCountryCode": "US",
                                               "PreferredMetadataLanguage": "en"}).raise_for_status()
        c.get("/Startup/User").raise_for_status()
        c.post("/Startup/User", json={"Name": "bench", "Password": "bench"}).raise_for_status()
        c.post("/Startup/Complete").raise_for_status()
        r = c.post("/Users/AuthenticateByName", json={"Username": "bench", "Pw": "bench"})
        r.raise_for_status()
        token = r.json()["AccessToken"]
        c.headers["Authorization"] = AUTH.format(n=0) + f', Token="{token}"'
        c.post("/Users/New", json={"Name": "flood", "Password": "flood-pw"}).raise_for_status()
        uid = c.post("/Users/New", json={"Name": "timing", "Password": "timing-pw"}).json()["Id"]
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        c.post(f"/Users/{uid}/Policy", json={**policy, "LoginAttemptsBeforeLockout": 0}).raise_for_status()
        return token


def name_timing(url: str) -> dict[str, float]:
    times: dict[str, list[float]] = {"known": [], "unknown": []}
    with httpx.Client(base_url=url, headers={"Authorization": AUTH.format(n="timing")}, timeout=60) as c:
        for i in range(4):
            for kind, name in (("known", "timing"), ("unknown", f"nobody-{i}")):
                start_t = time.perf_counter()
                c.post("/Users/AuthenticateByName", json={"Username": name, "Pw": "wrong"})
                times[kind].append((time.perf_counter() - start_t) * 1000)
    return {k: sorted(v)[len(v) // 2] for k, v in times.items()}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def flood(url: str, n: int, mode: str, stop_at: float, outcomes: collections.Counter, lock: threading.Lock) -> None:
    rnd = random.Random(n)
    with httpx.Client(base_url=url, headers={"Authorization": AUTH.format(n=f"flood{n}")}, timeout=60) as c:
        while time.monotonic() < stop_at:
            if mode == "wrong":
                body = {"Username": f"nobody{rnd.randrange(10**6)}", "Pw": f"guess{rnd.randrange(10**6)}"}
            else:
                body = {"Username": "flood", "Pw": "flood-pw"}
            try:
                status = c.post("/Users/AuthenticateByName", json=body).status_code
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            with lock:
                outcomes[status] += 1


def measure(url: str, token: str, seconds: float, clients: int, mode: str | None) -> dict:
    stop_at = time.monotonic() + seconds
    outcomes: collections.Counter = collections.Counter()
    lock = threading.Lock()
    threads = [threading.Thread(target=flood, args=(url, i, mode, stop_at, outcomes, lock), daemon=True)
               for i in range(clients if mode else 0)]
    for t in threads:
        t.start()
    latencies: dict[str, list[float]] = {"/System/Ping": [], "/Users/Me": []}
    headers = {"Authorization": AUTH.format(n="probe") + f', Token="{token}"'}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as c:
        time.sleep(min(1.0, seconds / 5))  # let the flood get going
        while time.monotonic() < stop_at:
            for path in latencies:
                start_t = time.perf_counter()
                c.get(path).raise_for_status()
                latencies[path].append((time.perf_counter() - start_t) * 1000)
            time.sleep(0.02)
    for t in threads:
        t.join(90)
    return {"latencies": latencies, "outcomes": dict(outcomes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to run (default: this one)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="reelroom-signin-bench-"))
    proc, url = start_server(tmp / "data", root=args.root.resolve())
    try:
        token = setup(url)
        print(f"server: {args.root.resolve()}  ({args.clients} flooding clients, {args.seconds:g} s per phase)")
        timing = name_timing(url)
        print(f"failed sign-in, median ms: known user {timing['known']:.0f}, unknown user {timing['unknown']:.0f}")
        print(f"{'phase':<8}{'request':<14}{'n':>6}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}  sign-in outcomes")
        for mode in (None, "right", "wrong"):
            result = measure(url, token, args.seconds, args.clients, mode)
            for i, (path, values) in enumerate(result["latencies"].items()):
                outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(result["outcomes"].items(), key=str))
                print(f"{mode or 'idle':<8}{path:<14}{len(values):>6}{pct(values, 50):>10.1f}{pct(values, 99):>10.1f}"
                      f"{max(values):>10.1f}  {outcomes if i == 0 else ''}")
    finally:
        stop_server(proc)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
