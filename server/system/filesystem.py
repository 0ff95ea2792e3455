"""Directory browsing for the admin's folder picker, and the folders libraries may use.

As in Jellyfin, an administrator may use and browse any folder that exists. A locked-down
install can opt in to a list of allowed roots: the named configuration ``filesystem``,
``{"RestrictToAllowedRoots": true, "AllowedRoots": ["/srv/media", ...]}`` (editable in the
tray's Settings window). Then every path from a request is resolved (symlinks and `..`
included) and must lie inside one of those roots before anything is listed, opened or used
as a library folder (403 otherwise). ``SECTIONS`` declares that configuration section (registered
on the ConfigurationStore by ``server/context.py``).
"""

from __future__ import annotations

import os
import string
import sys
from pathlib import Path
from typing import Any

from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.system.configuration import ConfigSection
from server.wire import models as w


def validate_filesystem_settings(data: dict[str, Any]) -> dict[str, Any]:
    """The ``filesystem`` section as saved: a list of absolute folders, and whether to keep to them."""
    roots = data.get("AllowedRoots", [])
    if not isinstance(roots, list) or not all(isinstance(r, str) and r.strip() for r in roots):
        raise BadRequestError("AllowedRoots must be a list of folder paths.")
    roots = [r.strip() for r in roots]
    if any(not os.path.isabs(os.path.expanduser(r)) for r in roots):
        raise BadRequestError("AllowedRoots must be absolute folder paths.")
    restrict = data.get("RestrictToAllowedRoots", False)
    if not isinstance(restrict, bool):
        raise BadRequestError("RestrictToAllowedRoots must be true or false.")
    if restrict and not roots:
        raise BadRequestError("List at least one allowed folder before restricting to them.")
    return {"RestrictToAllowedRoots": restrict, "AllowedRoots": roots}


# Any folder, as in Jellyfin; locked-down installs opt in.
SECTIONS = (ConfigSection("filesystem", lambda _paths: {"RestrictToAllowedRoots": False, "AllowedRoots": []},
                            validate=validate_filesystem_settings),)


def suggested_roots() -> list[str]:
    """Where media usually lives (offered when an administrator turns the restriction on)."""
    if sys.platform == "win32":
        return [f"{d}:\\" for d in string.ascii_uppercase if os.path.exists(f"{d}:\\")]
    roots = [str(Path.home()), "/media", "/mnt", "/srv", "/run/media", "/Volumes", "/data"]
    return [r for r in roots if os.path.isdir(r)]


# Mounted file systems worth offering as starting points (Linux /proc/mounts types).
_MEDIA_FS = {"ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "vfat", "exfat", "ntfs", "ntfs3", "fuseblk", "nfs",
             "nfs4", "cifs", "smb3", "f2fs", "jfs", "reiserfs", "hfsplus", "apfs", "9p", "virtiofs", "overlay"}


def _mount_points() -> list[str]:
    """Root, then mounted media file systems (Jellyfin lists the machine's drives)."""
    if sys.platform == "win32":
        return [f"{d}:\\" for d in string.ascii_uppercase if os.path.exists(f"{d}:\\")]
    found = ["/"]
    try:
        with open("/proc/mounts", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                parts = line.split()
                if len(parts) >= 3 and parts[2] in _MEDIA_FS:
                    point = parts[1].replace("\\040", " ")
                    if point not in found and not point.startswith(("/proc", "/sys", "/dev", "/run/user", "/boot",
                                                                    "/snap", "/var/lib", "/etc")):
                        found.append(point)
    except OSError:
        if os.path.isdir("/Volumes"):
            found += [str(p) for p in Path("/Volumes").iterdir() if p.is_dir()]
    return [p for p in found if os.path.isdir(p)]


class FileSystemBrowser:
    def __init__(self, settings) -> None:
        self._settings = settings  # callable -> the filesystem configuration (dict)

    @property
    def restricted(self) -> bool:
        return bool(self._settings().get("RestrictToAllowedRoots"))

    def roots(self) -> list[Path]:
        """The allowed roots when the install is locked down; [] when any folder may be used."""
        if not self.restricted:
            return []
        return [Path(r).resolve() for r in self._settings().get("AllowedRoots") or [] if r]

    def allows(self, resolved: Path) -> bool:
        if not self.restricted:
            return True
        return any(resolved == root or root in resolved.parents for root in self.roots())

    def check(self, raw: str | None, *, must_exist: bool = True) -> Path:
        """The resolved path, if it is inside an allowed root."""
        if raw is None or not raw.strip():
            raise BadRequestError("A path is required.")
        if "\x00" in raw:
            raise BadRequestError("The path contains a NUL character.")
        path = Path(raw).expanduser()
        if not path.is_absolute():
            raise BadRequestError(f"The path must be absolute: {raw!r}")
        resolved = path.resolve()
        if not self.allows(resolved):
            raise ForbiddenError(f"The path {raw!r} is outside the allowed folders of this server "
                                 "(Settings, \"Only use folders inside\").")
        if must_exist and not resolved.exists():
            raise NotFoundError(f"The path {raw!r} does not exist.")
        return resolved

    def drives(self) -> list[w.FileSystemEntryInfo]:
        roots = self.roots() if self.restricted else [Path(p) for p in _mount_points()]
        return [w.FileSystemEntryInfo(Name=str(r) if sys.platform == "win32" else r.name or str(r), Path=str(r),
                                      Type="Directory") for r in roots if r.exists()]

    def contents(self, raw: str | None, include_files: bool, include_directories: bool) -> list[w.FileSystemEntryInfo]:
        folder = self.check(raw)
        if not folder.is_dir():
            raise BadRequestError(f"{raw!r} is not a folder.")
        out: list[w.FileSystemEntryInfo] = []
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name.lower())
        except PermissionError:
            raise ForbiddenError(f"The server may not read {raw!r}.") from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if (is_dir and include_directories) or (not is_dir and include_files):
                out.append(w.FileSystemEntryInfo(Name=entry.name, Path=os.path.join(str(folder), entry.name),
                                                 Type="Directory" if is_dir else "File"))
        return out

    def parent(self, raw: str | None) -> str | None:
        path = self.check(raw, must_exist=False)
        parent = path.parent
        if parent == path or not self.allows(parent):
            return None
        return str(parent)

    def validate(self, raw: str | None, is_file: bool | None, validate_writable: bool) -> None:
        path = self.check(raw, must_exist=False)
        if not path.exists():
            raise NotFoundError(f"The path {raw!r} does not exist.")
        if is_file is True and not path.is_file():
            raise NotFoundError(f"{raw!r} is not a file.")
        if is_file is False and not path.is_dir():
            raise NotFoundError(f"{raw!r} is not a folder.")
        if validate_writable and not os.access(path if path.is_dir() else path.parent, os.W_OK):
            raise BadRequestError(f"The server cannot write to {raw!r}.")
