"""Run blocking calls on a QThreadPool and deliver their results on the GUI thread."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger("reelroom.desktop")

ResultCallback = Callable[[Any], None]
ErrorCallback = Callable[[Exception], None]


class _Delivery(QObject):
    """Lives on the GUI thread; its signal is emitted from a pool thread, so the slot runs queued."""

    finished = Signal(object, object)

    def __init__(
        self,
        owner: BackgroundCalls,
        on_result: ResultCallback | None,
        on_error: ErrorCallback | None,
        context: QObject | None,
    ) -> None:
        super().__init__()
        self._owner = owner
        self._on_result = on_result
        self._on_error = on_error
        self._context = context
        self.finished.connect(self._deliver)

    @Slot(object, object)
    def _deliver(self, result: Any, error: Exception | None) -> None:
        try:
            if self._context is not None and not shiboken6.isValid(self._context):
                return
            if error is None:
                if self._on_result is not None:
                    self._on_result(result)
            elif self._on_error is not None:
                self._on_error(error)
            else:
                log.warning("Background call failed: %s", error)
        except Exception:
            log.exception("A background call's callback raised")
        finally:
            self._owner._forget(self)


class _Call(QRunnable):
    def __init__(self, fn: Callable[[], Any], delivery: _Delivery) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self._fn = fn
        self._delivery = delivery

    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:  # handed to the GUI thread, shown to the person
            self._delivery.finished.emit(None, exc)
        else:
            self._delivery.finished.emit(result, None)


class BackgroundCalls(QObject):
    """Submit blocking functions; callbacks run later on the thread that created this object."""

    idle = Signal()

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None,
                 max_threads: int = 6) -> None:
        super().__init__(parent)
        if pool is None:
            pool = QThreadPool(self)
            pool.setMaxThreadCount(max_threads)  # a slow or unreachable server must not starve other calls
        self._pool = pool
        self._running: dict[_Delivery, _Call] = {}

    @property
    def pending(self) -> int:
        """Calls submitted whose callbacks have not run yet."""
        return len(self._running)

    def submit(
        self,
        fn: Callable[[], Any],
        on_result: ResultCallback | None = None,
        on_error: ErrorCallback | None = None,
        context: QObject | None = None,
    ) -> None:
        """Run ``fn()`` on the pool; ``on_result``/``on_error`` are skipped if ``context`` was deleted."""
        delivery = _Delivery(self, on_result, on_error, context)
        call = _Call(fn, delivery)
        self._running[delivery] = call
        self._pool.start(call)

    def wait_for_done(self, msecs: int = 10_000) -> bool:
        """Block until the pool has no running work (used at shutdown only)."""
        return self._pool.waitForDone(msecs)

    def _forget(self, delivery: _Delivery) -> None:
        self._running.pop(delivery, None)
        delivery.deleteLater()
        if not self._running:
            self.idle.emit()
