"""Countries, cultures, UI languages and parental ratings from the bundled localization data.

The data lives in ``resources/localization`` (built by its ``build_data.py``). Every file is read
once, on first use, and kept. Results are plain lists and dicts with the Jellyfin schema's
PascalCase keys (CountryInfo, CultureDto, LocalizationOption, ParentalRating); callers get
copies, so they may change them freely.

Rating levels follow Jellyfin 10.10: a minimum age from 0 to 18, 1000 for adult-only content
and 1001 for banned content; ``None`` means unrated or unknown.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from server.resources import resources_dir

DEFAULT_RATING_COUNTRY = "us"
# Codes people use that ISO 3166 spells differently.
COUNTRY_ALIASES = {"uk": "gb"}

_RATED_PREFIX = re.compile(r"\brated(?:\s*:|\s)\s*", re.IGNORECASE)
_ASCII_DIGITS = re.compile(r"[0-9]{1,9}")


class LocalizationDataError(RuntimeError):
    """A bundled localization file is missing or malformed (a packaging fault, not user input)."""


@dataclass(frozen=True)
class _RatingTables:
    by_country: dict[str, dict[str, int]]  # country -> casefolded rating -> level
    listed: dict[str, list[tuple[str, int]]]  # country -> ratings as written, file order
    preferred: dict[str, int]
    unrated: frozenset[str]
    additions: list[dict[str, Any]]


class LocalizationData:
    """Read access to the localization data in one folder (default: the bundled one)."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder if folder is not None else resources_dir() / "localization"
        self._lock = threading.Lock()
        self._files: dict[str, Any] = {}
        self._ratings: _RatingTables | None = None
        self._country_lookup: dict[str, str] | None = None
        self._culture_lookup: dict[str, dict[str, Any]] | None = None

    @property
    def folder(self) -> Path:
        return self._folder

    # -- lists for the Localization endpoints -------------------------------------------------

    def countries(self) -> list[dict[str, str]]:
        """Every ISO 3166-1 country as CountryInfo, sorted by English name."""
        return [dict(row) for row in self._file("countries.json")]

    def cultures(self) -> list[dict[str, Any]]:
        """ISO 639-2 languages as CultureDto, sorted by English name."""
        return [_copy_culture(row) for row in self._file("cultures.json")]

    def localization_options(self) -> list[dict[str, str]]:
        """UI languages as LocalizationOption (Name in the language itself, Value a culture code)."""
        return [dict(row) for row in self._file("localization_options.json")]

    def parental_ratings(self, country: str | None) -> list[dict[str, Any]]:
        """Selectable ParentalRating entries for a country (the server's MetadataCountryCode).

        The country's own ratings plus the universal entries (Unrated, Approved, 10, 13, 14,
        21, XXX, Banned) wherever the country has nothing at that level, ordered by level with
        Unrated (Value None) first. A country without a rating system gets only the universal
        entries; ``None``, blank or an unrecognised code means the US.
        """
        tables = self._rating_tables()
        code = self.country_code(country) or DEFAULT_RATING_COUNTRY
        entries: list[tuple[str, int | None]] = list(tables.listed.get(code, []))
        for addition in tables.additions:
            value = addition["Value"]
            if value is None:
                missing = all(level is not None for _, level in entries)
            elif addition.get("AtLeast"):
                missing = not any(level is not None and level >= value for _, level in entries)
            else:
                missing = all(level != value for _, level in entries)
            if missing:
                entries.append((addition["Name"], value))
        entries.sort(key=lambda entry: -1 if entry[1] is None else entry[1])
        return [{"Name": name, "Value": level} for name, level in entries]

    # -- lookups --------------------------------------------------------------------------------

    def rating_countries(self) -> list[str]:
        """Lower-case codes of the countries that have a rating system."""
        return sorted(self._rating_tables().by_country)

    def country_code(self, country: str | None) -> str | None:
        """Lower-case ISO 3166 alpha-2 code for a code, alpha-3 code or English name; else None.

        ``"UK"`` gives ``"gb"``. Blank or unknown input gives None.
        """
        if country is None:
            return None
        key = country.strip().casefold()
        if not key:
            return None
        return self._countries_by_key().get(key)

    def find_culture(self, language: str | None) -> dict[str, Any] | None:
        """The CultureDto whose name, display name, two- or three-letter code matches (any case)."""
        if language is None or not language.strip():
            return None
        row = self._cultures_by_key().get(language.strip().casefold())
        return _copy_culture(row) if row is not None else None

    def rating_level(self, rating: str | None, country: str | None = None) -> int | None:
        """The level of a rating string as written in metadata, or None if unrated or unknown.

        Search order: the country's system (``None``, blank or unrecognised: the US), the US
        (as Jellyfin 10.11 does; 10.10 skipped it), ratings common to many systems, then every
        other system. Plain numbers are ages. Understood forms include "PG-13", "Rated R",
        "TV-MA", "FSK-12", "US-PG-13", "de/12", "DE: 16" and "Germany: FSK 18" (a country
        prefix selects that country's system).
        """
        if rating is None:
            return None
        text = rating.strip()
        if not text:
            return None
        code = self.country_code(country) or DEFAULT_RATING_COUNTRY
        return self._level(text, code, self._rating_tables())

    # -- internals ------------------------------------------------------------------------------

    def _level(self, text: str, country: str, tables: _RatingTables) -> int | None:
        if text.casefold() in tables.unrated:
            return None
        text = _RATED_PREFIX.sub("", text).strip()
        if not text or text.casefold() in tables.unrated:
            return None
        if _ASCII_DIGITS.fullmatch(text):
            return int(text)

        key = text.casefold()
        for table in self._search_order(country, tables):
            level = table.get(key)
            if level is not None:
                return level

        # Prefixed forms: "Germany: FSK 18", "de/12", "US-PG-13". Each step shortens the text.
        for separator in (":", "/", "-"):
            head, found, tail = text.partition(separator)
            head, tail = head.strip(), tail.strip()
            if not found or not tail:
                continue
            prefix_country = self.country_code(head)
            if prefix_country is not None:
                return self._level(tail, prefix_country, tables)
            if separator != "/":
                # An unknown prefix ("FSK-99", "Note: PG"): judge the rest by the same country.
                return self._level(tail, country, tables)
        return None

    @staticmethod
    def _search_order(country: str, tables: _RatingTables) -> list[dict[str, int]]:
        order: list[dict[str, int]] = []
        own = tables.by_country.get(country)
        if own is not None:
            order.append(own)
        if country != DEFAULT_RATING_COUNTRY:
            order.append(tables.by_country[DEFAULT_RATING_COUNTRY])
        order.append(tables.preferred)
        order.extend(
            table
            for code, table in sorted(tables.by_country.items())
            if code not in (country, DEFAULT_RATING_COUNTRY)
        )
        return order

    def _file(self, relative: str) -> Any:
        with self._lock:
            if relative not in self._files:
                self._files[relative] = self._read_json(self._folder / relative)
            return self._files[relative]

    @staticmethod
    def _read_json(path: Path) -> Any:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise LocalizationDataError(f"missing localization file: {path}") from exc
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LocalizationDataError(f"unreadable localization file {path}: {exc}") from exc

    def _countries_by_key(self) -> dict[str, str]:
        if self._country_lookup is None:
            lookup: dict[str, str] = {}
            for row in self._file("countries.json"):
                code = row["TwoLetterISORegionName"].casefold()
                for key in (row["ThreeLetterISORegionName"], row["DisplayName"], row["Name"], code):
                    lookup.setdefault(key.casefold(), code)
            for alias, code in COUNTRY_ALIASES.items():
                lookup[alias] = code
            self._country_lookup = lookup
        return self._country_lookup

    def _cultures_by_key(self) -> dict[str, dict[str, Any]]:
        if self._culture_lookup is None:
            lookup: dict[str, dict[str, Any]] = {}
            for row in self._file("cultures.json"):
                keys = [row["DisplayName"], row["Name"], row["TwoLetterISOLanguageName"]]
                keys.extend(row["ThreeLetterISOLanguageNames"])
                for key in keys:
                    lookup.setdefault(key.casefold(), row)
            self._culture_lookup = lookup
        return self._culture_lookup

    def _rating_tables(self) -> _RatingTables:
        if self._ratings is not None:
            return self._ratings
        folder = self._folder / "ratings"
        if not folder.is_dir():
            raise LocalizationDataError(f"missing ratings folder: {folder}")
        by_country: dict[str, dict[str, int]] = {}
        listed: dict[str, list[tuple[str, int]]] = {}
        for path in sorted(folder.glob("[a-z][a-z].json")):
            table = _rating_table(self._read_json(path), path)
            by_country[path.stem] = {name.casefold(): level for name, level in table}
            listed[path.stem] = table
        if DEFAULT_RATING_COUNTRY not in by_country:
            raise LocalizationDataError(f"missing ratings for {DEFAULT_RATING_COUNTRY!r} in {folder}")
        preferred_path = folder / "_preferred.json"
        preferred_table = _rating_table(self._read_json(preferred_path), preferred_path)
        preferred = {name.casefold(): level for name, level in preferred_table}
        universal = self._read_json(folder / "_universal.json")
        try:
            unrated = frozenset(str(word).casefold() for word in universal["UnratedValues"])
            additions = [dict(entry) for entry in universal["Additions"]]
        except (KeyError, TypeError) as exc:
            raise LocalizationDataError(f"malformed {folder / '_universal.json'}: {exc}") from exc
        tables = _RatingTables(by_country, listed, preferred, unrated, additions)
        with self._lock:
            self._ratings = tables
        return tables


def _rating_table(data: Any, path: Path) -> list[tuple[str, int]]:
    if not isinstance(data, dict) or not all(
        isinstance(name, str) and isinstance(level, int) and not isinstance(level, bool)
        for name, level in data.items()
    ):
        raise LocalizationDataError(f"malformed ratings file {path}: expected {{name: level}}")
    return list(data.items())


def _copy_culture(row: dict[str, Any]) -> dict[str, Any]:
    copy = dict(row)
    copy["ThreeLetterISOLanguageNames"] = list(row["ThreeLetterISOLanguageNames"])
    return copy


@lru_cache(maxsize=1)
def bundled_localization() -> LocalizationData:
    """The process-wide LocalizationData over the bundled ``resources/localization``."""
    return LocalizationData()
