"""The fixed cost of a request: server CPU per request for a few routes, against a real
`reelroom-server` process, side by side with a baseline checkout in the same run.

The script builds a small synthetic library (bench/items_query.py's, ``--size`` items), starts one
server per checkout (each on its own copy of the data folder), signs in, and then, round after
round, sends ``--requests`` requests per route to each server in turn over one raw keep-alive
connection (the client is a few lines of socket code, so it costs the machine little). The
server's CPU is the sum of its threads' run time (``/proc/<pid>/task/*/schedstat``, nanoseconds),
read before and after each batch; the best round counts (background work only ever adds).

Routes: GET /System/Ping and /System/Info/Public (no token), /Users/Me, /UserViews, /Items/{id}
(a movie), a resized Primary image already in the disk cache and the same with If-None-Match
(304; one movie gets a poster made with ffmpeg), an Items page (bench/items_query.py's query, 100 movies with
Fields=PrimaryImageAspectRatio,MediaSources,Overview) asked again and again (a whole-reply hit), and
that page at a new startIndex each request within stored fragments (``WARM_ROUTE``: what a random
page of a warm library costs), all with a token in the Authorization header as the Jellyfin apps
send it.

CPU counts the server process and its child processes (the reader processes that may build Items
pages). For the warm Items page it also prints the *non-handler share* of the server process: the
server runs with the GetItems handler wrapped so that it adds up the process CPU spent between the
handler's entry and its return (the handler's own work and its database reads in this process;
one request at a time, so nothing else runs meanwhile); everything else (HTTP parsing, the ASGI
middleware, routing, the guard, the signature model, the response's encoding and sending) is the
request's fixed cost.

    python bench/overhead.py [--size 2000] [--requests 1000] [--rounds 5] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import free_port  # noqa: E402
from items_query import AUTH, build, params, sign_in  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# Run app.server_main from the checkout on sys.path[0], with the GetItems handler wrapped to add
# up its CPU; SIGUSR1 writes the sums (seconds, calls) to the file named by REELROOM_PROBE_OUT.
PROBE = r"""
import functools, os, signal, sys, time
import server.runner as runner

_create = runner.create_app
probe = [0.0, 0]

def create_app(ctx):
    app = _create(ctx)
    inner = app
    while not hasattr(inner, "route_handler_method_map") and hasattr(inner, "app"):
        inner = inner.app
    for route in inner.routes:
        for handler in getattr(route, "route_handlers", ()):
            if handler.opt.get("op") == "GetItems":
                fn = handler._fn
                @functools.wraps(fn)  # (Litestar may read the handler's signature after this swap)
                async def timed(*args, _fn=fn, **kwargs):
                    t0 = time.process_time()
                    try:
                        return await _fn(*args, **kwargs)
                    finally:
                        probe[0] += time.process_time() - t0
                        probe[1] += 1
                # (the handler's signature: Litestar reads it on the first request)
                handler._fn = functools.wraps(fn)(timed)
    return app

runner.create_app = create_app

def dump(*_):
    with open(os.environ["REELROOM_PROBE_OUT"], "w") as f:
        f.write(f"{probe[0]} {probe[1]}")

