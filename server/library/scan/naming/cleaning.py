"""Text clean-up shared by the movie, series and episode parsers.

Release names carry a lot besides the title: a year, provider ids, quality and codec tags,
release groups. These helpers take them apart without touching titles that merely contain
digits ("2001 A Space Odyssey", "Blade Runner 2049").
"""

from __future__ import annotations

import re
from datetime import date

# Tags that never start a title word: quality, source, codec, audio, HDR and release flags.
_JUNK_WORDS = (
    r"\d{3,4}[pi]|4k|8k|uhd|ultrahd|hdr|hdr10(?:\+|plus)?|dv|dovi|dolby[ ._]?vision|sdr|"
    r"blu-?ray|bdrip|brrip|bdremux|remux|bd25|bd50|bd5|"
    r"web-?dl|web-?rip|webdl|webrip|hdtv|hdtvrip|hdrip|pdtv|dsr|dsrip|dvdrip|dvdscr|dvdscreener|"
    r"hddvd|dvd5|dvd9|telesync|telecine|screener|r5|"
    r"x\.?264|x\.?265|h\.?264|h\.?265|hevc|avc|xvid|xvidvd|divx|divx5|av1|vp9|10-?bit|8-?bit|"
    r"aac(?:2\.0|5\.1)?|ac3|e-?ac-?3|dts(?:-?hd|-?ma|-?x)?|truehd|atmos|flac|ddp?(?:[257]\.[01])?|"
    r"sbs|hsbs|htab|mvc|"
    r"repack|rerip|unrated|nfofix|read\.nfo|multisubs|ntsc|hrhd|hrhdtv"
)
_JUNK_RE = re.compile(
    rf"(?<=[ ._\-\[\(,])(?:{_JUNK_WORDS})(?=[ ._\-\]\),]|$)",
    re.IGNORECASE,
)

_PROVIDER_KEYS = {
    "tmdb": "Tmdb",
    "tmdbid": "Tmdb",
    "imdb": "Imdb",
    "imdbid": "Imdb",
    "tvdb": "Tvdb",
    "tvdbid": "Tvdb",
}
_PROVIDER_RE = re.compile(
    r"\s*[\[{]\s*(?P<key>tmdbid|tmdb|imdbid|imdb|tvdbid|tvdb)\s*[-=]\s*(?P<value>[^\]}\s]+)\s*[\]}]",
    re.IGNORECASE,
)

_YEAR = r"(?:18[89]\d|19\d\d|20\d\d)"
_BRACKETED_YEAR_RE = re.compile(rf"[\(\[]\s*(?P<year>{_YEAR})\s*[\)\]]")
_BARE_YEAR_RE = re.compile(rf"(?<![0-9A-Za-z])(?P<year>{_YEAR})(?![0-9A-Za-z])")
_LEADING_GROUP_RE = re.compile(r"^\s*\[[^\]]+\]\s*(?=\S)")
_BRACKET_GROUP_RE = re.compile(r"\s*[\[{][^\]}]*[\]}]")
_EDGE_SEPARATORS = " -._,~"
_SPACES_RE = re.compile(r"\s{2,}")
_ACRONYM_END_RE = re.compile(r"(?:^|[\s.])[A-Za-z]\.[A-Za-z]\.$")


def trim_separators(text: str) -> str:
    """Strip separators from both ends, keeping the final dot of an acronym ("S.W.A.T.")."""
    text = text.strip(" -_,~")
    while text.startswith(".") or (text.endswith(".") and not _ACRONYM_END_RE.search(text)):
        text = text.strip(".").strip(" -_,~")
    return text


