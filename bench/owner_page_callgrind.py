"""The owner process's instructions per warm Items page handed to a reader, counted by callgrind.

A page handed to a reader process costs two processes: the reader's (its store fetch, the join, the
write to the client's socket) and the owner's (the HTTP parse, the wire middleware, the guard,
admission, the Items lane, the query, the hand-off of the socket, the reply's bookkeeping, the event
loop around it). This bench counts the owner's share alone, on warm pages: a real
``reelroom-server`` runs under ``valgrind --tool=callgrind`` (its reader processes are not traced:
valgrind follows no ``exec``), with ``REELROOM_READERS=1 REELROOM_READERS_LOCAL=0
REELROOM_READERS_SHARE=0 REELROOM_READERS_BUSY=0 REELROOM_READERS_IDLE=3600``, so every page goes
to the one reader (the ``1l0`` of bench/items_query.py). One keep-alive client asks
bench/items_query.py's page (100 movies, Fields=PrimaryImageAspectRatio,MediaSources,Overview,
user data, the headers wrk sends): first the pages at startIndex 0, 100, ... (their fragments
stored and marked), then ``--warm`` pages at new startIndexes inside them (the owner's first uses:
compiled parsers, caches), then ``--rounds`` rounds of ``--requests`` more between
``callgrind_control -z`` and ``-d``; every query string is new (no whole-reply hit) and every
fragment warm. The lowest round counts (background work only adds). The dump of that round is kept
(``--out DIR``) and ranked with ``callgrind_annotate`` (self and inclusive, top ``--top``).

    python bench/owner_page_callgrind.py --data DIR [--baseline CHECKOUT] [--requests 50] [--out DIR]

``--data`` is a kept library of bench/items_query.py (``--keep``: DIR/100000), and it is written to
(the server's start, sign-in, the fragment store): pass a copy. With ``--baseline`` that checkout is
counted in the same run, on its own copy of the data folder.

Slow: a server under callgrind runs some 50 times slower; its start on a 100k library takes minutes.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import start_server, stop_server  # noqa: E402
from callgrind_routes import Traced  # noqa: E402
from items_query import AUTH, params, settle, sign_in  # noqa: E402
from overhead import KeepAlive  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = {"REELROOM_READERS": "1", "REELROOM_READERS_LOCAL": "0", "REELROOM_READERS_SHARE": "0",
       "REELROOM_READERS_BUSY": "0", "REELROOM_READERS_IDLE": "3600"}
WARM_PAGES = 12  # pages at startIndex 0, 100, ...: their fragments stored before the count


class Client(KeepAlive):
    """One keep-alive connection sending what wrk sends (Host, Authorization)."""

    def __init__(self, port: int, token: str, info: dict, user_id: str) -> None:
        super().__init__(port)
        self.head = (f"Host: 127.0.0.1:{port}\r\nAuthorization: " + AUTH.format(n=3)
                     + f', Token="{token}"\r\n\r\n').encode()
        import random
        p = params(info, user_id, random.Random(0), True)
        p.pop("startIndex")
        self.base = "/Items?" + urllib.parse.urlencode(p)

    def page(self, start: int) -> None:
        status, _ = self.request(f"GET {self.base}&startIndex={start} HTTP/1.1\r\n".encode() + self.head)
        if status != 200:
            raise RuntimeError(f"page at {start} answered {status}")


class Owner(Traced):
    """bench/callgrind_routes.py's traced server, its dumps kept (to be ranked)."""

    def dump(self) -> tuple[int, Path]:
        """Dump the counters since the last zeroing: their total Ir and the file."""
        before = set(self.out.glob("callgrind.out.*"))
        self.control("-d")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for path in set(self.out.glob("callgrind.out.*")) - before:
                if path.stat().st_size:
                    m = re.search(r"^(?:summary|totals): (\d+)", path.read_text(errors="replace"), re.MULTILINE)
                    if m:
                        return int(m.group(1)), path
            time.sleep(0.2)
        raise RuntimeError("no callgrind dump")


