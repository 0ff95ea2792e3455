"""Kodi-style NFO files: which NFO belongs to an item, and what it says.

Parsing refuses any document with a DTD (so no entity expansion and no external entities
can happen) and returns None for malformed or oversized files instead of raising. The
root element decides the kind: movie, tvshow, season, episodedetails, musicvideo, album,
artist. Text after the XML (Kodi allows a provider URL there) is scanned for ids.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from server.library.scan.naming.extensions import as_media_path
from server.library.scan.naming.kinds import VideoType

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET  # noqa: N817  # loaded with the first NFO read (parse_xml_safely)

log = logging.getLogger(__name__)

#: Files larger than this are not read as NFOs.
MAX_NFO_BYTES = 5 * 1024 * 1024

NFO_ROOTS = ("movie", "tvshow", "season", "episodedetails", "musicvideo", "album", "artist")


class UnsafeNfoError(ValueError):
    """An NFO declares a DTD or entities; it is refused rather than expanded."""


@dataclass(frozen=True, slots=True)
class NfoPerson:
    """A credited person; ``kind`` uses the spec's PersonKind spelling (Actor, Director, Writer ...)."""

    name: str
    kind: str
    role: str | None = None
    order: int | None = None
    thumb: str | None = None


@dataclass(frozen=True, slots=True)
class NfoRating:
    """One entry of a <ratings> block."""

    source: str
    value: float
    votes: int | None = None
    max_value: float | None = None
    is_default: bool = False


@dataclass(frozen=True, slots=True)
class NfoMetadata:
    """What an NFO file says. Lists are tuples in document order; absent values are None."""

    kind: str | None
    title: str | None = None
    original_title: str | None = None
    sort_title: str | None = None
    overview: str | None = None
    tagline: str | None = None
    year: int | None = None
    premiere_date: date | None = None
    end_date: date | None = None
    community_rating: float | None = None
    critic_rating: float | None = None
    ratings: tuple[NfoRating, ...] = ()
    official_rating: str | None = None
    custom_rating: str | None = None
    genres: tuple[str, ...] = ()
    studios: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    people: tuple[NfoPerson, ...] = ()
    provider_ids: dict[str, str] = field(default_factory=dict)
    collection_name: str | None = None
    series_name: str | None = None
    season_number: int | None = None
    episode_number: int | None = None
    episode_number_end: int | None = None
    runtime_minutes: int | None = None
    lock_data: bool = False
    artists: tuple[str, ...] = ()
    album_artists: tuple[str, ...] = ()
    album: str | None = None
    status: str | None = None


# ----------------------------------------------------------------------------- lookup

_KIND_ALIASES = {
    "movie": "Movie",
    "series": "Series",
    "season": "Season",
    "episode": "Episode",
    "musicvideo": "MusicVideo",
    "musicalbum": "MusicAlbum",
    "musicartist": "MusicArtist",
}


def nfo_candidates(
    item_path: str | os.PathLike[str],
    item_kind: str,
    *,
    in_mixed_folder: bool = False,
    video_type: VideoType = VideoType.VIDEO_FILE,
) -> list[PurePath]:
    """The NFO paths that may describe an item, best first (pure; nothing is checked on disk).

    ``item_kind`` is a BaseItemKind: Movie, MusicVideo, Episode (``item_path`` is the file),
    Series, Season, MusicAlbum, MusicArtist (``item_path`` is the folder). For Dvd/BluRay
    movies ``item_path`` is the movie folder. A movie alone in its folder may use "movie.nfo".
    """
    path = as_media_path(item_path)
    kind = _KIND_ALIASES.get(item_kind.lower())
    if kind is None:
        raise ValueError(f"no NFO convention for item kind {item_kind!r}")
    if kind == "Series":
        return [path / "tvshow.nfo"]
    if kind == "Season":
        return [path / "season.nfo"]
    if kind == "MusicAlbum":
        return [path / "album.nfo"]
    if kind == "MusicArtist":
        return [path / "artist.nfo"]
    if kind == "Episode":
        return [path.with_suffix(".nfo")]
    if video_type in (VideoType.DVD, VideoType.BLU_RAY):
        found = [path / "VIDEO_TS" / "VIDEO_TS.nfo"] if video_type == VideoType.DVD else []
        return [*found, path / f"{path.name}.nfo", path / "movie.nfo"]
    candidates = [] if in_mixed_folder else [path.parent / "movie.nfo"]
    candidates.append(path.with_suffix(".nfo"))
    return candidates


