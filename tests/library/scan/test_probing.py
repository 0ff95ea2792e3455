"""The probe worker pool: threads by default, spawned processes on request; both probe alike."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from server.library.scan.probing import WorkerPool, fingerprint, probe_media


def test_threads_and_processes_probe_the_same(library_source: Path, tmp_path: Path) -> None:
    song = library_source / "music" / "Band" / "Second Album" / "02 - Tune 2.mp3"
    threads = WorkerPool(workers=2)
    processes = WorkerPool(workers=2, use_processes=True)
    try:
        assert isinstance(threads.executor(1000), ThreadPoolExecutor)
        assert isinstance(processes.executor(10), ThreadPoolExecutor)  # small batches stay in threads
        big = processes.executor(100)
        assert isinstance(big, ProcessPoolExecutor)
        args = (str(song), True, "ab" * 16, str(tmp_path))
        a = threads.executor(1000).submit(probe_media, *args).result(60)
        b = big.submit(probe_media, *args).result(60)
    finally:
        threads.close()
        processes.close()
    assert a == b
    assert a["Fingerprint"] == fingerprint(str(song)) and a["Audio"]["title"] == "Tune 2"
    assert [s["Type"] for s in a["Streams"]] == ["Audio"] and a["Container"] == "mp3"


def test_a_broken_file_is_reported_not_raised(tmp_path: Path) -> None:
    bad = tmp_path / "broken.mkv"
    bad.write_bytes(b"\x1aE\xdf\xa3 not a real matroska file" * 10)
    result = probe_media(str(bad), False, "cd" * 16, str(tmp_path))
    assert result["Error"] and "Streams" not in result and result["Fingerprint"]
