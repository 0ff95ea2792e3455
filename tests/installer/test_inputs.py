"""Installer inputs for Windows (Inno Setup) and macOS (Info.plist) are generated from pyproject;
these checks run everywhere, without building anything."""

from __future__ import annotations

import importlib.util
import plistlib
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def inputs():
    spec = importlib.util.spec_from_file_location("build_inputs", ROOT / "installer" / "build_inputs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_inputs"] = module
    spec.loader.exec_module(module)
    return module


def pyproject_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_version_comes_from_pyproject(inputs, tmp_path):
    assert inputs.app_version() == pyproject_version()
    assert inputs.write_version_file(tmp_path).read_text().strip() == pyproject_version()
    assert inputs.numeric_version("1.2.3rc1") == "1.2.3.0"
    assert inputs.numeric_version("0.1.0") == "0.1.0.0"
    assert inputs.numeric_version("2.10") == "2.10.0.0"


def test_runtime_version_matches_pyproject():
    from server.version import reelroom_version
    from ui.api_client import reelroom_version as ui_version

    assert reelroom_version() == ui_version() == pyproject_version()


def test_windows_inputs(inputs, tmp_path):
    dist = tmp_path / "reelroom"
    (dist / "_internal" / "ffmpeg").mkdir(parents=True)
    for rel in ("reelroom.exe", "reelroom-server.exe", "_internal/python311.dll", "_internal/ffmpeg/ffmpeg.exe"):
        (dist / rel).write_bytes(b"x")
    version_iss, files_iss = inputs.write_windows_inputs(dist, tmp_path / "build")
    defines = dict(re.findall(r'#define (\w+) "([^"]*)"', version_iss.read_text()))
    assert defines["AppVersion"] == pyproject_version()
    assert defines["AppNumericVersion"] == inputs.numeric_version(pyproject_version())
    assert defines["DistDir"] == str(dist)
    assert Path(defines["IconFile"]).is_file() and defines["IconFile"].endswith(".ico")
    assert (defines["HttpPort"], defines["DiscoveryPort"]) == ("8096", "7359")
    lines = [line for line in files_iss.read_text().splitlines() if line.startswith("Source:")]
    assert len(lines) == 4
    assert 'Source: "{#DistDir}\\_internal\\ffmpeg\\ffmpeg.exe"; DestDir: "{app}\\_internal\\ffmpeg"' in lines[0]
    assert any('Source: "{#DistDir}\\reelroom.exe"; DestDir: "{app}";' in line for line in lines)


def test_inno_script_covers_the_brief():
    script = (ROOT / "installer" / "windows" / "reelroom.iss").read_text()
    assert '#include "..\\build\\windows\\reelroom-version.iss"' in script
    assert '#include "..\\build\\windows\\reelroom-files.iss"' in script
    for needle in ("{group}\\Reelroom", "{autodesktop}\\Reelroom", "CurrentVersion\\Run", "Tasks: startatlogin",
                   "protocol=TCP localport={#HttpPort}", "protocol=UDP localport={#DiscoveryPort}",
                   "{uninstallexe}", "Tasks: service", "[UninstallRun]", "AppVersion={#AppVersion}"):
        assert needle in script, needle
    # every task used is declared
    declared = set(re.findall(r'^Name: "(\w+)"', script.split("[Tasks]")[1].split("[")[0], re.M))
    used = set(re.findall(r"Tasks: (?:not )?(\w+)", script))
    assert used <= declared


def test_macos_info_plist(inputs, tmp_path):
    plist = plistlib.loads(inputs.write_info_plist(tmp_path).read_bytes())
    assert plist["LSUIElement"] is True
    assert plist["CFBundleVersion"] == pyproject_version()
    assert plist["CFBundleShortVersionString"] == ".".join(inputs.numeric_version(pyproject_version()).split(".")[:3])
    assert plist["CFBundleExecutable"] == "reelroom"
    assert plist["CFBundleIdentifier"] == "org.reelroom.Reelroom"
    spec = (ROOT / "installer" / "reelroom.spec").read_text()
    assert "BUNDLE(" in spec and "info_plist=info_plist(VERSION)" in spec
    dmg = (ROOT / "installer" / "macos" / "make_dmg.sh").read_text()
    assert "hdiutil create" in dmg and "/Applications" in dmg


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
    assert ffmpeg._candidates(None)[0] == ("bundled", str(binary))
    assert ffmpeg._candidates("/x/ffmpeg")[0] == ("configured", "/x/ffmpeg")


def test_lan_flags_on_both_entry_points():
    from app.desktop_main import parse_args
    from app.lan_flags import lan_options
    from app.server_main import build_parser

    args = build_parser("reelroom-server", "").parse_args(["--discovery-port", "17359", "--no-zeroconf"])
    assert lan_options(args) == {"enable_lan": True, "enable_zeroconf": False, "discovery_port": 17359}
    args = parse_args(["--discovery-port", "17000", "--no-lan"])
    assert lan_options(args) == {"enable_lan": False, "enable_zeroconf": True, "discovery_port": 17000}
