"""Matching of the comma lists in device profiles against containers, codecs and subtitle formats.

A profile list such as ``"mp4,m4v"`` matches a source whose value (itself possibly a comma list,
as ffprobe reports ``"mov,mp4,m4a"``) shares any entry with it, case-insensitively. A list that
starts with ``-`` is negated. An empty list accepts everything; an unknown source value never
matches a non-empty list. Known aliases are treated as one name (``mkv``/``matroska``,
``mp4``/``m4v``/``mov``, ``ts``/``mpegts``, ``hevc``/``h265``, ``subrip``/``srt`` ...).
"""

from __future__ import annotations

from collections.abc import Iterable

_CONTAINER_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"mkv", "matroska"}),
    frozenset({"mp4", "m4v", "mov"}),
    frozenset({"ts", "mpegts"}),
    frozenset({"ogg", "oga"}),
)
_CODEC_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"hevc", "h265"}),
    frozenset({"dts", "dca"}),
)
_SUBTITLE_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"srt", "subrip"}),
    frozenset({"vtt", "webvtt"}),
    frozenset({"pgssub", "pgs", "hdmv_pgs_subtitle"}),
    frozenset({"dvdsub", "dvd_subtitle", "vobsub"}),
    frozenset({"dvbsub", "dvb_subtitle"}),
)

# Subtitle codecs that are pictures rather than text.
_IMAGE_SUBTITLE_MARKERS = ("pgs", "dvd", "dvb", "vobsub")
_IMAGE_SUBTITLE_NAMES = frozenset({"sub", "xsub"})


def split_list(value: str | None) -> list[str]:
    """The lower-cased, trimmed, non-empty entries of a comma list."""
    if not value:
        return []
    return [part.strip().lower() for part in value.split(",") if part.strip()]


def _expand(names: Iterable[str], families: tuple[frozenset[str], ...]) -> set[str]:
    expanded: set[str] = set()
    for name in names:
        expanded.add(name)
        for family in families:
            if name in family:
                expanded |= family
    return expanded


def _list_matches(profile_value: str | None, value: str | None, families: tuple[frozenset[str], ...]) -> bool:
    negated = bool(profile_value) and profile_value.lstrip().startswith("-")
    entries = split_list(profile_value.lstrip()[1:] if negated and profile_value else profile_value)
    if not entries:
        return True
    candidates = split_list(value)
    if not candidates:
        return negated
    hit = bool(_expand(candidates, families) & set(entries))
    return hit != negated


def container_matches(profile_containers: str | None, container: str | None) -> bool:
    """Whether a profile's container list accepts the given container (or container list)."""
    return _list_matches(profile_containers, container, _CONTAINER_FAMILIES)


def codec_matches(profile_codecs: str | None, codec: str | None) -> bool:
    """Whether a profile's codec list accepts the given codec."""
    return _list_matches(profile_codecs, codec, _CODEC_FAMILIES)


def codec_in(codecs: Iterable[str], codec: str | None) -> bool:
    """Whether ``codec`` is one of an already split codec list (aliases count)."""
    if not codec:
        return False
    return bool(_expand([codec.lower()], _CODEC_FAMILIES) & {c.lower() for c in codecs})


def subtitle_format_matches(profile_format: str | None, codec: str | None) -> bool:
    """Whether a subtitle profile's format names the same format as a stream's codec."""
    if not profile_format or not codec:
        return False
    wanted = _expand([profile_format.strip().lower()], _SUBTITLE_FAMILIES)
    return codec.strip().lower() in wanted


def is_text_subtitle(codec: str | None) -> bool:
    """Whether a subtitle codec is text (srt, ass, vtt ...) rather than pictures (PGS, VobSub ...)."""
    name = (codec or "").strip().lower()
    if name in _IMAGE_SUBTITLE_NAMES:
        return False
    return not any(marker in name for marker in _IMAGE_SUBTITLE_MARKERS)


def can_convert_subtitle(from_codec: str | None, to_format: str | None) -> bool:
    """Whether a text subtitle can be converted to another text format (ASS/SSA styling cannot)."""
    source = (from_codec or "").strip().lower()
    target = (to_format or "").strip().lower()
    if not is_text_subtitle(source) or not is_text_subtitle(target) or not target:
        return False
    return source not in {"ass", "ssa"} and target not in {"ass", "ssa"}


def single_container(container: str | None, accepted: Iterable[str | None]) -> str | None:
    """Pick one name from a source container list: the first an accepting profile list names
    exactly, else the first it accepts through an alias, else the first of the list."""
    formats = split_list(container)
    if not formats:
        return None
    lists = [entries for entries in accepted if entries]
    for name in formats:
        if any(name in split_list(entries.lstrip("-")) and container_matches(entries, name) for entries in lists):
            return name
    for name in formats:
        if any(container_matches(entries, name) for entries in lists):
            return name
    return formats[0]
