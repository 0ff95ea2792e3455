"""A private X display with a system tray: Xvfb plus trayer (Debian's ``xvfb`` and ``trayer``).

Used by ``bench/tray.py`` and ``docs/take_screenshots.py``; nothing here touches the network
(Xvfb runs with ``-nolisten tcp``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time


class XvfbSession:
    """``with XvfbSession() as display:`` sets DISPLAY for the duration and stops what it started."""

    def __init__(self, size: str = "1280x800x24", tray: bool = True) -> None:
        self.size = size
        self.tray = tray
        self.display: str | None = None
        self._procs: list[subprocess.Popen] = []
        self._old_display: str | None = None

    @staticmethod
    def available() -> bool:
        return shutil.which("Xvfb") is not None

    def __enter__(self) -> str:
        if not self.available():
            raise RuntimeError("Xvfb is not installed (Debian: apt install xvfb)")
        read_fd, write_fd = os.pipe()
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", self.size, "-nolisten", "tcp"],
                                pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write_fd)
        self._procs.append(xvfb)
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()
        if not number:
            self.__exit__(None, None, None)
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"
        self._old_display = os.environ.get("DISPLAY")
        os.environ["DISPLAY"] = self.display
        if self.tray:
            if shutil.which("trayer") is None:
                raise RuntimeError("trayer is not installed (Debian: apt install trayer)")
            self._procs.append(subprocess.Popen(
                ["trayer", "--edge", "top", "--align", "right", "--widthtype", "pixel", "--width", "160",
                 "--heighttype", "pixel", "--height", "32", "--SetDockType", "true", "--transparent", "false",
                 "--tint", "0x2b2b2b", "--expand", "false"],
                env=dict(os.environ, DISPLAY=self.display), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(0.5)  # trayer claims the _NET_SYSTEM_TRAY selection
        return self.display

    def __exit__(self, *_exc: object) -> None:
        for proc in reversed(self._procs):
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
        self._procs.clear()
        if self._old_display is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = self._old_display