def find_nfo(
    item_path: str | os.PathLike[str],
    item_kind: str,
    *,
    in_mixed_folder: bool = False,
    video_type: VideoType = VideoType.VIDEO_FILE,
) -> Path | None:
    """The first of ``nfo_candidates`` that exists as a file (I/O)."""
    for candidate in nfo_candidates(
        item_path, item_kind, in_mixed_folder=in_mixed_folder, video_type=video_type
    ):
        if Path(candidate).is_file():
            return Path(candidate)
    return None


# ----------------------------------------------------------------------------- safe XML


def _refuse(*_: object) -> None:
    raise UnsafeNfoError("NFO declares a DTD or entities")


def parse_xml_safely(data: bytes) -> ET.Element:
    """Parse XML with expat, refusing DTDs and entity declarations.

    Raises UnsafeNfoError for a DTD or entities and expat.ExpatError for malformed XML.
    """
    import xml.etree.ElementTree as ET  # noqa: N817  # here, not at start: a server without NFOs never loads it
    from xml.parsers import expat

    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.UnparsedEntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.Parse(data, True)
    return builder.close()


# ----------------------------------------------------------------------------- reading

_IMDB_URL_RE = re.compile(rb"imdb\.[a-z.]+/title/(tt\d{5,10})", re.I)
_TMDB_URL_RE = re.compile(rb"themoviedb\.org/(?:movie|tv)/(\d+)", re.I)
_TVDB_URL_RE = re.compile(rb"thetvdb\.com/[^\s<]*?[?&]id=(\d+)", re.I)
_URL_SCAN_BYTES = 4096  # provider URLs are short; scanning is bounded
_ROOT_RE = re.compile(rb"<\s*(" + b"|".join(r.encode() for r in NFO_ROOTS) + rb")(?=[\s>/])", re.I)

_PROVIDER_TYPES = {
    "tmdb": "Tmdb",
    "imdb": "Imdb",
    "tvdb": "Tvdb",
    "tvrage": "TvRage",
    "zap2it": "Zap2It",
    "tmdbcollection": "TmdbCollection",
    "musicbrainzalbum": "MusicBrainzAlbum",
    "musicbrainzartist": "MusicBrainzArtist",
    "musicbrainzalbumartist": "MusicBrainzAlbumArtist",
    "musicbrainzreleasegroup": "MusicBrainzReleaseGroup",
    "musicbrainztrack": "MusicBrainzTrack",
    "audiodbartist": "AudioDbArtist",
    "audiodbalbum": "AudioDbAlbum",
}
_ID_TAGS = {
    "tmdbid": "Tmdb",
    "imdbid": "Imdb",
    "imdb_id": "Imdb",
    "tvdbid": "Tvdb",
    "tvdb_id": "Tvdb",
    "tvrageid": "TvRage",
    "zap2itid": "Zap2It",
    "collectionnumber": "TmdbCollection",
    "musicbrainzalbumid": "MusicBrainzAlbum",
    "musicbrainzartistid": "MusicBrainzArtist",
    "musicbrainzalbumartistid": "MusicBrainzAlbumArtist",
    "musicbrainzreleasegroupid": "MusicBrainzReleaseGroup",
    "musicbrainztrackid": "MusicBrainzTrack",
    "audiodbartistid": "AudioDbArtist",
    "audiodbalbumid": "AudioDbAlbum",
}


def parse_nfo(path: str | os.PathLike[str]) -> NfoMetadata | None:
    """Read and parse an NFO file; None if it is missing, too large, malformed or unsafe."""
    try:
        p = Path(as_media_path(path))
        if p.stat().st_size > MAX_NFO_BYTES:
            log.warning("NFO %s is larger than %d bytes; ignored", p, MAX_NFO_BYTES)
            return None
        data = p.read_bytes()
    except (OSError, ValueError):
        return None
    return parse_nfo_bytes(data, source=str(p))


