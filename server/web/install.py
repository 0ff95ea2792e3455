"""Installing a web client (jellyfin-web's built ``dist``) into ``<data>/web``.

The source is a ``.tar.xz`` / ``.tar.gz`` / ``.tar.bz2`` / ``.zip`` file, an http(s) URL of one, or a
folder. A file's sha256 is checked when one is given. Archives are unpacked member by member into a
temporary folder beside the target: a member whose name would land outside it (absolute, ``..``,
a drive letter, a backslash), a link, a device or a FIFO fails the whole install. The dist root is
the shallowest folder with an ``index.html``. The new copy then replaces the old one by renames
(old -> aside, new -> ``web``, aside removed); if anything fails before that, the old copy is
untouched.

Blocking: call it from a worker thread (the server's route does) or a command line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from server.web.locate import data_web_dir

log = logging.getLogger("reelroom.web")

MAX_MEMBERS = 50_000
MAX_TOTAL_BYTES = 2 * 1024**3
MAX_DOWNLOAD_BYTES = 1024**3
INSTALL_INFO = ".reelroom-install.json"


class WebInstallError(Exception):
    """The install failed; the message says why in words a person can act on."""


@dataclass(frozen=True)
class InstallResult:
    folder: Path
    files: int
    bytes: int
    sha256: str | None
    source: str


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()


def _normalize_sha(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip().lower()
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise WebInstallError("The sha256 must be 64 hexadecimal digits.")
    return value


def is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


def safe_member_path(name: str) -> PurePosixPath | None:
    """The member's path inside the target, or None when it would leave it."""
    if "\\" in name or "\x00" in name:
        return None
    path = PurePosixPath(name)
    if path.is_absolute() or (path.parts and ":" in path.parts[0]):
        return None
    parts = [p for p in path.parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _write_member(target: Path, relative: PurePosixPath, reader, size_budget: list[int]) -> int:
    dest = target.joinpath(*relative.parts)
    dest.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with open(dest, "wb") as out:
        while True:
            block = reader.read(1024 * 1024)
            if not block:
                break
            written += len(block)
            size_budget[0] -= len(block)
            if size_budget[0] < 0:
                raise WebInstallError("The archive unpacks to more than 2 GB; that is not a web app.")
            out.write(block)
    return written


def unpack_tar(archive: Path, target: Path) -> tuple[int, int]:
    files = total = 0
    budget = [MAX_TOTAL_BYTES]
    try:
        with tarfile.open(archive, "r:*") as tf:
            for count, member in enumerate(tf, start=1):
                if count > MAX_MEMBERS:
                    raise WebInstallError("The archive has too many members to be a web app.")
                relative = safe_member_path(member.name)
                if relative is None:
                    raise WebInstallError(f"The archive member {member.name!r} would be written outside "
                                          "the web app folder; nothing was installed.")
                if member.issym() or member.islnk():
                    raise WebInstallError(f"The archive member {member.name!r} is a link; links are not "
                                          "allowed in a web app archive; nothing was installed.")
                if member.isdir():
                    target.joinpath(*relative.parts).mkdir(parents=True, exist_ok=True)
                    continue
                if not member.isreg():
                    raise WebInstallError(f"The archive member {member.name!r} is a device or other special "
                                          "file; nothing was installed.")
                reader = tf.extractfile(member)
                if reader is None:
                    raise WebInstallError(f"The archive member {member.name!r} cannot be read.")
                with reader:
                    total += _write_member(target, relative, reader, budget)
                files += 1
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, WebInstallError):
            raise
        raise WebInstallError(f"The archive could not be unpacked: {exc}") from exc
    return files, total


def unpack_zip(archive: Path, target: Path) -> tuple[int, int]:
    files = total = 0
    budget = [MAX_TOTAL_BYTES]
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise WebInstallError("The archive has too many members to be a web app.")
            for info in infos:
                relative = safe_member_path(info.filename)
                if relative is None:
                    raise WebInstallError(f"The archive member {info.filename!r} would be written outside "
                                          "the web app folder; nothing was installed.")
                mode = info.external_attr >> 16
                if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # no type bits: a file
                    kind = "a link" if stat.S_ISLNK(mode) else "a device or other special file"
                    raise WebInstallError(f"The archive member {info.filename!r} is {kind}; nothing was "
                                          "installed.")
                if info.is_dir():
                    target.joinpath(*relative.parts).mkdir(parents=True, exist_ok=True)
                    continue
                with zf.open(info) as reader:
                    total += _write_member(target, relative, reader, budget)
                files += 1
    except (zipfile.BadZipFile, OSError, RuntimeError, EOFError) as exc:
        raise WebInstallError(f"The archive could not be unpacked: {exc}") from exc
    return files, total


