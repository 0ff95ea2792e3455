"""Remote metadata providers: a common interface (base.py) and the TMDb and MusicBrainz
implementations, which speak to a configurable base URL over httpx.

The names load with their own submodule on first use (a PEP 562 ``__getattr__``): importing
``providers.http`` or ``providers.base`` (Schedules Direct does at start) loads no provider."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.lazy_modules import lazy_exports

if TYPE_CHECKING:
    from server.metadata.providers.base import (
        ExternalId,
        ItemMetadata,
        LookupItem,
        MetadataProvider,
        PersonCredit,
        ProviderError,
        ProviderNotFoundError,
        SearchInfo,
    )
    from server.metadata.providers.musicbrainz import MusicBrainzProvider
    from server.metadata.providers.tmdb import TmdbProvider

# Each exported name and the submodule that defines it.
_SOURCES = {
    "ExternalId": "base",
    "ItemMetadata": "base",
    "LookupItem": "base",
    "MetadataProvider": "base",
    "MusicBrainzProvider": "musicbrainz",
    "PersonCredit": "base",
    "ProviderError": "base",
    "ProviderNotFoundError": "base",
    "SearchInfo": "base",
    "TmdbProvider": "tmdb",
}


__getattr__, __dir__ = lazy_exports(__name__, _SOURCES)

__all__ = ["ExternalId", "ItemMetadata", "LookupItem", "MetadataProvider", "MusicBrainzProvider", "PersonCredit",
           "ProviderError", "ProviderNotFoundError", "SearchInfo", "TmdbProvider"]
