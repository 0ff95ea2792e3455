"""Remote metadata providers: a common interface (base.py) and the TMDb and MusicBrainz
implementations, which speak to a configurable base URL over httpx."""

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

__all__ = ["ExternalId", "ItemMetadata", "LookupItem", "MetadataProvider", "MusicBrainzProvider", "PersonCredit",
           "ProviderError", "ProviderNotFoundError", "SearchInfo", "TmdbProvider"]
