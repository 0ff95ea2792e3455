"""Sort names the way Jellyfin builds them: lower case, leading articles dropped, punctuation
folded to spaces, and digit runs zero-padded so that "Episode 2" sorts before "Episode 10"."""

from __future__ import annotations

import re

_ARTICLES = ("the ", "a ", "an ")
_REMOVE = re.compile(r"[\"'!?,]")
_REPLACE = re.compile(r"[.\-_+&/\\:;]+")
_SPACES = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")


def sort_name(name: str | None) -> str:
    text = (name or "").strip().lower()
    text = _REMOVE.sub("", text)
    text = _SPACES.sub(" ", _REPLACE.sub(" ", text)).strip()
    for article in _ARTICLES:
        if text.startswith(article) and len(text) > len(article):
            text = text[len(article):]
            break
    return _DIGITS.sub(lambda m: m.group(0).zfill(10), text)


def episode_sort_name(season: int | None, episode: int | None, name: str) -> str:
    return f"{(season if season is not None else 999):03d}-{(episode if episode is not None else 9999):04d}-{sort_name(name)}"
