"""RemoteMetadataService: identify items against remote providers, apply a chosen result,
list and download remote images. Reached by handlers as ``ctx.metadata``.

A provider that fails (down, slow, odd reply) never fails the request: its part of the answer
is empty and a warning is logged, as Jellyfin does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from server.db.database import Database
from server.errors import BadRequestError, NotFoundError, ReelroomError
from server.events.hub import EventHub
from server.guid import normalize_guid, parse_guid
from server.metadata import store
from server.metadata.image_files import NotAnImageError, image_folder, remove_replaced, save_image
from server.metadata.providers import (
    ItemMetadata,
    LookupItem,
    MetadataProvider,
    MusicBrainzProvider,
    ProviderError,
    ProviderNotFoundError,
    SearchInfo,
    TmdbProvider,
)
from server.metadata.providers.http import fetch_bytes, user_agent
from server.metadata.settings import provider_settings
from server.paths import ServerPaths
from server.plugins import order
from server.system.configuration import ConfigurationStore
from server.wire import models as w

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("reelroom.metadata")
T = TypeVar("T")

IMAGE_MAX_BYTES = 20 * 1024 * 1024
IMAGE_TIMEOUT = 30.0
APPLY_IMAGE_TYPES = ("Primary", "Backdrop", "Logo")
TMDB_CONFIG_TTL = 24 * 3600.0
TMDB_CONFIG_RETRY = 60.0
# TMDb's published image sizes, used until (or unless) /3/configuration answers.
TMDB_SIZES = {
    "BackdropSizes": ["w300", "w780", "w1280", "original"],
    "LogoSizes": ["w45", "w92", "w154", "w185", "w300", "w500", "original"],
    "PosterSizes": ["w92", "w154", "w185", "w342", "w500", "w780", "original"],
    "ProfileSizes": ["w45", "w185", "h632", "original"],
    "StillSizes": ["w92", "w185", "w300", "original"],
}


class UnavailableError(ReelroomError):
    """A remote service could not be reached to check something: try again later."""

    status_code = 503
    title = "Service Unavailable"


class RemoteServiceError(ReelroomError):
    """A remote server could not deliver what was asked for."""

    status_code = 502
    title = "Bad Gateway"


class RemoteMetadataService:
    def __init__(self, config: ConfigurationStore, db: Database, paths: ServerPaths, events: EventHub,
                 providers: list[MetadataProvider] | Callable[[], list[MetadataProvider]] | None = None,
                 library_options: Callable[[str | None], Awaitable[Any]] | None = None) -> None:
        self.config = config
        self.db = db
        self.paths = paths
        self.events = events
        if providers is None:
            fixed: list[MetadataProvider] = [
                TmdbProvider(lambda: provider_settings(config.get("tmdb"), "tmdb")),
                MusicBrainzProvider(lambda: provider_settings(config.get("musicbrainz"), "musicbrainz")),
            ]
            providers = fixed
        # a list, or (from the plugin manager) a callable giving the active providers
        self._providers = providers
        self._library_options = library_options
        self._image_client: httpx.AsyncClient | None = None
        self._tmdb_config: tuple[float, str, w.ConfigImageTypes] | None = None

    @property
    def providers(self) -> list[MetadataProvider]:
        return list(self._providers()) if callable(self._providers) else self._providers

    async def _options(self, library_id: str | None) -> Any:
        if self._library_options is None or not library_id:
            return None
        try:
            return await self._library_options(library_id)
        except ReelroomError:
            return None

    async def close(self) -> None:
        if not callable(self._providers):  # the plugin manager closes its own
            for provider in self._providers:
                await provider.aclose()
        if self._image_client is not None:
            client, self._image_client = self._image_client, None
            await client.aclose()

    # -- helpers ------------------------------------------------------------------------

    def _language(self) -> tuple[str, str]:
        cfg = self.config.server()
        return cfg.PreferredMetadataLanguage or "en", cfg.MetadataCountryCode or "US"

    def _sort_rules(self) -> store.SortRules:
        cfg = self.config.server()
        defaults = store.SortRules()
        return store.SortRules(
            remove_words=tuple(cfg.SortRemoveWords if cfg.SortRemoveWords is not None else defaults.remove_words),
            remove_characters=tuple(cfg.SortRemoveCharacters if cfg.SortRemoveCharacters is not None
                                    else defaults.remove_characters),
            replace_characters=tuple(cfg.SortReplaceCharacters if cfg.SortReplaceCharacters is not None
                                     else defaults.replace_characters),
        )

    async def _guarded(self, provider: MetadataProvider, what: str, call: Callable[[], Awaitable[T]],
                       default: T) -> T:
        """``call()``, or ``default`` with a log line when the provider fails."""
        try:
            return await call()
        except ProviderNotFoundError as exc:
            log.info("%s: %s: %s", provider.name, what, exc)
        except ProviderError as exc:
            log.warning("%s: %s failed: %s", provider.name, what, exc)
        except Exception:  # a reply of an unexpected shape must not fail the request
            log.warning("%s: %s failed on an unexpected reply", provider.name, what, exc_info=True)
        return default

    async def _target(self, item_id: str) -> LookupItem:
        language, country = self._language()
        target = await self.db.read(store.find_lookup_item, parse_guid(item_id, "itemId"), language, country)
        if target is None:
            raise NotFoundError(f"Item {item_id} was not found.")
        return target

    def _named(self, provider_name: str | None) -> list[MetadataProvider]:
        if not provider_name:
            return list(self.providers)
        return [p for p in self.providers if p.name.lower() == provider_name.strip().lower()]

    def _library_changed(self, item_id: str) -> None:
        self.events.publish("LibraryChanged", {
            "CollectionFolders": [], "FoldersAddedTo": [], "FoldersRemovedFrom": [], "ItemsAdded": [],
            "ItemsRemoved": [], "ItemsUpdated": [item_id], "IsEmpty": False})

    # -- search -------------------------------------------------------------------------

    async def search(self, kind: str, query: Any) -> list[w.RemoteSearchResult]:
        """Search every enabled provider for ``kind`` (one of the *RemoteSearchQuery bodies)."""
        language, country = self._language()
        info = getattr(query, "SearchInfo", None)
        search = SearchInfo(language=language, country=country)
        if info is not None:
            search.name = (info.Name or "").strip() or None
            search.year = info.Year
            search.provider_ids = {k: str(v).strip() for k, v in (info.ProviderIds or {}).items() if v}
            search.language = info.MetadataLanguage or language
            search.country = info.MetadataCountryCode or country
            search.artists = list(getattr(info, "AlbumArtists", None) or getattr(info, "Artists", None) or [])
        item_id = normalize_guid(getattr(query, "ItemId", None))
        if not search.name and not search.provider_ids and item_id and item_id != "0" * 32:
            target = await self.db.read(store.find_lookup_item, item_id, language, country)
            if target is not None:
                search.name, search.provider_ids = target.name or None, target.provider_ids
                search.year = search.year or target.year
        if not search.name and not search.provider_ids:
            return []
        providers = [p for p in self._named(getattr(query, "SearchProviderName", None))
                     if p.can_search(kind) and p.is_enabled()]
        answers = await asyncio.gather(*(
            self._guarded(p, f"{kind} search", lambda p=p: p.search(kind, search), []) for p in providers))
        return [result for answer in answers for result in answer]

    # -- external ids -------------------------------------------------------------------

    async def external_id_infos(self, item_id: str) -> list[w.ExternalIdInfo]:
        target = await self._target(item_id)
        out: dict[str, w.ExternalIdInfo] = {}
        for provider in self.providers:
            for external in provider.external_ids(target.kind):
                out.setdefault(f"{external.key}/{external.type}", external.wire())
        return list(out.values())

    # -- apply --------------------------------------------------------------------------

    def _provider_for(self, result: w.RemoteSearchResult, ids: dict[str, str]) -> MetadataProvider | None:
        for provider in self._named(result.SearchProviderName) or self.providers:
            if provider.owns(ids):
                return provider
        return next((p for p in self.providers if p.owns(ids)), None)

    async def apply(self, item_id: str, result: w.RemoteSearchResult, replace_all_images: bool = True) -> None:
        """Identify: write the chosen result's full metadata to the item, lock it so a rescan
        keeps it, and fetch its images (all of them, or only missing types)."""
        target = await self._target(item_id)
        item_id = parse_guid(item_id, "itemId")
        ids = {str(k): str(v).strip() for k, v in (result.ProviderIds or {}).items() if v and str(v).strip()}
        if not ids:
            raise BadRequestError("The search result has no provider ids to apply.")
        language, country = self._language()
        provider = self._provider_for(result, ids)
        meta: ItemMetadata | None = None
        if provider is not None and provider.is_enabled():
            meta = await self._guarded(provider, f"{target.kind} metadata",
                                       lambda: provider.get_metadata(target.kind, ids, language, country), None)
        if meta is None:  # provider down or unknown: keep what the search result itself says
            meta = ItemMetadata(name=result.Name, overview=result.Overview, production_year=result.ProductionYear,
                                premiere_date=result.PremiereDate)
        meta.provider_ids = {**ids, **meta.provider_ids}
        if not await self.db.write(store.write_item_metadata, item_id, meta, self._sort_rules()):
            raise NotFoundError(f"Item {item_id} was not found.")
        target.provider_ids = {**target.provider_ids, **meta.provider_ids}
        await self._apply_images(item_id, target, provider, result.ImageUrl, replace_all_images)
        if target.kind == "Series" and provider is not None and hasattr(provider, "series_children"):
            await self._apply_children(item_id, target, provider, replace_all_images)
        self._library_changed(item_id)

    async def _apply_children(self, series_id: str, series: LookupItem, provider: Any, replace_all: bool) -> None:
        """A series identified by a provider that knows its episodes (TVmaze): its seasons and
        episodes get their metadata and images too, as a refresh after Identify does."""
        children = await self._guarded(provider, "episodes",
                                       lambda: provider.series_children(series.provider_ids, series.language), {})
        if not children:
            return
        rules = self._sort_rules()
        for child_id, kind, index, parent_index in await self.db.read(store.series_children, series_id):
            key = (index, None) if kind == "Season" else (parent_index, index)
            if key not in children or index is None:
                continue
            meta, image_url = children[key]
            await self.db.write(store.write_item_metadata, child_id, meta, rules)
            if image_url:
                existing = {img.get("Type") for img in await self.db.read(store.item_images, child_id)}
                if replace_all or "Primary" not in existing:
                    try:
                        await self.download_image(child_id, "Primary", image_url, add=False,
                                                  provider_name=provider.name, notify=False)
                    except ReelroomError as exc:
                        log.warning("Identify: the image of %s could not be saved: %s", child_id, exc.detail)
            self._library_changed(child_id)

    async def _apply_images(self, item_id: str, target: LookupItem, provider: MetadataProvider | None,
                            search_image: str | None, replace_all: bool) -> None:
        images: list[w.RemoteImageInfo] = []
        if provider is not None and provider.is_enabled() and provider.image_types(target.kind):
            images = await self._guarded(provider, f"{target.kind} images", lambda: provider.get_images(target), [])
        existing = {img.get("Type") for img in await self.db.read(store.item_images, item_id)}
        ranked = rank_images(images, target.language)
        chosen: dict[str, str] = {}
        for image in ranked:
            if image.Type in APPLY_IMAGE_TYPES and image.Url and image.Type not in chosen:
                chosen[image.Type] = image.Url
        if "Primary" not in chosen and search_image:
            chosen["Primary"] = search_image
        source = provider.name if provider is not None else "Remote"
        for image_type, url in chosen.items():
            if not replace_all and image_type in existing:
                continue
            try:
                await self.download_image(item_id, image_type, url, add=False, provider_name=source, notify=False)
            except ReelroomError as exc:
                log.warning("Identify: the %s image of %s could not be saved: %s", image_type, item_id, exc.detail)

    # -- remote images ------------------------------------------------------------------

    async def _image_providers(self, target: LookupItem) -> list[MetadataProvider]:
        """Providers with images for the item, in its library's image fetcher order."""
        supporting = [p for p in self.providers if p.is_enabled() and p.image_types(target.kind)]
        return order.for_type(supporting, await self._options(target.library_id), target.kind, "image")

    async def image_providers(self, item_id: str) -> list[w.ImageProviderInfo]:
        target = await self._target(item_id)
        return [w.ImageProviderInfo(Name=p.name, SupportedImages=list(p.image_types(target.kind)))
                for p in await self._image_providers(target)]

    async def remote_images(self, item_id: str, image_type: str | None = None, start_index: int | None = None,
                            limit: int | None = None, provider_name: str | None = None,
                            include_all_languages: bool = False) -> w.RemoteImageResult:
        if (start_index is not None and start_index < 0) or (limit is not None and limit < 0):
            raise BadRequestError("startIndex and limit must not be negative.")
        target = await self._target(item_id)
        supporting = await self._image_providers(target)
        chosen = [p for p in supporting if not provider_name or p.name.lower() == provider_name.strip().lower()]
        answers = await asyncio.gather(*(
            self._guarded(p, f"{target.kind} images", lambda p=p: p.get_images(target), []) for p in chosen))
        # the library's order decides between images of the same rank: a stable sort keeps it
        images = [image for answer in answers for image in answer]
        if image_type:
            images = [i for i in images if i.Type == image_type]
        if not include_all_languages:
            wanted = {target.language.lower().split("-")[0], "en"}
            images = [i for i in images if not i.Language or i.Language.lower() in wanted]
        images = rank_images(images, target.language)
        total = len(images)
        start = start_index or 0
        page = images[start:start + limit] if limit is not None else images[start:]
        return w.RemoteImageResult(Images=page, TotalRecordCount=total, Providers=[p.name for p in supporting])

    def _client(self) -> httpx.AsyncClient:
        import httpx  # loaded when first needed, not at start-up
        if self._image_client is None:
            self._image_client = httpx.AsyncClient(headers={"User-Agent": user_agent()}, follow_redirects=True)
        return self._image_client

    async def download_image(self, item_id: str, image_type: str | None, url: str | None, *,
                             add: bool | None = None, provider_name: str = "Remote", notify: bool = True) -> None:
        """Download ``url`` as the item's image of ``image_type`` into <data>/metadata and record
        it with a new tag. Backdrops are added; other types replace the current image."""
        if image_type not in w.ENUMS["ImageType"]:
            raise BadRequestError(f"type must be an image type, got {image_type!r}.")
        parts = urlsplit((url or "").strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadRequestError("imageUrl must be an http or https URL.")
        target = await self._target(item_id)
        item_id = parse_guid(item_id, "itemId")
        try:
            content, _type = await fetch_bytes(self._client(), urlunsplit(parts), max_bytes=IMAGE_MAX_BYTES,
                                               timeout=IMAGE_TIMEOUT)
        except ProviderNotFoundError as exc:
            raise NotFoundError(f"Remote image not found: {exc}") from None
        except ProviderError as exc:
            raise RemoteServiceError(f"The remote image could not be downloaded: {exc}") from None
        folder = image_folder(self.paths.metadata_dir, item_id, is_person=target.kind == "Person")
        try:
            entry = await asyncio.to_thread(save_image, folder, image_type, content, provider_name)
        except NotAnImageError as exc:
            raise BadRequestError(str(exc)) from None
        adding = image_type == "Backdrop" if add is None else add
        replaced = await self.db.write(store.record_item_image, item_id, entry, adding)
        await asyncio.to_thread(remove_replaced, replaced, self.paths.metadata_dir)
        if notify:
            self._library_changed(item_id)

    # -- TMDb API key ---------------------------------------------------------------------

    async def set_tmdb_key(self, api_key: str | None) -> bool:
        """Check ``api_key`` once with a test call to TMDb, then save it. An empty key clears it
        (TMDb is then off). Returns whether a key is set."""
        key = (api_key or "").strip()
        settings = provider_settings(self.config.get("tmdb"), "tmdb")
        if key:
            probe = TmdbProvider(lambda: {**settings, "ApiKey": key})
            try:
                await probe.configuration()
            except ProviderError as exc:
                if exc.status in (401, 403):
                    raise BadRequestError("TMDb did not accept this API key. Copy the \"API Key\" (or the API "
                                          "read access token) from themoviedb.org > Settings > API.") from None
                raise UnavailableError(f"The key could not be checked: {exc}") from None
            finally:
                await probe.aclose()
        self.config.save("tmdb", {**settings, "ApiKey": key})
        self._tmdb_config = None
        return bool(key)

    # -- TMDb client configuration ------------------------------------------------------

    async def tmdb_client_configuration(self) -> w.ConfigImageTypes:
        """TMDb's image configuration (base URLs and sizes) for clients that build image URLs."""
        settings = provider_settings(self.config.get("tmdb"), "tmdb")
        secure = str(settings["ImageBaseUrl"]).rstrip("/") + "/"
        parts = urlsplit(secure)
        fallback = w.ConfigImageTypes(BaseUrl=urlunsplit(("http", *parts[1:])), SecureBaseUrl=secure,
                                      **{k: list(v) for k, v in TMDB_SIZES.items()})
        tmdb = next((p for p in self.providers if isinstance(p, TmdbProvider)), None)
        if tmdb is None or not tmdb.is_enabled():
            return fallback
        key = f"{settings['BaseUrl']}|{settings['ApiKey']}"
        now = time.monotonic()
        if self._tmdb_config is not None and self._tmdb_config[0] > now and self._tmdb_config[1] == key:
            return self._tmdb_config[2]
        images = await self._guarded(tmdb, "configuration", tmdb.configuration, {})
        if not images:
            self._tmdb_config = (now + TMDB_CONFIG_RETRY, key, fallback)
            return fallback

        def sizes(name: str, wire: str) -> list[str]:
            value = images.get(name)
            return [str(s) for s in value] if isinstance(value, list) else list(TMDB_SIZES[wire])

        result = w.ConfigImageTypes(
            BaseUrl=images.get("base_url") if isinstance(images.get("base_url"), str) else fallback.BaseUrl,
            SecureBaseUrl=(images.get("secure_base_url") if isinstance(images.get("secure_base_url"), str)
                           else fallback.SecureBaseUrl),
            BackdropSizes=sizes("backdrop_sizes", "BackdropSizes"), LogoSizes=sizes("logo_sizes", "LogoSizes"),
            PosterSizes=sizes("poster_sizes", "PosterSizes"), ProfileSizes=sizes("profile_sizes", "ProfileSizes"),
            StillSizes=sizes("still_sizes", "StillSizes"),
        )
        self._tmdb_config = (now + TMDB_CONFIG_TTL, key, result)
        return result


def rank_images(images: list[w.RemoteImageInfo], language: str) -> list[w.RemoteImageInfo]:
    """Best first: posters and the like in the metadata language, then English, then without
    text; backdrops without text first. Within that, higher rating and more votes first."""
    preferred = language.lower().split("-")[0]

    def key(image: w.RemoteImageInfo) -> tuple[int, float, int]:
        lang = (image.Language or "").lower()
        if image.Type == "Backdrop":
            rank = 0 if not lang else 1 if lang == preferred else 2
        else:
            rank = 0 if lang == preferred else 1 if lang == "en" else 2 if not lang else 3
        return rank, -(image.CommunityRating or 0.0), -(image.VoteCount or 0)

    return sorted(images, key=key)
