"""Track and disc numbers from music file and folder names, for files without tags."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from server.library.scan.naming.cleaning import normalize_separators
from server.library.scan.naming.extensions import as_media_path, strip_known_extension


@dataclass(frozen=True, slots=True)
class TrackName:
    """What a music file name says: "1-03 Title.flac" -> disc 1, track 3, "Title"."""

    title: str
    track: int | None = None
    disc: int | None = None
    artist: str | None = None


_DISC_PREFIXES = ("digital media", "volume", "disc", "disk", "vol", "cd")
_DISC_TRACK_RE = re.compile(r"^(?P<disc>\d{1,2})[-.](?P<track>\d{2,3})(?:\s*[-.)_]\s*|\s+)(?P<title>\S.*)$")
_ARTIST_TRACK_RE = re.compile(r"^(?P<artist>.+?)\s+-\s+(?P<track>\d{1,3})\s*(?:-|\.)\s*(?P<title>\S.*)$")
_TRACK_RE = re.compile(r"^(?P<track>\d{1,3})(?:\s*[-.)_]\s*|\s+)(?P<title>\S.*)$")
_ONLY_TRACK_RE = re.compile(r"^(?P<track>\d{1,3})$")


def parse_disc_folder(path: str | os.PathLike[str]) -> int | None:
    """Disc number of a multi-disc album folder: "Disc 1", "CD 2", "CD2", "Disk.3", "Vol. 1" -> int."""
    name = as_media_path(path).name
    normal = re.sub(r"\s+", " ", re.sub(r"[-.()_\[\]]", " ", name)).strip().lower()
    for prefix in _DISC_PREFIXES:
        if normal.startswith(prefix):
            first = normal[len(prefix) :].strip().split(" ", 1)[0]
            if first.isdigit() and first.isascii():
                return int(first)
    return None


def is_multi_disc_folder(path: str | os.PathLike[str]) -> bool:
    """True when a folder is one disc of a multi-disc album."""
    return parse_disc_folder(path) is not None


def parse_track_filename(path: str | os.PathLike[str]) -> TrackName:
    """Track number, disc number and title from a file name such as "01 - Title.mp3",
    "1-03 Title.flac", "Artist - 05 - Title.ogg" or "CD1/07. Title.mp3" (disc from the folder)."""
    p = as_media_path(path)
    stem = strip_known_extension(p.name).strip()
    folder_disc = parse_disc_folder(p.parent) if p.parent.name else None

    disc: int | None = None
    track: int | None = None
    artist: str | None = None
    title = stem
    if match := _DISC_TRACK_RE.match(stem):
        disc, track, title = int(match.group("disc")), int(match.group("track")), match.group("title")
    elif match := _TRACK_RE.match(stem):
        track, title = int(match.group("track")), match.group("title")
    elif match := _ARTIST_TRACK_RE.match(stem):
        artist = match.group("artist").strip()
        track, title = int(match.group("track")), match.group("title")
    elif match := _ONLY_TRACK_RE.match(stem):
        track = int(match.group("track"))

    if disc is None:
        disc = folder_disc
    title = normalize_separators(title) if " " not in title else title.strip()
    return TrackName(title=title or stem, track=track, disc=disc, artist=artist)
