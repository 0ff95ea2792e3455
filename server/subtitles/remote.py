"""Remote subtitles and lyrics (``ctx.remote_text``): search the enabled providers in the
library's fetcher order, download a chosen result beside the media (through the same code as
an upload) and serve a result's text directly.

Result ids start with the provider's prefix (``opensubtitles_...``, ``lrclib_...``), so a
download finds its provider without remembering the search.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from server.errors import BadRequestError, NotFoundError, ReelroomError
from server.metadata.providers.base import ProviderError, ProviderNotFoundError
from server.metadata.service import RemoteServiceError
from server.plugins import order
from server.subtitles.lrclib import LyricsQuery
from server.subtitles.opensubtitles import SubtitleQuery
from server.wire import models as w

if TYPE_CHECKING:
    from server.library.catalog.query import ItemRow

log = logging.getLogger("reelroom.subtitles")


def _ids(text: str | None) -> dict[str, str]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items() if v} if isinstance(value, dict) else {}


def _list(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [str(v) for v in value if v] if isinstance(value, list) else []


class RemoteTextService:
    def __init__(self, providers: Callable[[str], list[Any]], library_options: Callable[[str | None], Awaitable[Any]],
                 items, subtitles, lyrics, data_dir) -> None:
        self._providers = providers  # kind -> active providers (the plugin manager)
        self._library_options = library_options
        self.items = items
        self.subtitles = subtitles
        self.lyrics = lyrics
        self.data_dir = data_dir

    async def _ordered(self, kind: str, row: ItemRow) -> list[Any]:
        providers = [p for p in self._providers(kind) if p.is_enabled()]
        options = await self._library_options(getattr(row, "library_id", None))
        return order.for_library(providers, options, kind)

    def _by_prefix(self, kind: str, remote_id: str) -> Any:
        prefix = remote_id.split("_", 1)[0].lower()
        for provider in self._providers(kind):
            if getattr(provider, "provider_prefix", None) == prefix or \
                    type(provider).__module__.rsplit(".", 1)[-1] == prefix:
                if not provider.is_enabled():
                    raise BadRequestError(f"{provider.name} is not set up or is disabled.")
                return provider
        raise NotFoundError(f"No {kind} provider knows the id {remote_id!r}.")

    # -- subtitles ----------------------------------------------------------------------

    async def _subtitle_query(self, row: ItemRow, language: str, perfect: bool) -> SubtitleQuery:
        series_ids: dict[str, str] = {}
        if row.series_id:
            series = await self.items.row(row.series_id)
            series_ids = _ids(series.provider_ids_json)
        return SubtitleQuery(kind="Episode" if row.type == "Episode" else "Movie", name=row.name, language=language,
                             year=row.production_year, provider_ids=_ids(row.provider_ids_json),
                             series_name=row.series_name, series_provider_ids=series_ids,
                             season=row.parent_index_number, episode=row.index_number, path=row.path,
                             perfect_match=perfect)

    async def search_subtitles(self, row: ItemRow, language: str, perfect: bool) -> list[w.RemoteSubtitleInfo]:
        if row.type not in ("Movie", "Episode", "Video", "MusicVideo"):
            return []
        if not language or not language.strip():
            raise BadRequestError("language is required.")
        query = await self._subtitle_query(row, language.strip().lower(), perfect)
        out: list[w.RemoteSubtitleInfo] = []
        for provider in await self._ordered("subtitles", row):
            try:
                out += await provider.search(query)
            except ReelroomError as exc:
                log.warning("%s: subtitle search failed: %s", provider.name, exc.detail)
            except Exception:
                log.warning("%s: subtitle search failed on an unexpected reply", provider.name, exc_info=True)
        return out

    async def download_subtitle(self, row: ItemRow, subtitle_id: str) -> None:
        provider = self._by_prefix("subtitles", subtitle_id)
        content, fmt, language = await provider.download(subtitle_id)
        dto = w.UploadSubtitleDto(Language=language, Format=fmt, IsForced=False, IsHearingImpaired=False,
                                  Data=base64.b64encode(content).decode())
        await self.subtitles.upload(row, dto, self.data_dir)

    async def remote_subtitle(self, subtitle_id: str) -> tuple[bytes, str]:
        provider = self._by_prefix("subtitles", subtitle_id)
        content, fmt, _language = await provider.download(subtitle_id)
        return content, fmt

    # -- lyrics -------------------------------------------------------------------------

    async def search_lyrics(self, row: ItemRow) -> list[w.RemoteLyricInfoDto]:
        if row.media_type != "Audio":
            raise BadRequestError(f"Item {row.id} is not a track.")
        artists = _list(row.artists_json) or _list(row.album_artists_json)
        query = LyricsQuery(title=row.name or "", artist=artists[0] if artists else None, album=row.album,
                            duration_seconds=round(row.run_time_ticks / 10_000_000) if row.run_time_ticks else None)
        if not query.title:
            return []
        out: list[w.RemoteLyricInfoDto] = []
        for provider in await self._ordered("lyrics", row):
            try:
                out += await provider.search(query)
            except ProviderError as exc:
                log.warning("%s: lyrics search failed: %s", provider.name, exc)
            except Exception:
                log.warning("%s: lyrics search failed on an unexpected reply", provider.name, exc_info=True)
        return out

    async def _fetch_lyrics(self, lyric_id: str) -> tuple[str, w.LyricDto]:
        provider = self._by_prefix("lyrics", lyric_id)
        try:
            return await provider.fetch(lyric_id)
        except ProviderNotFoundError as exc:
            raise NotFoundError(str(exc)) from None
        except ProviderError as exc:
            raise RemoteServiceError(str(exc)) from None

    async def download_lyrics(self, row: ItemRow, lyric_id: str) -> w.LyricDto:
        text, _parsed = await self._fetch_lyrics(lyric_id)
        return await self.lyrics.upload(row, text, "lyrics.lrc", self.data_dir)

    async def remote_lyrics(self, lyric_id: str) -> w.LyricDto:
        return (await self._fetch_lyrics(lyric_id))[1]
