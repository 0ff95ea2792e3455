"""The TMDb provider: movies, trailers, series (seasons and episodes for images), people and
collections, through TMDb API v3 (``<BaseUrl>/3/...``) with the user's own API key."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from server.metadata.providers.base import (
    TICKS_PER_MINUTE,
    ExternalId,
    ItemMetadata,
    LookupItem,
    PersonCredit,
    ProviderNotFoundError,
    SearchInfo,
    non_empty,
    parse_date,
    year_of,
)
from server.metadata.providers.http import ProviderHttp
from server.wire import models as w

NAME = "TheMovieDb"
# BaseItemKind -> TMDb record type
_RECORD = {"Movie": "movie", "Trailer": "movie", "Series": "tv", "Person": "person", "BoxSet": "collection"}
_IMAGE_TYPES = {
    "Movie": ("Primary", "Backdrop", "Logo"), "Trailer": ("Primary", "Backdrop", "Logo"),
    "Series": ("Primary", "Backdrop", "Logo"), "Season": ("Primary",), "Episode": ("Primary",),
    "Person": ("Primary",), "BoxSet": ("Primary", "Backdrop"),
}
# TMDb image list -> Jellyfin image type
_IMAGE_LISTS = (("posters", "Primary"), ("profiles", "Primary"), ("stills", "Primary"),
                ("backdrops", "Backdrop"), ("logos", "Logo"))
_SITE = "https://www.themoviedb.org/"
_IMDB_TITLE = ExternalId("IMDb", "Imdb", None, "https://www.imdb.com/title/{0}")
_EXTERNAL_IDS: dict[str, list[ExternalId]] = {
    "Movie": [ExternalId(NAME, "Tmdb", "Movie", _SITE + "movie/{0}"), _IMDB_TITLE],
    "Trailer": [ExternalId(NAME, "Tmdb", "Movie", _SITE + "movie/{0}"), _IMDB_TITLE],
    "Series": [ExternalId(NAME, "Tmdb", "Series", _SITE + "tv/{0}"), _IMDB_TITLE],
    "Episode": [_IMDB_TITLE],
    "Person": [ExternalId(NAME, "Tmdb", "Person", _SITE + "person/{0}"),
               ExternalId("IMDb", "Imdb", "Person", "https://www.imdb.com/name/{0}")],
    "BoxSet": [ExternalId(NAME, "Tmdb", "BoxSet", _SITE + "collection/{0}")],
}
_WRITER_JOBS = {"Screenplay", "Writer", "Story", "Novel", "Author", "Teleplay"}
_COMPOSER_JOBS = {"Original Music Composer", "Music", "Composer"}
MAX_CAST = 20
_DIGITS = re.compile(r"^\d{1,12}$")
_IMDB = re.compile(r"^(tt|nm)\d{5,12}$")


def _id(value: Any) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text if _DIGITS.match(text) else None


def language_tag(language: str, country: str) -> str:
    return language if "-" in language or not country else f"{language}-{country.upper()}"


class TmdbProvider:
    name = NAME
    provider_kinds = frozenset({"metadata", "image"})

    def __init__(self, settings: Callable[[], dict[str, Any]]) -> None:
        self._settings = settings
        self.http = ProviderHttp(NAME)

    # -- what it supports ---------------------------------------------------------------

    def is_enabled(self) -> bool:
        s = self._settings()
        return bool(s.get("Enabled")) and bool(s.get("ApiKey"))

    def can_search(self, kind: str) -> bool:
        return kind in _RECORD

    def image_types(self, kind: str) -> tuple[str, ...]:
        return _IMAGE_TYPES.get(kind, ())

    def external_ids(self, kind: str) -> list[ExternalId]:
        return list(_EXTERNAL_IDS.get(kind, []))

    def owns(self, provider_ids: dict[str, str]) -> bool:
        return bool(_id(provider_ids.get("Tmdb")) or provider_ids.get("Imdb") or provider_ids.get("Tvdb"))

    # -- HTTP ---------------------------------------------------------------------------

    async def _get(self, path: str, **params: Any) -> Any:
        s = self._settings()
        query = {k: v for k, v in params.items() if v is not None}
        headers = None
        key = str(s.get("ApiKey", ""))
        if key.startswith("eyJ"):  # a v4 "read access token" is sent as a bearer token
            headers = {"Authorization": f"Bearer {key}"}
        else:
            query["api_key"] = key
        url = str(s["BaseUrl"]).rstrip("/") + "/3/" + path
        return await self.http.get_json(url, query, timeout=float(s["TimeoutSeconds"]), headers=headers)

    def image_url(self, file_path: Any, size: str = "original") -> str | None:
        if not isinstance(file_path, str) or not file_path:
            return None
        base = str(self._settings()["ImageBaseUrl"]).rstrip("/")
        return f"{base}/{size}/{file_path.lstrip('/')}"

    async def configuration(self) -> dict[str, Any]:
        """The ``images`` part of TMDb's /3/configuration."""
        data = await self._get("configuration")
        images = data.get("images") if isinstance(data, dict) else None
        return images if isinstance(images, dict) else {}

    async def _find(self, record: str, provider_ids: dict[str, str]) -> str | None:
        """The TMDb id of a movie or series known only by its IMDb or TVDB id."""
        lookups = [("Imdb", "imdb_id")] + ([("Tvdb", "tvdb_id")] if record == "tv" else [])
        for key, source in lookups:
            external = str(provider_ids.get(key) or "").strip()
            if not external or not (_IMDB.match(external) or _DIGITS.match(external)):
                continue
            data = await self._get(f"find/{external}", external_source=source)
            for hit in data.get(f"{record}_results") or [] if isinstance(data, dict) else []:
                found = _id(hit.get("id")) if isinstance(hit, dict) else None
                if found:
                    return found
        return None

    async def _tmdb_id(self, record: str, provider_ids: dict[str, str]) -> str | None:
        found = _id(provider_ids.get("Tmdb"))
        if found is None and record in ("movie", "tv"):
            found = await self._find(record, provider_ids)
        return found

    async def _details(self, record: str, tmdb_id: str, language: str) -> dict[str, Any]:
        append = {"movie": "credits,release_dates,keywords", "tv": "credits,external_ids,content_ratings,keywords",
                  "person": "external_ids"}.get(record)
        data = await self._get(f"{record}/{tmdb_id}", language=language, append_to_response=append)
        if not isinstance(data, dict) or data.get("id") is None:
            raise ProviderNotFoundError(f"{NAME} has no {record} {tmdb_id}")
        return data

    # -- search -------------------------------------------------------------------------

    async def search(self, kind: str, info: SearchInfo) -> list[w.RemoteSearchResult]:
        record = _RECORD.get(kind)
        if record is None:
            return []
        language = language_tag(info.language, info.country)
        tmdb_id = await self._tmdb_id(record, info.provider_ids)
        if tmdb_id:
            try:
                return [self._result(record, await self._details(record, tmdb_id, language))]
            except ProviderNotFoundError:
                pass  # a stale id: fall back to searching by name
        if not info.name:
            return []
        year_param = {"movie": "year", "tv": "first_air_date_year"}.get(record)
        params: dict[str, Any] = {"query": info.name, "language": language, "include_adult": "false"}
        if info.year and year_param:
            params[year_param] = info.year
        data = await self._get(f"search/{record}", **params)
        hits = data.get("results") if isinstance(data, dict) else None
        if not hits and info.year and year_param:
            params.pop(year_param)
            data = await self._get(f"search/{record}", **params)
            hits = data.get("results") if isinstance(data, dict) else None
        return [self._result(record, hit) for hit in hits or [] if isinstance(hit, dict) and _id(hit.get("id"))]

    def _result(self, record: str, data: dict[str, Any]) -> w.RemoteSearchResult:
        date = data.get("release_date") if record == "movie" else data.get("first_air_date")
        if record == "person":
            date = data.get("birthday")
        ids = {"Tmdb": str(data["id"])}
        imdb = data.get("imdb_id") or (data.get("external_ids") or {}).get("imdb_id")
        if non_empty(imdb):
            ids["Imdb"] = imdb.strip()
        tvdb = (data.get("external_ids") or {}).get("tvdb_id")
        if tvdb:
            ids["Tvdb"] = str(tvdb)
        image = data.get("profile_path") if record == "person" else data.get("poster_path")
        return w.RemoteSearchResult(
            Name=non_empty(data.get("title") or data.get("name")),
            ProviderIds=ids,
            ProductionYear=year_of(date),
            PremiereDate=parse_date(date),
            ImageUrl=self.image_url(image, "w500"),
            SearchProviderName=NAME,
            Overview=non_empty(data.get("overview") or data.get("biography")),
        )

    # -- metadata -----------------------------------------------------------------------

    async def get_metadata(self, kind: str, provider_ids: dict[str, str], language: str = "en",
                           country: str = "US") -> ItemMetadata | None:
        record = _RECORD.get(kind)
        if record is None:
            return None
        tmdb_id = await self._tmdb_id(record, provider_ids)
        if tmdb_id is None:
            return None
        data = await self._details(record, tmdb_id, language_tag(language, country))
        result = self._result(record, data)
        meta = ItemMetadata(
            name=result.Name, overview=result.Overview, production_year=result.ProductionYear,
            premiere_date=result.PremiereDate, provider_ids=dict(result.ProviderIds or {}),
        )
        if record in ("movie", "tv"):
            self._fill_video(meta, record, data, country)
        elif record == "person":
            meta.end_date = parse_date(data.get("deathday"))
        return meta

    def _fill_video(self, meta: ItemMetadata, record: str, data: dict[str, Any], country: str) -> None:
        meta.original_title = non_empty(data.get("original_title") or data.get("original_name"))
        meta.tagline = non_empty(data.get("tagline"))
        rating = data.get("vote_average")
        meta.community_rating = round(float(rating), 1) if isinstance(rating, int | float) and rating else None
        meta.genres = _names(data.get("genres"))
        meta.studios = _names(data.get("production_companies") if record == "movie" else data.get("networks"))
        keywords = data.get("keywords") or {}
        meta.tags = _names(keywords.get("keywords") if record == "movie" else keywords.get("results"))
        if record == "movie":
            runtime = data.get("runtime")
            meta.official_rating = _movie_certification(data.get("release_dates"), country)
        else:
            runtimes = data.get("episode_run_time") or []
            runtime = runtimes[0] if runtimes else None
            meta.official_rating = _tv_rating(data.get("content_ratings"), country)
            if data.get("status") in ("Ended", "Canceled"):
                meta.end_date = parse_date(data.get("last_air_date"))
        if isinstance(runtime, int) and runtime > 0:
            meta.run_time_ticks = runtime * TICKS_PER_MINUTE
        meta.people = _people(data.get("credits"))

    # -- images -------------------------------------------------------------------------

    async def get_images(self, item: LookupItem) -> list[w.RemoteImageInfo]:
        path = await self._images_path(item)
        if path is None:
            return []
        data = await self._get(path)
        if not isinstance(data, dict):
            return []
        out: list[w.RemoteImageInfo] = []
        for key, image_type in _IMAGE_LISTS:
            for image in data.get(key) or []:
                info = self._image_info(image, image_type)
                if info is not None:
                    out.append(info)
        return out

    async def _images_path(self, item: LookupItem) -> str | None:
        if item.kind in ("Season", "Episode"):
            series = await self._tmdb_id("tv", item.series_provider_ids)
            if series is None:
                return None
            if item.kind == "Season":
                return f"tv/{series}/season/{item.index_number}/images" if item.index_number is not None else None
            if item.index_number is None or item.parent_index_number is None:
                return None
            return f"tv/{series}/season/{item.parent_index_number}/episode/{item.index_number}/images"
        record = _RECORD.get(item.kind)
        if record is None:
            return None
        tmdb_id = await self._tmdb_id(record, item.provider_ids)
        return f"{record}/{tmdb_id}/images" if tmdb_id else None

    def _image_info(self, image: Any, image_type: str) -> w.RemoteImageInfo | None:
        if not isinstance(image, dict) or not isinstance(image.get("file_path"), str):
            return None
        rating = image.get("vote_average")
        return w.RemoteImageInfo(
            ProviderName=NAME,
            Url=self.image_url(image["file_path"]),
            ThumbnailUrl=self.image_url(image["file_path"], "w300" if image_type == "Backdrop" else "w185"),
            Width=image.get("width") if isinstance(image.get("width"), int) else None,
            Height=image.get("height") if isinstance(image.get("height"), int) else None,
            CommunityRating=float(rating) if isinstance(rating, int | float) else None,
            VoteCount=image.get("vote_count") if isinstance(image.get("vote_count"), int) else None,
            Language=non_empty(image.get("iso_639_1")),
            Type=image_type,
            RatingType="Score",
        )

    async def aclose(self) -> None:
        await self.http.aclose()