signal.signal(signal.SIGUSR1, dump)
from app.server_main import main
sys.argv = ["reelroom-server", *sys.argv[1:]]
sys.exit(main())
"""


class Server:
    def __init__(self, label: str, root: Path, data: Path, probe_out: Path) -> None:
        self.label = label
        self.port = free_port()
        self.probe_out = probe_out
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PROBE, "--data-dir", str(data), "--port", str(self.port), "--host", "127.0.0.1",
             "--no-lan", "--log-level", "WARNING"],
            cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(root), "REELROOM_PROBE_OUT": str(probe_out)})
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/System/Info/Public", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{label}: reelroom-server did not start")

    def cpu_ns(self, pids: list[int] | None = None) -> int:
        """Run time of the server's threads (and of the given other processes': its readers)."""
        total = 0
        for pid in [self.proc.pid, *(pids or ())]:
            try:
                tasks = list(Path(f"/proc/{pid}/task").iterdir())
            except OSError:
                continue
            for task in tasks:
                try:
                    total += int((task / "schedstat").read_text().split()[0])
                except (OSError, ValueError, IndexError):
                    pass  # a thread that ended meanwhile
        return total

    def children(self) -> list[int]:
        """The server's child processes (reader processes for Items pages, when it has them)."""
        out = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                        out.append(int(entry.name))
                except (OSError, ValueError, IndexError):
                    pass
        return out

    def handler_cpu(self) -> tuple[float, int]:
        self.probe_out.unlink(missing_ok=True)
        self.proc.send_signal(10)  # SIGUSR1
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                text = self.probe_out.read_text()
                if text:
                    seconds, calls = text.split()
                    return float(seconds), int(calls)
            except (OSError, ValueError):
                pass
            time.sleep(0.01)
        return float("nan"), 0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class KeepAlive:
    """One HTTP/1.1 connection; requests are sent as prepared bytes and answers read by their
    Content-Length (every route here answers with one)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def request(self, raw: bytes) -> tuple[int, bytes]:
        self.sock.sendall(raw)
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            self.buf = rest
            self._more()
            rest = self.buf
        self.buf = rest[length:]
        return status, rest[:length]

    def _more(self) -> None:
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buf += chunk

    def close(self) -> None:
        self.sock.close()


def raw_get(path: str, token: str | None, extra: str = "") -> bytes:
    auth = AUTH.format(n=9) + (f', Token="{token}"' if token else "")
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n"
            f"Authorization: {auth}\r\nUser-Agent: bench-overhead\r\n{extra}\r\n").encode()


IMAGE_QUERY = "fillWidth=240&quality=90"


def add_poster(data: Path, info: dict) -> None:
    """One movie gets a real poster (made with ffmpeg), for the image routes."""
    import sqlite3

    sys.path.insert(0, str(ROOT))
    from tests.mediagen import make_image

    poster = make_image(data / "bench-media" / "poster.jpg", width=680, height=1000)
    db = sqlite3.connect(data / "data" / "reelroom.db")
    db.execute("UPDATE items SET images_json = ? WHERE id = ?",
               (json.dumps([{"Type": "Primary", "Path": str(poster), "Tag": "b" * 32, "Width": 680, "Height": 1000}]),
                info["movie_ids"][0]))
    db.commit()
    db.close()


def routes(info: dict, token: str, user_id: str, url: str) -> list[tuple[str, bytes]]:
    import random
    import urllib.parse

    movie = info["movie_ids"][len(info["movie_ids"]) // 2]
    page = params(info, user_id, random.Random(3), False)
    image = f"/Items/{info['movie_ids'][0]}/Images/Primary?{IMAGE_QUERY}"
    auth = {"Authorization": AUTH.format(n=9) + f', Token="{token}"'}
    etag = httpx.get(url + image, headers=auth, timeout=600).headers["etag"]  # (rendered once here; slow under callgrind)
    return [
        ("GET /System/Ping", raw_get("/System/Ping", None)),
        ("GET /System/Info/Public", raw_get("/System/Info/Public", None)),
        ("GET /Users/Me", raw_get("/Users/Me", token)),
        ("GET /UserViews", raw_get(f"/UserViews?userId={user_id}", token)),
        ("GET /Items/{id}", raw_get(f"/Items/{movie}?userId={user_id}", token)),
        ("GET image (cache hit)", raw_get(image, token)),
        ("GET image (304)", raw_get(image, token, f"If-None-Match: {etag}\r\n")),
        ("GET /Items (100, Fields)", raw_get("/Items?" + urllib.parse.urlencode(page), token)),
    ]


# A warm Items page at a new startIndex each request: bench/items_query.py's page within the first
# 700 movies, whose fragments are stored first; the 599 query strings cycle, more than the
# whole-reply cache's LRU holds of 245 KB pages, so no request is a whole-reply hit: the HTTP path,
# the guard, the handler and the page's read of stored fragments.
WARM_ROUTE = "GET /Items page (warm, new)"
WARM_PAGES = 7


def warm_page(info: dict, user_id: str, token: str, start: int) -> bytes:
    import random
    import urllib.parse

    page = params(info, user_id, random.Random(3), False)
    page["startIndex"] = str(start)
    return raw_get("/Items?" + urllib.parse.urlencode(page), token)


def batch(server: Server, conn: KeepAlive, raw: bytes | Iterator[bytes], n: int) -> tuple[float, float]:
    """Server CPU in microseconds per request over ``n`` requests: the server process's, and
    with its child processes' (reader processes) added."""
    children = server.children()
    main0, all0 = server.cpu_ns(), server.cpu_ns(children)
    for _ in range(n):
        status, _body = conn.request(raw if isinstance(raw, bytes) else next(raw))
        if status not in (200, 304):
            raise RuntimeError(f"{server.label}: a request answered {status}")
    main1, all1 = server.cpu_ns(), server.cpu_ns(children)
    return (main1 - main0) / n / 1000, (all1 - all0) / n / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=2000, help="items in the synthetic library")
    parser.add_argument("--requests", type=int, default=1000, help="requests per route per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout measured in the same run")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="reelroom-overhead-"))
    servers: list[Server] = []
    try:
        print(f"building a library of {args.size} items ...", flush=True)
        info = build(tmp / "library", args.size)
        add_poster(tmp / "library", info)
        checkouts = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
        setups = []
        for label, root in checkouts:
            data = tmp / label
            shutil.copytree(tmp / "library", data)
            server = Server(label, root, data, tmp / f"{label}.probe")
            servers.append(server)
            token, user_id = sign_in(server.url)
            table: list[tuple[str, bytes | Iterator[bytes]]] = list(routes(info, token, user_id, server.url))
            conn = KeepAlive(server.port)
            for start in range(0, 100 * WARM_PAGES, 100):  # the warm page route's fragments stored
                conn.request(warm_page(info, user_id, token, start))
            table.append((WARM_ROUTE, itertools.cycle([warm_page(info, user_id, token, start)
                                                       for start in range(1, 100 * (WARM_PAGES - 1))])))
            for _name, raw in table:  # warm-up: caches, first imports, the token's session
                for _ in range(50):
                    conn.request(raw if isinstance(raw, bytes) else next(raw))
            setups.append((server, conn, table))

        names = [name for name, _ in setups[0][2]]
        best: dict[tuple[str, str], float] = {}
        items_share: dict[str, tuple[float, float]] = {}
        for _ in range(args.rounds):
            for i, name in enumerate(names):
                for server, conn, table in setups:
                    if name == WARM_ROUTE:
                        h0, c0 = server.handler_cpu()
                    main, micros = batch(server, conn, table[i][1], args.requests)
                    if name == WARM_ROUTE:
                        h1, c1 = server.handler_cpu()
                        handler = (h1 - h0) * 1e6 / max(1, c1 - c0)
                        prev = items_share.get(server.label)
                        if prev is None or main < prev[0]:
                            items_share[server.label] = (main, handler, micros)
                    key = (server.label, name)
                    best[key] = min(best.get(key, float("inf")), micros)

        load = os.getloadavg()[0]
        labels = [s.label for s, _, _ in setups]
        print(f"\nserver CPU per request (us, the server process and its readers), best of {args.rounds} rounds of {args.requests}; "
              f"{args.size} items; load average {load:.1f}")
        header = f"  {'route':<28}" + "".join(f"{lab:>12}" for lab in labels)
        if len(labels) == 2:
            header += f"{'ratio':>8}"
        print(header)
        for name in names:
            line = f"  {name:<28}" + "".join(f"{best[(lab, name)]:12.0f}" for lab in labels)
            if len(labels) == 2:
                line += f"{best[(labels[0], name)] / best[(labels[1], name)]:8.2f}"
            print(line)
        print(f"\n{WARM_ROUTE}, the server process: total / in the handler / outside it (us per request, the "
              "round with the lowest total; reader processes, if any, not counted here)")
        for lab in labels:
            total, handler, _with_readers = items_share[lab]
            print(f"  {lab:<10} {total:8.0f} {handler:8.0f} {total - handler:8.0f} "
                  f"({(total - handler) / total * 100:.0f}% outside the handler)")
        if args.json:
            args.json.write_text(json.dumps({"load": load, "best": {f"{k[0]}|{k[1]}": v for k, v in best.items()},
                                             "items": items_share}, indent=1))
        for _server, conn, _table in setups:
            conn.close()
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