def copy_folder(source: Path, target: Path) -> tuple[int, int]:
    files = total = 0
    for root, dirs, names in os.walk(source):
        rel_root = Path(root).relative_to(source)
        for name in dirs + names:
            full = Path(root) / name
            mode = full.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise WebInstallError(f"{full} is a link; copy a web app folder without links.")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise WebInstallError(f"{full} is a device or other special file.")
        (target / rel_root).mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copyfile(Path(root) / name, target / rel_root / name)
            files += 1
            total += (Path(root) / name).stat().st_size
            if files > MAX_MEMBERS or total > MAX_TOTAL_BYTES:
                raise WebInstallError("The folder is too large to be a web app.")
    return files, total


def find_dist_root(folder: Path) -> Path:
    """The shallowest folder under ``folder`` that has an index.html."""
    best: Path | None = None
    best_depth = 1 << 30
    for root, dirs, names in os.walk(folder):
        depth = len(Path(root).relative_to(folder).parts)
        if depth >= best_depth:
            dirs[:] = []
            continue
        if "index.html" in names:
            best, best_depth = Path(root), depth
            dirs[:] = []
    if best is None:
        raise WebInstallError("There is no index.html in it, so it is not a built web app (jellyfin-web's dist).")
    return best


def download(url: str, dest: Path, progress: Callable[[int, int | None], None] | None = None) -> None:
    import httpx

    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=httpx.Timeout(30.0, read=120.0)) as resp:
            if resp.status_code != 200:
                raise WebInstallError(f"Downloading {url} failed: HTTP {resp.status_code}.")
            length = resp.headers.get("content-length")
            expected = int(length) if length and length.isdigit() else None
            got = 0
            with open(dest, "wb") as out:
                for block in resp.iter_bytes(1024 * 1024):
                    got += len(block)
                    if got > MAX_DOWNLOAD_BYTES:
                        raise WebInstallError("The download is larger than 1 GB; that is not a web app.")
                    out.write(block)
                    if progress:
                        progress(got, expected)
    except httpx.HTTPError as exc:
        raise WebInstallError(f"Downloading {url} failed: {exc}") from exc


def replace_folder(new: Path, final: Path) -> None:
    """Put ``new`` at ``final`` by renames; on failure ``final`` keeps what it had."""
    aside: Path | None = None
    if final.exists():
        aside = final.with_name(f".{final.name}-old-{os.getpid()}-{int(time.time() * 1000)}")
        os.rename(final, aside)
    try:
        os.rename(new, final)
    except OSError:
        if aside is not None:
            os.rename(aside, final)
        raise
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


def install_web(source: str | Path, data_dir: Path, sha256: str | None = None,
                progress: Callable[[int, int | None], None] | None = None) -> InstallResult:
    """Install the web client from ``source`` into ``<data_dir>/web``; raises WebInstallError."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    expected = _normalize_sha(sha256)
    final = data_web_dir(data_dir)
    text = str(source)
    work = Path(tempfile.mkdtemp(prefix=".web-install-", dir=data_dir))
    try:
        if is_url(text):
            archive = work / "download"
            download(text, archive, progress)
        else:
            archive = Path(text).expanduser()
            if not archive.exists():
                raise WebInstallError(f"{archive} does not exist.")
        unpacked = work / "unpacked"
        unpacked.mkdir()
        digest = None
        if archive.is_dir():
            if expected:
                raise WebInstallError("A sha256 checks an archive or a download, not a folder.")
            files, total = copy_folder(archive.resolve(), unpacked)
        else:
            digest = sha256_of(archive)
            if expected and digest != expected:
                raise WebInstallError(f"The sha256 does not match: expected {expected}, got {digest}. "
                                      "Nothing was installed.")
            if zipfile.is_zipfile(archive):
                files, total = unpack_zip(archive, unpacked)
            elif tarfile.is_tarfile(archive):
                files, total = unpack_tar(archive, unpacked)
            else:
                raise WebInstallError(f"{text} is not a .tar.xz, .tar.gz or .zip archive, nor a folder.")
        root = find_dist_root(unpacked)
        (root / INSTALL_INFO).write_text(json.dumps({
            "Source": text if is_url(text) else str(Path(text).expanduser().resolve()),
            "Sha256": digest, "InstalledAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }), encoding="utf-8")
        staged = data_dir / f".web-new-{os.getpid()}-{int(time.time() * 1000)}"
        os.rename(root, staged)
        try:
            replace_folder(staged, final)
        finally:
            if staged.exists():
                shutil.rmtree(staged, ignore_errors=True)
    except OSError as exc:
        raise WebInstallError(f"Installing the web app failed: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # Compressed copies of the old files are keyed by their inode and mtime, so they can no
    # longer be served; drop them so they do not take space.
    shutil.rmtree(data_dir / "cache" / "web", ignore_errors=True)
    log.info("Installed the web app from %s into %s (%d files, %d bytes)", text, final, files, total)
    return InstallResult(final, files, total, digest, text)


def installed_info(data_dir: Path) -> dict | None:
    try:
        return json.loads((data_web_dir(data_dir) / INSTALL_INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
