"""SIGTERM reaches the tray through the signal's wake-up fd (app/stop_signals.py): the Qt event loop
sleeps until a signal comes, then quits the app at once; no timer wakes it five times a second."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest
from PySide6.QtCore import QEventLoop, QObject, QTimer

from app import stop_signals

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="sends SIGTERM to the test process")


def test_a_sigterm_wakes_the_sleeping_event_loop_and_asks_to_quit(qapp) -> None:  # noqa: ANN001
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    previous_fd = signal.set_wakeup_fd(-1)
    try:
        signal.set_wakeup_fd(previous_fd)
    except OSError:  # an earlier test left a closed fd as the wake-up fd
        previous_fd = -1
    parent = QObject()
    loop = QEventLoop()
    asked: list[float] = []

    def quit_requested() -> None:
        asked.append(time.monotonic())
        loop.quit()

    try:
        wake = stop_signals.install(quit_requested, parent)
        assert isinstance(wake, stop_signals.SignalWake)
        write_fd = wake._write.fileno()
        assert not [t for t in parent.findChildren(QTimer) if t.isActive()]  # nothing polls
        guard = QTimer()
        guard.setSingleShot(True)
        guard.timeout.connect(loop.quit)  # without the wake, the loop would sleep until this
        guard.start(5000)
        sent = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
        start = time.monotonic()
        sent.start()
        loop.exec()  # in C: Python's handler runs only when Qt calls into Python
        sent.join()
        assert asked, "the signal did not ask the tray to quit"
        assert asked[0] - start < 2.0, asked[0] - start
    finally:
        if stop_signals._active is not None:
            stop_signals._active.close()
            stop_signals._active = None
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        now = signal.set_wakeup_fd(-1)
        try:
            signal.set_wakeup_fd(previous_fd)  # an earlier test's fd, if it is still open
        except OSError:
            pass
    assert now != write_fd and now in (previous_fd, -1)  # close() put the previous fd back, or none
