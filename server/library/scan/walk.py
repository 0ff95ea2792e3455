"""Walking a library: list its folders once (os.scandir, a stat of every file), in threads.

``walk`` gives a ``Tree`` of ``Folder``s; ``units_of`` / ``unit_key`` map a changed path to the
parts of a library a rescan must revisit (a movie folder, a series, an artist), ``walk_units``
lists only those, and ``unit_signatures`` hashes each unit so an unchanged one is skipped.
``media_jobs`` and ``image_jobs`` pick the files the scanner probes or measures.
The resolvers (``resolve.py``) turn the tree into items.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import PurePath

from server.library.scan.naming.extensions import AUDIO_EXTENSIONS, PHOTO_EXTENSIONS, file_kind
from server.library.scan.naming.kinds import FileKind

log = logging.getLogger("reelroom.scanner")


IGNORED_FOLDERS = frozenset({"@eadir", "#recycle", "$recycle.bin", "lost+found", ".trickplay", "system volume information",
                             "metadata", "#snapshot"})


# ----------------------------------------------------------------------------- the tree


@dataclass(slots=True)
class FileStat:
    size: int
    mtime: float
    ctime: float


@dataclass(slots=True)
class Folder:
    path: str
    files: dict[str, FileStat] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)  # names


class Tree:
    """Every folder under a library's paths, each with its files' stats."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = roots
        self.folders: dict[str, Folder] = {}

    def folder(self, path: str) -> Folder | None:
        return self.folders.get(path)

    def files_under(self, path: str) -> list[tuple[str, FileStat]]:
        out: list[tuple[str, FileStat]] = []
        stack = [path]
        while stack:
            f = self.folders.get(stack.pop())
            if f is None:
                continue
            out.extend((os.path.join(f.path, n), st) for n, st in f.files.items())
            stack.extend(os.path.join(f.path, d) for d in f.dirs)
        return out

    def all_files(self) -> list[tuple[str, FileStat]]:
        return [(os.path.join(f.path, n), st) for f in self.folders.values() for n, st in f.files.items()]


def _list(path: str) -> Folder | None:
    folder = Folder(path)
    try:
        with os.scandir(path) as it:
            entries = list(it)
    except OSError:
        return None
    if any(e.name == ".ignore" for e in entries):
        return folder
    for e in entries:
        name = e.name
        if name.startswith("."):
            continue
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes in a name: cannot be stored or served
            log.warning("Skipping %r: its name is not valid UTF-8", e.path)
            continue
        try:
            if e.is_dir():
                if e.is_symlink():
                    real = os.path.realpath(e.path)
                    if path == real or path.startswith(real.rstrip(os.sep) + os.sep):
                        continue  # a link to a folder above it: following it would never end
                if name.lower() not in IGNORED_FOLDERS:
                    folder.dirs.append(name)
            elif e.is_file():
                st = e.stat()
                folder.files[name] = FileStat(st.st_size, st.st_mtime, st.st_ctime)
        except OSError:
            continue
    folder.dirs.sort()
    return folder


def _walk_into(tree: Tree, start: str) -> None:
    stack = [start]
    while stack:
        path = stack.pop()
        folder = _list(path)
        if folder is None:
            continue
        tree.folders[path] = folder
        stack.extend(os.path.join(path, d) for d in folder.dirs)


WALK_THREADS = 16  # listing folders is I/O-bound: threads overlap the waits (a cold NAS or disk)
_WALK_CHUNK = 64


def _walk_many(starts: list[str]) -> dict[str, Folder]:
    part = Tree([])
    for start in starts:
        _walk_into(part, start)
    return part.folders


def walk(roots: list[str]) -> Tree:
    """List every folder under the library's paths (a missing root is simply absent)."""
    tree = Tree(list(roots))
    tops: list[str] = []
    for root in roots:
        folder = _list(root)
        if folder is None:
            continue
        tree.folders[root] = folder
        tops.extend(os.path.join(root, d) for d in folder.dirs)
    if len(tops) <= _WALK_CHUNK:
        for top in tops:
            _walk_into(tree, top)
        return tree
    chunks = [tops[i:i + _WALK_CHUNK] for i in range(0, len(tops), _WALK_CHUNK)]
    with ThreadPoolExecutor(WALK_THREADS, thread_name_prefix="scan-walk") as pool:
        for folders in pool.map(_walk_many, chunks):
            tree.folders.update(folders)
    return tree


