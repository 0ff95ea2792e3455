"""Listing and reading the server's own log files, by name only (no paths from requests)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from server.errors import BadRequestError, NotFoundError
from server.wire import models as w


def list_logs(log_dir: Path) -> list[w.LogFile]:
    out = []
    for f in log_dir.glob("*.log*"):
        if not f.is_file():
            continue
        st = f.stat()
        out.append(w.LogFile(
            DateCreated=datetime.fromtimestamp(getattr(st, "st_birthtime", st.st_ctime), UTC),
            DateModified=datetime.fromtimestamp(st.st_mtime, UTC), Size=st.st_size, Name=f.name))
    return sorted(out, key=lambda x: x.DateModified, reverse=True)


def log_file_path(log_dir: Path, name: str | None) -> Path:
    """The file called ``name`` directly inside the log folder; anything else is refused."""
    if not name or not name.strip():
        raise BadRequestError("A log file name is required.")
    if len(name) > 255:
        raise BadRequestError("A log file name is at most 255 characters long.")
    if "/" in name or "\\" in name or name in (".", "..") or "\x00" in name:
        raise BadRequestError("A log file name may not contain a path.")
    path = (log_dir / name).resolve()
    if path.parent != log_dir.resolve() or not path.is_file():
        raise NotFoundError(f"No log file named {name!r}.")
    return path
