"""Series folders, season folders and episode file names.

Episode rules are tried in a fixed order, most specific first: S01E02, "Season 1 Episode 2",
1x02, air dates, "Episode 2"/"E02", "[Group] Show - 136", "Show - 102", "02 - Title",
"Show.102.HDTV" and "Show 889". The first that matches decides; season and series name
fall back to the folders the file sits in.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import PurePath

from server.library.scan.naming.cleaning import (
    clean_title,
    extract_provider_ids,
    latest_plausible_year,
    normalize_separators,
    split_title_year,
    strip_release_tags,
)
from server.library.scan.naming.extensions import as_media_path, strip_known_extension


@dataclass(frozen=True, slots=True)
class SeriesName:
    """What a series folder name says: "Show (2019) [tvdbid-123]"."""

    title: str
    year: int | None = None
    provider_ids: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EpisodeInfo:
    """What an episode path says. ``episode`` is None when no number (or only a date) was found."""

    series_name: str | None
    season: int | None
    episode: int | None
    episode_end: int | None = None
    title: str | None = None
    is_special: bool = False
    date: date | None = None


# ----------------------------------------------------------------------------- series & seasons

_TITLE_WITH_YEAR_RE = re.compile(r"^(?P<title>.+?)\s*[\(\[](?P<year>\d{4})[\)\]]")
_SEASON_WORDS = ("season", "sæson", "temporada", "saison", "staffel", "series", "сезон", "stagione")
_SPECIALS_FOLDERS = frozenset({"specials", "special"})


def parse_series_folder(path: str | os.PathLike[str]) -> SeriesName:
    """Title, year and provider ids of a series folder ("The Office (US)" keeps its "(US)")."""
    name, ids = extract_provider_ids(as_media_path(path).name)
    match = _TITLE_WITH_YEAR_RE.match(name)
    if match and 1888 <= int(match.group("year")) <= latest_plausible_year():
        return SeriesName(
            title=clean_title(match.group("title")), year=int(match.group("year")), provider_ids=ids
        )
    return SeriesName(title=clean_title(name), provider_ids=ids)


def _first_number_outside_parentheses(text: str) -> int | None:
    depth = 0
    digits = ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if char.isdigit() and char.isascii() and depth == 0:
            digits += char
        elif digits:
            break
    return int(digits) if digits else None


def parse_season_folder(path: str | os.PathLike[str], *, numeric_folders: bool = False) -> int | None:
    """Season number of a season folder: "Season 1", "Season 01", "S01", "Staffel 2", "Specials" (0).

    Plain numbers ("1") count only with ``numeric_folders``. "Extras" is an extras folder, not a
    season, so it gives None.
    """
    name = as_media_path(path).name.strip()
    lowered = name.lower()
    if lowered in _SPECIALS_FOLDERS:
        return 0
    if numeric_folders and lowered.isdigit() and lowered.isascii():
        return int(lowered)
    if re.fullmatch(r"s\d{1,4}", lowered):
        return int(lowered[1:])
    for word in _SEASON_WORDS:
        if word in lowered:
            number = _first_number_outside_parentheses(lowered.replace(word, " "))
            if number is not None:
                return number
            break
    for part in re.split(r"[._\s\-]+", lowered):
        if re.fullmatch(r"s\d{1,4}", part):
            return int(part[1:])
    return None


# ----------------------------------------------------------------------------- episodes


@dataclass(frozen=True, slots=True)
class _Hit:
    series: str
    season: int | None
    episode: int | None
    end: int | None
    rest: str
    air_date: date | None = None
    split_number: str | None = None  # "102" read as season 1 episode 2, unless the folder disagrees


def _valid_season(season: int | None) -> bool:
    return season is None or not (200 <= season < 1928 or season > 2500)


def _ending(episode: int, numbers: list[int]) -> int | None:
    ends = [n for n in numbers if n > episode]
    return max(ends) if ends else None


_SXE_RE = re.compile(
    r"(?<![a-z0-9])s(?P<season>\d{1,4})[ ._\-]*x?[ ._\-]*e(?P<episode>\d{1,4})(?![0-9])", re.I
)
_SXE_MORE_RE = re.compile(
    r"(?:\s*-\s*)?(?:s\d{1,4})?e(?P<e>\d{1,4})(?![0-9])|-(?P<dash>\d{1,4})(?![0-9])|x(?P<x>\d{1,4})(?![0-9])",
    re.I,
)
_NXN_RE = re.compile(r"(?<![a-z0-9])(?P<season>\d{1,4})x(?P<episode>\d{1,3})(?![0-9])", re.I)
_NXN_MORE_RE = re.compile(
    r"(?:\s*-\s*)?(?:\d{1,4})?[xe](?P<e>\d{1,3})(?![0-9])|-(?P<dash>\d{1,3})(?![0-9])", re.I
)
_LONG_RE = re.compile(
    r"(?<![a-z0-9])(?:season|series)[ ._\-]*(?P<season>\d{1,4})[ ._\-]*(?:episode|ep)[ ._\-]*(?P<episode>\d{1,4})(?![0-9])",
    re.I,
)
_YMD_RE = re.compile(r"(?<![0-9])(?P<y>(?:19|20)\d\d)[\-._ ](?P<m>\d\d)[\-._ ](?P<d>\d\d)(?![0-9])")
_DMY_RE = re.compile(r"(?<![0-9])(?P<d>\d\d)[\-._ ](?P<m>\d\d)[\-._ ](?P<y>(?:19|20)\d\d)(?![0-9])")
_EPISODE_WORD_RE = re.compile(
    r"(?<![a-z0-9])(?:episode|ep\.?)[ ._\-]*(?P<episode>\d{1,4})(?:-(?P<end>\d{1,4}))?(?![0-9])", re.I
)
_E_ONLY_RE = re.compile(r"(?<![a-z0-9])e(?P<episode>\d{1,4})(?![0-9a-z])", re.I)
_ANIME_RE = re.compile(
    r"^\s*\[[^\]]*\][ _]*(?P<series>.+?)[ _]*-[ _]*(?P<episode>\d{1,4})(?:v\d)?(?=$|[ _.\[\(])(?P<rest>.*)$"
)
_DASH_NUMBER_RE = re.compile(
    r"^(?P<series>.*?\S)\s+-\s+(?P<num>\d{1,4})(?:v\d)?(?=$|[\s._\-\[\(])(?P<rest>.*)$"
)
_LEADING_NUMBER_RE = re.compile(r"^(?P<episode>\d{1,3})(?:-(?P<end>\d{1,3}))?(?=$|[\s._\-])(?P<rest>.*)$")
_DOTTED_NUMBER_RE = re.compile(r"(?<=[._])(?P<season>[1-9])(?P<episode>\d\d)(?=[._]|$)")
_NAME_NUMBER_RE = re.compile(
    r"^(?P<series>[^\W\d][\w' &!,]*?)\s(?P<episode>\d{1,4})(?:-(?P<end>\d{2,4}))?(?=$|[\s._\[\(])(?P<rest>.*)$"
)


def _more_numbers(stem: str, pos: int, more: re.Pattern[str]) -> tuple[list[int], int]:
    numbers: list[int] = []
    while True:
        match = more.match(stem, pos)
        if not match:
            return numbers, pos
        value = next(v for v in match.groups() if v is not None)
        after = stem[match.end() : match.end() + 1].lower()
        if after in ("p", "i"):  # "-720p" is a resolution, not an episode
            return numbers, pos
        numbers.append(int(value))
        pos = match.end()


def _rule_sxe(stem: str) -> _Hit | None:
    match = _SXE_RE.search(stem)
    if not match:
        return None
    episode = int(match.group("episode"))
    numbers, pos = _more_numbers(stem, match.end(), _SXE_MORE_RE)
    season = int(match.group("season"))
    return _Hit(stem[: match.start()], season, episode, _ending(episode, numbers), stem[pos:])


def _rule_long(stem: str) -> _Hit | None:
    match = _LONG_RE.search(stem)
    if not match:
        return None
    return _Hit(
        stem[: match.start()],
        int(match.group("season")),
        int(match.group("episode")),
        None,
        stem[match.end() :],
    )


def _rule_nxn(stem: str) -> _Hit | None:
    for match in _NXN_RE.finditer(stem):
        season = int(match.group("season"))
        if not _valid_season(season):
            continue
        episode = int(match.group("episode"))
        numbers, pos = _more_numbers(stem, match.end(), _NXN_MORE_RE)
        return _Hit(stem[: match.start()], season, episode, _ending(episode, numbers), stem[pos:])
    return None


def _date_or_none(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _rule_date(stem: str) -> _Hit | None:
    for pattern in (_YMD_RE, _DMY_RE):
        for match in pattern.finditer(stem):
            aired = _date_or_none(int(match.group("y")), int(match.group("m")), int(match.group("d")))
            if aired is None and pattern is _DMY_RE:  # month first, as US names write it
                aired = _date_or_none(int(match.group("y")), int(match.group("d")), int(match.group("m")))
            if aired is None:
                continue
            return _Hit(stem[: match.start()], None, None, None, stem[match.end() :], air_date=aired)
    return None


def _rule_episode_word(stem: str) -> _Hit | None:
    match = _EPISODE_WORD_RE.search(stem)
    if match:
        episode = int(match.group("episode"))
        end = int(match.group("end")) if match.group("end") else None
        return _Hit(
            stem[: match.start()], None, episode, _ending(episode, [end] if end else []), stem[match.end() :]
        )
    match = _E_ONLY_RE.search(stem)
    if match:
        return _Hit(stem[: match.start()], None, int(match.group("episode")), None, stem[match.end() :])
    return None


def _rule_anime(stem: str) -> _Hit | None:
    match = _ANIME_RE.match(stem)
    if not match:
        return None
    return _Hit(match.group("series"), None, int(match.group("episode")), None, match.group("rest"))


def _is_year_like(number: str) -> bool:
    return len(number) == 4 and 1900 <= int(number) <= 2099


def _rule_dash_number(stem: str) -> _Hit | None:
    match = _DASH_NUMBER_RE.match(stem)
    if not match or _is_year_like(match.group("num")) or match.group("series").strip().isdigit():
        return None
    number = match.group("num")
    split = number if len(number) == 3 and number[0] != "0" else None
    return _Hit(match.group("series"), None, int(number), None, match.group("rest"), split_number=split)


def _rule_leading_number(stem: str) -> _Hit | None:
    match = _LEADING_NUMBER_RE.match(stem)
    if not match:
        return None
    episode = int(match.group("episode"))
    end = int(match.group("end")) if match.group("end") else None
    return _Hit("", None, episode, _ending(episode, [end] if end else []), match.group("rest"))


def _rule_dotted_number(stem: str) -> _Hit | None:
    for match in _DOTTED_NUMBER_RE.finditer(stem):
        series = stem[: match.start()]
        if series.strip(" ._-"):
            return _Hit(
                series, int(match.group("season")), int(match.group("episode")), None, stem[match.end() :]
            )
    return None


def _rule_name_number(stem: str) -> _Hit | None:
    match = _NAME_NUMBER_RE.match(stem)
    if not match or _is_year_like(match.group("episode")):
        return None
    episode = int(match.group("episode"))
    end = int(match.group("end")) if match.group("end") else None
    return _Hit(
        match.group("series"), None, episode, _ending(episode, [end] if end else []), match.group("rest")
    )


_RULES: tuple[Callable[[str], _Hit | None], ...] = (
    _rule_sxe,
    _rule_long,
    _rule_nxn,
    _rule_date,
    _rule_episode_word,
    _rule_anime,
    _rule_dash_number,
    _rule_leading_number,
    _rule_dotted_number,
    _rule_name_number,
)


def _series_from_text(raw: str) -> str | None:
    text, _ = extract_provider_ids(raw)
    text = text.strip(" -._")
    if not text:
        return None
    title, year = split_title_year(text)
    if year is not None and title:
        text = title
    cleaned = clean_title(text).strip(" -._")
    return cleaned or None


def _title_from_rest(rest: str) -> str | None:
    text = rest.strip(" -._~")
    if not text:
        return None
    # A leading marker word lets the tag stripper treat tags right at the start as tags.
    stripped = strip_release_tags("T " + text)
    stripped = stripped[1:] if stripped.startswith("T") else stripped
    title = normalize_separators(stripped.strip(" -._~[]()"))
    return title or None


def parse_episode(path: str | os.PathLike[str], *, is_directory: bool = False) -> EpisodeInfo:
    """Series name, season, episode (and last episode of a multi-episode file), title and air date.

    The season comes from the file name, else from a season folder; the series name from the
    file name, else from the series folder (the parent of a season folder, or the parent).
    """
    p = as_media_path(path)
    stem = p.name if is_directory else strip_known_extension(p.name)

    folder_season = parse_season_folder(p.parent) if p.parent.name else None
    series_folder = p.parent.parent if folder_season is not None else p.parent
    folder_series = parse_series_folder(series_folder).title if series_folder.name else None

    hit: _Hit | None = None
    for rule in _RULES:
        hit = rule(stem)
        if hit is not None and _valid_season(hit.season):
            break
        hit = None

    if hit is None:
        season = folder_season
        return EpisodeInfo(series_name=folder_series, season=season, episode=None, is_special=season == 0)

    season, episode = hit.season, hit.episode
    if hit.split_number is not None:
        split_season, split_episode = int(hit.split_number[0]), int(hit.split_number[1:])
        if folder_season is None or folder_season == split_season:
            season, episode = split_season, split_episode
    if season is None:
        season = folder_season

    return EpisodeInfo(
        series_name=_series_from_text(hit.series) or folder_series,
        season=season,
        episode=episode,
        episode_end=hit.end,
        title=_title_from_rest(hit.rest),
        is_special=season == 0,
        date=hit.air_date,
    )


def series_folder_of(path: str | os.PathLike[str]) -> PurePath:
    """The folder an episode's series is named after: the parent of a season folder, else the parent."""
    p = as_media_path(path)
    return p.parent.parent if parse_season_folder(p.parent) is not None else p.parent
