"""What a handler's parameters cost per request: routing, query extraction, Litestar's signature
model, dependencies and the parameter groups of server/api/params.py, up to the handler's first
service call, in-process (no socket, no database, no wire middleware).

The app is built from the real handlers; its `ctx` is a stand-in whose first use ends the request
(an exception answered 204), so the figure is the parameter layer alone. Prints the best mean of
several rounds in CPU microseconds per request, for a few hot routes with the query their clients send.

    python bench/params.py [--root CHECKOUT] [--requests 2000] [--rounds 7]

``--root`` measures another checkout (e.g. the commit before a change, unpacked with git archive).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ITEM = "0123456789abcdef0123456789abcdef"
USER = "fedcba9876543210fedcba9876543210"

# (label, Litestar path, query pairs): path and keys as the wire middleware hands them on (the
# route's internal path, see server/http/routing.py; the operation's spelling; arrays as repeated keys).
CASES = [
    ("GET /Items (bench/items_query.py's page)", "/Items", [
        ("userId", USER), ("parentId", ITEM), ("recursive", "true"), ("includeItemTypes", "Movie"),
        ("sortBy", "SortName"), ("sortOrder", "Ascending"), ("limit", "100"), ("startIndex", "4200"),
        ("fields", "PrimaryImageAspectRatio"), ("fields", "MediaSources"), ("enableTotalRecordCount", "true")]),
    ("GET /Items/{id}/Images/Primary (a poster)", f"/Items/{ITEM}/Images/Primary", [
        ("fillHeight", "446"), ("fillWidth", "297"), ("quality", "96"), ("tag", "abcdef")]),
    ("GET /Shows/NextUp", "/Shows/NextUp", [
        ("userId", USER), ("limit", "24"), ("fields", "PrimaryImageAspectRatio"), ("fields", "DateCreated"),
        ("imageTypeLimit", "1"), ("enableImageTypes", "Primary"), ("enableImageTypes", "Backdrop"),
        ("enableTotalRecordCount", "false")]),
    ("GET /Videos/{id}/stream (direct play)", f"/Videos/{ITEM}/stream", [
        ("static", "true"), ("mediaSourceId", ITEM), ("deviceId", "bench")]),
    ("GET /videos/{id}/hls1/main/7.ts (an HLS segment)", f"/Videos/{ITEM}/hls1/main/~*.*/7/ts", [
        ("DeviceId", "bench"), ("MediaSourceId", ITEM), ("VideoCodec", "h264"), ("AudioCodec", "aac"),
        ("AudioStreamIndex", "1"), ("VideoBitrate", "139616000"), ("AudioBitrate", "384000"),
        ("MaxFramerate", "23.976"), ("PlaySessionId", "abc"), ("api_key", "k"), ("SubtitleMethod", "Encode"),
        ("TranscodingMaxAudioChannels", "2"), ("RequireAvc", "false"), ("SegmentContainer", "ts"),
        ("MinSegments", "1"), ("BreakOnNonKeyFrames", "True"), ("h264-level", "40"),
        ("h264-videobitdepth", "8"), ("h264-profile", "high"), ("TranscodeReasons", "ContainerNotSupported"),
        ("runtimeTicks", "420000000"), ("actualSegmentLengthTicks", "60000000")]),
]


def build_app():
    from litestar import Litestar, Response
    from litestar.di import Provide

    from server.api.base import provide_auth
    from server.api.not_implemented import stub_handlers
    from server.app import collect_handlers, implemented_operations
    from server.wire.operations import BY_ID

    class Stop(Exception):
        pass

    from server.context import ServerContext

    class StandIn(ServerContext):  # a ServerContext to Litestar's type check; any use ends the request
        def __init__(self) -> None:
            pass

        def __getattribute__(self, name):
            if name.startswith("__"):
                return object.__getattribute__(self, name)
            raise Stop

    stand_in = StandIn()

    def provide_ctx():
        return stand_in

    provide_ctx.__annotations__["return"] = ServerContext

    handlers = collect_handlers()
    handlers += stub_handlers(set(BY_ID) - implemented_operations(handlers))
    app = Litestar(route_handlers=handlers,
                   dependencies={"ctx": Provide(provide_ctx, sync_to_thread=False),
                                 "auth": Provide(provide_auth, sync_to_thread=False)},
                   exception_handlers={Stop: lambda request, exc: Response(content=b"", status_code=204)},
                   logging_config=None, debug=False)
    app.state.ctx = stand_in  # where handlers read ctx since they no longer take it as a dependency
    return app


def scope_for(path: str, pairs: list[tuple[str, str]]) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
            "path": path, "raw_path": path.encode(),
            "query_string": urlencode(pairs).encode(), "root_path": "", "headers": [(b"host", b"bench")],
            "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1), "state": {}}


async def run(app, path: str, pairs: list[tuple[str, str]], n: int, rounds: int) -> tuple[float, int]:
    status = 0

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    async def once():
        await app(scope_for(path, pairs), receive, send)

    for _ in range(200):
        await once()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()  # CPU time of this process: steadier than wall time on a busy machine
        for _ in range(n):
            await once()
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best, status


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.root).resolve()))
    os.chdir(args.root)
    app = build_app()
    print(f"checkout {args.root}; best of {args.rounds} rounds of {args.requests} requests; "
          f"load average {os.getloadavg()[0]:.1f}")
    for label, path, pairs in CASES:
        micros, status = asyncio.run(run(app, path, pairs, args.requests, args.rounds))
        print(f"  {label:<50} {micros:7.1f} us/request (status {status})")


if __name__ == "__main__":
    main()
