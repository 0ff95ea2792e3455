"""SIGTERM and SIGINT for the Qt app: ask the tray to quit (stopping the server cleanly) instead of
dying mid-write.

Python runs signal handlers only between bytecodes of the main thread, and a Qt event loop sleeps
in C. So the signal's own wake-up byte (``signal.set_wakeup_fd``, written by Python's C-level
handler) goes to a socket pair that a ``QSocketNotifier`` watches: the event loop wakes only when a
signal comes, runs a slot, and the Python handler runs with it. Where that cannot be set up (not the
main thread, or a platform refusing the socket), a 200 ms timer wakes the interpreter instead, as
before; that timer alone woke an idle tray five times a second."""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, QTimer

FALLBACK_INTERVAL_MS = 200
# The installed wake, kept here rather than only by its Qt parent: its write socket is the process's
# wake-up fd, which must stay open (a closed fd's number could be reused by a file) until closed.
_active: SignalWake | None = None


class SignalWake(QObject):
    """Owns the socket pair and its notifier; ``close()`` puts the previous wake-up fd back."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        try:
            self.previous_fd = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        except (ValueError, OSError):
            self._read.close()
            self._write.close()
            raise
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)
        self.closed = False

    def _drain(self) -> None:
        """Runs Python in the main thread, so a pending signal's handler runs now; empties the pair."""
        try:
            while self._read.recv(512):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._notifier.setEnabled(False)
        except RuntimeError:  # deleted with its Qt parent already
            pass
        try:
            signal.set_wakeup_fd(self.previous_fd)
        except OSError:  # the previous fd was closed meanwhile: none, never our socket's soon-closed fd
            signal.set_wakeup_fd(-1)
        except ValueError:  # not the main thread: the fd is left as it is
            pass
        self._read.close()
        self._write.close()


def install(quit_requested: Callable[[], None], parent: QObject,
            interval_ms: int = FALLBACK_INTERVAL_MS) -> SignalWake | QTimer:
    def on_signal(_signum: int, _frame: object) -> None:
        QTimer.singleShot(0, quit_requested)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    global _active
    if _active is not None:
        _active.close()
        _active = None
    try:
        _active = SignalWake(parent)
        return _active
    except (ValueError, OSError):
        wake = QTimer(parent)
        wake.timeout.connect(lambda: None)
        wake.start(interval_ms)
        return wake
