"""An idle server's event loop wakes about once a second (server/runner.py ``Server``), not ten
times as uvicorn's own main loop does; the Date header still turns with the clock, and a shutdown
asked from another thread (the tray's) is seen at once, not at the next tick."""

from __future__ import annotations

import email.utils
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import start_server, stop_server


def _switches(native_id: int) -> int:
    """The thread's voluntary context switches: one each time its loop slept and woke."""
    status = Path(f"/proc/self/task/{native_id}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("voluntary_ctxt_switches")))


@pytest.mark.skipif(sys.platform != "linux", reason="counts the loop thread's wakeups in /proc")
def test_an_idle_servers_loop_wakes_about_once_a_second(tmp_path: Path) -> None:
    live = start_server(tmp_path / "data")
    try:
        thread_id = live.thread.native_id
        assert thread_id is not None
        time.sleep(3)  # the start-up tasks' work right after ready
        counts = []
        for _ in range(3):  # the quietest of three 3 s windows: a task may still wake it in one
            before = _switches(thread_id)
            time.sleep(3)
            counts.append(_switches(thread_id) - before)
        # uvicorn's 0.1 s tick alone gave 30 wakeups in 3 s; a tick a second gives 3
        assert min(counts) <= 9, counts
    finally:
        stop_server(live)


def test_the_date_header_turns_with_the_clock_and_a_shutdown_is_seen_at_once(tmp_path: Path) -> None:
    live = start_server(tmp_path / "data")
    try:
        for _ in range(3):
            time.sleep(1.3)
            r = httpx.get(live.url + "/System/Ping")
            now = time.time()
            sent = email.utils.parsedate_to_datetime(r.headers["date"]).timestamp()
            assert now - 1.5 <= sent <= now, (r.headers["date"], now)  # whole seconds, at most ~1 s old
        server = live.runner._server
        assert server is not None
        started_shutdown: list[float] = []
        shutdown = server.shutdown

        async def timed_shutdown(*args, **kwargs):
            started_shutdown.append(time.monotonic())
            return await shutdown(*args, **kwargs)

        server.shutdown = timed_shutdown  # type: ignore[method-assign]
        while not 0.05 < time.time() % 1.0 < 0.15:  # just after a tick: the next is ~0.9 s away
            time.sleep(0.01)
        asked = time.monotonic()
    finally:
        stop_server(live)
    assert started_shutdown and started_shutdown[0] - asked < 0.6, [t - asked for t in started_shutdown]