def parse_nfo_bytes(data: bytes, *, source: str = "<nfo>") -> NfoMetadata | None:
    """Parse NFO content; None if malformed, unsafe or not an NFO. See the module notes."""
    if len(data) > MAX_NFO_BYTES:
        return None
    root_match = _ROOT_RE.search(data)
    if root_match is None:
        if b"<" not in data:
            ids = _ids_from_urls(data)
            return NfoMetadata(kind=None, provider_ids=ids) if ids else None
        return None
    root_name = root_match.group(1).decode().lower()
    closing = re.compile(rb"</\s*" + re.escape(root_match.group(1)) + rb"\s*>", re.I)
    ends = [m.end() for m in closing.finditer(data)]
    if not ends:
        return None
    from xml.parsers import expat

    try:
        if root_name == "episodedetails":
            blocks = [data[: ends[0]]] + [data[a:b] for a, b in zip(ends, ends[1:], strict=False)]
            elements = [parse_xml_safely(block) for block in blocks]
        else:
            elements = [parse_xml_safely(data[: ends[-1]])]
    except UnsafeNfoError:
        log.warning("NFO %s declares a DTD or entities; refused", source)
        return None
    except (expat.ExpatError, ValueError):
        log.info("NFO %s is not well-formed XML; ignored", source)
        return None
    if elements[0].tag.lower() != root_name:
        return None

    metadata = _read_element(elements[0], root_name)
    url_ids = _ids_from_urls(data[ends[-1] :])
    for key, value in url_ids.items():
        metadata.provider_ids.setdefault(key, value)
    if len(elements) > 1:
        metadata = _merge_episodes(metadata, [_read_element(e, root_name) for e in elements[1:]])
    return metadata


def _ids_from_urls(data: bytes) -> dict[str, str]:
    data = data[:_URL_SCAN_BYTES]
    ids: dict[str, str] = {}
    for pattern, key in ((_IMDB_URL_RE, "Imdb"), (_TMDB_URL_RE, "Tmdb"), (_TVDB_URL_RE, "Tvdb")):
        match = pattern.search(data)
        if match:
            ids[key] = match.group(1).decode()
    return ids


def _merge_episodes(first: NfoMetadata, others: list[NfoMetadata]) -> NfoMetadata:
    """A multi-episode NFO: the first episode's data, the last episode number, all titles."""
    numbers = [o.episode_number for o in others if o.episode_number is not None]
    titles = [t for t in [first.title, *(o.title for o in others)] if t]
    end = max(numbers) if numbers else None
    if first.episode_number is not None and end is not None and end <= first.episode_number:
        end = None
    return replace(first, episode_number_end=end, title=" / ".join(titles) if titles else None)


def _text(element: ET.Element | None) -> str | None:
    if element is None or element.text is None:
        return None
    value = element.text.strip()
    return value or None


def _to_int(value: str | None) -> int | None:
    if value is None:
        return None
    match = re.match(r"^\s*(-?\d+)", value)
    return int(match.group(1)) if match else None


def _to_float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.replace(",", "."))
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _to_date(value: str | None) -> date | None:
    if value is None:
        return None
    match = re.match(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})", value)
    if not match:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def _split_list(value: str | None) -> list[str]:
    if value is None:
        return []
    return [part.strip() for part in re.split(r"\s*[/|]\s*", value) if part.strip()]


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(value.casefold(), value)
    return tuple(seen.values())


def _official_rating(value: str | None) -> str | None:
    if value is None:
        return None
    value = re.sub(r"^rated\s+", "", value, flags=re.I).strip()
    return value or None


def _read_person(element: ET.Element, default_kind: str) -> NfoPerson | None:
    children = {child.tag.lower(): child for child in element}
    name = _text(children.get("name"))
    if name is None:
        return None
    kind = _text(children.get("type")) or default_kind
    return NfoPerson(
        name=name,
        kind=kind,
        role=_text(children.get("role")),
        order=_to_int(_text(children.get("order")) or _text(children.get("sortorder"))),
        thumb=_text(children.get("thumb")),
    )


def _read_ratings(element: ET.Element) -> list[NfoRating]:
    ratings: list[NfoRating] = []
    for rating in element:
        if rating.tag.lower() != "rating":
            continue
        children = {child.tag.lower(): child for child in rating}
        value = _to_float(_text(children.get("value")) or _text(rating))
        if value is None:
            continue
        ratings.append(
            NfoRating(
                source=(rating.get("name") or "default").lower(),
                value=value,
                votes=_to_int((_text(children.get("votes")) or "").replace(",", "") or None),
                max_value=_to_float(rating.get("max")),
                is_default=(rating.get("default") or "").lower() == "true",
            )
        )
    return ratings


def _community_rating(plain: float | None, ratings: list[NfoRating]) -> float | None:
    if plain is not None:
        return plain
    chosen = next((r for r in ratings if r.is_default), ratings[0] if ratings else None)
    if chosen is None:
        return None
    if chosen.max_value and chosen.max_value != 10:
        return round(chosen.value * 10 / chosen.max_value, 1)
    return chosen.value