def extract_provider_ids(name: str) -> tuple[str, dict[str, str]]:
    """Remove ``[tmdbid-1]``, ``[imdbid-tt1]``, ``{tmdb-1}``, ``[tvdbid=1]`` tags from a name.

    Returns the name without them and the ids keyed by the spec's provider names (Tmdb, Imdb, Tvdb).
    """
    ids: dict[str, str] = {}

    def take(match: re.Match[str]) -> str:
        key = _PROVIDER_KEYS[match.group("key").lower()]
        value = match.group("value").strip()
        if key == "Imdb":
            value = value.lower()
            if not re.fullmatch(r"tt\d{5,10}", value):
                return match.group(0)
        elif not value.isdigit():
            return match.group(0)
        ids.setdefault(key, value)
        return " "

    stripped = _PROVIDER_RE.sub(take, name)
    return _SPACES_RE.sub(" ", stripped).strip(), ids


def latest_plausible_year() -> int:
    """Years past this are read as part of a title ("Blade Runner 2049"), not as a release year."""
    return date.today().year + 3


def _is_plausible_year(value: int) -> bool:
    return 1888 <= value <= latest_plausible_year()


def split_title_year(name: str) -> tuple[str, int | None]:
    """Split "Title (2020)", "Title [2020]", "Title.2020.1080p..." into a raw title and a year.

    A bracketed year wins over a bare one. A bare year counts only when some title comes
    before it; of several bare years, the last one before the release tags is the year.
    Everything after the year is dropped. The title comes back raw (dots kept).
    """
    for match in reversed(list(_BRACKETED_YEAR_RE.finditer(name))):
        year = int(match.group("year"))
        before = trim_separators(name[: match.start()])
        if before and _is_plausible_year(year):
            return before, year

    junk = _JUNK_RE.search(name)
    limit = junk.start() if junk else len(name)
    chosen: re.Match[str] | None = None
    for match in _BARE_YEAR_RE.finditer(name):
        if match.start() >= limit:
            break
        if not name[: match.start()].strip(_EDGE_SEPARATORS + "([{"):
            continue
        if _is_plausible_year(int(match.group("year"))):
            chosen = match
    if chosen is None:
        return name, None
    before = trim_separators(name[: chosen.start()].rstrip(" -_,~([{"))
    return before, int(chosen.group("year"))


def strip_release_tags(name: str) -> str:
    """Cut a name at the first quality/codec/source tag and drop bracketed groups after the title.

    A leading ``[Group]`` is removed too. Names that are only a bracket ("[rec]") stay as they are.
    """
    text = name
    lead = _LEADING_GROUP_RE.match(text)
    if lead and text[lead.end() :].strip():
        text = text[lead.end() :]
    junk = _JUNK_RE.search(text)
    if junk and text[: junk.start()].strip(_EDGE_SEPARATORS + "[("):
        text = text[: junk.start()]
    first_bracket = re.search(r"[\[{]", text)
    if first_bracket and text[: first_bracket.start()].strip(_EDGE_SEPARATORS):
        text = text[: first_bracket.start()] + _BRACKET_GROUP_RE.sub(" ", text[first_bracket.start() :])
    text = trim_separators(text.rstrip(" -_,~([{"))
    return text if text else name.strip()


def normalize_separators(name: str) -> str:
    """Turn dotted or underscored release names into words ("Blade.Runner" -> "Blade Runner").

    Acronyms ("S.H.I.E.L.D"), numbers ("2.0") and abbreviations followed by a space ("St. Vincent")
    keep their dots.
    """
    text = name.strip()
    if "_" in text:
        text = text.replace("_", " ") if " " in text else text.replace("_", ".")
    parts = text.split(".")
    out: list[str] = [parts[0]]
    for before, after in zip(parts, parts[1:], strict=False):
        joiner = "."
        if before and after and not before[-1].isspace() and not after[0].isspace():
            word_before, word_after = before.split()[-1], after.split()[0]
            keep = (len(word_before) <= 1 and len(word_after) <= 1) or (
                word_before.isdigit() and word_after.isdigit()
            )
            joiner = "." if keep else " "
        out += [joiner, after]
    text = _SPACES_RE.sub(" ", "".join(out))
    return text.strip(" -_,~")


def clean_title(raw: str) -> str:
    """Release tags stripped and separators normalised; falls back to the input when nothing is left."""
    cleaned = normalize_separators(strip_release_tags(raw))
    return cleaned or raw.strip()
