"""SIGTERM and SIGINT for the Qt app: ask the tray to quit (stopping the server cleanly) instead of
dying mid-write. Python runs signal handlers only between bytecodes of the main thread, and a Qt
event loop sleeps in C, so a short timer wakes the interpreter to notice them."""

from __future__ import annotations

import signal
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def install(quit_requested: Callable[[], None], parent: QObject, interval_ms: int = 200) -> QTimer:
    def on_signal(_signum: int, _frame: object) -> None:
        QTimer.singleShot(0, quit_requested)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    wake = QTimer(parent)
    wake.timeout.connect(lambda: None)
    wake.start(interval_ms)
    return wake
