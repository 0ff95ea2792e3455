"""Find the ffmpeg binary and learn what it can do.

Discovery order: the configured path, then ``ffmpeg`` on PATH, then the binary that
ships inside the ``imageio-ffmpeg`` wheel. The capability lists (encoders, decoders,
hardware acceleration methods) are read once per binary and cached.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

FfmpegSource = Literal["configured", "path", "bundled"]

_VERSION_RE = re.compile(r"^ffmpeg version (\S+)", re.MULTILINE)
_CODEC_LINE_RE = re.compile(r"^\s*([VASFXBD.]{6})\s+(\S+)\s")
_PROBE_TIMEOUT_S = 20


class FfmpegNotFoundError(RuntimeError):
    """No usable ffmpeg binary was found in any of the places searched."""


@dataclass(frozen=True)
class FfmpegInfo:
    """One ffmpeg binary and its capabilities."""

    path: str
    source: FfmpegSource
    version: str
    encoders: frozenset[str]
    decoders: frozenset[str]
    hwaccels: frozenset[str]

    @property
    def version_tuple(self) -> tuple[int, ...]:
        """Leading numeric version parts, e.g. (5, 1, 9); () for git builds without one."""
        match = re.match(r"n?(\d+(?:\.\d+)*)", self.version)
        return tuple(int(p) for p in match.group(1).split(".")) if match else ()

    def has_encoder(self, name: str) -> bool:
        return name in self.encoders

    def has_decoder(self, name: str) -> bool:
        return name in self.decoders


def find_ffmpeg(configured: str | None = None) -> FfmpegInfo:
    """Locate ffmpeg (configured path, PATH, imageio-ffmpeg) and describe it.

    A configured path that is missing or does not run is logged and skipped.
    Raises FfmpegNotFoundError when no candidate works.
    """
    tried: list[str] = []
    for source, locate in _candidates(configured):
        candidate = locate()  # in order: imageio-ffmpeg is imported only when PATH has none
        if candidate is None:
            continue
        resolved = _resolve_executable(candidate)
        if resolved is None:
            tried.append(f"{source}: {candidate} (not an executable file)")
            if source == "configured":
                log.warning("Configured ffmpeg %r is not an executable file; searching elsewhere", candidate)
            continue
        try:
            stat = os.stat(resolved)
            version, encoders, decoders, hwaccels = _probe_binary(resolved, stat.st_mtime_ns, stat.st_size)
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            tried.append(f"{source}: {resolved} ({exc})")
            log.warning("ffmpeg at %s does not work: %s", resolved, exc)
            continue
        return FfmpegInfo(resolved, source, version, encoders, decoders, hwaccels)
    raise FfmpegNotFoundError("No usable ffmpeg found. Tried: " + ("; ".join(tried) or "nothing"))


def _candidates(configured: str | None) -> list[tuple[FfmpegSource, Callable[[], str | None]]]:
    """Where to look, in order; each place is looked at only when the ones before it gave nothing."""
    found: list[tuple[FfmpegSource, Callable[[], str | None]]] = []
    if configured and configured.strip():
        found.append(("configured", configured.strip))
    if getattr(sys, "frozen", False):
        # An installed (PyInstaller) build ships its own ffmpeg: prefer it over whatever is on PATH.
        found.append(("bundled", _bundled_ffmpeg))
        found.append(("path", _on_path))
    else:
        found.append(("path", _on_path))
        found.append(("bundled", _bundled_ffmpeg))
    return found


def _on_path() -> str | None:
    return shutil.which("ffmpeg")


def frozen_ffmpeg() -> Path | None:
    """The ffmpeg of a PyInstaller bundle: ``<bundle>/ffmpeg/ffmpeg[.exe]`` (see installer/reelroom.spec)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if not (getattr(sys, "frozen", False) and bundle):
        return None
    path = Path(bundle) / "ffmpeg" / ("ffmpeg.exe" if sys.platform == "win32" else "ffmpeg")
    return path if path.is_file() else None


def _bundled_ffmpeg() -> str | None:
    frozen = frozen_ffmpeg()
    if frozen is not None:
        return str(frozen)
    try:
        import imageio_ffmpeg
    except ImportError:
        return None
    try:
        return str(imageio_ffmpeg.get_ffmpeg_exe())
    except (RuntimeError, OSError):
        return None


def _resolve_executable(candidate: str) -> str | None:
    path = Path(candidate).expanduser()
    if path.is_dir():
        path = path / ("ffmpeg.exe" if sys.platform == "win32" else "ffmpeg")
    if path.is_file() and os.access(path, os.X_OK):
        return str(path.resolve())
    return None


def _run_ffmpeg(path: str, *args: str) -> str:
    from server.media import spawn

    proc = spawn.run([path, "-hide_banner", *args], encoding="utf-8", errors="replace", timeout=_PROBE_TIMEOUT_S)
    if proc.returncode != 0:
        raise ValueError(f"'{' '.join(args)}' exited with {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return proc.stdout


@lru_cache(maxsize=8)
def _probe_binary(
    path: str, mtime_ns: int, size: int
) -> tuple[str, frozenset[str], frozenset[str], frozenset[str]]:
    """Ask one binary (identified by path, mtime and size) for its version and capabilities."""
    version_text = _run_ffmpeg(path, "-version")
    match = _VERSION_RE.search(version_text)
    if not match:
        raise ValueError("output of -version does not name an ffmpeg version")
    encoders = parse_codec_list(_run_ffmpeg(path, "-encoders"))
    decoders = parse_codec_list(_run_ffmpeg(path, "-decoders"))
    hwaccels = parse_hwaccels(_run_ffmpeg(path, "-hwaccels"))
    return match.group(1), encoders, decoders, hwaccels


def parse_codec_list(text: str) -> frozenset[str]:
    """Names from the output of ``ffmpeg -encoders`` or ``-decoders``."""
    names: set[str] = set()
    in_table = False
    for line in text.splitlines():
        if line.strip().startswith("------"):
            in_table = True
            continue
        if not in_table:
            continue
        match = _CODEC_LINE_RE.match(line)
        if match and match.group(1)[0] in "VAS":
            names.add(match.group(2))
    return frozenset(names)


def parse_hwaccels(text: str) -> frozenset[str]:
    """Method names from the output of ``ffmpeg -hwaccels``."""
    names: set[str] = set()
    started = False
    for line in text.splitlines():
        if line.strip().lower().startswith("hardware acceleration methods"):
            started = True
            continue
        if started and line.strip():
            names.add(line.strip())
    return frozenset(names)
