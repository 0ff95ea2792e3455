"""The mixed load of issue 13, against a real `reelroom-server` on loopback, bounded in time.

A synthetic library (bench/items_query.py's builder: movies, shows, user data) of --size items;
a few hundred movies point at one real video and one real poster made with ffmpeg. Then, for
--seconds:

- --clients browsing clients (200), each in a loop: GET /UserViews, an Items page with
  Fields=PrimaryImageAspectRatio,MediaSources,Overview (random startIndex), GET /Items/{id},
  and a resized Primary image (/Items/{id}/Images/Primary?fillWidth=..);
- --streams direct streams (20): GET /Videos/{id}/stream?static=true read at --bitrate
  (8 Mbit/s, looping over the file with Range requests); a stream *holds its bitrate* when,
  from its first bytes on, it never falls more than --buffer seconds (2) of playback behind its
  schedule (the wait for the first bytes is printed apart).

It prints requests/s, p50/p99 latency (per route and overall), connection resets and errors,
the server's peak RSS and CPU, and each stream's verdict. The clients are a small hand-written
HTTP/1.1 keep-alive client on asyncio (httpx would spend more CPU than the server on this
2-core machine), in --client-procs processes, and the players in one more of their own.

    python bench/load.py [--size 100000] [--seconds 30] [--clients 200] [--streams 20]
                         [--baseline DIR]   # another checkout, measured first on the same library
                         [--after 70]       # then the idle server's RSS, and when its readers stopped

With --baseline both trees share one data folder, so each start finds the other tree's fragment
store and kept pages of another code stamp and starts cold. For the first seconds of a burst, run
each tree's own bench/load.py on its own copy of the data (--data), one run each in turn.

Per run it also prints the p99 of each 5 s of the load (a sudden load's first seconds apart), when
readers were started and why (from the server's log), and with --after S the owner's and readers'
RSS 2 s and S s after the load.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import multiprocessing
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import children, rss_mib, start_server, stop_server  # noqa: E402
from items_query import AUTH, FIELDS, add_user_data, build, cpu_seconds, pct, sign_in  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.mediagen import make_image, make_video  # noqa: E402

TARGETS = ">= 1000 requests/s, p99 <= 500 ms, no resets, every stream at its bitrate"


# ------------------------------------------------------------------ a minimal HTTP/1.1 client


class Conn:
    """One keep-alive connection; reconnects (and counts it) when the server closed it."""

    def __init__(self, port: int, stats: dict) -> None:
        self.port = port
        self.stats = stats
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.stats["connects"] += 1

    async def request(self, path: str, headers: str, body_sink=None) -> tuple[int, int]:
        """GET path; returns (status, body bytes). ``body_sink(n)`` is awaited per chunk read
        (streams pace themselves there). A reset is counted and raised."""
        try:
            return await self._request(path, headers, body_sink)
        except (ConnectionResetError, BrokenPipeError) as exc:
            self.stats["resets"] += 1
            kind = type(exc).__name__
            self.stats["reset_kinds"][kind] = self.stats["reset_kinds"].get(kind, 0) + 1
            self.close()
            raise

    async def _request(self, path: str, headers: str, body_sink) -> tuple[int, int]:
        for attempt in range(2):
            if self.writer is None:
                await self._open()
            try:
                self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode())
                head = await self.reader.readuntil(b"\r\n\r\n")
                break
            except asyncio.IncompleteReadError:
                # closed by the server between requests (keep-alive expiry): a client retries once
                self.stats["closed_idle"] += 1
                self.close()
                if attempt:
                    raise
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = 0
        chunked = False
        close = False
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
            elif name == "connection" and "close" in value.lower():
                close = True
        total = 0
        if chunked:
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                total += len(await self.reader.readexactly(size + 2)) - 2
        else:
            while total < length:
                chunk = await self.reader.read(min(262144, length - total))
                if not chunk:
                    raise asyncio.IncompleteReadError(b"", length - total)
                total += len(chunk)
                if body_sink is not None:
                    await body_sink(len(chunk))
        if close:
            self.close()
        return status, total

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def new_stats() -> dict:
    return {"lat": {}, "errors": 0, "status": {}, "resets": 0, "reset_kinds": {}, "closed_idle": 0, "connects": 0,
            "requests": 0, "streams": [], "client_lag": [], "per_second": {}, "by_second": {}}


async def browser(k: int, port: int, cfg: dict, stats: dict, stop_at: float) -> None:
    rnd = random.Random(k)
    conn = Conn(port, stats)
    headers = f'Authorization: {AUTH.format(n=100 + k)}, Token="{cfg["token"]}"\r\n'
    base_items = cfg["items_query"]
    await asyncio.sleep(rnd.random() * 0.5)
    while time.monotonic() < stop_at:
        item = rnd.choice(cfg["movie_ids"])
        imaged = rnd.choice(cfg["imaged_ids"])
        steps = (("views", f"/UserViews?userId={cfg['user_id']}"),
                 ("items", f"{base_items}&startIndex={rnd.randrange(0, cfg['movie_count'] - 100)}"),
                 ("item", f"/Items/{item}?userId={cfg['user_id']}"),
                 ("image", f"/Items/{imaged}/Images/Primary?fillWidth={rnd.choice((160, 240, 320))}&quality=90"))
        for name, path in steps:
            if time.monotonic() >= stop_at:
                break
            t0 = time.perf_counter()
            try:
                status, _ = await conn.request(path, headers)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                stats["errors"] += 1
                conn.close()
                continue
            took = (time.perf_counter() - t0) * 1000
            stats["lat"].setdefault(name, []).append(took)
            stats["status"][status] = stats["status"].get(status, 0) + 1
            stats["requests"] += 1
            second = int(time.time())  # (wall clock: the client processes share it)
            stats["per_second"][second] = stats["per_second"].get(second, 0) + 1
            stats["by_second"].setdefault(second, []).append(took)  # (by the second it ended in)
            if status >= 400:
                stats["errors"] += 1
    conn.close()


async def streamer(k: int, port: int, cfg: dict, stats: dict, stop_at: float) -> None:
    """Reads the file at the bitrate, looping; tracks how far it fell behind its schedule."""
    conn = Conn(port, stats)
    rate = cfg["bitrate"] / 8  # bytes/s
    size = cfg["video_size"]
    headers = f'Authorization: {AUTH.format(n=1000 + k)}, Token="{cfg["token"]}"\r\n'
    asked = time.monotonic()
    start: float | None = None  # playback starts with the first bytes (the wait is reported apart)
    received = 0
    worst_lag = 0.0
    restarts = 0

    async def sink(n: int) -> None:
        nonlocal received, worst_lag, start
        if start is None:
            start = time.monotonic()
        received += n
        due = received / rate  # seconds of playback received
        elapsed = time.monotonic() - start
        worst_lag = max(worst_lag, elapsed - due - cfg["buffer"])
        ahead = due - elapsed - cfg["buffer"]  # a player keeps a buffer, then reads as it plays
        if ahead > 0:
            await asyncio.sleep(ahead)
        if time.monotonic() >= stop_at:
            raise TimeoutError

    offset = 0
    while time.monotonic() < stop_at:
        path = f"/Videos/{cfg['video_id']}/stream?static=true&mediaSourceId={cfg['video_id']}"
        try:
            await conn.request(path, headers + f"Range: bytes={offset}-\r\n", sink)
            offset = 0
            restarts += 1
        except TimeoutError:
            break
        except (OSError, asyncio.IncompleteReadError):
            stats["errors"] += 1
            conn.close()
            offset = received % size
    conn.close()
    if start is None:
        stats["streams"].append({"held": False, "worst_lag": float("inf"), "mbit": 0.0, "first_byte": float("inf")})
        return
    elapsed = min(time.monotonic(), stop_at) - start
    stats["streams"].append({"held": worst_lag <= 0.0, "worst_lag": max(0.0, worst_lag),
                             "mbit": received * 8 / max(elapsed, 1e-6) / 1e6, "first_byte": start - asked})


def client_proc(idx: int, port: int, cfg: dict, browsers: range, streams: range, stop_at_wall: float,
                out: multiprocessing.Queue) -> None:
    stats = new_stats()

    async def lag(stop_at: float) -> None:
        """How late this process's own event loop wakes (a 10 ms sleep's overshoot): on a busy
        machine the clients' latencies include their own wait for a core, which the server's
        figures (admission's arrival to response start) do not."""
        late = stats["client_lag"]
        while time.monotonic() < stop_at:
            t0 = time.monotonic()
            await asyncio.sleep(0.01)
            late.append((time.monotonic() - t0 - 0.01) * 1000)

    async def main() -> None:
        stop_at = time.monotonic() + (stop_at_wall - time.time())
        await asyncio.gather(*(browser(k, port, cfg, stats, stop_at) for k in browsers),
                             *(streamer(k, port, cfg, stats, stop_at) for k in streams), lag(stop_at))

    asyncio.run(main())
    stats["client_cpu"] = time.process_time()  # what this load-generating process itself cost
    out.put(stats)




def run_load(url: str, proc_pid: int, cfg: dict, args: argparse.Namespace) -> dict:
    port = int(url.rsplit(":", 1)[1])
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = []
    n = args.client_procs
    started = time.time()  # (the clients begin as soon as their processes run)
    stop_at = started + 2 + args.seconds  # 2 s for the processes to start
    # browsers in --client-procs processes; the players in one of their own (a player is another
    # device: its reading must not wait for the browsing clients' CPU)
    plan = [(range(i, args.clients, n), range(0)) for i in range(n)]
    if args.streams:
        plan.append((range(0), range(args.streams)))
    for i, (browsers, streams) in enumerate(plan):
        p = multiprocessing.Process(target=client_proc, args=(i, port, cfg, browsers, streams, stop_at, out))
        p.start()
        procs.append(p)
    # CPU per process: the owner, each reader (a reader started during the load counts from 0),
    # sampled while it lives (a reader that idles out or dies keeps its last reading)
    first = {p: cpu_seconds(p) for p in [proc_pid, *children(proc_pid)]}
    last = dict(first)
    peak = 0.0
    t0 = time.time()
    while time.time() < stop_at:
        pids = [proc_pid, *children(proc_pid)]
        peak = max(peak, sum(rss_mib(p) for p in pids))
        for p in pids:
            c = cpu_seconds(p)
            if c == c:  # not NaN
                first.setdefault(p, 0.0)
                last[p] = c
        time.sleep(0.25)
    for p in [proc_pid, *children(proc_pid)]:
        c = cpu_seconds(p)
        if c == c:
            first.setdefault(p, 0.0)
            last[p] = c
    results = [out.get(timeout=args.seconds + 120) for _ in procs]
    for p in procs:
        p.join(30)
    wall = time.time() - t0
    owner_cpu = last[proc_pid] - first[proc_pid]
    readers_cpu = sum(last[p] - first[p] for p in last if p != proc_pid)
    cpu = owner_cpu + readers_cpu
    merged = new_stats()
    for r in results:
        for k, v in r["lat"].items():
            merged["lat"].setdefault(k, []).extend(v)
        for key in ("errors", "resets", "closed_idle", "connects", "requests"):
            merged[key] += r[key]
        for k, v in r["status"].items():
            merged["status"][k] = merged["status"].get(k, 0) + v
        for k, v in r["reset_kinds"].items():
            merged["reset_kinds"][k] = merged["reset_kinds"].get(k, 0) + v
        merged["streams"].extend(r["streams"])
        merged["client_lag"].extend(r["client_lag"])
        for k, v in r["per_second"].items():
            merged["per_second"][k] = merged["per_second"].get(k, 0) + v
        for k, v in r["by_second"].items():
            merged["by_second"].setdefault(k, []).extend(v)
    merged["peak_rss"] = peak
    merged["load_start"] = started
    merged["owner_share"] = owner_cpu / max(wall, 1e-6)
    merged["readers_share"] = readers_cpu / max(wall, 1e-6)
    merged["client_share"] = sum(r.get("client_cpu", 0.0) for r in results) / max(wall, 1e-6)
    merged["load_avg"] = os.getloadavg()[0]
    merged["cpu_share"] = cpu / max(wall, 1e-6)
    merged["cpu_per_request"] = cpu * 1000 / max(merged["requests"], 1)
    merged["rps"] = merged["requests"] / args.seconds
    return merged


def watch_idle(pid: int, seconds: float) -> dict:
    """The server left idle after the load, for ``seconds``: its RSS (the owner's, and its readers'
    summed) 2 s after the load and at the end, its peak meanwhile, and when its last reader ended."""
    t0 = time.monotonic()
    first = None
    readers_gone: float | None = None
    owner = readers = 0.0
    while True:
        kids = children(pid)
        owner, readers = rss_mib(pid), sum(rss_mib(p) for p in kids)
        at = time.monotonic() - t0
        if first is None and at >= 2.0:
            first = (owner, readers, len(kids))
        if not kids and readers_gone is None:
            readers_gone = at
        if at >= seconds:
            break
        time.sleep(1.0)
    return {"first": first or (owner, readers, len(kids)), "last": (owner, readers, len(kids)),
            "seconds": seconds, "readers_gone": readers_gone}


def log_time(line: str) -> float | None:
    """The wall-clock time (epoch seconds) of a line of the server's log, else None."""
    try:
        return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f").timestamp()
    except ValueError:
        return None


def readers_env(value: str) -> dict[str, str]:
    """``1l0s0`` -> REELROOM_READERS=1, REELROOM_READERS_LOCAL=0, REELROOM_READERS_SHARE=0;
    ``autoa0`` -> REELROOM_READERS=auto, REELROOM_ADMIT=0 (admission off; ``a32``: 32 in flight); a
    trailing ``h0``: REELROOM_READERS_HANDOFF=0 (the owner relays the readers' replies)."""
    if not value:
        return {}
    m = re.fullmatch(r"([^lsah]+|auto)(?:l(\d+))?(?:s(\d+))?(?:a(\d+))?(?:h(\d+))?", value)
    if m is None:
        raise SystemExit(f"--readers: cannot read {value!r}")
    readers, local, share, admit, handoff = m.groups()
    return ({"REELROOM_READERS": readers} | ({"REELROOM_READERS_LOCAL": local} if local else {})
            | ({"REELROOM_READERS_SHARE": share} if share else {})
            | ({"REELROOM_ADMIT": admit} if admit else {})
            | ({"REELROOM_READERS_HANDOFF": handoff} if handoff else {}))


def report(label: str, r: dict) -> None:
    every = [x for v in r["lat"].values() for x in v]
    held = sum(1 for s in r["streams"] if s["held"])
    print(f"  {label:<9} {r['rps']:.0f} requests/s, p50 {statistics.median(every) if every else float('nan'):.0f} ms, "
          f"p99 {pct(every, 99) if every else float('nan'):.0f} ms | resets {r['resets']} {r['reset_kinds'] or ''}, "
          f"closed while idle {r['closed_idle']}, errors {r['errors']}, statuses {dict(sorted(r['status'].items()))}, "
          f"connections {r['connects']} | server peak RSS {r['peak_rss']:.0f} MB, "
          f"CPU {r['cpu_share'] * 100:.0f}% of one core ({r['cpu_per_request']:.1f} ms per browsing request, streams "
          f"included) | streams holding {held}/{len(r['streams'])}")
    print(f"            CPU in cores: owner {r['owner_share']:.2f}, readers {r['readers_share']:.2f}, "
          f"the load's own client processes {r['client_share']:.2f} (of {os.cpu_count()}); "
          f"load average at the end {r['load_avg']:.1f}")
    seconds = sorted(r.get("per_second", {}).items())[1:-1]  # whole seconds only
    if seconds:
        rates = sorted(v for _, v in seconds)
        print(f"            requests answered per second over the run: min {rates[0]}, p10 "
              f"{rates[len(rates) // 10]}, median {rates[len(rates) // 2]}, max {rates[-1]} (a line's wait "
              f"grows while the rate dips: on a shared machine, other work takes the cores)")
    by_second = sorted(r.get("by_second", {}).items())
    if by_second:
        start = r.get("load_start", by_second[0][0])
        slices: dict[int, list[float]] = {}
        for second, values in by_second:
            slices.setdefault(max(0, int(second - start)) // 5 * 5, []).extend(values)
        print("            p99 by 5 s of the load (by when a request ended): " + ", ".join(
            f"{k}-{k + 5} s {pct(v, 99):.0f} ms ({len(v)})" for k, v in sorted(slices.items())))
        seconds_in: dict[int, list[float]] = {}
        for second, values in by_second:
            if 0 <= (k := int(second - start)) < 10:
                seconds_in.setdefault(k, []).extend(values)
        print("            the first 10 s by second (p99, requests): " + ", ".join(
            f"{k} s {pct(v, 99):.0f} ms ({len(v)})" for k, v in sorted(seconds_in.items())))
    if r.get("reader_starts"):
        print("            readers started (from the server's log): " + ", ".join(
            f"at {t:+.1f} s of the load ({why})" for t, why in r["reader_starts"]))
    if r.get("after"):
        a = r["after"]
        (o1, r1, n1), (o2, r2, n2) = a["first"], a["last"]
        gone = a["readers_gone"]
        print(f"            idle after the load: +2 s owner {o1:.0f} MiB + {n1} reader(s) {r1:.0f} MiB; "
              f"+{a['seconds']:.0f} s owner {o2:.0f} MiB + {n2} reader(s) {r2:.0f} MiB; "
              + (f"no reader left from +{gone:.0f} s" if gone is not None else "a reader still running"))
    if r.get("client_lag"):
        lag = r["client_lag"]
        print(f"            the clients' own event loops woke late by p50 {statistics.median(lag):.1f} ms, "
              f"p99 {pct(lag, 99):.1f} ms, max {max(lag):.0f} ms (part of every latency below)")
    if r.get("pool"):
        print(f"            reader pool (from the server's log at close): {r['pool']}")
    if r.get("gate"):
        print(f"            CPU gate (auto; from the server's log at close): {r['gate']}")
    if r.get("admission"):
        print(f"            admission (from the server's log at close): {r['admission']}")
    for name, values in sorted(r["lat"].items()):
        print(f"            {name:<6} {len(values):>6} requests, p50 {statistics.median(values):.0f} ms, "
              f"p99 {pct(values, 99):.0f} ms")
    if r["streams"]:
        waits = sorted(s["first_byte"] for s in r["streams"])
        print(f"            streams: first bytes after p50 {waits[len(waits) // 2] * 1000:.0f} ms, "
              f"max {waits[-1] * 1000:.0f} ms; mean rate "
              f"{statistics.mean(s['mbit'] for s in r['streams']):.1f} Mbit/s")
    slow = [s for s in r["streams"] if not s["held"]]
    if slow:
        print("            streams behind: " + ", ".join(f"{s['mbit']:.1f} Mbit/s (lag {s['worst_lag']:.1f} s)"
                                                      for s in slow))


async def _route_costs(port: int, pid: int, cfg: dict, n: int) -> dict[str, float]:
    """Server CPU (ms) per request of each browsing route and per MB of a direct stream, one
    client, sequential: the lowest of three blocks of ``n`` requests (background work only adds)."""
    stats = new_stats()
    conn = Conn(port, stats)
    headers = f'Authorization: {AUTH.format(n=99)}, Token="{cfg["token"]}"\r\n'
    rnd = random.Random(3)
    imaged = cfg["imaged_ids"][:20]
    etags: dict[str, str] = {}
    for i in imaged:  # renderings in the disk cache first: the figures are of cache hits
        await conn.request(f"/Items/{i}/Images/Primary?fillWidth=240&quality=90", headers)
    routes = {
        "views": lambda: (f"/UserViews?userId={cfg['user_id']}", ""),
        "item": lambda: (f"/Items/{rnd.choice(cfg['movie_ids'])}?userId={cfg['user_id']}", ""),
        "image hit": lambda: (f"/Items/{rnd.choice(imaged)}/Images/Primary?fillWidth=240&quality=90", ""),
        "image 304": lambda: (f"/Items/{imaged[0]}/Images/Primary?fillWidth=240&quality=90",
                              f"If-None-Match: {etags.get('x', '*')}\r\n"),
    }
    # the ETag of the image for the 304 route
    reader_writer = await asyncio.open_connection("127.0.0.1", port)
    reader_writer[1].write((f"GET {routes['image 304']()[0]} HTTP/1.1\r\nHost: x\r\n{headers}"
                            "Connection: close\r\n\r\n").encode())
    raw = await reader_writer[0].read()
    reader_writer[1].close()
    for line in raw.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n"):
        if line.lower().startswith("etag:"):
            etags["x"] = line.split(":", 1)[1].strip()
    out: dict[str, float] = {name: float("inf") for name in routes}
    for _ in range(3):  # rounds over every route (background work after start-up lands in one block of each)
        for name, make in routes.items():
            c0 = cpu_seconds(pid)
            for _ in range(n):
                path, extra = make()
                status, _ = await conn.request(path, headers + extra)
                assert status in (200, 304), (name, status)
            out[name] = min(out[name], (cpu_seconds(pid) - c0) * 1000 / n)
    size = cfg["video_size"]
    best = float("inf")
    for _ in range(3):
        c0 = cpu_seconds(pid)
        total = 0
        for _ in range(4):
            _status, got = await conn.request(f"/Videos/{cfg['video_id']}/stream?static=true", headers)
            total += got
        best = min(best, (cpu_seconds(pid) - c0) * 1000 / (total / 1e6))
    out["stream per MB"] = best
    out["_stream_bytes"] = size
    conn.close()
    return out


def route_costs(url: str, pid: int, cfg: dict, n: int) -> dict[str, float]:
    return asyncio.run(_route_costs(int(url.rsplit(":", 1)[1]), pid, cfg, n))


def prepare(data: Path, size: int) -> dict:
    info = build(data, size)
    media = data / "bench-media"
    video = make_video(media / "stream.mkv", seconds=20, width=1280, height=720)
    poster = make_image(media / "poster.jpg", width=680, height=1000)
    db = sqlite3.connect(data / "data" / "reelroom.db")
    imaged = info["movie_ids"][:: max(1, len(info["movie_ids"]) // 300)]
    images = json.dumps([{"Type": "Primary", "Path": str(poster), "Tag": "b" * 32, "Width": 680, "Height": 1000}])
    db.executemany("UPDATE items SET images_json = ? WHERE id = ?", [(images, i) for i in imaged])
    video_id = info["movie_ids"][1]
    db.execute("UPDATE items SET path = ?, size = ?, file_size = ?, container = 'mkv' WHERE id = ?",
               (str(video), video.stat().st_size, video.stat().st_size, video_id))
    db.commit()
    db.close()
    info.update(imaged_ids=imaged, video_id=video_id, video_size=video.stat().st_size)
    return info


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100000)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--bitrate", type=float, default=8e6, help="bits/s each stream reads at")
    parser.add_argument("--buffer", type=float, default=2.0, help="seconds of playback a player buffers")
    parser.add_argument("--client-procs", type=int, default=2)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout, measured first")
    parser.add_argument("--data", type=Path, default=None,
                        help="keep the built library in DIR and reuse it on the next run with the same --size")
    parser.add_argument("--profile", type=Path, default=None,
                        help="py-spy record each server during the load into DIR/<label>.txt (needs py-spy)")
    parser.add_argument("--cost", type=int, default=100, metavar="N",
                        help="before the load, server CPU per request of each route (N requests each; 0: skip)")
    parser.add_argument("--skip-load", action="store_true", help="only the per-request costs")
    parser.add_argument("--readers", default="", help="comma-separated reader settings, each a run of its own "
                        "(0: off; 1, 2, auto: REELROOM_READERS; 'l<n>' REELROOM_READERS_LOCAL, 's<n>' "
                        "REELROOM_READERS_SHARE, 'a<n>' REELROOM_ADMIT (0: admission off), 'h0' "
                        "REELROOM_READERS_HANDOFF=0 (the relay), e.g. 1l0s0, autoa0, 1l0h0); "
                        "default: the environment's")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each setting, taking turns")
    parser.add_argument("--after", type=float, default=0.0, metavar="S",
                        help="after the load, watch the idle server for S s: its RSS (the owner's and its "
                        "readers') and when its readers stopped (REELROOM_READERS_IDLE, 60 s by default)")
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}; {args.clients} browsing clients + {args.streams} streams at "
          f"{args.bitrate / 1e6:.0f} Mbit/s for {args.seconds} s, {args.size} items; targets: {TARGETS}")
    data = args.data.resolve() if args.data else Path(tempfile.mkdtemp(prefix="reelroom-load-bench-"))
    saved = data / "load-bench.json"
    try:
        t0 = time.perf_counter()
        info = json.loads(saved.read_text()) if args.data and saved.exists() else {}
        if info.get("size") != args.size:
            if data.exists() and args.data:
                shutil.rmtree(data)
            data.mkdir(parents=True, exist_ok=True)
            info = prepare(data, args.size)
            proc, url = start_server(data)
            token, user_id = sign_in(url)
            stop_server(proc)
            add_user_data(data, user_id, info["movie_ids"])
            info["size"] = args.size
            saved.write_text(json.dumps(info))
        shutil.rmtree(data / "cache" / "images", ignore_errors=True)  # every run renders its images afresh
        print(f"  library of {info['items']} items built in {time.perf_counter() - t0:.0f} s; "
              f"load average {os.getloadavg()[0]:.1f}")
        variants = [v for v in (args.readers or "").split(",") if v]
        runs = [(f"{label}:{v}" if v else label, root, readers_env(v)) for _ in range(args.rounds)
                for label, root in ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
                for v in (variants or [""])]
        results: dict[str, dict] = {}
        costs: dict[str, dict] = {}
        log_file = data / "log" / "reelroom.log"
        for label, root, env in runs:
            if label in results:  # another round: keep each one
                label = f"{label}#{sum(1 for k in results if k.split('#')[0] == label) + 1}"
            log_from = log_file.stat().st_size if log_file.exists() else 0
            proc, url = start_server(data, root=root, env=env)
            try:
                token, user_id = sign_in(url)
                query = {"userId": user_id, "parentId": info["movies"], "recursive": "true",
                         "includeItemTypes": "Movie", "sortBy": "SortName", "sortOrder": "Ascending",
                         "limit": "100", "fields": FIELDS, "enableTotalRecordCount": "true"}
                cfg = {"token": token, "user_id": user_id, "movie_ids": info["movie_ids"][:5000],
                       "imaged_ids": info["imaged_ids"], "movie_count": info["movie_count"],
                       "items_query": "/Items?" + urllib.parse.urlencode(query), "video_id": info["video_id"],
                       "video_size": info["video_size"], "bitrate": args.bitrate, "buffer": args.buffer}
                time.sleep(2)  # planner statistics are refreshed a second after start-up
                if args.cost:
                    costs[label] = route_costs(url, proc.pid, cfg, args.cost)
                spy = None
                if args.profile and not args.skip_load:
                    args.profile.mkdir(parents=True, exist_ok=True)
                    spy = subprocess.Popen(
                        [shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(proc.pid), "--format", "raw", "--duration",
                         str(args.seconds), "--output", str(args.profile / f"{label}.txt"), "--nonblocking"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if not args.skip_load:
                    results[label] = run_load(url, proc.pid, cfg, args)
                    if args.after > 0:
                        results[label]["after"] = watch_idle(proc.pid, args.after)
                if spy is not None:
                    spy.wait(60)
            finally:
                stop_server(proc)
            if label in results and log_file.exists():
                with log_file.open("rb") as f:
                    f.seek(log_from if log_file.stat().st_size >= log_from else 0)
                    lines = f.read().decode("utf-8", "replace").splitlines()
                pool = [line for line in lines if "Reader pool:" in line]
                admitted = [line for line in lines if "Admission:" in line]
                gate = [line for line in lines if "CPU gate:" in line]
                results[label]["gate"] = gate[-1].split("CPU gate:", 1)[1].strip() if gate else ""
                results[label]["pool"] = pool[-1].split("Reader pool:", 1)[1].strip() if pool else ""
                results[label]["admission"] = admitted[-1].split("Admission:", 1)[1].strip() if admitted else ""
                results[label]["reader_starts"] = [
                    (at - results[label]["load_start"], line.partition(" started")[2].strip(" ()"))
                    for line in lines if "Reader process" in line and " started" in line
                    and (at := log_time(line)) is not None]
            if label in costs:
                print(f"  {label:<9} server CPU per request (ms, 1 client, best of 3 x {args.cost}): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in costs[label].items() if not k.startswith("_")))
            if label in results:
                report(label, results[label])
        if "baseline" in costs and "this" in costs:
            print("  ratios    CPU per request " + ", ".join(
                f"{k} x{costs['baseline'][k] / max(v, 1e-9):.1f} lower" for k, v in costs["this"].items()
                if not k.startswith("_")))
        if "baseline" in results and "this" in results:
            b, t = results["baseline"], results["this"]
            pb = pct([x for v in b["lat"].values() for x in v], 99)
            pt = pct([x for v in t["lat"].values() for x in v], 99)
            print(f"  ratios    requests/s x{t['rps'] / max(b['rps'], 1e-9):.1f}, p99 x{pb / max(pt, 1e-9):.1f} lower")
    finally:
        if not args.data:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
