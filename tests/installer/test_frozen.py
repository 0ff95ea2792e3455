"""Frozen-app behaviour and the icon generator, checked without building anything."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_icons_from_one_source(tmp_path):
    spec = importlib.util.spec_from_file_location("make_icons", ROOT / "installer" / "make_icons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from PIL import Image

    written = {p.name for p in module.make_icons(tmp_path)}
    assert {"reelroom.ico", "reelroom.icns", "reelroom-16.png", "reelroom-512.png"} <= written
    with Image.open(tmp_path / "reelroom.ico") as ico:
        assert (256, 256) in ico.info["sizes"] and (16, 16) in ico.info["sizes"]
    with Image.open(tmp_path / "reelroom.icns") as icns:
        assert icns.size == (1024, 1024)


def test_frozen_ffmpeg_is_preferred(monkeypatch, tmp_path):
    from server.media import ffmpeg

    binary = tmp_path / "ffmpeg" / "ffmpeg"
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert ffmpeg.frozen_ffmpeg() == binary
    # each place is a function looked at in order (imageio-ffmpeg is imported only when needed)
    source, locate = ffmpeg._candidates(None)[0]
    assert (source, locate()) == ("bundled", str(binary))
    source, locate = ffmpeg._candidates("/x/ffmpeg")[0]
    assert (source, locate()) == ("configured", "/x/ffmpeg")


def test_check_ffmpeg_flag():
    out = subprocess.run([sys.executable, "-m", "app.server_main", "--check-ffmpeg"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    facts = dict(line.split(": ", 1) for line in out.stdout.splitlines())
    assert Path(facts["ffmpeg"]).is_file() and facts["source"] in ("path", "bundled")
    assert facts["version"]


def test_frozen_version_comes_from_the_bundled_file(monkeypatch, tmp_path):
    import tomllib

    from server.version import reelroom_version

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    sys.path.insert(0, str(ROOT / "installer"))
    try:
        import inputs
    finally:
        sys.path.remove(str(ROOT / "installer"))
    assert inputs.version() == pyproject
    inputs.write_version_file(tmp_path / "VERSION")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert reelroom_version() == pyproject
    (tmp_path / "VERSION").write_text("9.9.9\n")
    assert reelroom_version() == "9.9.9"