def units_of(root: str, path: str) -> list[str]:
    """The parts of a library a change at ``path`` affects: the top-level folder of ``root``
    that contains it (a movie folder, a series, an artist), or ``root`` itself (meaning the
    root's own files) for a file directly in it; both when the entry vanished."""
    rel = os.path.relpath(path, root)
    if rel in (".", "") or rel.startswith(".."):
        return [root]
    top = os.path.join(root, rel.split(os.sep, 1)[0])
    if os.path.isdir(top):
        return [top]
    if os.path.exists(top):
        return [root]
    return [top, root]


def walk_units(roots: list[str], units: list[str]) -> Tree:
    """A tree holding only ``units`` (see ``units_of``): a unit equal to a root means that
    root's own files."""
    tree = Tree(list(roots))
    for root in roots:
        mine = [u for u in units if u == root or os.path.dirname(u) == root]
        if not mine:
            continue
        listed = _list(root)
        if listed is None:
            continue
        folder = Folder(root)
        if root in mine:
            folder.files = listed.files
        names = {os.path.basename(u) for u in mine if u != root}
        folder.dirs = [d for d in listed.dirs if d in names]
        tree.folders[root] = folder
        for d in folder.dirs:
            _walk_into(tree, os.path.join(root, d))
    return tree


def unit_signatures(tree: Tree, salt: str) -> dict[str, str]:
    """A hash per unit (see ``units_of``) of every file's relative path, size and mtime."""
    out: dict[str, str] = {}
    for root in tree.roots:
        folder = tree.folder(root)
        if folder is None:
            continue
        h = hashlib.blake2b(salt.encode(), digest_size=16)
        for name in sorted(folder.files):
            st = folder.files[name]
            h.update(f"{name}\x00{st.size}\x00{st.mtime}\x01".encode("utf-8", "surrogateescape"))
        out[root] = h.hexdigest()
        for d in folder.dirs:
            unit = os.path.join(root, d)
            h = hashlib.blake2b(salt.encode(), digest_size=16)
            cut = len(unit) + 1
            for path, st in sorted(tree.files_under(unit), key=lambda f: f[0]):
                h.update(f"{path[cut:]}\x00{st.size}\x00{st.mtime}\x01".encode("utf-8", "surrogateescape"))
            out[unit] = h.hexdigest()
    return out


def prune(tree: Tree, keep: set[str]) -> Tree:
    """The part of ``tree`` made of the units in ``keep``."""
    out = Tree(list(tree.roots))
    for root in tree.roots:
        folder = tree.folder(root)
        if folder is None:
            continue
        pruned = Folder(root, files=folder.files if root in keep else {},
                        dirs=[d for d in folder.dirs if os.path.join(root, d) in keep])
        out.folders[root] = pruned
        stack = [os.path.join(root, d) for d in pruned.dirs]
        while stack:
            path = stack.pop()
            sub = tree.folder(path)
            if sub is None:
                continue
            out.folders[path] = sub
            stack.extend(os.path.join(path, d) for d in sub.dirs)
    return out


def unit_key(roots: list[str] | tuple[str, ...], path: str, known: set[str]) -> str | None:
    """The unit a stored item path belongs to (None when outside every root): the top-level
    folder it is in or is, else the root (its own files). ``known`` holds the unit folders."""
    for root in roots:
        base = root.rstrip(os.sep)
        if path == root:
            return root
        if path.startswith(base + os.sep):
            head, sep, _ = path[len(base) + 1:].partition(os.sep)
            top = os.path.join(root, head)
            return top if sep or top in known else root
    return None



def _disc_structure_check() -> Callable[[str], bool]:
    from server.library.scan.naming.movies import is_disc_structure_folder

    return is_disc_structure_folder


def media_jobs(collection_type: str | None, tree: Tree) -> list[tuple[str, FileStat, bool]]:
    """Every file of the tree the scanner would probe: (path, stat, is_audio)."""
    is_disc: Callable[[str], bool] | None = None  # Jellyfin's naming rules: with the first video
    out: list[tuple[str, FileStat, bool]] = []
    for path, st in tree.all_files():
        kind = file_kind(path, collection_type)
        if kind == FileKind.VIDEO:
            if is_disc is None:
                is_disc = _disc_structure_check()
            parts = PurePath(path).parts
            if any(map(is_disc, parts[-3:-1])):
                continue
            out.append((path, st, False))
        elif kind == FileKind.AUDIO and collection_type not in ("photos", "books"):
            out.append((path, st, collection_type in ("music", "audiobooks", None) or
                        os.path.splitext(path)[1].lower() in AUDIO_EXTENSIONS))
    return out


def image_jobs(tree: Tree) -> list[tuple[str, FileStat]]:
    return [(p, st) for p, st in tree.all_files() if os.path.splitext(p)[1].lower() in PHOTO_EXTENSIONS]
