"""Schedules Direct listings (JSON API 20141201, ``<BaseUrl>`` = ``.../20141201``).

The documented flow: ``POST /token`` with the user name and the SHA-1 (hex) of the password,
``GET /status`` (account expiry, lineups), ``GET /headends`` and ``GET /available/countries`` to
choose a lineup, ``PUT /lineups/{id}`` to add it to the account, ``GET /lineups/{id}`` for its
stations and their channel numbers, ``POST /schedules/md5`` to learn which station-days
changed, ``POST /schedules`` for those, ``POST /programs`` for programmes not seen before (by
their md5) and ``POST /metadata/programs/`` for their artwork.

Stations become provider channels (id = stationID, number = the lineup's channel), so they are
matched to tuner channels by the same ChannelMappings path XMLTV listings use. Listing
providers of type ``schedulesdirect`` keep ``Username``, ``Password`` (the SHA-1 hex, never the
password itself), ``ListingsId`` (the lineup), ``Country`` and ``ZipCode`` as Jellyfin does.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from server.errors import BadRequestError, ReelroomError
from server.livetv.guide import Program, ProviderChannel
from server.metadata.providers.http import user_agent
from server.wire import models as w

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("reelroom.livetv")
NAME = "Schedules Direct"
TOKEN_TTL = 20 * 3600.0  # tokens last 24 hours
COUNTRIES_TTL = 24 * 3600.0
CHUNK = 5000  # the service takes at most 5000 ids per request
MAX_DAYS = 14

# The service's error codes (they come with HTTP 200 as often as not).
ERRORS = {
    4001: "The Schedules Direct account has expired; renew it at schedulesdirect.org.",
    4002: "Schedules Direct did not accept the password hash.",
    4003: "Schedules Direct does not know that user name and password.",
    4004: "The Schedules Direct account is locked after too many failed logins; try again later.",
    4005: "The Schedules Direct account is disabled.",
    4006: "The Schedules Direct token has expired.",
    4100: "The Schedules Direct account has made its maximum number of lineup changes for today.",
    4101: "The Schedules Direct account already has its maximum number of lineups; remove one at "
          "schedulesdirect.org first.",
    4102: "The Schedules Direct account has no lineups.",
    2100: "That lineup is already in the Schedules Direct account.",
    2101: "Schedules Direct does not know that lineup.",
    2105: "That is not a valid Schedules Direct lineup.",
    3000: "Schedules Direct is offline for maintenance; try again later.",
}


class SchedulesDirectError(BadRequestError):
    """The service refused (bad login, expired account, too many lineups, ...)."""

    def __init__(self, detail: str, code: int | None = None) -> None:
        super().__init__(detail)
        self.code = code


class SchedulesDirectUnavailable(ReelroomError):
    """The service cannot be reached or is offline: try again later."""

    status_code = 503
    title = "Service Unavailable"


def password_hash(password: str) -> str:
    return hashlib.sha1(password.encode("utf-8")).hexdigest()


def _is_sha1(text: str | None) -> bool:
    return bool(text) and len(text) == 40 and all(c in "0123456789abcdef" for c in text.lower())


def _check(data: Any, what: str) -> Any:
    if isinstance(data, dict):
        code = data.get("code")
        if isinstance(code, int) and code != 0:
            raise SchedulesDirectError(ERRORS.get(code) or f"Schedules Direct refused {what}: "
                                       f"{data.get('message') or data.get('response') or code} (code {code}).", code)
    return data


class SchedulesDirectClient:
    def __init__(self, settings: Callable[[], dict[str, Any]], cache_dir: Path) -> None:
        self._settings = settings
        self.cache_dir = cache_dir
        self._client: httpx.AsyncClient | None = None
        self._tokens: dict[str, tuple[float, str]] = {}
        self._countries: tuple[float, str, bytes] | None = None
        # per station-day md5 -> the day's airings; per program md5 -> the programme record
        self.schedule_cache: dict[tuple[str, str], tuple[str, list[dict[str, Any]]]] = {}
        self.program_cache: dict[str, tuple[str, dict[str, Any]]] = {}
        self.image_cache: dict[str, str | None] = {}
        self.requests: list[str] = []  # "METHOD path", newest last (diagnostics)

    @property
    def base(self) -> str:
        return str(self._settings()["BaseUrl"]).rstrip("/")

    def _http(self) -> httpx.AsyncClient:
        import httpx  # loaded when first needed, not at start-up
        if self._client is None:
            self._client = httpx.AsyncClient(headers={"User-Agent": user_agent(), "Accept-Encoding": "deflate, gzip"},
                                             follow_redirects=True)
        return self._client

    async def _call(self, method: str, path: str, token: str | None = None, body: Any = None,
                    params: dict[str, Any] | None = None) -> Any:
        import httpx
        headers = {"token": token} if token else {}
        self.requests.append(f"{method} /{path}")
        try:
            reply = await self._http().request(method, f"{self.base}/{path}", headers=headers, params=params,
                                               json=body, timeout=float(self._settings()["TimeoutSeconds"]))
        except httpx.HTTPError as exc:
            raise SchedulesDirectUnavailable(f"{NAME} is unreachable: {exc.__class__.__name__}: {exc}") from None
        try:
            data = reply.json()
        except ValueError:
            raise SchedulesDirectUnavailable(f"{NAME} answered HTTP {reply.status_code} without JSON.") from None
        _check(data, path)
        if reply.status_code >= 400:
            raise SchedulesDirectUnavailable(f"{NAME} answered HTTP {reply.status_code} for /{path}.")
        return data

    # -- account -------------------------------------------------------------------------

    async def token(self, username: str, password_sha1: str, force: bool = False) -> str:
        if not username or not _is_sha1(password_sha1):
            raise BadRequestError("Schedules Direct needs a user name and password.")
        key = f"{self.base}|{username}|{password_sha1}"
        cached = self._tokens.get(key)
        if cached and cached[0] > time.monotonic() and not force:
            return cached[1]
        data = await self._call("POST", "token", body={"username": username, "password": password_sha1})
        token = data.get("token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token:
            raise SchedulesDirectUnavailable(f"{NAME} sent no token.")
        self._tokens[key] = (time.monotonic() + TOKEN_TTL, token)
        return token

    async def status(self, token: str) -> dict[str, Any]:
        data = await self._call("GET", "status", token)
        account = data.get("account") if isinstance(data, dict) else None
        expires = account.get("expires") if isinstance(account, dict) else None
        if isinstance(expires, str):
            try:
                when = datetime.fromisoformat(expires.replace("Z", "+00:00"))
                if when < datetime.now(UTC):
                    raise SchedulesDirectError(ERRORS[4001] + f" (it expired on {when.date().isoformat()})", 4001)
            except ValueError:
                pass
        for entry in data.get("systemStatus") or [] if isinstance(data, dict) else []:
            if isinstance(entry, dict) and str(entry.get("status", "")).lower() == "offline":
                raise SchedulesDirectUnavailable(f"{NAME} is offline: {entry.get('message') or ''}".strip())
        return data

    async def login(self, provider: w.ListingsProviderInfo) -> str:
        """A token for the provider's account, after checking the account is usable."""
        token = await self.token(provider.Username or "", (provider.Password or "").lower())
        await self.status(token)
        return token

    async def countries(self) -> bytes:
        """The service's country list (raw JSON), cached a day in memory and on disk."""
        now = time.time()
        if self._countries and self._countries[0] > now and self._countries[1] == self.base:
            return self._countries[2]
        cache = self.cache_dir / "countries.json"
        try:
            stored = json.loads(cache.read_text(encoding="utf-8"))
            if stored.get("base") == self.base and stored.get("at", 0) + COUNTRIES_TTL > now:
                content = json.dumps(stored["data"]).encode()
                self._countries = (stored["at"] + COUNTRIES_TTL, self.base, content)
                return content
        except (OSError, ValueError, KeyError, AttributeError):
            pass
        data = await self._call("GET", "available/countries")
        content = json.dumps(data).encode()
        self._countries = (now + COUNTRIES_TTL, self.base, content)
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps({"base": self.base, "at": now, "data": data}), encoding="utf-8")
        except OSError:
            pass
        return content

    async def headends(self, token: str, country: str, postal_code: str) -> list[w.NameIdPair]:
        data = await self._call("GET", "headends", token, params={"country": country, "postalcode": postal_code})
        out = []
        for headend in data or []:
            if not isinstance(headend, dict):
                continue
            for lineup in headend.get("lineups") or []:
                if isinstance(lineup, dict) and lineup.get("lineup"):
                    name = lineup.get("name") or lineup["lineup"]
                    transport = headend.get("transport")
                    out.append(w.NameIdPair(Name=f"{name} ({transport})" if transport else name, Id=lineup["lineup"]))
        return out

    async def account_lineups(self, token: str) -> list[str]:
        try:
            data = await self._call("GET", "lineups", token)
        except SchedulesDirectError as exc:
            if exc.code == 4102:
                return []
            raise
        return [x["lineup"] for x in data.get("lineups") or [] if isinstance(x, dict) and x.get("lineup")]

    async def add_lineup(self, token: str, lineup: str) -> None:
        await self._call("PUT", f"lineups/{lineup}", token)

    async def ensure_lineup(self, token: str, lineup: str) -> None:
        if lineup not in await self.account_lineups(token):
            await self.add_lineup(token, lineup)

    # -- listings ------------------------------------------------------------------------

    async def stations(self, token: str, lineup: str) -> list[ProviderChannel]:
        data = await self._call("GET", f"lineups/{lineup}", token)
        numbers: dict[str, str] = {}
        for entry in data.get("map") or []:
            if not isinstance(entry, dict) or not entry.get("stationID"):
                continue
            number = entry.get("channel")
            if not number and entry.get("atscMajor") is not None:
                number = f"{entry['atscMajor']}.{entry.get('atscMinor', 0)}"
            if not number and entry.get("uhfVhf") is not None:
                number = str(entry["uhfVhf"])
            if number:
                numbers.setdefault(str(entry["stationID"]), str(number).lstrip("0") or "0")
        out = []
        for station in data.get("stations") or []:
            if not isinstance(station, dict) or not station.get("stationID"):
                continue
            sid = str(station["stationID"])
            logo = station.get("logo") if isinstance(station.get("logo"), dict) else {}
            out.append(ProviderChannel(id=sid, name=str(station.get("name") or station.get("callsign") or sid),
                                       number=numbers.get(sid), icon=logo.get("URL")))
        return out

    async def _post_chunks(self, path: str, token: str, items: list[Any]) -> list[Any]:
        out: list[Any] = []
        for start in range(0, len(items), CHUNK):
            data = await self._call("POST", path, token, body=items[start:start + CHUNK])
            if isinstance(data, list):
                out += data
            elif isinstance(data, dict):
                out.append(data)
        return out

    async def airings(self, token: str, station_ids: list[str], days: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Airings per station over ``days``, fetching only station-days whose md5 changed."""
        wanted = [{"stationID": s, "date": days} for s in station_ids]
        md5s: dict[str, Any] = {}
        for part in await self._post_chunks("schedules/md5", token, wanted):
            if isinstance(part, dict):
                md5s.update(part)
        changed: dict[str, list[str]] = {}
        for sid in station_ids:
            for day in days:
                entry = (md5s.get(sid) or {}).get(day) if isinstance(md5s.get(sid), dict) else None
                if not isinstance(entry, dict) or entry.get("code", 0) != 0:
                    continue
                cached = self.schedule_cache.get((sid, day))
                if cached is None or cached[0] != entry.get("md5"):
                    changed.setdefault(sid, []).append(day)
        if changed:
            request = [{"stationID": s, "date": d} for s, d in changed.items()]
            for schedule in await self._post_chunks("schedules", token, request):
                if not isinstance(schedule, dict) or schedule.get("code", 0) != 0 or not schedule.get("stationID"):
                    continue
                meta = schedule.get("metadata") if isinstance(schedule.get("metadata"), dict) else {}
                day = meta.get("startDate")
                if day:
                    self.schedule_cache[(str(schedule["stationID"]), day)] = (
                        meta.get("md5") or ((md5s.get(schedule["stationID"]) or {}).get(day) or {}).get("md5"),
                        [p for p in schedule.get("programs") or [] if isinstance(p, dict)])
        out: dict[str, list[dict[str, Any]]] = {}
        for sid in station_ids:
            for day in days:
                cached = self.schedule_cache.get((sid, day))
                if cached:
                    out.setdefault(sid, []).extend(cached[1])
        return out

    async def programs(self, token: str, airings: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Programme records by programID, fetching only those whose md5 is new."""
        needed = {}
        for airing in airings:
            pid, md5 = airing.get("programID"), airing.get("md5")
            if pid and (pid not in self.program_cache or self.program_cache[pid][0] != md5):
                needed[pid] = md5
        if needed:
            for record in await self._post_chunks("programs", token, sorted(needed)):
                if isinstance(record, dict) and record.get("programID") and record.get("code", 0) == 0:
                    pid = record["programID"]
                    self.program_cache[pid] = (record.get("md5") or needed.get(pid), record)
        return {pid: rec for pid, (_md5, rec) in self.program_cache.items()}

    async def artwork(self, token: str, program_ids: list[str]) -> dict[str, str | None]:
        """The best image URL per programme (by the 10-character artwork id)."""
        keys = sorted({pid[:10] for pid in program_ids} - set(self.image_cache))
        if keys:
            for entry in await self._post_chunks("metadata/programs/", token, keys):
                if not isinstance(entry, dict) or not entry.get("programID"):
                    continue
                self.image_cache[str(entry["programID"])[:10]] = self._pick_image(entry.get("data"))
            for key in keys:
                self.image_cache.setdefault(key, None)
        return {pid: self.image_cache.get(pid[:10]) for pid in program_ids}

    def _pick_image(self, images: Any) -> str | None:
        if not isinstance(images, list):
            return None
        def rank(image: dict[str, Any]) -> tuple[int, int, int]:
            aspect = {"2x3": 0, "3x4": 1, "4x3": 2, "16x9": 3}.get(image.get("aspect"), 4)
            category = {"Iconic": 0, "Banner-L1": 1, "Banner-L2": 2, "Poster Art": 3}.get(image.get("category"), 5)
            size = {"Md": 0, "Lg": 1, "Sm": 2, "Ms": 3}.get(image.get("size"), 4)
            return category, aspect, size
        usable = [i for i in images if isinstance(i, dict) and isinstance(i.get("uri"), str)]
        if not usable:
            return None
        uri = min(usable, key=rank)["uri"]
        return uri if uri.startswith(("http://", "https://")) else f"{self.base}/image/{uri.lstrip('/')}"

    async def listings(self, provider: w.ListingsProviderInfo, days: int
                       ) -> tuple[list[ProviderChannel], list[tuple[str, Program]]]:
        """Stations and (station id, programme) pairs for today and the next ``days - 1`` days."""
        if not provider.ListingsId:
            raise BadRequestError("The Schedules Direct provider has no lineup (ListingsId).")
        try:
            return await self._listings(provider, days, await self.login(provider))
        except SchedulesDirectError as exc:
            if exc.code != 4006:
                raise
            # the token expired early: one new login, then the same request again
            token = await self.token(provider.Username or "", (provider.Password or "").lower(), force=True)
            return await self._listings(provider, days, token)

    async def _listings(self, provider: w.ListingsProviderInfo, days: int, token: str
                        ) -> tuple[list[ProviderChannel], list[tuple[str, Program]]]:
        stations = await self.stations(token, provider.ListingsId)
        today = datetime.now(UTC).date()
        day_list = [(today + timedelta(days=i)).isoformat() for i in range(max(1, min(days, MAX_DAYS)))]
        per_station = await self.airings(token, [s.id for s in stations], day_list)
        all_airings = [a for airings in per_station.values() for a in airings]
        records = await self.programs(token, all_airings)
        with_art = [pid for pid, rec in records.items() if rec.get("hasImageArtwork")
                    and pid in {a.get("programID") for a in all_airings}]
        images = await self.artwork(token, with_art) if with_art else {}
        pairs = []
        for sid, airings in per_station.items():
            for airing in airings:
                program = _program(airing, records.get(airing.get("programID") or ""),
                                   images.get(airing.get("programID") or ""))
                if program is not None:
                    pairs.append((sid, program))
        return stations, pairs

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


def _first_text(values: Any, key: str) -> str | None:
    for value in values or []:
        if isinstance(value, dict) and isinstance(value.get(key), str) and value[key].strip():
            return value[key].strip()
    return None


def _program(airing: dict[str, Any], record: dict[str, Any] | None, image: str | None) -> Program | None:
    try:
        start = datetime.fromisoformat(str(airing.get("airDateTime")).replace("Z", "+00:00"))
    except ValueError:
        return None
    duration = airing.get("duration") if isinstance(airing.get("duration"), int) else 1800
    record = record or {}
    title = _first_text(record.get("titles"), "title120")
    if not title:
        return None
    descriptions = record.get("descriptions") if isinstance(record.get("descriptions"), dict) else {}
    overview = _first_text(descriptions.get("description1000"), "description") or \
        _first_text(descriptions.get("description100"), "description")
    season = episode = None
    for meta in record.get("metadata") or []:
        gracenote = meta.get("Gracenote") if isinstance(meta, dict) else None
        if isinstance(gracenote, dict):
            season, episode = gracenote.get("season"), gracenote.get("episode")
            break
    categories = [g for g in record.get("genres") or [] if isinstance(g, str)]
    entity = str(record.get("entityType") or "")
    if entity in ("Movie", "Sports") and entity not in categories:
        categories.append(entity)
    year = None
    movie = record.get("movie") if isinstance(record.get("movie"), dict) else {}
    if str(movie.get("year") or "").isdigit():
        year = int(movie["year"])
    rating = None
    for source in (airing.get("ratings"), record.get("contentRating")):
        rating = rating or _first_text(source, "code")
    return Program(id="", channel_id="", start=start.astimezone(UTC), end=(start + timedelta(seconds=duration))
                   .astimezone(UTC), name=title, episode_title=record.get("episodeTitle150") or None,
                   overview=overview, categories=categories,
                   season=season if isinstance(season, int) else None,
                   episode=episode if isinstance(episode, int) else None, year=year, icon=image,
                   is_new=bool(airing.get("new")), is_premiere=bool(airing.get("premiere")) or
                   "Premiere" in str(airing.get("isPremiereOrFinale") or ""),
                   is_repeat=not airing.get("new"), rating=rating)


class SchedulesDirectListings:
    """Hooks Schedules Direct into ``ctx.livetv``: guide loading, login validation, lineups."""

    type = "schedulesdirect"
    name = NAME
    provider_kinds = frozenset({"listings"})

    def __init__(self, client: SchedulesDirectClient) -> None:
        self.client = client

    async def validate(self, info: w.ListingsProviderInfo, validate_login: bool,
                       validate_listings: bool) -> w.ListingsProviderInfo:
        if validate_login or validate_listings:
            token = await self.client.login(info)
            if validate_listings:
                if not info.ListingsId:
                    raise BadRequestError("Choose a Schedules Direct lineup (ListingsId).")
                await self.client.ensure_lineup(token, info.ListingsId)
        return info

    async def lineups(self, info: w.ListingsProviderInfo | None, country: str | None,
                      location: str | None) -> list[w.NameIdPair]:
        if info is None:
            raise BadRequestError("Add the Schedules Direct account first (its id is needed).")
        token = await self.client.login(info)
        if not country or not location:
            raise BadRequestError("country and location (a postal code) are required.")
        return await self.client.headends(token, country, location)

    async def load(self, info: w.ListingsProviderInfo, days: int):
        return await self.client.listings(info, days)


def store_password(info: w.ListingsProviderInfo, pw: str | None) -> w.ListingsProviderInfo:
    """Jellyfin sends the password in ``pw`` and keeps only its SHA-1; a Password that already
    is a SHA-1 (an edit that did not change it) stays."""
    if pw:
        return msgspec.structs.replace(info, Password=password_hash(pw))
    if info.Password and not _is_sha1(info.Password):
        return msgspec.structs.replace(info, Password=password_hash(info.Password))
    return info

