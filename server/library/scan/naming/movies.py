"""Movie names, multi-part stacks, alternate versions, extras and disc folders.

``parse_movie_name`` reads one file or folder name. ``resolve_movie_folder`` takes every
video (and theme audio) path of one folder and groups them the way Jellyfin does: stacked
parts (cd1/cd2), alternate versions named after the folder ("Movie (2020) - 1080p.mkv"),
and extras attached to the movie they belong to.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from server.library.scan.naming.cleaning import (
    clean_title,
    extract_provider_ids,
    split_title_year,
    strip_release_tags,
)
from server.library.scan.naming.extensions import (
    as_media_path,
    is_audio_file,
    is_video_file,
    strip_known_extension,
)
from server.library.scan.naming.extras import classify_extra, strip_extra_suffix
from server.library.scan.naming.kinds import ExtraType, VideoType


@dataclass(frozen=True, slots=True)
class MovieName:
    """What a movie file or folder name says about the movie."""

    title: str
    year: int | None = None
    provider_ids: dict[str, str] = field(default_factory=dict)
    version_name: str | None = None
    part: int | None = None


@dataclass(frozen=True, slots=True)
class MovieVersion:
    """One playable version of a movie: its label (None for an unlabelled one) and its part files."""

    name: str | None
    parts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExtraFile:
    """A trailer, featurette, theme song ... and its ExtraType."""

    path: str
    extra_type: ExtraType
    title: str


@dataclass(frozen=True, slots=True)
class ResolvedMovie:
    """A movie found in a folder: versions[0] is the primary version."""

    title: str
    year: int | None
    provider_ids: dict[str, str]
    versions: tuple[MovieVersion, ...]
    extras: tuple[ExtraFile, ...] = ()

    @property
    def primary(self) -> MovieVersion:
        return self.versions[0]


@dataclass(frozen=True, slots=True)
class MovieFolder:
    """Everything ``resolve_movie_folder`` found; extras it could not attach are listed apart."""

    movies: tuple[ResolvedMovie, ...]
    unmatched_extras: tuple[ExtraFile, ...] = ()


@dataclass(frozen=True, slots=True)
class FileStack:
    """Files that are parts of one video ("Movie cd1.avi", "Movie cd2.avi"), in part order."""

    name: str
    parts: tuple[str, ...]


_PART_RE = re.compile(
    r"(?:(?<=[\]\)\}])|[ _.\-]+)[\(\[]?(?P<kind>cd|dvd|part|pt|dis[ck])[ _.\-]{0,3}"
    r"(?P<number>[0-9]{1,3}|[a-d])[\)\]]?$",
    re.IGNORECASE,
)
_PART_TAIL = 24  # the part marker sits at the end; only this much of a name is searched
_BRACKETED_YEAR_RE = re.compile(r"[\(\[]\s*(?:18[89]\d|19\d\d|20\d\d)\s*[\)\]]")
_VERSION_AFTER_YEAR_RE = re.compile(r"^\s*-\s*(?P<version>.+?)\s*$")
_RESOLUTION_RE = re.compile(
    r"(?<![0-9])(?P<lines>[0-9]{3,4})[ip](?![a-z0-9])|(?<![a-z0-9])(?P<k>[48])k(?![a-z0-9])", re.I
)
_ONLY_BRACKETS_RE = re.compile(r"^(?:\s*\[[^\]]*\])+\s*$")

DISC_STRUCTURE_FOLDERS: frozenset[str] = frozenset({"video_ts", "audio_ts", "bdmv", "certificate", "jar"})


def _part_number(token: str) -> int:
    return int(token) if token.isdigit() else "abcd".index(token.lower()) + 1


def _split_part(name: str) -> tuple[str, str, int] | None:
    offset = max(0, len(name) - _PART_TAIL)
    match = _PART_RE.search(name, offset)
    if not match:
        return None
    title = name[: match.start()].rstrip(" _.-")
    if not title:
        return None
    return title, match.group("kind").lower(), _part_number(match.group("number"))


def parse_movie_name(
    path: str | os.PathLike[str], *, is_directory: bool = False, detect_part: bool = True
) -> MovieName:
    """Title, year, provider ids, version label and part number from a movie file or folder name.

    "Movie (2020) - Director's Cut.mkv" gives version_name "Director's Cut"; "Movie cd2.avi"
    gives part 2 (pass detect_part=False for a file that is known not to be stacked).
    """
    p = as_media_path(path)
    name = p.name if is_directory else strip_known_extension(p.name)
    if not is_directory:
        name = strip_extra_suffix(name)
    name, provider_ids = extract_provider_ids(name)

    part: int | None = None
    if detect_part and not is_directory:
        split = _split_part(name)
        if split:
            name, _, part = split

    version: str | None = None
    years = list(_BRACKETED_YEAR_RE.finditer(name))
    if years:
        after = _VERSION_AFTER_YEAR_RE.match(name[years[-1].end() :])
        if after and name[: years[-1].start()].strip():
            version = strip_release_tags(after.group("version")) or after.group("version")

    raw_title, year = split_title_year(name)
    return MovieName(
        title=clean_title(raw_title),
        year=year,
        provider_ids=provider_ids,
        version_name=version,
        part=part,
    )


def _natural_key(text: str) -> list[tuple[int, int | str]]:
    return [
        (0, int(tok)) if tok.isdigit() else (1, tok) for tok in re.split(r"(\d+)", text.casefold()) if tok
    ]


def stack_parts(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[FileStack], list[str]]:
    """Group "cd1/cd2", "part1/part2", "disc1/disc2", "pt a/pt b" files into stacks.

    Returns the stacks and the paths that are not part of any stack. Files stack when they
    share the title, the part word and the extension and differ in the part number.
    """
    groups: dict[tuple[str, str, str, str], list[tuple[int, str, str]]] = {}
    order: list[str] = []
    for raw in paths:
        p = as_media_path(raw)
        order.append(str(p))
        split = _split_part(p.stem)
        if split is None:
            continue
        title, kind, number = split
        key = (str(p.parent), title.casefold().strip(), kind.replace("disk", "disc"), p.suffix.lower())
        groups.setdefault(key, []).append((number, str(p), title.strip()))

    stacks: list[FileStack] = []
    stacked: set[str] = set()
    for members in groups.values():
        numbers = {number for number, _, _ in members}
        if len(members) < 2 or len(numbers) != len(members):
            continue
        members.sort(key=lambda m: m[0])
        stacks.append(FileStack(name=members[0][2], parts=tuple(m[1] for m in members)))
        stacked.update(m[1] for m in members)
    stacks.sort(key=lambda s: _natural_key(s.name))
    return stacks, [p for p in order if p not in stacked]


def _resolution_rank(stem: str) -> int:
    best = 0
    for match in _RESOLUTION_RE.finditer(stem):
        value = (
            int(match.group("lines")) if match.group("lines") else (2160 if match.group("k") == "4" else 4320)
        )
        best = max(best, value)
    return best


def _version_remainder(folder: str, stem: str) -> str | None:
    """What follows the folder name in a file name, if the file is a version of the folder's movie."""
    if len(stem) < len(folder) or stem[: len(folder)].casefold() != folder.casefold():
        return None
    return stem[len(folder) :].strip()


