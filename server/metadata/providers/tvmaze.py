"""The TVmaze provider: series, seasons and episodes with their images, through TVmaze's public
API (``<BaseUrl>/search/shows``, ``/shows/{id}``, ``/shows/{id}/seasons``, ``/episodes``,
``/images``, ``/lookup/shows``). No key is needed."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

from server.metadata.providers.base import (
    TICKS_PER_MINUTE,
    ExternalId,
    ItemMetadata,
    LookupItem,
    ProviderNotFoundError,
    SearchInfo,
    as_dict,
    non_empty,
    parse_date,
    year_of,
)
from server.metadata.providers.http import ProviderHttp
from server.wire import models as w

NAME = "TVmaze"
KEY = "TvMaze"
_DIGITS = re.compile(r"^\d{1,10}$")
_TAG = re.compile(r"<[^>]+>")
# TVmaze image types -> Jellyfin image types
_IMAGE_TYPES = {"poster": "Primary", "background": "Backdrop", "banner": "Banner", "typography": "Logo"}
_EXTERNAL_IDS = {
    "Series": [ExternalId(NAME, KEY, "Series", "https://www.tvmaze.com/shows/{0}")],
    "Episode": [ExternalId(NAME, KEY, "Episode", "https://www.tvmaze.com/episodes/{0}")],
}


def plain(text: Any) -> str | None:
    """TVmaze summaries are HTML paragraphs: the text without tags or entities."""
    if not isinstance(text, str):
        return None
    return non_empty(html.unescape(_TAG.sub("", text.replace("</p><p>", "\n\n"))))


def _id(value: Any) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text if _DIGITS.match(text) else None


def _image(data: Any) -> str | None:
    image = data.get("image") if isinstance(data, dict) else None
    if not isinstance(image, dict):
        return None
    return non_empty(image.get("original")) or non_empty(image.get("medium"))


class TvMazeProvider:
    name = NAME
    provider_kinds = frozenset({"metadata", "image"})

    def __init__(self, settings: Callable[[], dict[str, Any]]) -> None:
        self._settings = settings
        self.http = ProviderHttp(NAME)

    def is_enabled(self) -> bool:
        return bool(self._settings().get("Enabled"))

    def can_search(self, kind: str) -> bool:
        return kind == "Series"

    def metadata_kinds(self) -> tuple[str, ...]:
        return ("Series", "Season", "Episode")

    def image_types(self, kind: str) -> tuple[str, ...]:
        return {"Series": ("Primary", "Backdrop", "Banner", "Logo"), "Season": ("Primary",),
                "Episode": ("Primary",)}.get(kind, ())

    def external_ids(self, kind: str) -> list[ExternalId]:
        return list(_EXTERNAL_IDS.get(kind, []))

    def owns(self, provider_ids: dict[str, str]) -> bool:
        return _id(provider_ids.get(KEY)) is not None

    async def _get(self, path: str, **params: Any) -> Any:
        s = self._settings()
        return await self.http.get_json(f"{str(s['BaseUrl']).rstrip('/')}/{path}", params or None,
                                        timeout=float(s["TimeoutSeconds"]))

    async def _show_id(self, provider_ids: dict[str, str]) -> str | None:
        found = _id(provider_ids.get(KEY))
        if found:
            return found
        for key, param in (("Imdb", "imdb"), ("Tvdb", "thetvdb")):
            value = str(provider_ids.get(key) or "").strip()
            if value:
                try:
                    show = await self._get("lookup/shows", **{param: value})
                except ProviderNotFoundError:
                    continue
                found = _id(show.get("id")) if isinstance(show, dict) else None
                if found:
                    return found
        return None

    # -- search -------------------------------------------------------------------------

    async def search(self, kind: str, info: SearchInfo) -> list[w.RemoteSearchResult]:
        if kind != "Series":
            return []
        show_id = await self._show_id(info.provider_ids)
        if show_id:
            try:
                return [self._result(await self._get(f"shows/{show_id}"))]
            except ProviderNotFoundError:
                pass
        if not info.name:
            return []
        hits = await self._get("search/shows", q=info.name)
        shows = [as_dict(h.get("show")) for h in hits or [] if isinstance(h, dict) and isinstance(h.get("show"), dict)]
        results = [self._result(s) for s in shows if _id(s.get("id"))]
        if info.year:  # the right year first
            results.sort(key=lambda r: r.ProductionYear != info.year)
        return results

    def _ids(self, show: dict[str, Any]) -> dict[str, str]:
        ids = {KEY: str(show["id"])}
        externals = as_dict(show.get("externals"))
        if non_empty(externals.get("imdb")):
            ids["Imdb"] = externals["imdb"].strip()
        if externals.get("thetvdb"):
            ids["Tvdb"] = str(externals["thetvdb"])
        return ids

    def _result(self, show: dict[str, Any]) -> w.RemoteSearchResult:
        return w.RemoteSearchResult(Name=non_empty(show.get("name")), ProviderIds=self._ids(show),
                                    ProductionYear=year_of(show.get("premiered")),
                                    PremiereDate=parse_date(show.get("premiered")), ImageUrl=_image(show),
                                    SearchProviderName=NAME, Overview=plain(show.get("summary")))

    # -- metadata -----------------------------------------------------------------------

    async def get_metadata(self, kind: str, provider_ids: dict[str, str], language: str = "en",
                           country: str = "US") -> ItemMetadata | None:
        if kind != "Series":
            return None
        show_id = await self._show_id(provider_ids)
        if show_id is None:
            return None
        show = await self._get(f"shows/{show_id}")
        if not isinstance(show, dict) or not _id(show.get("id")):
            raise ProviderNotFoundError(f"{NAME} has no show {show_id}")
        rating = (show.get("rating") or {}).get("average") if isinstance(show.get("rating"), dict) else None
        network = show.get("network") or show.get("webChannel") or {}
        runtime = show.get("runtime") or show.get("averageRuntime")
        meta = ItemMetadata(
            name=non_empty(show.get("name")), overview=plain(show.get("summary")),
            production_year=year_of(show.get("premiered")), premiere_date=parse_date(show.get("premiered")),
            end_date=parse_date(show.get("ended")) if show.get("status") == "Ended" else None,
            community_rating=float(rating) if isinstance(rating, int | float) else None,
            genres=[g for g in show.get("genres") or [] if isinstance(g, str)],
            studios=[network["name"]] if isinstance(network, dict) and non_empty(network.get("name")) else [],
            provider_ids=self._ids(show),
        )
        if isinstance(runtime, int) and runtime > 0:
            meta.run_time_ticks = runtime * TICKS_PER_MINUTE
        return meta

    async def series_children(self, provider_ids: dict[str, str], language: str = "en"
                              ) -> dict[tuple[int, int | None], tuple[ItemMetadata, str | None]]:
        """Metadata and image of every season ((n, None)) and episode ((season, episode))."""
        show_id = await self._show_id(provider_ids)
        if show_id is None:
            return {}
        out: dict[tuple[int, int | None], tuple[ItemMetadata, str | None]] = {}
        for season in await self._get(f"shows/{show_id}/seasons") or []:
            if not isinstance(season, dict) or not isinstance(season.get("number"), int):
                continue
            name = non_empty(season.get("name")) or f"Season {season['number']}"
            out[(season["number"], None)] = (ItemMetadata(
                name=name, overview=plain(season.get("summary")), premiere_date=parse_date(season.get("premiereDate")),
                production_year=year_of(season.get("premiereDate")), end_date=parse_date(season.get("endDate")),
                provider_ids={KEY: str(season["id"])} if _id(season.get("id")) else {}), _image(season))
        for episode in await self._get(f"shows/{show_id}/episodes") or []:
            if not isinstance(episode, dict) or not isinstance(episode.get("season"), int) \
                    or not isinstance(episode.get("number"), int):
                continue
            rating = (episode.get("rating") or {}).get("average") if isinstance(episode.get("rating"), dict) else None
            meta = ItemMetadata(
                name=non_empty(episode.get("name")), overview=plain(episode.get("summary")),
                premiere_date=parse_date(episode.get("airdate")), production_year=year_of(episode.get("airdate")),
                community_rating=float(rating) if isinstance(rating, int | float) else None,
                provider_ids={KEY: str(episode["id"])} if _id(episode.get("id")) else {})
            if isinstance(episode.get("runtime"), int) and episode["runtime"] > 0:
                meta.run_time_ticks = episode["runtime"] * TICKS_PER_MINUTE
            out[(episode["season"], episode["number"])] = (meta, _image(episode))
        return out

    # -- images -------------------------------------------------------------------------

    async def get_images(self, item: LookupItem) -> list[w.RemoteImageInfo]:
        if item.kind == "Series":
            show_id = await self._show_id(item.provider_ids)
            if show_id is None:
                return []
            out = []
            for image in await self._get(f"shows/{show_id}/images") or []:
                if not isinstance(image, dict) or image.get("type") not in _IMAGE_TYPES:
                    continue
                sizes = as_dict(image.get("resolutions"))
                original = as_dict(sizes.get("original"))
                medium = as_dict(sizes.get("medium"))
                if not non_empty(original.get("url")):
                    continue
                out.append(w.RemoteImageInfo(
                    ProviderName=NAME, Url=original["url"], ThumbnailUrl=non_empty(medium.get("url")),
                    Width=original.get("width") if isinstance(original.get("width"), int) else None,
                    Height=original.get("height") if isinstance(original.get("height"), int) else None,
                    Type=_IMAGE_TYPES[image["type"]], RatingType="Score",
                    CommunityRating=10.0 if image.get("main") else None))
            return out
        if item.kind in ("Season", "Episode"):
            show_id = await self._show_id(item.series_provider_ids)
            if show_id is None or item.index_number is None:
                return []
            if item.kind == "Season":
                seasons = await self._get(f"shows/{show_id}/seasons") or []
                urls = [_image(s) for s in seasons if isinstance(s, dict) and s.get("number") == item.index_number]
            else:
                if item.parent_index_number is None:
                    return []
                try:
                    episode = await self._get(f"shows/{show_id}/episodebynumber", season=item.parent_index_number,
                                              number=item.index_number)
                except ProviderNotFoundError:
                    return []
                urls = [_image(episode)]
            return [w.RemoteImageInfo(ProviderName=NAME, Url=u, Type="Primary", RatingType="Score") for u in urls if u]
        return []

    async def aclose(self) -> None:
        await self.http.aclose()
