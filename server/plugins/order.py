"""Fetcher order: which providers a library uses, and in which order, from its LibraryOptions
the way Jellyfin reads them.

- Metadata and images, per item type (``TypeOptions[Type]``): when the library has an entry for
  the type, only the providers named in ``MetadataFetchers`` / ``ImageFetchers`` are used, in
  ``MetadataFetcherOrder`` / ``ImageFetcherOrder``; without an entry every provider is used.
- Subtitles and lyrics: every provider except those in ``DisabledSubtitleFetchers`` /
  ``DisabledLyricFetchers``, in ``SubtitleFetcherOrder`` / ``LyricFetcherOrder``.
Providers the order does not name keep their own order after the named ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def _sorted(providers: Sequence[T], order: Sequence[str] | None) -> list[T]:
    rank = {name.lower(): i for i, name in enumerate(order or [])}
    indexed = list(enumerate(providers))
    indexed.sort(key=lambda p: (rank.get(getattr(p[1], "name", "").lower(), len(rank)), p[0]))
    return [p for _, p in indexed]


def for_type(providers: Sequence[T], options: Any, item_type: str, which: str) -> list[T]:
    """``which`` is "metadata" or "image"."""
    entry = None
    for type_options in (getattr(options, "TypeOptions", None) or []) if options is not None else []:
        if (type_options.Type or "").lower() == item_type.lower():
            entry = type_options
            break
    if entry is None:
        return list(providers)
    enabled = entry.MetadataFetchers if which == "metadata" else entry.ImageFetchers
    order = entry.MetadataFetcherOrder if which == "metadata" else entry.ImageFetcherOrder
    if enabled is None:
        return _sorted(providers, order)
    wanted = {n.lower() for n in enabled}
    return _sorted([p for p in providers if getattr(p, "name", "").lower() in wanted], order)


def for_library(providers: Sequence[T], options: Any, which: str) -> list[T]:
    """``which`` is "subtitles" or "lyrics"."""
    if options is None:
        return list(providers)
    if which == "subtitles":
        disabled, order = options.DisabledSubtitleFetchers, options.SubtitleFetcherOrder
    else:
        disabled, order = options.DisabledLyricFetchers, options.LyricFetcherOrder
    off = {n.lower() for n in disabled or []}
    return _sorted([p for p in providers if getattr(p, "name", "").lower() not in off], order)
