"""Start Reelroom at login: Windows Run key, macOS LaunchAgent, XDG autostart entry.

The text each platform stores is made by pure functions so it can be tested anywhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

APP_NAME = "Reelroom"
LAUNCH_AGENT_LABEL = "org.reelroom.Reelroom"
WINDOWS_RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"


class AutostartError(OSError):
    """The login item could not be written or removed."""


def launch_command() -> list[str]:
    """How to start this Reelroom: the bundled executable, or this Python running the desktop module."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "app.desktop_main"]


# -- Windows -------------------------------------------------------------------------------------


def windows_run_value(command: Sequence[str]) -> str:
    """The Run key value: the program in quotes, then its arguments quoted the Windows way."""
    if not command:
        raise ValueError("the autostart command is empty")
    program = command[0].replace('"', "")
    rest = subprocess.list2cmdline(list(command[1:]))
    return f'"{program}"' + (f" {rest}" if rest else "")


class _WindowsRunKey:
    def __init__(self, value_name: str = APP_NAME) -> None:
        import winreg  # only exists on Windows

        self._winreg = winreg
        self.value_name = value_name

    def enable(self, command: Sequence[str]) -> None:
        winreg = self._winreg
        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, WINDOWS_RUN_KEY) as key:
            winreg.SetValueEx(key, self.value_name, 0, winreg.REG_SZ, windows_run_value(command))

    def disable(self) -> None:
        winreg = self._winreg
        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, WINDOWS_RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
                winreg.DeleteValue(key, self.value_name)
        except FileNotFoundError:
            pass

    def is_enabled(self) -> bool:
        winreg = self._winreg
        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, WINDOWS_RUN_KEY) as key:
                winreg.QueryValueEx(key, self.value_name)
        except FileNotFoundError:
            return False
        return True


# -- macOS ---------------------------------------------------------------------------------------


def launch_agent_path(home: Path | None = None) -> Path:
    return (home or Path.home()) / "Library" / "LaunchAgents" / f"{LAUNCH_AGENT_LABEL}.plist"


def launch_agent_plist(command: Sequence[str]) -> bytes:
    """A per-user LaunchAgent that starts ``command`` once at login."""
    if not command:
        raise ValueError("the autostart command is empty")
    agent = {
        "Label": LAUNCH_AGENT_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "KeepAlive": False,
        "ProcessType": "Interactive",
        "LimitLoadToSessionType": "Aqua",
    }
    import plistlib  # (macOS only: kept out of the tray's start elsewhere, with its XML parser)

    return plistlib.dumps(agent, fmt=plistlib.FMT_XML)


# -- Linux and other XDG desktops ----------------------------------------------------------------


def xdg_autostart_path(environ: dict[str, str] | None = None, home: Path | None = None) -> Path:
    """``$XDG_CONFIG_HOME/autostart/reelroom.desktop``; a relative XDG_CONFIG_HOME is ignored, per the spec."""
    env = os.environ if environ is None else environ
    config_home = env.get("XDG_CONFIG_HOME", "")
    base = Path(config_home) if config_home and os.path.isabs(config_home) else (home or Path.home()) / ".config"
    return base / "autostart" / "reelroom.desktop"


def _desktop_exec_arg(arg: str) -> str:
    """Quote one Exec argument per the Desktop Entry spec (then escape for a string value)."""
    if arg == "":
        return '""'
    reserved = set(' \t\n"\'\\><~|&;$*?#()`')
    if any(ch in reserved for ch in arg):
        inner = "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg)
        arg = f'"{inner}"'
    return arg.replace("\\", "\\\\").replace("%", "%%")


def xdg_desktop_entry(command: Sequence[str]) -> str:
    """The autostart ``.desktop`` file text for ``command``."""
    if not command:
        raise ValueError("the autostart command is empty")
    exec_line = " ".join(_desktop_exec_arg(arg) for arg in command)
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        f"Name={APP_NAME}\n"
        "Comment=Reelroom media server\n"
        f"Exec={exec_line}\n"
        "Icon=reelroom\n"
        "Terminal=false\n"
        "Categories=AudioVideo;\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


# -- one front for all three ---------------------------------------------------------------------


class LoginItem:
    """Start at login for the current user, on the platform this runs on."""

    def __init__(self, command: Sequence[str] | None = None, platform: str | None = None) -> None:
        self.command = list(command) if command is not None else launch_command()
        self.platform = platform or sys.platform

    def _file(self) -> tuple[Path, bytes]:
        if self.platform == "darwin":
            return launch_agent_path(), launch_agent_plist(self.command)
        return xdg_autostart_path(), xdg_desktop_entry(self.command).encode("utf-8")

    def enable(self) -> None:
        try:
            if self.platform == "win32":
                _WindowsRunKey().enable(self.command)
                return
            path, content = self._file()
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_bytes(content)
            os.replace(tmp, path)
        except OSError as exc:
            raise AutostartError(f"Could not turn on start at login: {exc}") from exc

    def disable(self) -> None:
        try:
            if self.platform == "win32":
                _WindowsRunKey().disable()
                return
            self._file()[0].unlink(missing_ok=True)
        except OSError as exc:
            raise AutostartError(f"Could not turn off start at login: {exc}") from exc

    def is_enabled(self) -> bool:
        if self.platform == "win32":
            return _WindowsRunKey().is_enabled()
        return self._file()[0].is_file()
