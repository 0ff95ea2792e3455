"""The Live TV guide: XMLTV listings read into memory and matched to the tuners' channels.

An XMLTV provider (a file inside the allowed folders, or an http(s) URL) is parsed with
defusedxml (listings come from outside; entity tricks must not hurt). A provider channel is
matched to a tuner channel by, in order: the provider's explicit ChannelMappings (tuner channel
number or tvg-id -> provider channel id), the tuner channel's tvg-id, its number, its name.
Programmes are kept in memory for the guide window (GuideDays) and rebuilt by the RefreshGuide
task; ids are derived from channel and start time, so they survive a refresh.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from server.guid import guid_from_text

MAX_XMLTV_BYTES = 200 * 1024 * 1024
_XMLTV_TIME = re.compile(r"^(\d{14})(?:\s*([+-]\d{4}))?")


@dataclass(frozen=True, slots=True)
class ProviderChannel:
    id: str
    name: str
    number: str | None
    icon: str | None


@dataclass(slots=True)
class Program:
    id: str
    channel_id: str  # the tuner channel's id
    start: datetime
    end: datetime
    name: str
    episode_title: str | None = None
    overview: str | None = None
    categories: list[str] = field(default_factory=list)
    season: int | None = None
    episode: int | None = None
    year: int | None = None
    icon: str | None = None
    is_new: bool = False
    is_premiere: bool = False
    is_repeat: bool = False
    rating: str | None = None

    def flags(self, provider_categories: dict[str, list[str]]) -> dict[str, bool]:
        cats = {c.casefold() for c in self.categories}

        def any_of(kind: str) -> bool:
            return bool(cats & {c.casefold() for c in provider_categories.get(kind, [])})

        is_movie = any_of("movie")
        return {"IsMovie": is_movie, "IsSeries": not is_movie and (self.episode is not None or bool(self.episode_title)),
                "IsNews": any_of("news"), "IsKids": any_of("kids"), "IsSports": any_of("sports")}


def parse_xmltv_time(text: str | None) -> datetime | None:
    """XMLTV times look like ``20261124183000 +0100``; a missing offset means UTC."""
    match = _XMLTV_TIME.match((text or "").strip())
    if not match:
        return None
    moment = datetime.strptime(match.group(1), "%Y%m%d%H%M%S")
    offset = match.group(2)
    if offset:
        sign = 1 if offset[0] == "+" else -1
        delta = timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])) * sign
        return (moment - delta).replace(tzinfo=UTC)
    return moment.replace(tzinfo=UTC)


def _episode_numbers(element) -> tuple[int | None, int | None]:
    for num in element.findall("episode-num"):
        text = (num.text or "").strip()
        if num.get("system") == "xmltv_ns":
            parts = [p.split("/")[0].strip() for p in text.split(".")]
            season = int(parts[0]) + 1 if parts and parts[0].isdigit() else None
            episode = int(parts[1]) + 1 if len(parts) > 1 and parts[1].isdigit() else None
            return season, episode
        match = re.match(r"S(\d+)\s*E(\d+)", text, re.I)
        if match:
            return int(match.group(1)), int(match.group(2))
    return None, None


def parse_xmltv(data: bytes) -> tuple[list[ProviderChannel], list[tuple[str, Program]]]:
    """Channels and (provider channel id, programme) pairs of an XMLTV document. Programmes get
    their final id and tuner channel once matched (see Guide.load)."""
    from defusedxml import ElementTree  # with the first XMLTV document, not at start

    root = ElementTree.fromstring(data)
    channels = []
    for ch in root.findall("channel"):
        names = [n.text.strip() for n in ch.findall("display-name") if n.text and n.text.strip()]
        number = next((n for n in names if re.fullmatch(r"\d+(\.\d+)?", n)), None)
        name = next((n for n in names if n != number), names[0] if names else ch.get("id", ""))
        icon = ch.find("icon")
        channels.append(ProviderChannel(id=ch.get("id", ""), name=name, number=number,
                                        icon=icon.get("src") if icon is not None else None))
    programs = []
    for prog in root.findall("programme"):
        start, end = parse_xmltv_time(prog.get("start")), parse_xmltv_time(prog.get("stop"))
        title = prog.findtext("title")
        if start is None or not title:
            continue
        season, episode = _episode_numbers(prog)
        date = (prog.findtext("date") or "")[:4]
        icon = prog.find("icon")
        rating = prog.find("rating")
        programs.append((prog.get("channel", ""), Program(
            id="", channel_id="", start=start, end=end or start + timedelta(minutes=30), name=title.strip(),
            episode_title=(prog.findtext("sub-title") or "").strip() or None,
            overview=(prog.findtext("desc") or "").strip() or None,
            categories=[c.text.strip() for c in prog.findall("category") if c.text and c.text.strip()],
            season=season, episode=episode, year=int(date) if date.isdigit() else None,
            icon=icon.get("src") if icon is not None else None, is_new=prog.find("new") is not None,
            is_premiere=prog.find("premiere") is not None, is_repeat=prog.find("previously-shown") is not None,
            rating=rating.findtext("value") if rating is not None else None)))
    return channels, programs


def match_channels(tuner_channels, provider_channels: list[ProviderChannel],
                   mappings: dict[str, str]) -> dict[str, str]:
    """provider channel id -> tuner channel id."""
    by_id = {p.id: p for p in provider_channels}
    out: dict[str, str] = {}
    for ch in tuner_channels:
        wanted = mappings.get(ch.number or "") or mappings.get(ch.tvg_id or "") or mappings.get(ch.id)
        candidates = [wanted] if wanted in by_id else []
        if not candidates:
            candidates = [p.id for p in provider_channels if ch.tvg_id and p.id == ch.tvg_id]
        if not candidates and ch.number:
            candidates = [p.id for p in provider_channels if p.number == ch.number]
        if not candidates:
            candidates = [p.id for p in provider_channels if p.name.casefold() == ch.name.casefold()]
        if candidates:
            out.setdefault(candidates[0], ch.id)
    return out


class Guide:
    """Programmes per tuner channel, sorted by start."""

    def __init__(self) -> None:
        self.programs: list[Program] = []
        self.by_id: dict[str, Program] = {}
        self.provider_channels: dict[str, list[ProviderChannel]] = {}  # by provider id
        self.loaded_at: datetime | None = None

    def load(self, tuner_channels, provider_id: str, data: bytes, mappings: dict[str, str],
             days: int, replace: bool = True) -> int:
        provider_channels, pairs = parse_xmltv(data)
        return self.load_parsed(tuner_channels, provider_id, provider_channels, pairs, mappings, days, replace)

    def load_parsed(self, tuner_channels, provider_id: str, provider_channels: list[ProviderChannel],
                    pairs: list[tuple[str, Program]], mappings: dict[str, str], days: int,
                    replace: bool = True) -> int:
        """Programmes of any listing provider (XMLTV, Schedules Direct): matched to tuner
        channels, kept for the guide window."""
        self.provider_channels[provider_id] = provider_channels
        matched = match_channels(tuner_channels, provider_channels, mappings)
        now = datetime.now(UTC)
        horizon = now + timedelta(days=days)
        kept = [] if replace else list(self.programs)
        for provider_channel, program in pairs:
            channel_id = matched.get(provider_channel)
            if channel_id is None or program.end < now - timedelta(hours=6) or program.start > horizon:
                continue
            program.channel_id = channel_id
            program.id = guid_from_text("livetv-program", channel_id, program.start.isoformat())
            kept.append(program)
        kept.sort(key=lambda p: (p.start, p.channel_id))
        self.programs = kept
        self.by_id = {p.id: p for p in kept}
        self.loaded_at = now
        return len(kept)

    def airing(self, channel_id: str, at: datetime | None = None) -> Program | None:
        at = at or datetime.now(UTC)
        return next((p for p in self.programs if p.channel_id == channel_id and p.start <= at < p.end), None)


def query_programs(programs: list[Program], *, channel_ids: set[str] | None = None,
                   min_start: datetime | None = None, max_start: datetime | None = None,
                   min_end: datetime | None = None, max_end: datetime | None = None,
                   has_aired: bool | None = None, is_airing: bool | None = None,
                   flags: dict[str, bool | None] | None = None, categories: dict[str, list[str]] | None = None,
                   genres: set[str] | None = None, program_ids: set[str] | None = None) -> list[Program]:
    """The guide's programmes matching the GetPrograms filters, in start order."""
    now = datetime.now(UTC)
    wanted = {k: v for k, v in (flags or {}).items() if v is not None}
    out = []
    for p in programs:
        if channel_ids and p.channel_id not in channel_ids:
            continue
        if program_ids is not None and p.id not in program_ids:
            continue
        if (min_start and p.start < min_start) or (max_start and p.start > max_start):
            continue
        if (min_end and p.end < min_end) or (max_end and p.end > max_end):
            continue
        if has_aired is not None and (p.end <= now) != has_aired:
            continue
        if is_airing is not None and (p.start <= now < p.end) != is_airing:
            continue
        if genres and not genres & {c.casefold() for c in p.categories}:
            continue
        if wanted:
            have = p.flags(categories or {})
            if any(have[k] != v for k, v in wanted.items()):
                continue
        out.append(p)
    return out
