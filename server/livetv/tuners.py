"""Live TV tuners: M3U playlists (a file inside the allowed folders, or an http(s) URL) and
HDHomeRun devices (by URL). Tuner hosts and listing providers live in the named configuration
``livetv`` (the spec's LiveTvOptions). Channels are read from each tuner's playlist."""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import msgspec

from server.errors import BadRequestError, NotFoundError, ReelroomError
from server.guid import guid_from_text
from server.livetv.guide import MAX_XMLTV_BYTES, Guide, parse_xmltv
from server.wire import models as w

TUNER_TYPES = {"m3u": "M3U Tuner", "hdhomerun": "HDHomerun"}
LISTING_TYPES = {"xmltv", "schedulesdirect"}
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')
MAX_PLAYLIST_BYTES = 20 * 1024 * 1024
log = logging.getLogger("reelroom.livetv")
DEFAULT_CATEGORIES = {
    "movie": ["movie"], "news": ["news"], "sports": ["sports", "basketball", "baseball", "football"],
    "kids": ["kids", "family", "children", "childrens", "disney"],
}


class GuideRefreshError(RuntimeError):
    """A listing provider failed; the guide holds what the others gave."""


@dataclass(frozen=True, slots=True)
class Channel:
    id: str
    tuner_id: str
    name: str
    number: str | None
    url: str
    logo: str | None
    group: str | None
    tvg_id: str | None = None


def channel_id(tuner_id: str, tvg_id: str | None, name: str) -> str:
    """A channel's id: stable per tuner across playlist reloads, even when an IPTV service
    rotates the (tokenized) stream URLs: from tvg-id, else the name."""
    return guid_from_text("livetv-channel", tuner_id, f"tvg:{tvg_id}" if tvg_id else f"name:{name.casefold()}")


def looks_like_m3u(text: str) -> bool:
    head = text.lstrip("\ufeff \t\r\n")
    return head.startswith("#EXTM3U") or (not head.startswith("<") and "#EXTINF" in head[:65536])


