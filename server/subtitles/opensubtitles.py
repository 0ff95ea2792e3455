"""OpenSubtitles.com (REST API v1, ``<BaseUrl>/api/v1``): subtitle search by IMDb/TMDb id, title,
season/episode and the file's OpenSubtitles hash, and download with the user's login.

Every request carries the user's API key (``Api-Key``) and a Reelroom User-Agent; a download
needs the token from ``POST /login``. The download quota (``remaining``, ``reset_time_utc``)
is logged after each download and named in the error when it runs out.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from server.errors import BadRequestError, ReelroomError
from server.media.languages import normalize_language, to_two_letter
from server.metadata.providers.http import user_agent
from server.wire import models as w

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("reelroom.subtitles")
NAME = "Open Subtitles"
PREFIX = "opensubtitles"
MAX_SUBTITLE_BYTES = 5 * 1024 * 1024


class SubtitleProviderError(ReelroomError):
    status_code = 502
    title = "Bad Gateway"


class QuotaExceededError(ReelroomError):
    status_code = 429
    title = "Too Many Requests"


@dataclass
class SubtitleQuery:
    kind: str  # Movie or Episode
    name: str | None
    language: str  # three-letter, as clients ask
    year: int | None = None
    provider_ids: dict[str, str] = field(default_factory=dict)
    series_name: str | None = None
    series_provider_ids: dict[str, str] = field(default_factory=dict)
    season: int | None = None
    episode: int | None = None
    path: str | None = None
    perfect_match: bool = False


def movie_hash(path: str) -> str | None:
    """OpenSubtitles' hash: the file size plus the 64-bit sums of its first and last 64 KiB."""
    chunk = 65536
    try:
        size = os.path.getsize(path)
        if size < chunk * 2:
            return None
        total = size
        with open(path, "rb") as f:
            for offset in (0, size - chunk):
                f.seek(offset)
                data = f.read(chunk)
                total += sum(struct.unpack(f"<{chunk // 8}Q", data))
        return f"{total & 0xFFFFFFFFFFFFFFFF:016x}"
    except OSError:
        return None