def _read_element(root: ET.Element, kind: str) -> NfoMetadata:
    values: dict[str, str] = {}
    genres: list[str] = []
    studios: list[str] = []
    tags: list[str] = []
    countries: list[str] = []
    people: list[NfoPerson] = []
    ratings: list[NfoRating] = []
    artists: list[str] = []
    album_artists: list[str] = []
    unique_ids: dict[str, str] = {}
    tag_ids: dict[str, str] = {}
    collection: str | None = None
    legacy_id: str | None = None

    for child in root:
        tag = child.tag.lower() if isinstance(child.tag, str) else ""
        text = _text(child)
        if tag == "genre":
            genres += _split_list(text)
        elif tag == "studio":
            studios += [text] if text else []
        elif tag == "tag":
            tags += [text] if text else []
        elif tag == "country":
            countries += _split_list(text)
        elif tag == "actor":
            person = _read_person(child, "Actor")
            people += [person] if person else []
        elif tag == "director":
            people += [NfoPerson(name=n, kind="Director") for n in _split_list(text)]
        elif tag in ("credits", "writer"):
            people += [NfoPerson(name=n, kind="Writer") for n in _split_list(text)]
        elif tag == "producer":
            person = _read_person(child, "Producer") if len(child) else None
            people += [person] if person else [NfoPerson(name=n, kind="Producer") for n in _split_list(text)]
        elif tag == "ratings":
            ratings += _read_ratings(child)
        elif tag == "uniqueid":
            provider = _PROVIDER_TYPES.get((child.get("type") or "").lower().replace("_", ""))
            if provider is None and child.get("type"):
                provider = child.get("type")
            if provider and text:
                unique_ids.setdefault(provider, text)
        elif tag in _ID_TAGS:
            if text:
                tag_ids.setdefault(_ID_TAGS[tag], text)
        elif tag == "id":
            legacy_id = text
        elif tag == "set":
            collection = _text(child.find("name")) if len(child) else text
            if child.get("tmdbcolid"):
                tag_ids.setdefault("TmdbCollection", child.get("tmdbcolid", ""))
        elif tag == "artist" and kind != "artist":
            artists += [text] if text else []
        elif tag == "albumartist":
            album_artists += [text] if text else []
        elif text is not None:
            values.setdefault(tag, text)

    provider_ids: dict[str, str] = dict(unique_ids)
    for key, value in tag_ids.items():
        provider_ids.setdefault(key, value)
    if legacy_id:
        if re.fullmatch(r"tt\d{5,10}", legacy_id):
            provider_ids.setdefault("Imdb", legacy_id)
        elif legacy_id.isdigit():
            provider_ids.setdefault("Tvdb" if kind in ("tvshow", "episodedetails") else "Tmdb", legacy_id)

    premiere = _to_date(values.get("premiered") or values.get("aired") or values.get("releasedate"))
    if kind == "artist":
        premiere = premiere or _to_date(values.get("formed") or values.get("born"))
    year = _to_int(values.get("year")) or (premiere.year if premiere else None)
    lock = (values.get("lockdata") or "").lower() == "true"
    overview = values.get("plot") or values.get("biography") or values.get("review") or values.get("outline")

    return NfoMetadata(
        kind=kind,
        title=values.get("title") or (values.get("name") if kind == "artist" else None),
        original_title=values.get("originaltitle"),
        sort_title=values.get("sorttitle"),
        overview=overview,
        tagline=values.get("tagline"),
        year=year,
        premiere_date=premiere,
        end_date=_to_date(values.get("enddate") or (values.get("disbanded") if kind == "artist" else None)),
        community_rating=_community_rating(_to_float(values.get("rating")), ratings),
        critic_rating=_to_float(values.get("criticrating")),
        ratings=tuple(ratings),
        official_rating=_official_rating(values.get("mpaa") or values.get("certification")),
        custom_rating=values.get("customrating"),
        genres=_unique(genres),
        studios=_unique(studios),
        tags=_unique(tags),
        countries=_unique(countries),
        people=tuple(people),
        provider_ids=provider_ids,
        collection_name=collection,
        series_name=values.get("showtitle"),
        season_number=_to_int(values.get("season")),
        episode_number=_to_int(values.get("episode")),
        runtime_minutes=_to_int(values.get("runtime")),
        lock_data=lock,
        artists=_unique(artists),
        album_artists=_unique(album_artists),
        album=values.get("album"),
        status=values.get("status"),
    )
