"""Split multi-name tag values ("Artist A; Artist B feat. C") into separate names."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Names that contain a delimiter character but are one act; matched case-insensitively.
KEEP_WHOLE_NAMES: tuple[str, ...] = (
    "AC/DC",
    "Au/Ra",
    "K/DA",
    "22/7",
    "Bremer/McCoy",
    "Smith/Kotzen",
)

_DELIMITERS = re.compile(r"[;/|\\\x00]")
_FEATURING = re.compile(r"\s+(?:feat\.?|featuring|ft\.)\s+", re.IGNORECASE)
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")


def _distinct(names: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    result: list[str] = []
    for name in names:
        cleaned = name.strip()
        key = cleaned.casefold()
        if cleaned and key not in seen:
            seen.add(key)
            result.append(cleaned)
    return result


def split_names(values: Iterable[str], *, featuring: bool = True,
                keep_whole: Iterable[str] = ()) -> list[str]:
    """Split tag values on ';', '/', '|', '\\' (and " feat. " when ``featuring``).

    Names listed in ``KEEP_WHOLE_NAMES`` or ``keep_whole`` ("AC/DC") are never split.
    Duplicates (case-insensitive) are dropped; order is kept.
    """
    protected = sorted({*KEEP_WHOLE_NAMES, *keep_whole}, key=len, reverse=True)
    names: list[str] = []
    for value in values:
        names.extend(_split_one(_FEATURING.sub(";", value) if featuring else value, protected))
    return _distinct(names)


def _split_one(text: str, protected: list[str]) -> list[str]:
    originals: list[str] = []

    def hide(match: re.Match[str]) -> str:
        originals.append(match.group(0))
        return f"\ue000{len(originals) - 1}\ue001"

    def restore(match: re.Match[str]) -> str:
        return originals[int(match.group(1))]

    for whole in protected:
        text = re.sub(re.escape(whole), hide, text, flags=re.IGNORECASE)
    return [_PLACEHOLDER.sub(restore, part) for part in _DELIMITERS.split(text)]


def split_list(values: Iterable[str]) -> list[str]:
    """Split list-like values such as genres; commas count only when nothing else delimits."""
    items: list[str] = []
    for value in values:
        if _DELIMITERS.search(value):
            items.extend(_DELIMITERS.split(value))
        else:
            items.extend(value.split(","))
    return _distinct(items)