def _is_version_of(folder: str, stem: str) -> bool:
    rest = _version_remainder(folder, stem)
    if rest is None:
        return False
    if not rest or rest.startswith("-") or _ONLY_BRACKETS_RE.match(rest):
        return True
    return not strip_release_tags("x " + rest).removeprefix("x").strip(" -._")


@dataclass(slots=True)
class _Candidate:
    stem: str
    parts: tuple[str, ...]
    name: MovieName
    extras: list[ExtraFile] = field(default_factory=list)


def _extra_file(path: str, extra_type: ExtraType) -> ExtraFile:
    return ExtraFile(path=path, extra_type=extra_type, title=PurePath(path).stem)


def resolve_movie_folder(
    paths: Iterable[str | os.PathLike[str]], *, folder_name: str | None = None
) -> MovieFolder:
    """Group the video and theme-audio files of one movie folder into movies.

    ``paths`` may include files from extras sub-folders ("trailers/", "featurettes/").
    ``folder_name`` defaults to the name of the folder holding the first non-extra video.
    Files that are neither video nor audio are ignored.
    """
    mains: list[str] = []
    extras: list[ExtraFile] = []
    for raw in paths:
        p = as_media_path(raw)
        if not (is_video_file(p) or is_audio_file(p)):
            continue
        extra_type = classify_extra(p)
        if extra_type is not None:
            extras.append(_extra_file(str(p), extra_type))
        elif is_video_file(p):
            mains.append(str(p))

    stacks, singles = stack_parts(mains)
    candidates = [
        _Candidate(stem=stack.name, parts=stack.parts, name=parse_movie_name(stack.parts[0]))
        for stack in stacks
    ]
    candidates += [
        _Candidate(stem=PurePath(p).stem, parts=(p,), name=parse_movie_name(p, detect_part=False))
        for p in singles
    ]
    candidates.sort(key=lambda c: _natural_key(c.stem))

    if folder_name is None and mains:
        folder_name = PurePath(mains[0]).parent.name
    movies = _group_versions(candidates, folder_name or "")
    return _attach_extras(movies, extras)


