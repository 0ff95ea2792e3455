from __future__ import annotations

import threading

from PySide6.QtWidgets import QWidget

from ui.updates import is_newer, newest_release, version_key
from ui.worker import BackgroundCalls


def test_results_arrive_on_the_gui_thread(qtbot, calls: BackgroundCalls) -> None:  # noqa: ANN001
    seen: list[tuple[object, bool]] = []
    calls.submit(lambda: threading.current_thread() is threading.main_thread(),
                 on_result=lambda off_main: seen.append((off_main, threading.current_thread() is threading.main_thread())))
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    assert seen == [(False, True)]


def test_errors_reach_on_error_and_deleted_contexts_are_skipped(qtbot, calls: BackgroundCalls) -> None:  # noqa: ANN001
    errors: list[Exception] = []

    def boom() -> None:
        raise ValueError("no such folder")

    calls.submit(boom, on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert str(errors[0]) == "no such folder"

    widget = QWidget()
    gate = threading.Event()
    results: list[int] = []
    calls.submit(lambda: gate.wait(5) and 1, on_result=results.append, context=widget)
    widget.deleteLater()
    qtbot.waitUntil(lambda: not _alive(widget), timeout=5000)
    gate.set()
    with qtbot.waitSignal(calls.idle, timeout=5000):
        pass
    assert results == []


def _alive(widget: QWidget) -> bool:
    import shiboken6

    return shiboken6.isValid(widget)


def test_versions_compare_numerically() -> None:
    assert version_key("0.10.0") > version_key("0.9.9")
    assert version_key("1.0") == version_key("1.0.0")
    assert is_newer("0.2.0", "0.1.9") and not is_newer("0.1.0", "0.1.0")
    assert not is_newer("0.1.0-beta", "0.1.0")
    release = newest_release([{"name": "reelroom", "versions": [{"version": "0.3.0"}, {"version": "0.12.1"}]}])
    assert release is not None and release.version == "0.12.1"
    assert newest_release([{"name": "Other", "versions": [{"version": "5.0"}]}]) is None
