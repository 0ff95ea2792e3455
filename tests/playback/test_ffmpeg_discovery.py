"""Finding ffmpeg: configured path, PATH, then imageio-ffmpeg's binary."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import imageio_ffmpeg
import pytest

from server.media.ffmpeg import FfmpegNotFoundError, find_ffmpeg, parse_codec_list, parse_hwaccels


def test_path_ffmpeg_is_found_with_capabilities() -> None:
    system = shutil.which("ffmpeg")
    if system is None:
        pytest.skip("no ffmpeg on PATH")
    info = find_ffmpeg(None)
    assert info.source == "path"
    assert Path(info.path) == Path(system).resolve()
    assert info.version and info.version_tuple[0] >= 4
    assert info.has_encoder("libx264") and info.has_encoder("aac")
    assert info.has_decoder("h264")
    assert "libx264" not in info.decoders


def test_configured_path_wins(tmp_path: Path) -> None:
    bundled = imageio_ffmpeg.get_ffmpeg_exe()
    info = find_ffmpeg(bundled)
    assert info.source == "configured"
    assert Path(info.path) == Path(bundled).resolve()
    assert info.has_encoder("libx264")


def test_bad_configured_path_falls_back(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        info = find_ffmpeg(str(tmp_path / "missing" / "ffmpeg"))
    assert info.source in ("path", "bundled")
    assert "missing" in caplog.text


def test_bundled_binary_when_path_has_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    info = find_ffmpeg(None)
    assert info.source == "bundled"
    assert Path(info.path) == Path(imageio_ffmpeg.get_ffmpeg_exe()).resolve()


def test_nothing_found_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", lambda: str(tmp_path / "none"))
    with pytest.raises(FfmpegNotFoundError):
        find_ffmpeg(None)


def test_parsers() -> None:
    encoders = """Encoders:
 V..... = Video
 ------
 V....D libx264              libx264 H.264 / AVC
 A....D aac                  AAC (Advanced Audio Coding)
 S..... srt                  SubRip subtitle
"""
    assert parse_codec_list(encoders) == {"libx264", "aac", "srt"}
    assert parse_hwaccels("Hardware acceleration methods:\nvaapi\ncuda\n\n") == {"vaapi", "cuda"}


def test_an_ffmpeg_on_path_does_not_import_imageio_ffmpeg() -> None:
    """The places are looked at in order: with one on PATH, imageio-ffmpeg (which a running server
    would otherwise import at start for nothing) is left unimported."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("no ffmpeg on PATH")
    code = ("import sys; from server.media.ffmpeg import find_ffmpeg\n"
            "info = find_ffmpeg(None); print(info.source, 'imageio_ffmpeg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["path", "False"]