def _group_versions(candidates: list[_Candidate], folder: str) -> list[tuple[MovieName, list[_Candidate]]]:
    if len(candidates) > 1 and len(folder) > 1:
        same_year = len({c.name.year for c in candidates}) == 1
        if same_year and all(_is_version_of(folder, c.stem) for c in candidates):
            exact = [c for c in candidates if c.stem == folder]
            rest = [c for c in candidates if c.stem != folder]
            rest.sort(key=lambda c: _natural_key(c.stem))
            rest.sort(key=lambda c: -_resolution_rank(c.stem))
            folder_name = parse_movie_name(folder, is_directory=True)
            ids: dict[str, str] = dict(folder_name.provider_ids)
            for c in candidates:
                for key, value in c.name.provider_ids.items():
                    ids.setdefault(key, value)
            merged = MovieName(
                title=folder_name.title, year=folder_name.year or candidates[0].name.year, provider_ids=ids
            )
            return [(merged, exact + rest)]
    return [(c.name, [c]) for c in candidates]


def _attach_extras(groups: list[tuple[MovieName, list[_Candidate]]], extras: list[ExtraFile]) -> MovieFolder:
    attached: dict[int, list[ExtraFile]] = {i: [] for i in range(len(groups))}
    unmatched: list[ExtraFile] = []
    if len(groups) == 1:
        attached[0] = list(extras)
    else:
        for extra in extras:
            owner = _owner_of(groups, extra)
            if owner is None:
                unmatched.append(extra)
            else:
                attached[owner].append(extra)

    movies: list[ResolvedMovie] = []
    for index, (name, members) in enumerate(groups):
        folder_label = None
        versions: list[MovieVersion] = []
        for member in members:
            label = None
            if len(members) > 1:
                folder_label = folder_label or PurePath(members[0].parts[0]).parent.name
                rest = _version_remainder(folder_label, member.stem)
                label = rest.strip(" -") or None if rest is not None else None
            versions.append(MovieVersion(name=label, parts=member.parts))
        movies.append(
            ResolvedMovie(
                title=name.title,
                year=name.year,
                provider_ids=dict(name.provider_ids),
                versions=tuple(versions),
                extras=tuple(attached[index]),
            )
        )
    return MovieFolder(movies=tuple(movies), unmatched_extras=tuple(unmatched))


def _owner_of(groups: list[tuple[MovieName, list[_Candidate]]], extra: ExtraFile) -> int | None:
    p = PurePath(extra.path)
    stem = strip_extra_suffix(p.stem).casefold().rstrip(" -._()[]")
    best: tuple[int, int] | None = None
    for index, (_, members) in enumerate(groups):
        for member in members:
            base = member.stem.casefold().rstrip(" -._()[]")
            if base and stem.startswith(base) and (best is None or len(base) > best[1]):
                best = (index, len(base))
    return best[0] if best else None


def video_type_for_file(path: str | os.PathLike[str]) -> VideoType:
    """VideoType of a single file: Iso for disc images, Dvd for a VIDEO_TS.IFO, else VideoFile."""
    p = as_media_path(path)
    if p.suffix.lower() == ".iso":
        return VideoType.ISO
    if p.name.lower() == "video_ts.ifo":
        return VideoType.DVD
    return VideoType.VIDEO_FILE


def disc_type_from_entries(entry_names: Iterable[str]) -> VideoType | None:
    """Dvd when a folder holds VIDEO_TS (or VIDEO_TS.IFO), BluRay when it holds BDMV; else None."""
    lowered = {name.strip().lower() for name in entry_names}
    if "video_ts" in lowered or "video_ts.ifo" in lowered:
        return VideoType.DVD
    if "bdmv" in lowered or "index.bdmv" in lowered:
        return VideoType.BLU_RAY
    return None


def is_disc_structure_folder(name: str) -> bool:
    """True for folders inside a disc rip (VIDEO_TS, BDMV ...) that are not movies themselves."""
    return name.strip().lower() in DISC_STRUCTURE_FOLDERS


def disc_type_of_folder(folder: str | os.PathLike[str]) -> VideoType | None:
    """Like ``disc_type_from_entries`` but lists the folder (I/O); None if it cannot be read."""
    p = Path(as_media_path(folder))
    if p.name.lower() == "video_ts":
        return VideoType.DVD
    if p.name.lower() == "bdmv":
        return VideoType.BLU_RAY
    try:
        with os.scandir(p) as entries:
            names = [entry.name for entry in entries]
    except OSError:
        return None
    return disc_type_from_entries(names)
