"""What every remote metadata provider offers, and the plain values it exchanges.

Search results and remote images are the wire models themselves (RemoteSearchResult,
RemoteImageInfo): they go to clients unchanged. Full metadata comes back as ItemMetadata,
which the item writer maps onto the ``items`` row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from server.wire import models as w

TICKS_PER_MINUTE = 60 * 10_000_000


class ProviderError(Exception):
    """The remote service could not answer: network failure, timeout, HTTP error or bad JSON."""

    status: int | None = None  # the HTTP status, when the service answered with an error


class ProviderNotFoundError(ProviderError):
    """The remote service has no record with that id."""


@dataclass
class SearchInfo:
    """What a client knows about the item it wants identified."""

    name: str | None = None
    year: int | None = None
    provider_ids: dict[str, str] = field(default_factory=dict)
    language: str = "en"
    country: str = "US"
    artists: list[str] = field(default_factory=list)


@dataclass
class LookupItem:
    """A library item (or person) as far as a provider needs to know it."""

    kind: str  # BaseItemKind spelling: Movie, Series, Season, Episode, MusicAlbum, Person, ...
    name: str = ""
    year: int | None = None
    provider_ids: dict[str, str] = field(default_factory=dict)
    index_number: int | None = None
    parent_index_number: int | None = None
    series_provider_ids: dict[str, str] = field(default_factory=dict)
    language: str = "en"
    country: str = "US"
    library_id: str | None = None


@dataclass
class PersonCredit:
    name: str
    kind: str  # PersonKind spelling: Actor, Director, Writer, Producer, Composer
    role: str | None = None
    sort_order: int = 0
    provider_ids: dict[str, str] = field(default_factory=dict)


@dataclass
class ItemMetadata:
    """Full metadata of one remote record. None / empty means "the provider does not say"."""

    name: str | None = None
    original_title: str | None = None
    overview: str | None = None
    tagline: str | None = None
    official_rating: str | None = None
    community_rating: float | None = None
    production_year: int | None = None
    premiere_date: datetime | None = None
    end_date: datetime | None = None
    run_time_ticks: int | None = None
    genres: list[str] = field(default_factory=list)
    studios: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    artists: list[str] = field(default_factory=list)
    album_artists: list[str] = field(default_factory=list)
    provider_ids: dict[str, str] = field(default_factory=dict)
    people: list[PersonCredit] = field(default_factory=list)


@dataclass(frozen=True)
class ExternalId:
    """One kind of id a provider understands, as GET /Items/{id}/ExternalIdInfos lists it."""

    name: str
    key: str
    type: str | None
    url_format: str | None

    def wire(self) -> w.ExternalIdInfo:
        return w.ExternalIdInfo(Name=self.name, Key=self.key, Type=self.type, UrlFormatString=self.url_format)


class MetadataProvider(Protocol):
    name: str  # shown to clients as SearchProviderName / ProviderName

    def is_enabled(self) -> bool: ...

    def can_search(self, kind: str) -> bool: ...

    def image_types(self, kind: str) -> tuple[str, ...]:
        """Image types this provider can offer for items of ``kind`` (empty: none)."""
        ...

    def external_ids(self, kind: str) -> list[ExternalId]: ...

    def owns(self, provider_ids: dict[str, str]) -> bool:
        """True when ``provider_ids`` contains an id this provider can look up."""
        ...

    async def search(self, kind: str, info: SearchInfo) -> list[w.RemoteSearchResult]: ...

    async def get_metadata(self, kind: str, provider_ids: dict[str, str], language: str = "en",
                           country: str = "US") -> ItemMetadata | None: ...

    async def get_images(self, item: LookupItem) -> list[w.RemoteImageInfo]: ...

    async def aclose(self) -> None: ...


def parse_date(text: object) -> datetime | None:
    """A provider date ("2001-09-14", "1999-03", "1999") as a UTC datetime, or None."""
    if not isinstance(text, str) or not text.strip():
        return None
    value = text.strip()[:10]
    for fmt, size in (("%Y-%m-%d", 10), ("%Y-%m", 7), ("%Y", 4)):
        try:
            return datetime.strptime(value[:size], fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def year_of(text: object) -> int | None:
    date = parse_date(text)
    return date.year if date else None


def as_dict(value: object) -> dict[str, Any]:
    """A JSON object from a provider's reply, or {} for anything else (null, a list, a string)."""
    return value if isinstance(value, dict) else {}


def non_empty(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