def parse_m3u(text: str, tuner_id: str) -> list[Channel]:
    """Channels of an extended M3U playlist (#EXTINF lines with tvg-* attributes)."""
    channels: list[Channel] = []
    seen: set[str] = set()
    pending: tuple[dict[str, str], str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#EXTINF"):
            head, _, title = line.partition(",")
            pending = (dict(_ATTR.findall(head)), title.strip())
        elif line.startswith("#"):
            continue
        else:
            attrs, title = pending or ({}, "")
            name = title or attrs.get("tvg-name") or line.rsplit("/", 1)[-1]
            number = attrs.get("tvg-chno") or attrs.get("channel-number")
            tvg_id = attrs.get("tvg-id") or None
            cid = channel_id(tuner_id, tvg_id, name)
            n = 1
            while cid in seen:  # the same name twice without a tvg-id: keep both
                n += 1
                cid = channel_id(tuner_id, tvg_id, f"{name}#{n}")
            seen.add(cid)
            channels.append(Channel(id=cid, tuner_id=tuner_id, name=name, number=number, url=line,
                                    logo=attrs.get("tvg-logo") or None, group=attrs.get("group-title") or None,
                                    tvg_id=tvg_id))
            pending = None
    return channels


class LiveTvService:
    def __init__(self, config, filesystem) -> None:
        self.config = config  # ConfigurationStore
        self.filesystem = filesystem  # FileSystemBrowser (path checks)
        self.guide = Guide()
        # listing provider type -> its loader (Schedules Direct: server/livetv/schedules_direct.py)
        self.listing_sources: dict[str, object] = {}
        self._channel_cache: dict[str, tuple[float, list[Channel]]] = {}  # tuner id -> (read at, channels)
        self.channel_cache_seconds = 30.0
        self.on_channels: list = []  # async callbacks(list[Channel]) after the channel list was read

    def options(self) -> w.LiveTvOptions:
        return self.config.get("livetv")

    def _save(self, **changes) -> None:
        self.config.save("livetv", msgspec.structs.replace(self.options(), **changes))

    # -- tuner hosts ---------------------------------------------------------------------

    async def read_source(self, url: str, limit: int) -> bytes:
        """The bytes of a playlist or listing: an http(s) URL, or a file inside the allowed folders."""
        import httpx  # loaded when first needed, not at start-up
        if url.startswith(("http://", "https://")):
            try:
                async with httpx.AsyncClient(timeout=30, follow_redirects=True) as client:
                    reply = await client.get(url)
            except httpx.HTTPError as exc:
                raise NotFoundError(f"{url} could not be fetched: {exc}") from None
            if reply.status_code != 200:
                raise NotFoundError(f"{url} answered {reply.status_code}.")
            return reply.content[:limit]
        path: Path = self.filesystem.check(url)
        if not path.is_file():
            raise NotFoundError(f"{url} is not a file.")
        return await asyncio.to_thread(lambda: path.read_bytes()[:limit])

    async def read_playlist(self, url: str) -> str:
        import httpx
        if url.startswith(("http://", "https://")):
            try:
                async with httpx.AsyncClient(timeout=15, follow_redirects=True) as client:
                    reply = await client.get(url)
            except httpx.HTTPError as exc:
                raise NotFoundError(f"The tuner playlist {url} could not be fetched: {exc}") from None
            if reply.status_code != 200:
                raise NotFoundError(f"The tuner playlist {url} answered {reply.status_code}.")
            return reply.text[:MAX_PLAYLIST_BYTES]
        return (await self.read_source(url, MAX_PLAYLIST_BYTES)).decode("utf-8", errors="replace")

    async def add_tuner(self, info: w.TunerHostInfo) -> w.TunerHostInfo:
        kind = (info.Type or "").lower()
        if kind not in TUNER_TYPES:
            raise BadRequestError(f"Unknown tuner type {info.Type!r}: use one of {', '.join(sorted(TUNER_TYPES))}.")
        if not info.Url or not info.Url.strip():
            raise BadRequestError("A tuner needs a Url: the M3U playlist or the HDHomeRun device address.")
        url = info.Url.strip()
        if kind == "m3u":
            text = await self.read_playlist(url)
            if not looks_like_m3u(text):
                raise BadRequestError(f"{url} is not an M3U playlist (it should start with #EXTM3U and list "
                                      "#EXTINF entries).")
        else:
            if not url.startswith(("http://", "https://")):
                url = "http://" + url
            await self.hdhomerun_lineup(url, validate=True)
        tuner = msgspec.structs.replace(info, Id=info.Id or uuid.uuid4().hex, Type=kind, Url=url,
                                        FriendlyName=info.FriendlyName or TUNER_TYPES[kind],
                                        TunerCount=max(info.TunerCount or 0, 0))
        hosts = [h for h in (self.options().TunerHosts or []) if h.Id != tuner.Id] + [tuner]
        self._save(TunerHosts=hosts)
        self._channel_cache.clear()
        return tuner

    async def hdhomerun_lineup(self, url: str, validate: bool = False) -> list[Channel] | None:
        """An HDHomeRun's channels from its lineup.json ([{GuideNumber, GuideName, URL}])."""
        import httpx
        base = url.rstrip("/")
        try:
            async with httpx.AsyncClient(timeout=10, follow_redirects=True) as client:
                reply = await client.get(base + "/lineup.json")
            lineup = reply.json() if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as exc:
            if validate:
                raise BadRequestError(f"{url} is not an HDHomeRun tuner: {exc}") from None
            return None
        if not isinstance(lineup, list) or not all(isinstance(e, dict) and e.get("URL") for e in lineup):
            if validate:
                raise BadRequestError(f"{url} is not an HDHomeRun tuner: /lineup.json is not a channel lineup.")
            return None
        return lineup

    def _hdhomerun_channels(self, tuner_id: str, lineup: list[dict]) -> list[Channel]:
        out = []
        for entry in lineup:
            number = str(entry.get("GuideNumber") or "") or None
            name = str(entry.get("GuideName") or number or entry["URL"])
            out.append(Channel(id=channel_id(tuner_id, number, name), tuner_id=tuner_id, name=name, number=number,
                               url=str(entry["URL"]), logo=None, group=None, tvg_id=None))
        return out

    def delete_tuner(self, tuner_id: str | None) -> None:
        hosts = self.options().TunerHosts or []
        kept = [h for h in hosts if h.Id != tuner_id]
        if len(kept) == len(hosts):
            raise NotFoundError(f"No tuner {tuner_id}.")
        self._save(TunerHosts=kept)
        self._channel_cache.clear()

    # -- listing providers ---------------------------------------------------------------

    async def validate_xmltv(self, path: str) -> None:
        """400 unless ``path`` holds an XMLTV document that parses."""
        try:
            data = await self.read_source(path, MAX_XMLTV_BYTES)
        except NotFoundError as exc:
            raise BadRequestError(f"The XMLTV listings could not be read: {exc.detail}") from None
        from defusedxml import ElementTree  # with the first listings read, not at start

        try:
            await asyncio.to_thread(parse_xmltv, data)
        except (ElementTree.ParseError, ValueError) as exc:
            raise BadRequestError(f"{path} is not a valid XMLTV file: {exc}") from None

    async def add_listing_provider(self, info: w.ListingsProviderInfo,
                                   validate: bool = True) -> w.ListingsProviderInfo:
        kind = (info.Type or "").lower()
        if kind not in LISTING_TYPES:
            raise BadRequestError(f"Unknown listing provider type {info.Type!r}.")
        if kind == "xmltv":
            if not info.Path:
                raise BadRequestError("An XMLTV provider needs a Path.")
            if not info.Path.startswith(("http://", "https://")):
                self.filesystem.check(info.Path)
            if validate:
                await self.validate_xmltv(info.Path)
        provider = msgspec.structs.replace(info, Id=info.Id or uuid.uuid4().hex, Type=kind,
                                           EnableAllTuners=info.EnableAllTuners if info.EnableAllTuners is not None
                                           else True)
        providers = [p for p in (self.options().ListingProviders or []) if p.Id != provider.Id] + [provider]
        self._save(ListingProviders=providers)
        return provider

    def delete_listing_provider(self, provider_id: str | None) -> None:
        providers = self.options().ListingProviders or []
        kept = [p for p in providers if p.Id != provider_id]
        if len(kept) == len(providers):
            raise NotFoundError(f"No listing provider {provider_id}.")
        self._save(ListingProviders=kept)

    # -- channels ------------------------------------------------------------------------

    async def channels(self) -> list[Channel]:
        """Every tuner's channels (playlists re-read at most every ``channel_cache_seconds``)."""
        out: list[Channel] = []
        changed = False
        now = time.monotonic()
        for host in self.options().TunerHosts or []:
            if not host.Url or not host.Id:
                continue
            cached = self._channel_cache.get(host.Id)
            if cached is not None and now - cached[0] < self.channel_cache_seconds:
                out += cached[1]
                continue
            found: list[Channel] = []
            try:
                if host.Type == "m3u":
                    found = parse_m3u(await self.read_playlist(host.Url), host.Id)
                elif host.Type == "hdhomerun":
                    found = self._hdhomerun_channels(host.Id, await self.hdhomerun_lineup(host.Url) or [])
            except (NotFoundError, BadRequestError) as exc:
                log.warning("The channels of tuner %s could not be read: %s", host.FriendlyName or host.Url, exc)
                found = cached[1] if cached is not None else []
            if cached is None or cached[1] != found:
                changed = True
            self._channel_cache[host.Id] = (now, found)
            out += found
        if changed or not self._channel_cache:
            for callback in self.on_channels:
                await callback(out)
        return out

    async def channel(self, channel_id: str) -> Channel:
        for ch in await self.channels():
            if ch.id == channel_id:
                return ch
        raise NotFoundError(f"No channel {channel_id}.")

    # -- guide ---------------------------------------------------------------------------

    async def refresh_guide(self) -> int:
        """Reload every XMLTV provider into the guide; returns how many programmes it holds."""
        channels = await self.channels()
        days = self.options().GuideDays or 14
        first = True
        failures: list[str] = []
        for provider in self.options().ListingProviders or []:
            source = self.listing_sources.get(provider.Type or "")
            if source is not None:
                try:
                    provider_channels, pairs = await source.load(provider, days)
                    mappings = {m.Name: m.Value for m in provider.ChannelMappings or [] if m.Name and m.Value}
                    self.guide.load_parsed(channels, provider.Id or "", provider_channels, pairs, mappings, days, first)
                    first = False
                except ReelroomError as exc:
                    log.warning("Listings from %s (%s) could not be read: %s", provider.Type, provider.Id, exc.detail)
                    failures.append(f"{provider.Type} {provider.Id}: {exc.detail}")
                continue
            if provider.Type != "xmltv" or not provider.Path:
                continue
            from defusedxml import ElementTree  # with the first XMLTV listings, not at start
            try:
                data = await self.read_source(provider.Path, MAX_XMLTV_BYTES)
                mappings = {m.Name: m.Value for m in provider.ChannelMappings or [] if m.Name and m.Value}
                await asyncio.to_thread(self.guide.load, channels, provider.Id or "", data, mappings, days, first)
                first = False
            except (NotFoundError, BadRequestError, ElementTree.ParseError, ValueError) as exc:
                log.warning("Listings from %s could not be read: %s", provider.Path, exc)
                failures.append(f"{provider.Path}: {getattr(exc, 'detail', None) or exc}")
        if first:  # no provider loaded: the guide is empty (what an empty XMLTV document gives, unparsed)
            self.guide.load_parsed(channels, "", [], [], {}, days, True)
        if failures:
            raise GuideRefreshError("The guide could not be read from " + "; ".join(failures))
        return len(self.guide.programs)

    def categories(self) -> dict[str, list[str]]:
        """Guide categories that make a programme a movie, news, kids or sports (all providers)."""
        out: dict[str, list[str]] = {k: list(v) for k, v in DEFAULT_CATEGORIES.items()}
        for p in self.options().ListingProviders or []:
            for kind, values in (("movie", p.MovieCategories), ("news", p.NewsCategories),
                                 ("kids", p.KidsCategories), ("sports", p.SportsCategories)):
                out[kind] += [v for v in values or [] if v not in out[kind]]
        return out

    def provider(self, provider_id: str | None) -> w.ListingsProviderInfo:
        for p in self.options().ListingProviders or []:
            if p.Id == provider_id:
                return p
        raise NotFoundError(f"No listing provider {provider_id}.")

    async def set_channel_mapping(self, provider_id: str | None, tuner_channel: str, provider_channel: str) -> None:
        provider = self.provider(provider_id)
        mappings = [m for m in provider.ChannelMappings or [] if m.Name != tuner_channel]
        if provider_channel and provider_channel != tuner_channel:
            mappings.append(w.NameValuePair(Name=tuner_channel, Value=provider_channel))
        updated = msgspec.structs.replace(provider, ChannelMappings=mappings)
        self._save(ListingProviders=[updated if p.Id == provider.Id else p
                                     for p in self.options().ListingProviders or []])
        await self.refresh_guide_quietly()

    async def refresh_guide_quietly(self) -> None:
        """refresh_guide for requests that only need the guide as fresh as it can be."""
        try:
            await self.refresh_guide()
        except GuideRefreshError as exc:
            log.warning("%s", exc)