class OpenSubtitlesProvider:
    name = NAME
    provider_prefix = PREFIX
    provider_kinds = frozenset({"subtitles"})

    def __init__(self, settings: Callable[[], dict[str, Any]]) -> None:
        self._settings = settings
        self._client: httpx.AsyncClient | None = None
        self._token: tuple[str, str] | None = None  # (login key, token)
        self._login_lock = asyncio.Lock()

    def is_enabled(self) -> bool:
        s = self._settings()
        return bool(s.get("Enabled")) and bool(str(s.get("ApiKey") or "").strip())

    def _http(self) -> httpx.AsyncClient:
        import httpx  # loaded when first needed, not at start-up
        if self._client is None:
            self._client = httpx.AsyncClient(follow_redirects=True)
        return self._client

    def _headers(self, token: str | None = None) -> dict[str, str]:
        s = self._settings()
        headers = {"Api-Key": str(s["ApiKey"]), "User-Agent": user_agent(), "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _url(self, path: str) -> str:
        return f"{str(self._settings()['BaseUrl']).rstrip('/')}/api/v1/{path}"

    async def _request(self, method: str, path: str, *, token: str | None = None, **kwargs: Any) -> httpx.Response:
        import httpx
        try:
            return await self._http().request(method, self._url(path), headers=self._headers(token),
                                              timeout=float(self._settings()["TimeoutSeconds"]), **kwargs)
        except httpx.HTTPError as exc:
            raise SubtitleProviderError(f"{NAME} is unreachable: {exc.__class__.__name__}: {exc}") from None

    async def login(self, force: bool = False) -> str:
        s = self._settings()
        user, password = str(s.get("Username") or ""), str(s.get("Password") or "")
        if not user or not password:
            raise BadRequestError(f"{NAME} needs a user name and password (Plugins > {NAME}) to download subtitles.")
        key = f"{s['BaseUrl']}|{user}|{password}"
        async with self._login_lock:
            if self._token is not None and self._token[0] == key and not force:
                return self._token[1]
            reply = await self._request("POST", "login", json={"username": user, "password": password})
            if reply.status_code in (400, 401, 403):
                raise BadRequestError(f"{NAME} refused the login of {user!r}: {_message(reply)}")
            if reply.status_code != 200:
                raise SubtitleProviderError(f"{NAME} login answered HTTP {reply.status_code}: {_message(reply)}")
            token = _json(reply).get("token")
            if not isinstance(token, str) or not token:
                raise SubtitleProviderError(f"{NAME} login sent no token.")
            self._token = (key, token)
            return token

    async def search(self, query: SubtitleQuery) -> list[w.RemoteSubtitleInfo]:
        params: dict[str, Any] = {"languages": to_two_letter(query.language) or query.language}
        ids = query.series_provider_ids if query.kind == "Episode" else query.provider_ids
        imdb_digits = str(ids.get("Imdb") or "").strip().lower().removeprefix("tt")
        imdb = str(int(imdb_digits)) if imdb_digits.isdigit() else ""  # the API wants no "tt", no leading zeros
        if query.kind == "Episode":
            if imdb:
                params["parent_imdb_id"] = imdb
            elif ids.get("Tmdb"):
                params["parent_tmdb_id"] = ids["Tmdb"]
            elif query.series_name:
                params["query"] = query.series_name
            if query.season is not None:
                params["season_number"] = query.season
            if query.episode is not None:
                params["episode_number"] = query.episode
            params["type"] = "episode"
        else:
            if imdb:
                params["imdb_id"] = imdb
            elif ids.get("Tmdb"):
                params["tmdb_id"] = ids["Tmdb"]
            elif query.name:
                params["query"] = query.name
                if query.year:
                    params["year"] = query.year
            params["type"] = "movie"
        if query.path:
            file_hash = await asyncio.to_thread(movie_hash, query.path)
            if file_hash:
                params["moviehash"] = file_hash
        if not any(k in params for k in ("imdb_id", "tmdb_id", "parent_imdb_id", "parent_tmdb_id", "query",
                                         "moviehash")):
            return []
        reply = await self._request("GET", "subtitles", params=dict(sorted(params.items())))
        if reply.status_code in (401, 403):
            raise BadRequestError(f"{NAME} refused the API key: {_message(reply)}")
        if reply.status_code != 200:
            raise SubtitleProviderError(f"{NAME} search answered HTTP {reply.status_code}: {_message(reply)}")
        out = []
        for entry in _json(reply).get("data") or []:
            attrs = entry.get("attributes") if isinstance(entry, dict) else None
            if not isinstance(attrs, dict):
                continue
            files = [f for f in attrs.get("files") or [] if isinstance(f, dict) and f.get("file_id")]
            if not files:
                continue
            hash_match = bool(attrs.get("moviehash_match"))
            if query.perfect_match and not hash_match:
                continue
            language = normalize_language(str(attrs.get("language") or "")) or query.language
            uploader = attrs.get("uploader") if isinstance(attrs.get("uploader"), dict) else {}
            ratings = attrs.get("ratings")
            out.append(w.RemoteSubtitleInfo(
                Id=f"{PREFIX}_srt_{language}_{files[0]['file_id']}", ProviderName=NAME,
                Name=str(attrs.get("release") or files[0].get("file_name") or ""), Format="srt",
                ThreeLetterISOLanguageName=language, Author=uploader.get("name"), Comment=attrs.get("comments"),
                DateCreated=attrs.get("upload_date"),
                CommunityRating=float(ratings) if isinstance(ratings, int | float) else None,
                FrameRate=float(attrs["fps"]) if isinstance(attrs.get("fps"), int | float) else None,
                DownloadCount=attrs.get("download_count") if isinstance(attrs.get("download_count"), int) else None,
                IsHashMatch=hash_match, AiTranslated=bool(attrs.get("ai_translated")),
                MachineTranslated=bool(attrs.get("machine_translated")),
                HearingImpaired=bool(attrs.get("hearing_impaired")),
                Forced=bool(attrs.get("foreign_parts_only"))))
        out.sort(key=lambda s: (not s.IsHashMatch, -(s.DownloadCount or 0)))
        return out

    async def download(self, subtitle_id: str) -> tuple[bytes, str, str]:
        """(content, format, three-letter language) of a search result's id."""
        import httpx
        parts = subtitle_id.split("_")
        if len(parts) != 4 or parts[0] != PREFIX or not parts[3].isdigit():
            raise BadRequestError(f"{subtitle_id!r} is not an {NAME} subtitle id.")
        fmt, language, file_id = parts[1], parts[2], int(parts[3])
        token = await self.login()
        reply = await self._request("POST", "download", token=token, json={"file_id": file_id, "sub_format": fmt})
        if reply.status_code == 401:
            token = await self.login(force=True)
            reply = await self._request("POST", "download", token=token, json={"file_id": file_id, "sub_format": fmt})
        data = _json(reply)
        if reply.status_code in (406, 429) or (reply.status_code == 200 and data.get("remaining") == 0
                                                and not data.get("link")):
            reset = data.get("reset_time_utc") or data.get("reset_time") or "later"
            raise QuotaExceededError(
                f"The {NAME} download quota is used up: {data.get('requests', '?')} downloads made, "
                f"{data.get('remaining', 0)} left; it renews at {reset}. {data.get('message') or ''}".strip())
        if reply.status_code != 200 or not isinstance(data.get("link"), str):
            raise SubtitleProviderError(f"{NAME} download answered HTTP {reply.status_code}: {_message(reply)}")
        log.info("%s: downloaded file %s; %s of the daily quota left (renews %s)", NAME, file_id,
                 data.get("remaining"), data.get("reset_time_utc"))
        try:
            async with self._http().stream("GET", data["link"], headers={"User-Agent": user_agent()},
                                           timeout=float(self._settings()["TimeoutSeconds"])) as file_reply:
                if file_reply.status_code != 200:
                    raise SubtitleProviderError(f"The {NAME} file link answered HTTP {file_reply.status_code}.")
                content = b""
                async for chunk in file_reply.aiter_bytes():
                    content += chunk
                    if len(content) > MAX_SUBTITLE_BYTES:
                        raise SubtitleProviderError("The subtitle file is larger than 5 MB.")
        except httpx.HTTPError as exc:
            raise SubtitleProviderError(f"The {NAME} file could not be fetched: {exc}") from None
        return content, fmt, language

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


def _json(reply: httpx.Response) -> dict[str, Any]:
    try:
        data = reply.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _message(reply: httpx.Response) -> str:
    data = _json(reply)
    return str(data.get("message") or data.get("errors") or reply.reason_phrase or reply.status_code)
