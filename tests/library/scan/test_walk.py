"""Walking library folders: hidden and system folders, .ignore, symlink loops, odd names."""

from __future__ import annotations

import os
from pathlib import Path

from server.library.scan.walk import unit_key, units_of, walk, walk_units


def test_walk_skips_what_it_must(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    (root / "Show" / "Season 1").mkdir(parents=True)
    (root / "Show" / "Season 1" / "a.mkv").write_bytes(b"x")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "b.mkv").write_bytes(b"x")
    (root / "@eaDir").mkdir()
    (root / "Skipped").mkdir()
    (root / "Skipped" / ".ignore").write_text("")
    (root / "Skipped" / "c.mkv").write_bytes(b"x")
    os.symlink(root, root / "Show" / "loop")  # a link to an ancestor
    (root / "Other").mkdir()
    os.symlink(root / "Other", root / "Show" / "elsewhere")  # a link elsewhere is followed
    (root / "Other" / "d.mkv").write_bytes(b"x")
    bad = os.fsencode(root) + b"/bad-\xff.mkv"
    with open(bad, "wb") as f:
        f.write(b"x")
    tree = walk([str(root)])
    files = sorted(os.path.relpath(p, root) for p, _ in tree.all_files())
    assert files == ["Other/d.mkv", "Show/Season 1/a.mkv", "Show/elsewhere/d.mkv"]
    assert tree.folder(str(root / "Skipped")).files == {}


def test_units(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    (root / "Artist" / "Album").mkdir(parents=True)
    (root / "loose.mp3").write_bytes(b"x")
    r = str(root)
    assert units_of(r, str(root / "Artist" / "Album" / "x.mp3")) == [str(root / "Artist")]
    assert units_of(r, str(root / "loose.mp3")) == [r]
    assert units_of(r, str(root / "Gone")) == [str(root / "Gone"), r]
    assert units_of(r, r) == [r]
    known = {str(root / "Artist")}
    assert unit_key([r], str(root / "Artist"), known) == str(root / "Artist")
    assert unit_key([r], str(root / "loose.mp3"), known) == r
    assert unit_key([r], str(root / "Artist" / "Album"), known) == str(root / "Artist")
    assert unit_key([r], "/elsewhere/x", known) is None
    tree = walk_units([r], [str(root / "Artist")])
    assert sorted(tree.folders) == [r, str(root / "Artist"), str(root / "Artist" / "Album")]
    assert tree.folder(r).files == {}
