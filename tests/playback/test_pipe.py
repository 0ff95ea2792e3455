"""server/playback/pipe.py: ffmpeg into a pipe, read as it comes, and never left running."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest

from server.playback.pipe import FfmpegPipe

pytestmark = [
    pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs ffmpeg"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks processes through /proc"),
]

ENDLESS = ["-nostdin", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
           "sine=frequency=440:sample_rate=48000", "-c:a", "pcm_s16le", "-f", "wav", "pipe:1"]


def _gone(pid: int) -> bool:
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


async def test_a_client_that_leaves_ends_ffmpeg():
    pipe = await FfmpegPipe.start(shutil.which("ffmpeg"), ENDLESS)
    assert os.getpgid(pipe.pid) == pipe.pid  # its own process group, killed as a whole
    received = 0
    chunks = pipe.chunks(4096)
    async for chunk in chunks:
        received += len(chunk)
        if received > 20_000:
            break
    await chunks.aclose()  # what the response does when the client goes away
    assert received > 20_000
    assert pipe.returncode is not None and _gone(pipe.pid)
    await pipe.close()  # again: no error


async def test_a_cancelled_reader_ends_ffmpeg():
    pipe = await FfmpegPipe.start(shutil.which("ffmpeg"), ENDLESS)

    async def read_all() -> None:
        async for _ in pipe.chunks():
            pass

    task = asyncio.create_task(read_all())
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert pipe.returncode is not None and _gone(pipe.pid)


async def test_the_whole_output_arrives_and_the_process_is_reaped():
    args = ["-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
            "sine=frequency=440:sample_rate=8000:duration=1", "-c:a", "pcm_s16le", "-f", "s16le", "pipe:1"]
    pipe = await FfmpegPipe.start(shutil.which("ffmpeg"), args)
    data = b"".join([chunk async for chunk in pipe.chunks()])
    assert len(data) == 8000 * 2  # one second of 16-bit mono at 8 kHz
    assert pipe.returncode == 0
