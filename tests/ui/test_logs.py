from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QUrl

from tests.ui.fake_server import FakeServerThread
from ui.api_client import ServerClient
from ui.logs import LogTail, LogViewer, line_level
from ui.worker import BackgroundCalls

LINES = [
    "2026-11-22 10:00:00.123 [INF] reelroom.server: Reelroom 0.1.0 starting",
    "2026-11-22 10:00:00.200 [DBG] reelroom.db: opened library.db in WAL mode",
    "2026-11-22 10:00:01.004 [INF] reelroom.library: scanning Movies",
    "2026-11-22 10:00:02.510 [WRN] reelroom.probe: probe timeout on /media/Movies/Big Buck Bunny.mkv",
    "2026-11-22 10:00:03.777 [ERR] reelroom.transcode: ffmpeg exited with 1",
    "Traceback (most recent call last):",
    '  File "server/media/transcode.py", line 88, in run',
    "2026-11-22 10:00:04.000 [INF] reelroom.library: scan finished, 12 items",
    "2026-11-22 10:00:05.001 [FTL] reelroom.server: database timeout, giving up",
]


def _write(path: Path, lines: list[str], mtime: float | None = None) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def test_line_levels() -> None:
    assert line_level(LINES[0]) == 1
    assert line_level(LINES[1]) == 0
    assert line_level(LINES[3]) == 2
    assert line_level(LINES[4]) == 3 and line_level(LINES[8]) == 3
    assert line_level(LINES[5]) is None


def test_log_tail_reads_only_appended_lines_with_and_without_range(
    fake_server: FakeServerThread, client: ServerClient
) -> None:
    log = fake_server.state.log_dir / "log_20261122.log"
    _write(log, LINES[:2])
    for honor_range in (True, False):
        fake_server.state.honor_range = honor_range
        tail = LogTail(client, log.name)
        assert tail.read_new() == (LINES[:2], False)
        assert tail.read_new(size=log.stat().st_size) == ([], False)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(LINES[2] + "\n" + "2026-11-22 10:00:02 [INF] half a li")
        assert tail.read_new() == ([LINES[2]], False)
        with log.open("a", encoding="utf-8") as handle:
            handle.write("ne\n")
        assert tail.read_new() == (["2026-11-22 10:00:02 [INF] half a line"], False)
        log.write_text(LINES[4] + "\n", encoding="utf-8")
        assert tail.read_new(size=log.stat().st_size) == ([LINES[4]], True)
        log.write_text("".join(line + "\n" for line in LINES[:2]), encoding="utf-8")


def test_viewer_tails_filters_and_highlights(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls  # noqa: ANN001
) -> None:
    log_dir = fake_server.state.log_dir
    old = log_dir / "log_20261121.log"
    _write(old, ["2026-11-21 09:00:00.000 [INF] reelroom.server: yesterday"], mtime=time.time() - 86400)
    log = log_dir / "log_20261122.log"
    _write(log, LINES[:5])
    viewer = LogViewer(client, calls, poll_interval_ms=30)
    qtbot.addWidget(viewer)
    viewer.show()

    qtbot.waitUntil(lambda: "ffmpeg exited" in viewer.visible_text(), timeout=5000)
    assert viewer.current_file == log.name
    assert [viewer.file_list.item(i).text() for i in range(2)] == [log.name, old.name]
    assert "opened library.db" not in viewer.visible_text()  # Debug hidden by default

    _write(log, LINES[5:])
    qtbot.waitUntil(lambda: "giving up" in viewer.visible_text(), timeout=5000)
    text = viewer.visible_text()
    assert text.count("Reelroom 0.1.0 starting") == 1
    assert text.splitlines()[-1] == LINES[8]
    assert ("GET", "/System/Logs/Log") in fake_server.state.requests

    viewer.set_minimum_level(2)
    shown = viewer.visible_text().splitlines()
    assert shown == [LINES[3], LINES[4], LINES[5], LINES[6], LINES[8]]
    viewer.set_minimum_level(3)
    assert viewer.visible_text().splitlines() == [LINES[4], LINES[5], LINES[6], LINES[8]]
    viewer.set_minimum_level(0)
    assert viewer.visible_text().splitlines() == LINES

    viewer.search_edit.setText("timeout")
    assert viewer.highlight_count() == 2
    assert viewer.match_label.text() == "2 matches"
    assert viewer.find_next()
    assert viewer.text.textCursor().selectedText() == "timeout"
    viewer.search_edit.setText("no such words")
    assert viewer.highlight_count() == 0 and viewer.match_label.text() == "No matches"

    polls = viewer.polls
    qtbot.waitUntil(lambda: viewer.polls >= polls + 3, timeout=5000)
    assert viewer.visible_text().splitlines() == LINES  # nothing appended twice

    viewer.open_file(old.name)
    qtbot.waitUntil(lambda: "yesterday" in viewer.visible_text(), timeout=5000)
    assert "giving up" not in viewer.visible_text()
    assert not viewer.follow_check.isChecked()