def _names(values: Any) -> list[str]:
    out: list[str] = []
    for value in values or []:
        name = non_empty(value.get("name")) if isinstance(value, dict) else None
        if name and name not in out:
            out.append(name)
    return out


def _rated(certification: str, country: str) -> str:
    return certification if country.upper() == "US" else f"{country.upper()}-{certification}"


def _movie_certification(release_dates: Any, country: str) -> str | None:
    results = (release_dates or {}).get("results") or []
    for wanted in dict.fromkeys((country.upper(), "US")):
        for entry in results:
            if isinstance(entry, dict) and entry.get("iso_3166_1") == wanted:
                for release in entry.get("release_dates") or []:
                    cert = non_empty(release.get("certification")) if isinstance(release, dict) else None
                    if cert:
                        return _rated(cert, wanted)
    return None


def _tv_rating(content_ratings: Any, country: str) -> str | None:
    results = (content_ratings or {}).get("results") or []
    for wanted in dict.fromkeys((country.upper(), "US")):
        for entry in results:
            if isinstance(entry, dict) and entry.get("iso_3166_1") == wanted and non_empty(entry.get("rating")):
                return _rated(entry["rating"].strip(), wanted)
    return None


def _people(credits: Any) -> list[PersonCredit]:
    if not isinstance(credits, dict):
        return []
    people: list[PersonCredit] = []
    seen: set[tuple[str, str]] = set()

    def add(entry: Any, kind: str, role: str | None) -> None:
        name = non_empty(entry.get("name")) if isinstance(entry, dict) else None
        if not name or (name, kind) in seen:
            return
        seen.add((name, kind))
        ids = {"Tmdb": str(entry["id"])} if _id(entry.get("id")) else {}
        people.append(PersonCredit(name=name, kind=kind, role=role, sort_order=len(people), provider_ids=ids))

    cast = [c for c in credits.get("cast") or [] if isinstance(c, dict)]
    cast.sort(key=lambda c: c.get("order") if isinstance(c.get("order"), int) else 10_000)
    for entry in cast[:MAX_CAST]:
        add(entry, "Actor", non_empty(entry.get("character")))
    for entry in credits.get("crew") or []:
        job = entry.get("job") if isinstance(entry, dict) else None
        if job == "Director":
            add(entry, "Director", None)
        elif job in _WRITER_JOBS:
            add(entry, "Writer", None)
        elif job == "Producer":
            add(entry, "Producer", None)
        elif job in _COMPOSER_JOBS:
            add(entry, "Composer", None)
    return people
