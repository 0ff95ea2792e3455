"""ffmpeg writing into a pipe: the one helper for every stream the server relays as ffmpeg makes
it (progressive remuxes and transcodes, server/playback/streams.py; a Live TV tuner that is not
plain HTTP, server/livetv/live.py).

The process is started through ``server/media/spawn.py`` (it dies with the server), in its own
process group (``kill`` ends ffmpeg and anything it started), with no stdin (spawned helpers
never take one) and stderr discarded. ``chunks`` yields its output as it comes and, however the
reading ends (the end of the output, the client going away, the task being cancelled), kills the
process group and reaps it; ``close`` does the same on its own and may be called any number of
times, also after ffmpeg has exited.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from server.media import spawn

PIPE_CHUNK = 256 * 1024


class FfmpegPipe:
    """A running ffmpeg whose standard output is read by the server."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, ffmpeg: str, args: Sequence[str]) -> FfmpegPipe:
        """Start ``ffmpeg`` with ``args`` (which should end in an output to ``pipe:1``)."""
        proc = await spawn.exec_async(ffmpeg, *args, stdin=asyncio.subprocess.DEVNULL,
                                      stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
                                      start_new_session=True)
        return cls(proc)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def chunks(self, size: int = PIPE_CHUNK) -> AsyncIterator[bytes]:
        """The output as it comes, up to ``size`` bytes at a time; the process is ended when the
        iteration ends for any reason."""
        stdout = self.proc.stdout
        try:
            if stdout is None:
                return
            while chunk := await stdout.read(size):
                yield chunk
        finally:
            await self.close()

    async def close(self) -> None:
        """Kill the process group (if still running) and reap the process."""
        spawn.kill(self.proc)  # a no-op for a process already gone, never raises
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            await self.proc.wait()
