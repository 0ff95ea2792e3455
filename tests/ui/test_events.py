"""The tray's socket reader (ui/events.py) sleeps until a message comes: no timeout tick wakes its
thread while the server is quiet, and a stop ends it at once (its connection is shut down)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.conftest import auth_header, complete_wizard, start_server, stop_server
from ui import events as events_module
from ui.events import ServerEvents


def _switches(native_id: int) -> int:
    status = Path(f"/proc/self/task/{native_id}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("voluntary_ctxt_switches")))


@pytest.mark.skipif(sys.platform != "linux", reason="counts the reader thread's wakeups in /proc")
def test_the_reader_sleeps_between_messages_and_a_stop_ends_it_at_once(qapp, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    # A long subscription period: a quiet server sends nothing for the window measured below.
    monkeypatch.setattr(events_module, "TASKS_PERIOD_MS", 60_000)
    live = start_server(tmp_path / "data")
    try:
        complete_wizard(live)
        reader = ServerEvents(live.url, auth_header(live.admin_token)["Authorization"], "events-test")
        received: list[str] = []
        reader.received.connect(lambda kind, _data: received.append(kind))
        reader.start()
        deadline = time.monotonic() + 10
        while not (reader.connected and received) and time.monotonic() < deadline:
            qapp.processEvents()
            time.sleep(0.02)
        assert reader.connected and "ScheduledTasksInfo" in received  # subscribed, first reply in
        thread = reader._thread
        assert thread is not None and thread.native_id is not None
        time.sleep(0.5)
        before = _switches(thread.native_id)
        time.sleep(3)
        woke = _switches(thread.native_id) - before
        assert woke <= 2, woke  # a 0.5 s recv tick woke it 6 times in 3 s
        asked = time.monotonic()
        reader.stop()
        assert reader.wait(5)
        assert time.monotonic() - asked < 0.4  # the tick was the only way it noticed a stop
    finally:
        stop_server(live)
