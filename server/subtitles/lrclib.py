"""LrcLib (``<BaseUrl>/api/get``, ``/api/search``, ``/api/get/{id}``): synced (LRC) and plain
lyrics by artist, track, album and duration. No key is needed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server.metadata.providers.base import ProviderNotFoundError
from server.metadata.providers.http import ProviderHttp
from server.subtitles.lyrics import parse_lrc
from server.wire import models as w

NAME = "LrcLib"
PREFIX = "lrclib"
TICKS_PER_SECOND = 10_000_000


@dataclass
class LyricsQuery:
    title: str
    artist: str | None = None
    album: str | None = None
    duration_seconds: int | None = None


class LrcLibProvider:
    name = NAME
    provider_prefix = PREFIX
    provider_kinds = frozenset({"lyrics"})

    def __init__(self, settings: Callable[[], dict[str, Any]]) -> None:
        self._settings = settings
        self.http = ProviderHttp(NAME)

    def is_enabled(self) -> bool:
        return bool(self._settings().get("Enabled"))

    async def _get(self, path: str, **params: Any) -> Any:
        s = self._settings()
        return await self.http.get_json(f"{str(s['BaseUrl']).rstrip('/')}/api/{path}",
                                        {k: v for k, v in params.items() if v not in (None, "")} or None,
                                        timeout=float(s["TimeoutSeconds"]))

    async def search(self, query: LyricsQuery) -> list[w.RemoteLyricInfoDto]:
        records: list[dict[str, Any]] = []
        if query.artist:
            try:
                exact = await self._get("get", track_name=query.title, artist_name=query.artist,
                                        album_name=query.album, duration=query.duration_seconds)
                if isinstance(exact, dict):
                    records.append(exact)
            except ProviderNotFoundError:
                pass
        if not records:
            found = await self._get("search", track_name=query.title, artist_name=query.artist)
            records = [r for r in found or [] if isinstance(r, dict)]
            if query.duration_seconds:  # the closest length first
                records.sort(key=lambda r: abs((r.get("duration") or 0) - query.duration_seconds))
        out = [self.to_wire(r) for r in records if r.get("id") is not None and not r.get("instrumental")]
        out = [r for r in out if r.Lyrics and r.Lyrics.Lyrics]
        out.sort(key=lambda r: not (r.Lyrics.Metadata and r.Lyrics.Metadata.IsSynced))  # synced first
        return out

    def text_of(self, record: dict[str, Any]) -> str:
        return record.get("syncedLyrics") or record.get("plainLyrics") or ""

    def to_wire(self, record: dict[str, Any]) -> w.RemoteLyricInfoDto:
        lyrics = parse_lrc(self.text_of(record))
        meta = lyrics.Metadata or w.LyricMetadata()
        meta.Artist = meta.Artist or record.get("artistName")
        meta.Album = meta.Album or record.get("albumName")
        meta.Title = meta.Title or record.get("trackName")
        if isinstance(record.get("duration"), int | float):
            meta.Length = int(record["duration"] * TICKS_PER_SECOND)
        lyrics.Metadata = meta
        return w.RemoteLyricInfoDto(Id=f"{PREFIX}_{record['id']}", ProviderName=NAME, Lyrics=lyrics)

    async def fetch(self, lyric_id: str) -> tuple[str, w.LyricDto]:
        """(LRC or plain text, parsed) of a search result's id."""
        number = lyric_id.split("_", 1)[1] if lyric_id.startswith(PREFIX + "_") else ""
        if not number.isdigit():
            raise ProviderNotFoundError(f"{lyric_id!r} is not a {NAME} lyrics id.")
        record = await self._get(f"get/{number}")
        if not isinstance(record, dict) or not self.text_of(record):
            raise ProviderNotFoundError(f"{NAME} has no lyrics {number}.")
        return self.text_of(record), self.to_wire(record).Lyrics

    async def aclose(self) -> None:
        await self.http.aclose()
