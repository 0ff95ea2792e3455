"""Which files are extras (trailers, featurettes, theme songs ...) and of what ExtraType.

Rules follow Jellyfin's: a video inside a folder named for an extra kind, a file named
exactly "trailer"/"sample"/"theme", or a file whose name ends with a kind suffix such as
"-trailer" or "-featurette" (trailing digits allowed: "-trailer2").
"""

from __future__ import annotations

import os
import re

from server.library.scan.naming.extensions import as_media_path, is_audio_file, is_video_file
from server.library.scan.naming.kinds import ExtraType

#: Folder name (lower case) -> extra type, for videos (theme-music holds audio).
EXTRA_FOLDERS: dict[str, ExtraType] = {
    "trailers": ExtraType.TRAILER,
    "backdrops": ExtraType.THEME_VIDEO,
    "behind the scenes": ExtraType.BEHIND_THE_SCENES,
    "deleted scenes": ExtraType.DELETED_SCENE,
    "interviews": ExtraType.INTERVIEW,
    "scenes": ExtraType.SCENE,
    "samples": ExtraType.SAMPLE,
    "shorts": ExtraType.SHORT,
    "featurettes": ExtraType.FEATURETTE,
    "extras": ExtraType.UNKNOWN,
    "other": ExtraType.UNKNOWN,
    "clips": ExtraType.CLIP,
}
THEME_MUSIC_FOLDER = "theme-music"

_VIDEO_FILENAMES: dict[str, ExtraType] = {"trailer": ExtraType.TRAILER, "sample": ExtraType.SAMPLE}
_AUDIO_FILENAMES: dict[str, ExtraType] = {"theme": ExtraType.THEME_SONG}

# Suffix -> type, checked in this order against the name with trailing digits removed.
_VIDEO_SUFFIXES: tuple[tuple[str, ExtraType], ...] = (
    ("-trailer", ExtraType.TRAILER),
    (".trailer", ExtraType.TRAILER),
    ("_trailer", ExtraType.TRAILER),
    (" trailer", ExtraType.TRAILER),
    ("-sample", ExtraType.SAMPLE),
    (".sample", ExtraType.SAMPLE),
    ("_sample", ExtraType.SAMPLE),
    (" sample", ExtraType.SAMPLE),
    ("-scene", ExtraType.SCENE),
    ("-clip", ExtraType.CLIP),
    ("-interview", ExtraType.INTERVIEW),
    ("-behindthescenes", ExtraType.BEHIND_THE_SCENES),
    ("-deleted", ExtraType.DELETED_SCENE),
    ("-deletedscene", ExtraType.DELETED_SCENE),
    ("-featurette", ExtraType.FEATURETTE),
    ("-short", ExtraType.SHORT),
    ("-extra", ExtraType.UNKNOWN),
    ("-other", ExtraType.UNKNOWN),
)
_TRAILING_DIGITS = re.compile(r"\d+$")


def is_extras_folder(name: str) -> bool:
    """True for folder names that hold extras ("Trailers", "Behind The Scenes", "theme-music" ...)."""
    lowered = name.strip().lower()
    return lowered in EXTRA_FOLDERS or lowered == THEME_MUSIC_FOLDER


def classify_extra(path: str | os.PathLike[str]) -> ExtraType | None:
    """The ExtraType of a video or audio file, or None when it is not an extra."""
    p = as_media_path(path)
    video = is_video_file(p)
    audio = is_audio_file(p)
    folder = p.parent.name.lower()
    stem = p.stem.lower()
    if video and folder in EXTRA_FOLDERS:
        return EXTRA_FOLDERS[folder]
    if audio and folder == THEME_MUSIC_FOLDER:
        return ExtraType.THEME_SONG
    if video and stem in _VIDEO_FILENAMES:
        return _VIDEO_FILENAMES[stem]
    if audio and stem in _AUDIO_FILENAMES:
        return _AUDIO_FILENAMES[stem]
    if video:
        trimmed = _TRAILING_DIGITS.sub("", stem)
        for suffix, extra_type in _VIDEO_SUFFIXES:
            if trimmed.endswith(suffix) and len(trimmed) > len(suffix):
                return extra_type
    return None


def strip_extra_suffix(stem: str) -> str:
    """ "Movie (2020)-trailer2" -> "Movie (2020)": the name an extra is attached by."""
    trimmed = _TRAILING_DIGITS.sub("", stem)
    lowered = trimmed.lower()
    for suffix, _ in _VIDEO_SUFFIXES:
        if lowered.endswith(suffix) and len(lowered) > len(suffix):
            return trimmed[: -len(suffix)].rstrip(" -._")
    return stem
