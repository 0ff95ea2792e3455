"""The MusicBrainz provider: albums (release groups and releases) and artists through the
MusicBrainz web service (``<BaseUrl>/ws/2/...``, JSON), cover art from the Cover Art Archive.

MusicBrainz allows one request per second per client and asks for a meaningful User-Agent;
every request to it passes through one RequestSpacing of 1 s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from server.metadata.providers.base import (
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
from server.metadata.providers.http import ProviderHttp, RequestSpacing
from server.wire import models as w

NAME = "MusicBrainz"
RATE_LIMIT_SECONDS = 1.0
SEARCH_LIMIT = 10
_MBID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_SITE = "https://musicbrainz.org/"
_ALBUM_IDS = [
    ExternalId(NAME, "MusicBrainzAlbum", "Album", _SITE + "release/{0}"),
    ExternalId(NAME, "MusicBrainzReleaseGroup", "ReleaseGroup", _SITE + "release-group/{0}"),
    ExternalId(NAME, "MusicBrainzAlbumArtist", "AlbumArtist", _SITE + "artist/{0}"),
]
_EXTERNAL_IDS: dict[str, list[ExternalId]] = {
    "MusicAlbum": _ALBUM_IDS,
    "MusicArtist": [ExternalId(NAME, "MusicBrainzArtist", "Artist", _SITE + "artist/{0}")],
    "Audio": [ExternalId(NAME, "MusicBrainzTrack", "Track", _SITE + "track/{0}"),
              ExternalId(NAME, "MusicBrainzArtist", "Artist", _SITE + "artist/{0}"), *_ALBUM_IDS],
}
# Cover Art Archive image types -> Jellyfin image types
_COVER_TYPES = {"Front": "Primary", "Back": "BoxRear", "Medium": "Disc"}


def _mbid(value: Any) -> str | None:
    text = str(value).strip().lower() if value is not None else ""
    return text if _MBID.match(text) else None


def _quoted(text: str) -> str:
    """A Lucene phrase for MusicBrainz's search syntax."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class MusicBrainzProvider:
    name = NAME
    provider_kinds = frozenset({"metadata", "image"})

    def __init__(self, settings: Callable[[], dict[str, Any]]) -> None:
        self._settings = settings
        self.http = ProviderHttp(NAME, RequestSpacing(RATE_LIMIT_SECONDS))
        self.cover_art = ProviderHttp("Cover Art Archive")

    def is_enabled(self) -> bool:
        return bool(self._settings().get("Enabled"))

    def can_search(self, kind: str) -> bool:
        return kind in ("MusicAlbum", "MusicArtist")

    def image_types(self, kind: str) -> tuple[str, ...]:
        return ("Primary", "BoxRear", "Disc") if kind == "MusicAlbum" else ()

    def external_ids(self, kind: str) -> list[ExternalId]:
        return list(_EXTERNAL_IDS.get(kind, []))

    def owns(self, provider_ids: dict[str, str]) -> bool:
        return any(_mbid(provider_ids.get(k)) for k in ("MusicBrainzAlbum", "MusicBrainzReleaseGroup",
                                                         "MusicBrainzArtist"))

    # -- HTTP ---------------------------------------------------------------------------

    async def _ws(self, path: str, **params: Any) -> dict[str, Any]:
        s = self._settings()
        url = str(s["BaseUrl"]).rstrip("/") + "/ws/2/" + path
        data = await self.http.get_json(url, {**params, "fmt": "json"}, timeout=float(s["TimeoutSeconds"]))
        if not isinstance(data, dict):
            raise ProviderNotFoundError(f"{NAME} sent no record for {path}")
        return data

    def _cover_url(self, group: str, mbid: str, suffix: str = "front-250") -> str:
        return f"{str(self._settings()['CoverArtBaseUrl']).rstrip('/')}/{group}/{mbid}/{suffix}"

    # -- search -------------------------------------------------------------------------

    async def search(self, kind: str, info: SearchInfo) -> list[w.RemoteSearchResult]:
        if kind == "MusicAlbum":
            return await self._search_albums(info)
        if kind == "MusicArtist":
            return await self._search_artists(info)
        return []

    async def _search_albums(self, info: SearchInfo) -> list[w.RemoteSearchResult]:
        release = _mbid(info.provider_ids.get("MusicBrainzAlbum"))
        group = _mbid(info.provider_ids.get("MusicBrainzReleaseGroup"))
        try:
            if release:
                return [self._release_result(await self._release(release))]
            if group:
                return [self._group_result(await self._release_group(group))]
        except ProviderNotFoundError:
            pass  # a stale id: search by name instead
        if not info.name:
            return []
        query = f"releasegroup:{_quoted(info.name)}"
        if info.artists:
            query += f" AND artist:{_quoted(info.artists[0])}"
        data = await self._ws("release-group", query=query, limit=SEARCH_LIMIT)
        return [self._group_result(g) for g in data.get("release-groups") or []
                if isinstance(g, dict) and _mbid(g.get("id"))]

    async def _search_artists(self, info: SearchInfo) -> list[w.RemoteSearchResult]:
        artist = _mbid(info.provider_ids.get("MusicBrainzArtist"))
        if artist:
            try:
                return [self._artist_result(await self._artist(artist))]
            except ProviderNotFoundError:
                pass
        if not info.name:
            return []
        data = await self._ws("artist", query=f"artist:{_quoted(info.name)}", limit=SEARCH_LIMIT)
        return [self._artist_result(a) for a in data.get("artists") or [] if isinstance(a, dict) and _mbid(a.get("id"))]

    async def _release(self, mbid: str) -> dict[str, Any]:
        return await self._ws(f"release/{mbid}", inc="artist-credits+release-groups+labels+genres")

    async def _release_group(self, mbid: str) -> dict[str, Any]:
        return await self._ws(f"release-group/{mbid}", inc="artist-credits+releases+genres")

    async def _artist(self, mbid: str) -> dict[str, Any]:
        return await self._ws(f"artist/{mbid}", inc="genres")

    def _credits(self, record: dict[str, Any]) -> list[w.RemoteSearchResult]:
        out = []
        for credit in record.get("artist-credit") or []:
            if not isinstance(credit, dict):
                continue
            artist = as_dict(credit.get("artist"))
            name = non_empty(credit.get("name")) or non_empty(artist.get("name"))
            if name:
                ids = {"MusicBrainzArtist": artist["id"]} if _mbid(artist.get("id")) else {}
                out.append(w.RemoteSearchResult(Name=name, ProviderIds=ids, SearchProviderName=NAME))
        return out

    def _group_result(self, group: dict[str, Any]) -> w.RemoteSearchResult:
        ids = {"MusicBrainzReleaseGroup": group["id"]}
        releases = [r for r in group.get("releases") or [] if isinstance(r, dict) and _mbid(r.get("id"))]
        if releases:
            ids["MusicBrainzAlbum"] = releases[0]["id"]
        artists = self._credits(group)
        date = group.get("first-release-date")
        return w.RemoteSearchResult(
            Name=non_empty(group.get("title")), ProviderIds=ids, ProductionYear=year_of(date),
            PremiereDate=parse_date(date), ImageUrl=self._cover_url("release-group", group["id"]),
            SearchProviderName=NAME, AlbumArtist=artists[0] if artists else None, Artists=artists or None,
        )

    def _release_result(self, release: dict[str, Any]) -> w.RemoteSearchResult:
        ids = {"MusicBrainzAlbum": release["id"]}
        group = as_dict(release.get("release-group"))
        if _mbid(group.get("id")):
            ids["MusicBrainzReleaseGroup"] = group["id"]
        artists = self._credits(release)
        date = release.get("date") or group.get("first-release-date")
        return w.RemoteSearchResult(
            Name=non_empty(release.get("title")), ProviderIds=ids, ProductionYear=year_of(date),
            PremiereDate=parse_date(date), ImageUrl=self._cover_url("release", release["id"]),
            SearchProviderName=NAME, AlbumArtist=artists[0] if artists else None, Artists=artists or None,
        )

    def _artist_result(self, artist: dict[str, Any]) -> w.RemoteSearchResult:
        life = as_dict(artist.get("life-span"))
        return w.RemoteSearchResult(
            Name=non_empty(artist.get("name")), ProviderIds={"MusicBrainzArtist": artist["id"]},
            ProductionYear=year_of(life.get("begin")), PremiereDate=parse_date(life.get("begin")),
            SearchProviderName=NAME, Overview=non_empty(artist.get("disambiguation")),
        )

    # -- metadata -----------------------------------------------------------------------

    async def get_metadata(self, kind: str, provider_ids: dict[str, str], language: str = "en",
                           country: str = "US") -> ItemMetadata | None:
        if kind == "MusicAlbum":
            release = _mbid(provider_ids.get("MusicBrainzAlbum"))
            group = _mbid(provider_ids.get("MusicBrainzReleaseGroup"))
            if release:
                record = await self._release(release)
                result = self._release_result(record)
            elif group:
                record = await self._release_group(group)
                result = self._group_result(record)
            else:
                return None
            artists = [a.Name for a in result.Artists or [] if a.Name]
            ids = dict(result.ProviderIds or {})
            album_artist_id = (result.AlbumArtist.ProviderIds or {}).get("MusicBrainzArtist") \
                if result.AlbumArtist else None
            if album_artist_id:
                ids["MusicBrainzAlbumArtist"] = album_artist_id
            labels = [non_empty((li.get("label") or {}).get("name")) for li in record.get("label-info") or []
                      if isinstance(li, dict) and isinstance(li.get("label"), dict)]
            return ItemMetadata(
                name=result.Name, production_year=result.ProductionYear, premiere_date=result.PremiereDate,
                artists=artists, album_artists=artists[:1], provider_ids=ids, genres=_genres(record),
                studios=[label for label in dict.fromkeys(labels) if label],
            )
        if kind == "MusicArtist":
            artist = _mbid(provider_ids.get("MusicBrainzArtist"))
            if not artist:
                return None
            record = await self._artist(artist)
            result = self._artist_result(record)
            life = as_dict(record.get("life-span"))
            return ItemMetadata(
                name=result.Name, overview=result.Overview, production_year=result.ProductionYear,
                premiere_date=result.PremiereDate, end_date=parse_date(life.get("end")),
                genres=_genres(record), provider_ids=dict(result.ProviderIds or {}),
            )
        return None

    # -- images -------------------------------------------------------------------------

    async def get_images(self, item: LookupItem) -> list[w.RemoteImageInfo]:
        if item.kind != "MusicAlbum":
            return []
        release = _mbid(item.provider_ids.get("MusicBrainzAlbum"))
        group = _mbid(item.provider_ids.get("MusicBrainzReleaseGroup"))
        if not (release or group):
            return []
        s = self._settings()
        path = f"release/{release}" if release else f"release-group/{group}"
        data = await self.cover_art.get_json(f"{str(s['CoverArtBaseUrl']).rstrip('/')}/{path}",
                                             timeout=float(s["TimeoutSeconds"]))
        out: list[w.RemoteImageInfo] = []
        for image in (data.get("images") if isinstance(data, dict) else None) or []:
            if not isinstance(image, dict) or not non_empty(image.get("image")):
                continue
            kinds = [t for t in image.get("types") or [] if t in _COVER_TYPES]
            if image.get("front") and "Front" not in kinds:
                kinds.insert(0, "Front")
            thumbs = as_dict(image.get("thumbnails"))
            for kind in kinds[:1]:
                out.append(w.RemoteImageInfo(
                    ProviderName=NAME, Url=image["image"], Type=_COVER_TYPES[kind], RatingType="Score",
                    ThumbnailUrl=non_empty(thumbs.get("500") or thumbs.get("large") or thumbs.get("250")),
                ))
        return out

    async def aclose(self) -> None:
        await self.http.aclose()
        await self.cover_art.aclose()


def _genres(record: dict[str, Any]) -> list[str]:
    genres = [g for g in record.get("genres") or [] if isinstance(g, dict) and non_empty(g.get("name"))]
    genres.sort(key=lambda g: -(g.get("count") or 0))
    return list(dict.fromkeys(g["name"].strip().title() for g in genres))
