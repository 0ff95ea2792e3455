from __future__ import annotations

import configparser
import plistlib
import shlex
from pathlib import Path

import pytest

from app.autostart import (
    LoginItem,
    launch_agent_plist,
    windows_run_value,
    xdg_autostart_path,
    xdg_desktop_entry,
)


def test_xdg_entry_is_written_under_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    item = LoginItem(["/opt/Reelroom/reelroom", "--data-dir", "/srv/my media"], platform="linux")
    assert not item.is_enabled()
    item.enable()
    path = tmp_path / "cfg" / "autostart" / "reelroom.desktop"
    assert item.is_enabled() and path.is_file()
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment]
    entry.read(path, encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application" and section["Name"] == "Reelroom"
    assert shlex.split(section["Exec"]) == ["/opt/Reelroom/reelroom", "--data-dir", "/srv/my media"]
    item.disable()
    assert not path.exists() and not item.is_enabled()
    item.disable()  # idempotent


def test_relative_xdg_config_home_is_ignored(tmp_path: Path) -> None:
    assert xdg_autostart_path({"XDG_CONFIG_HOME": "relative"}, home=tmp_path) == (
        tmp_path / ".config" / "autostart" / "reelroom.desktop"
    )
    assert xdg_autostart_path({}, home=tmp_path) == tmp_path / ".config" / "autostart" / "reelroom.desktop"


def test_desktop_exec_escapes_reserved_characters() -> None:
    exec_line = next(line for line in xdg_desktop_entry(['C:\\odd "dir"', "100%", "$HOME"]).splitlines()
                     if line.startswith("Exec="))
    assert exec_line == 'Exec="C:\\\\\\\\odd \\\\"dir\\\\"" 100%% "\\\\$HOME"'


def test_launch_agent_plist_runs_at_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = plistlib.loads(launch_agent_plist(["/Applications/Reelroom.app/Contents/MacOS/Reelroom"]))
    assert agent["Label"] == "org.reelroom.Reelroom"
    assert agent["ProgramArguments"] == ["/Applications/Reelroom.app/Contents/MacOS/Reelroom"]
    assert agent["RunAtLoad"] is True
    monkeypatch.setenv("HOME", str(tmp_path))
    item = LoginItem(["/Applications/Reelroom.app/Contents/MacOS/Reelroom"], platform="darwin")
    item.enable()
    path = tmp_path / "Library" / "LaunchAgents" / "org.reelroom.Reelroom.plist"
    assert plistlib.loads(path.read_bytes())["Label"] == "org.reelroom.Reelroom"
    assert item.is_enabled()
    item.disable()
    assert not path.exists()


def test_windows_run_value_quotes_program_and_arguments() -> None:
    assert windows_run_value([r"C:\Program Files\Reelroom\Reelroom.exe"]) == (
        r'"C:\Program Files\Reelroom\Reelroom.exe"'
    )
    assert windows_run_value([r"C:\Python\python.exe", "-m", "app.desktop_main", "--data-dir", r"D:\My Media"]) == (
        r'"C:\Python\python.exe" -m app.desktop_main --data-dir "D:\My Media"'
    )
    with pytest.raises(ValueError):
        windows_run_value([])
