"""fanart.tv images (optional, with the user's own API key): movies by TMDb or IMDb id
(``<BaseUrl>/v3/movies/{id}``), series by TVDb id (``/v3/tv/{id}``), artists and albums by
MusicBrainz id (``/v3/music/{id}``). Without a key the provider contacts nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.metadata.providers.base import ExternalId, ItemMetadata, LookupItem, SearchInfo, non_empty
from server.metadata.providers.http import ProviderHttp
from server.wire import models as w

NAME = "Fanart.tv"
_MOVIE = {"movieposter": "Primary", "moviebackground": "Backdrop", "hdmovielogo": "Logo", "movielogo": "Logo",
          "moviethumb": "Thumb", "moviebanner": "Banner", "hdmovieclearart": "Art", "moviedisc": "Disc"}
_TV = {"tvposter": "Primary", "showbackground": "Backdrop", "hdtvlogo": "Logo", "clearlogo": "Logo",
       "tvthumb": "Thumb", "tvbanner": "Banner", "hdclearart": "Art", "clearart": "Art"}
_ARTIST = {"artistthumb": "Primary", "artistbackground": "Backdrop", "hdmusiclogo": "Logo", "musiclogo": "Logo",
           "musicbanner": "Banner"}


class FanartProvider:
    name = NAME
    provider_kinds = frozenset({"image"})

    def __init__(self, settings: Callable[[], dict[str, Any]]) -> None:
        self._settings = settings
        self.http = ProviderHttp(NAME)

    def is_enabled(self) -> bool:
        s = self._settings()
        return bool(s.get("Enabled")) and bool(str(s.get("ApiKey") or "").strip())

    def can_search(self, kind: str) -> bool:
        return False

    def image_types(self, kind: str) -> tuple[str, ...]:
        table = {"Movie": _MOVIE, "Series": _TV, "MusicArtist": _ARTIST}.get(kind)
        return tuple(dict.fromkeys(table.values())) if table else ()

    def external_ids(self, kind: str) -> list[ExternalId]:
        return []

    def owns(self, provider_ids: dict[str, str]) -> bool:
        return False

    async def search(self, kind: str, info: SearchInfo) -> list[w.RemoteSearchResult]:
        return []

    async def get_metadata(self, kind: str, provider_ids: dict[str, str], language: str = "en",
                           country: str = "US") -> ItemMetadata | None:
        return None

    async def get_images(self, item: LookupItem) -> list[w.RemoteImageInfo]:
        ids = item.provider_ids
        if item.kind == "Movie" and (ids.get("Tmdb") or ids.get("Imdb")):
            path, table = f"v3/movies/{ids.get('Tmdb') or ids.get('Imdb')}", _MOVIE
        elif item.kind == "Series" and ids.get("Tvdb"):
            path, table = f"v3/tv/{ids['Tvdb']}", _TV
        elif item.kind == "MusicArtist" and ids.get("MusicBrainzArtist"):
            path, table = f"v3/music/{ids['MusicBrainzArtist']}", _ARTIST
        else:
            return []
        s = self._settings()
        data = await self.http.get_json(f"{str(s['BaseUrl']).rstrip('/')}/{path}", {"api_key": s["ApiKey"]},
                                        timeout=float(s["TimeoutSeconds"]))
        out: list[w.RemoteImageInfo] = []
        for key, image_type in table.items():
            for image in (data.get(key) if isinstance(data, dict) else None) or []:
                if not isinstance(image, dict) or not non_empty(image.get("url")):
                    continue
                likes = image.get("likes")
                lang = non_empty(image.get("lang"))
                out.append(w.RemoteImageInfo(
                    ProviderName=NAME, Url=image["url"], ThumbnailUrl=image["url"].replace("/fanart/", "/preview/"),
                    Type=image_type, Language=None if lang in (None, "00") else lang, RatingType="Likes",
                    CommunityRating=float(likes) if str(likes or "").isdigit() else None))
        return out

    async def aclose(self) -> None:
        await self.http.aclose()
