"""Directory browsing for the admin's folder picker, confined to allowed roots.

Every path that comes from a request is resolved (symlinks and `..` included) and must lie
inside one of the allowed roots before anything is listed or opened. The roots are the named
configuration ``filesystem`` (``{"AllowedRoots": [...]}``); by default the places media usually
lives: the home folder, /media, /mnt, /srv, /run/media, /Volumes, and each Windows drive.
"""

from __future__ import annotations

import os
import string
import sys
from pathlib import Path

from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.wire import models as w


def default_roots() -> list[str]:
    if sys.platform == "win32":
        return [f"{d}:\\" for d in string.ascii_uppercase if os.path.exists(f"{d}:\\")]
    roots = [str(Path.home()), "/media", "/mnt", "/srv", "/run/media", "/Volumes", "/data"]
    return [r for r in roots if os.path.isdir(r)]


class FileSystemBrowser:
    def __init__(self, roots) -> None:
        self._roots = roots  # callable -> list[str]

    def roots(self) -> list[Path]:
        return [Path(r).resolve() for r in self._roots() if r]

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
        if not any(resolved == root or root in resolved.parents for root in self.roots()):
            raise ForbiddenError(f"The path {raw!r} is outside the folders this server may browse.")
        if must_exist and not resolved.exists():
            raise NotFoundError(f"The path {raw!r} does not exist.")
        return resolved

    def drives(self) -> list[w.FileSystemEntryInfo]:
        return [w.FileSystemEntryInfo(Name=str(r) if sys.platform == "win32" else r.name or str(r), Path=str(r),
                                      Type="Directory") for r in self.roots() if r.exists()]

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
        if parent == path or not any(parent == r or r in parent.parents for r in self.roots()):
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