def test_viewer_switches_to_a_new_log_file(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls  # noqa: ANN001
) -> None:
    log_dir = fake_server.state.log_dir
    _write(log_dir / "log_20261122.log", LINES[:1], mtime=time.time() - 60)
    viewer = LogViewer(client, calls, poll_interval_ms=30)
    qtbot.addWidget(viewer)
    qtbot.waitUntil(lambda: "starting" in viewer.visible_text(), timeout=5000)
    _write(log_dir / "log_20261123.log", ["2026-11-23 00:00:00.001 [INF] reelroom.server: new day"])
    qtbot.waitUntil(lambda: viewer.current_file == "log_20261123.log", timeout=5000)
    qtbot.waitUntil(lambda: "new day" in viewer.visible_text(), timeout=5000)
    assert "starting" not in viewer.visible_text()


def test_open_log_folder_uses_the_servers_log_path(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls  # noqa: ANN001
) -> None:
    opened: list[QUrl] = []
    viewer = LogViewer(client, calls, open_url=lambda url: opened.append(url) or True)
    qtbot.addWidget(viewer)
    viewer.open_log_folder()
    qtbot.waitUntil(lambda: bool(opened), timeout=5000)
    assert opened[0].toLocalFile() == str(fake_server.state.log_dir)


def test_viewer_keeps_history_when_the_log_rotates(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls  # noqa: ANN001
) -> None:
    log = fake_server.state.log_dir / "reelroom.log"
    _write(log, LINES[:3])
    viewer = LogViewer(client, calls, poll_interval_ms=30)
    qtbot.addWidget(viewer)
    qtbot.waitUntil(lambda: "scanning Movies" in viewer.visible_text(), timeout=5000)
    log.rename(log.with_name("reelroom.log.1"))
    _write(log, [LINES[7]])
    qtbot.waitUntil(lambda: "scan finished" in viewer.visible_text(), timeout=5000)
    assert viewer.current_file == "reelroom.log"
    assert viewer.visible_text().splitlines() == [LINES[0], LINES[2], LINES[7]]


def test_a_closed_viewer_gives_its_entries_back_and_shows_the_same_view_when_opened_again(
    qtbot, fake_server: FakeServerThread, client: ServerClient, calls: BackgroundCalls  # noqa: ANN001
) -> None:
    """Closed, the viewer holds no log lines (up to 50k entries and their text, in a tray that
    runs for weeks); shown again, it reads them back from the server: the same file, level filter,
    search and scroll position, with what was written while it was closed."""
    log = fake_server.state.log_dir / "log_20261122.log"
    many = [f"2026-11-22 10:{n // 60 % 60:02d}:{n % 60:02d}.000 [{'INF' if n % 3 else 'DBG'}] reelroom.server: line {n}"
            for n in range(3000)]
    _write(log, many)
    viewer = LogViewer(client, calls, poll_interval_ms=30)
    qtbot.addWidget(viewer)
    viewer.show()
    qtbot.waitUntil(lambda: viewer.entry_count == len(many), timeout=10_000)
    viewer.set_minimum_level(1)
    viewer.search_edit.setText("line 29")
    bar = viewer.text.verticalScrollBar()
    bar.setValue(bar.maximum() // 3)
    before = (viewer.visible_text(), viewer.highlight_count(), viewer.match_label.text(), bar.value())
    assert before[0].count("\n") + 1 == 2000 and before[1] > 0

    viewer.close()
    assert viewer.entry_count == 0 and viewer.visible_text() == "" and viewer.highlight_count() == 0
    requests = len(fake_server.state.requests)
    qtbot.wait(200)
    assert len(fake_server.state.requests) == requests  # closed: no polling

    viewer.show()
    qtbot.waitUntil(lambda: viewer.entry_count == len(many), timeout=10_000)
    assert viewer.current_file == log.name
    assert (viewer.visible_text(), viewer.highlight_count(), viewer.match_label.text(), bar.value()) == before

    viewer.close()
    _write(log, ["2026-11-22 11:00:00.000 [INF] reelroom.server: written while closed"])
    viewer.show()
    qtbot.waitUntil(lambda: "written while closed" in viewer.visible_text(), timeout=10_000)
    assert viewer.entry_count == len(many) + 1
    assert viewer.visible_text().count("reelroom.server: line ") == 2000