def annotate(path: Path, top: int, inclusive: bool) -> str:
    """The dump's ``top`` functions by cost, C level (the interpreter's frames are not Python
    functions: for those, py-spy or cProfile on a native run), without the entry frames every
    instruction is under."""
    out = subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}",
                          "--threshold=100", str(path)], capture_output=True, text=True).stdout
    lines = [ln for ln in out.splitlines()
             if (m := re.match(r"^\s*[\d,]+ \(\s*([\d.]+)%\)", ln)) and float(m.group(1)) < 99.9]
    return "\n".join(lines[:top])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True, help="a copy of a kept library (DIR/100000)")
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warm", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--out", type=Path, help="keep the dumps here (else a temporary folder)")
    args = parser.parse_args()
    import json
    info = json.loads((args.data / "bench-info.json").read_text())
    tmp = Path(tempfile.mkdtemp(prefix="reelroom-owner-cg-"))
    out = args.out or tmp
    checkouts = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    results: dict[str, tuple[float, Path]] = {}
    try:
        signed: dict[str, tuple[Path, Path, str, str]] = {}
        for label, root in checkouts:
            data = args.data
            if len(checkouts) > 1:
                data = tmp / label / args.data.name
                shutil.copytree(args.data, data, symlinks=True)
            proc, url = start_server(data, root=root)  # signed in natively (a password hash under callgrind: minutes)
            try:
                token, user_id = sign_in(url, timeout=120)
            finally:
                stop_server(proc)
            signed[label] = (root, data, token, user_id)
        # the servers start under callgrind side by side (minutes each at 100k)
        with concurrent.futures.ThreadPoolExecutor(len(signed)) as pool:
            started = {label: pool.submit(Owner, label, root, data, out / label, ENV)
                       for label, (root, data, _token, _user) in signed.items()}
            servers = {label: future.result() for label, future in started.items()}
        for label, server in servers.items():
            _root, _data, token, user_id = signed[label]
            t0 = time.monotonic()
            with httpx.Client(base_url=server.url, timeout=300) as c:
                settle(c, token, timeout=3600)
            print(f"{label}: settled under callgrind in {time.monotonic() - t0:.0f} s", flush=True)
            client = Client(server.port, token, info, user_id)
            for k in range(WARM_PAGES):
                client.page(100 * k)
            starts = (s for s in range(1, 100 * (WARM_PAGES - 1)) if s % 100)
            for _ in range(args.warm):
                client.page(next(starts))
            time.sleep(5)
            best: tuple[float, Path] | None = None
            for _ in range(args.rounds):
                server.control("-z")
                for _ in range(args.requests):
                    client.page(next(starts))
                total, path = server.dump()
                cost = total / args.requests
                print(f"  {label}: {cost / 1000:.0f} k instructions a page ({path.name})", flush=True)
                if best is None or cost < best[0]:
                    best = (cost, path)
            assert best is not None
            results[label] = best
            server.stop()
        print(f"\nthe owner's instructions per warm page handed to a reader (callgrind, {args.requests} pages a "
              f"round, the lowest of {args.rounds}); load average {os.getloadavg()[0]:.1f}")
        for label, (cost, path) in results.items():
            print(f"  {label:<9} {cost / 1000:8.0f} k   ({path})")
        if len(results) == 2:
            print(f"  x{results['baseline'][0] / results['this'][0]:.3f} fewer")
        for label, (_cost, path) in results.items():
            for inclusive in (False, True):
                print(f"\n{label}: {'inclusive' if inclusive else 'self'} cost by function (whole round)")
                print(annotate(path, args.top, inclusive))
    finally:
        for server in locals().get("servers", {}).values():
            if server.proc.poll() is None:
                server.stop()
        shutil.rmtree(tmp, ignore_errors=True)  # (the data copies; the dumps too without --out)


if __name__ == "__main__":
    main()
