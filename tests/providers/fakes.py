"""Fake TVmaze, OpenSubtitles.com, LrcLib and Schedules Direct servers on 127.0.0.1, answering
with the shapes each service documents, recording every request."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta
from typing import Any

from tests.metadata.fakes import FakeService, Recorded, Reply, jpeg, json_reply

# ---------------------------------------------------------------- TVmaze

SHOW_ID = 82


class FakeTvMaze(FakeService):
    def __init__(self) -> None:
        super().__init__()
        r = self.routes
        show = {"id": SHOW_ID, "name": "Game of Thrones", "language": "English", "genres": ["Drama", "Fantasy"],
                "status": "Ended", "runtime": 60, "premiered": "2011-04-17", "ended": "2019-05-19",
                "rating": {"average": 8.9}, "network": {"id": 8, "name": "HBO"}, "webChannel": None,
                "externals": {"tvrage": 24493, "thetvdb": 121361, "imdb": "tt0944947"},
                "image": {"medium": self.url + "/img/got-m.jpg", "original": self.url + "/img/got.jpg"},
                "summary": "<p>Based on the bestselling book series <b>A Song of Ice and Fire</b>.</p>"}
        r["/search/shows"] = lambda p, q: json_reply(
            [{"score": 0.9, "show": show}] if q.get("q", "").lower() == "game of thrones" else [])
        r[f"/shows/{SHOW_ID}"] = lambda p, q: json_reply(show)
        r["/lookup/shows"] = lambda p, q: json_reply(show) if q.get("imdb") == "tt0944947" else \
            json_reply(None, 404)
        r[f"/shows/{SHOW_ID}/seasons"] = lambda p, q: json_reply([
            {"id": 307, "number": 1, "name": "", "episodeOrder": 2, "premiereDate": "2011-04-17",
             "endDate": "2011-06-19", "image": {"medium": self.url + "/img/s1-m.jpg",
                                                  "original": self.url + "/img/s1.jpg"}, "summary": None}])
        episodes = [
            {"id": 4952, "name": "Winter Is Coming", "season": 1, "number": 1, "type": "regular",
             "airdate": "2011-04-17", "airstamp": "2011-04-18T01:00:00+00:00", "runtime": 60,
             "rating": {"average": 8.1}, "image": {"medium": self.url + "/img/e1-m.jpg",
                                                   "original": self.url + "/img/e1.jpg"},
             "summary": "<p>Lord Ned Stark is troubled.</p>"},
            {"id": 4953, "name": "The Kingsroad", "season": 1, "number": 2, "type": "regular",
             "airdate": "2011-04-24", "runtime": 60, "rating": {"average": 7.9},
             "image": {"medium": self.url + "/img/e2-m.jpg", "original": self.url + "/img/e2.jpg"},
             "summary": "<p>An incident on the Kingsroad.</p>"}]
        r[f"/shows/{SHOW_ID}/episodes"] = lambda p, q: json_reply(episodes)
        r[f"/shows/{SHOW_ID}/episodebynumber"] = lambda p, q: next(
            (json_reply(e) for e in episodes if str(e["season"]) == q.get("season")
             and str(e["number"]) == q.get("number")), json_reply({"name": "Not Found", "status": 404}, 404))
        r[f"/shows/{SHOW_ID}/images"] = lambda p, q: json_reply([
            {"id": 1, "type": "poster", "main": True, "resolutions": {
                "original": {"url": self.url + "/img/poster.jpg", "width": 680, "height": 1000},
                "medium": {"url": self.url + "/img/poster-m.jpg", "width": 210, "height": 295}}},
            {"id": 2, "type": "background", "main": False, "resolutions": {
                "original": {"url": self.url + "/img/bg.jpg", "width": 1920, "height": 1080}}},
            {"id": 3, "type": "banner", "main": False, "resolutions": {
                "original": {"url": self.url + "/img/banner.jpg", "width": 758, "height": 140}}}])
        self.prefixes["/img/"] = lambda p, q: (200, jpeg(p), "image/jpeg")


# ---------------------------------------------------------------- OpenSubtitles.com

OS_KEY = "os-api-key"
OS_USER, OS_PASSWORD = "viewer", "hunter2"
SRT = "1\n00:00:01,000 --> 00:00:03,000\nHello from OpenSubtitles.\n\n2\n00:00:04,000 --> 00:00:06,000\nBye.\n"


class FakeOpenSubtitles(FakeService):
    def __init__(self, quota: int = 5) -> None:
        super().__init__()
        self.remaining = quota
        self.routes["/api/v1/subtitles"] = self._search
        self.other_routes["POST /api/v1/login"] = self._login
        self.other_routes["POST /api/v1/download"] = self._download
        self.prefixes["/files/"] = lambda p, q: (200, SRT.encode(), "application/x-subrip")

    def _search(self, path: str, query: dict[str, str]) -> Reply:
        if self.requests[-1].headers.get("api-key") != OS_KEY:
            return json_reply({"message": "You cannot consume this service", "status": 403}, 403)
        if query.get("imdb_id") != "137523" or query.get("languages") != "en":
            return json_reply({"total_pages": 0, "total_count": 0, "page": 1, "data": []})
        return json_reply({"total_pages": 1, "total_count": 2, "per_page": 60, "page": 1, "data": [
            {"id": "6418", "type": "subtitle", "attributes": {
                "subtitle_id": "6418", "language": "en", "download_count": 12034, "hearing_impaired": False,
                "hd": True, "fps": 23.976, "votes": 3, "ratings": 8.0, "from_trusted": True,
                "foreign_parts_only": False, "upload_date": "2019-06-01T12:00:00Z", "ai_translated": False,
                "machine_translated": False, "release": "Fight.Club.1999.1080p.BluRay", "comments": "synced",
                "uploader": {"uploader_id": 7, "name": "subber", "rank": "trusted"},
                "moviehash_match": False,
                "files": [{"file_id": 1234, "cd_number": 1, "file_name": "Fight.Club.1999.srt"}]}},
            {"id": "6419", "type": "subtitle", "attributes": {
                "subtitle_id": "6419", "language": "en", "download_count": 50, "hearing_impaired": True,
                "fps": 25.0, "ratings": 0.0, "upload_date": "2020-01-01T00:00:00Z", "release": "Fight.Club.SDH",
                "uploader": {"name": "other"}, "moviehash_match": False,
                "files": [{"file_id": 5678, "cd_number": 1, "file_name": "Fight.Club.SDH.srt"}]}}]})

    def _login(self, path: str, query: dict[str, str], req: Recorded) -> Reply:
        if req.headers.get("api-key") != OS_KEY:
            return json_reply({"message": "You cannot consume this service", "status": 403}, 403)
        if req.body != {"username": OS_USER, "password": OS_PASSWORD}:
            return json_reply({"message": "Invalid username/password", "status": 401}, 401)
        return json_reply({"user": {"allowed_downloads": 5, "level": "Sub leecher", "user_id": 66, "vip": False},
                           "base_url": "api.opensubtitles.com", "token": "os-token", "status": 200})

    def _download(self, path: str, query: dict[str, str], req: Recorded) -> Reply:
        if req.headers.get("authorization") != "Bearer os-token":
            return json_reply({"message": "token expired", "status": 401}, 401)
        if self.remaining <= 0:
            return json_reply({"requests": 6, "remaining": 0, "message": "You have downloaded your allowed 5 "
                               "subtitles for 24h. Your quota will be renewed in 07 hours and 30 minutes.",
                               "reset_time": "07 hours and 30 minutes", "reset_time_utc": "2026-11-26T03:00:00.000Z"},
                              406)
        self.remaining -= 1
        return json_reply({"link": f"{self.url}/files/{req.body['file_id']}.srt", "file_name": "Fight.Club.srt",
                           "requests": 5 - self.remaining, "remaining": self.remaining,
                           "message": "Your quota will be renewed in 23 hours",
                           "reset_time": "23 hours", "reset_time_utc": "2026-11-26T19:00:00.000Z"})


# ---------------------------------------------------------------- LrcLib

LRC = "[00:12.00] Is this the real life?\n[00:15.50] Is this just fantasy?\n[00:19.00] Caught in a landslide\n"


class FakeLrcLib(FakeService):
    def __init__(self) -> None:
        super().__init__()
        record = {"id": 3396226, "trackName": "Bohemian Rhapsody", "artistName": "Queen",
                  "albumName": "A Night at the Opera", "duration": 355, "instrumental": False,
                  "plainLyrics": "Is this the real life?\nIs this just fantasy?\nCaught in a landslide",
                  "syncedLyrics": LRC}
        plain_only = {**record, "id": 11, "syncedLyrics": None, "albumName": "Greatest Hits", "duration": 354}
        self.routes["/api/get"] = lambda p, q: json_reply(record) if (
            q.get("track_name") == "Bohemian Rhapsody" and q.get("artist_name") == "Queen") else \
            json_reply({"code": 404, "name": "TrackNotFound", "message": "Failed to find specified track"}, 404)
        self.routes["/api/search"] = lambda p, q: json_reply(
            [plain_only, record] if "bohemian" in q.get("track_name", "").lower() else [])
        self.routes["/api/get/3396226"] = lambda p, q: json_reply(record)


# ---------------------------------------------------------------- Schedules Direct

SD_USER, SD_PASSWORD = "sduser", "sdpass"
LINEUP = "USA-NY67890-X"
STATIONS = {"10001": ("WNBC", "NBC 4 New York", "4"), "10002": ("WCBS", "CBS 2 New York", "2"),
            "10003": ("WXYZ", "Unmapped Station", "99")}


def guide_days(n: int = 2) -> list[str]:
    today = datetime.now(UTC).date()
    return [(today + timedelta(days=i)).isoformat() for i in range(n)]


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


class FakeSchedulesDirect(FakeService):
    """The JSON API under /20141201: token, status, countries, headends, lineups, schedules (md5),
    programs and program artwork."""

    def __init__(self, expires: date | None = None, max_lineups: int = 4) -> None:
        super().__init__()
        self.expires = expires or (datetime.now(UTC).date() + timedelta(days=300))
        self.max_lineups = max_lineups
        self.account_lineups: list[str] = []
        self.revision = 1  # bump to change the schedules' md5
        self.current_token = "sd-token"  # change it to expire the token the server holds
        b = "/20141201"
        self.base = b
        self.other_routes[f"POST {b}/token"] = self._token
        self.routes[f"{b}/status"] = self._authed(self._status)
        self.routes[f"{b}/available/countries"] = lambda p, q: json_reply({
            "North America": [{"fullName": "United States", "shortName": "USA", "postalCodeExample": "12345",
                               "postalCode": "/\\d{5}/"},
                              {"fullName": "Canada", "shortName": "CAN", "postalCodeExample": "N6M 1A2",
                               "postalCode": "/[A-Z][0-9][A-Z] [0-9][A-Z][0-9]/"}],
            "Europe": [{"fullName": "Great Britain", "shortName": "GBR", "postalCodeExample": "BR1 2LH",
                        "postalCode": "/.+/", "onePostalCode": True}]})
        self.routes[f"{b}/headends"] = self._authed(lambda p, q: json_reply([
            {"headend": "NY67890", "transport": "Cable", "location": "New York",
             "lineups": [{"name": "Example Cable - Digital", "lineup": LINEUP, "uri": f"{b}/lineups/{LINEUP}"}]},
            {"headend": "NY00001", "transport": "Antenna", "location": "New York",
             "lineups": [{"name": "Antenna", "lineup": "USA-OTA-10001", "uri": f"{b}/lineups/USA-OTA-10001"}]}]))
        self.routes[f"{b}/lineups"] = self._authed(lambda p, q: json_reply(
            {"code": 0, "serverID": "fake", "datetime": "2026-11-25T00:00:00Z",
             "lineups": [{"lineup": lu, "name": "Example Cable", "transport": "Cable", "location": "New York",
                          "uri": f"{b}/lineups/{lu}"} for lu in self.account_lineups]}) if self.account_lineups
            else json_reply({"response": "NO_LINEUPS", "code": 4102, "message": "No lineups in account"}, 400))
        self.other_routes[f"PUT {b}/lineups/{LINEUP}"] = self._add_lineup
        self.routes[f"{b}/lineups/{LINEUP}"] = self._authed(self._lineup_map)
        self.other_routes[f"POST {b}/schedules/md5"] = self._authed_post(self._schedule_md5)
        self.other_routes[f"POST {b}/schedules"] = self._authed_post(self._schedules)
        self.other_routes[f"POST {b}/programs"] = self._authed_post(self._programs)
        self.other_routes[f"POST {b}/metadata/programs/"] = self._authed_post(self._artwork)
        self.prefixes[f"{b}/image/"] = lambda p, q: (200, jpeg(p), "image/jpeg")

    @property
    def api_url(self) -> str:
        return self.url + self.base

    def calls(self, method: str, suffix: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path == self.base + suffix]

    def _token(self, path: str, query: dict[str, str], req: Recorded) -> Reply:
        body = req.body or {}
        if body.get("username") != SD_USER or body.get("password") != hashlib.sha1(SD_PASSWORD.encode()).hexdigest():
            return json_reply({"response": "INVALID_USER", "code": 4003, "serverID": "fake",
                               "message": "Invalid user.", "datetime": "2026-11-25T00:00:00Z"}, 400)
        return json_reply({"code": 0, "message": "OK", "serverID": "fake", "datetime": "2026-11-25T00:00:00Z",
                           "token": self.current_token})

    def _authed(self, fn):
        def run(path: str, query: dict[str, str]) -> Reply:
            if self.requests[-1].headers.get("token") != self.current_token:
                return json_reply({"response": "INVALID_TOKEN", "code": 4006, "message": "Token expired"}, 403)
            return fn(path, query)
        return run

    def _authed_post(self, fn):
        def run(path: str, query: dict[str, str], req: Recorded) -> Reply:
            if req.headers.get("token") != self.current_token:
                return json_reply({"response": "INVALID_TOKEN", "code": 4006, "message": "Token expired"}, 403)
            return fn(req.body)
        return run

    def _status(self, path: str, query: dict[str, str]) -> Reply:
        return json_reply({"account": {"expires": f"{self.expires.isoformat()}T00:00:00Z", "messages": [],
                                       "maxLineups": self.max_lineups},
                           "lineups": [{"lineup": lu, "modified": "2026-11-20T00:00:00Z",
                                        "uri": f"{self.base}/lineups/{lu}"} for lu in self.account_lineups],
                           "lastDataUpdate": "2026-11-25T00:00:00Z", "notifications": [],
                           "systemStatus": [{"date": "2026-11-01T00:00:00Z", "status": "Online",
                                             "message": "No known issues."}], "serverID": "fake", "code": 0})

    def _add_lineup(self, path: str, query: dict[str, str], req: Recorded) -> Reply:
        if req.headers.get("token") != self.current_token:
            return json_reply({"code": 4006, "message": "Token expired"}, 403)
        if len(self.account_lineups) >= self.max_lineups:
            return json_reply({"response": "MAX_LINEUPS", "code": 4101, "serverID": "fake",
                               "message": "Exceeded maximum number of lineups for this account."}, 400)
        self.account_lineups.append(LINEUP)
        return json_reply({"response": "OK", "code": 0, "serverID": "fake", "message": "Added lineup.",
                           "changesRemaining": 5})

    def _lineup_map(self, path: str, query: dict[str, str]) -> Reply:
        return json_reply({
            "map": [{"stationID": sid, "channel": number.zfill(3)} for sid, (_c, _n, number) in STATIONS.items()],
            "stations": [{"stationID": sid, "name": name, "callsign": call, "broadcastLanguage": ["en"],
                          "logo": {"URL": f"{self.url}/logos/{call}.png", "height": 270, "width": 360}}
                         for sid, (call, name, _num) in STATIONS.items()],
            "metadata": {"lineup": LINEUP, "modified": "2026-11-20T00:00:00Z", "transport": "Cable"}})

    def _day_programs(self, sid: str, day: str) -> list[dict[str, Any]]:
        start = datetime.fromisoformat(day).replace(tzinfo=UTC)
        out = []
        for slot in range(0, 24):  # one-hour programmes, a news show every 6 hours
            pid = f"EP{sid}{slot:04d}" if slot % 6 else f"SH{sid}0000"
            pid = pid[:10].ljust(10, "0") + f"{slot:04d}"
            out.append({"programID": pid, "airDateTime": (start + timedelta(hours=slot)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "duration": 3600, "md5": _md5(f"{pid}-{self.revision}"), "new": slot % 2 == 0,
                        "audioProperties": ["stereo"], "ratings": [{"body": "USA Parental Rating", "code": "TV-PG"}]})
        return out

    def _schedule_md5(self, body: Any) -> Reply:
        out: dict[str, Any] = {}
        for entry in body:
            sid = entry["stationID"]
            out[sid] = {day: {"code": 0, "lastModified": "2026-11-25T00:00:00Z",
                              "md5": _md5(f"{sid}-{day}-{self.revision}")} for day in entry["date"]}
        return json_reply(out)

    def _schedules(self, body: Any) -> Reply:
        out = []
        for entry in body:
            for day in entry["date"]:
                out.append({"stationID": entry["stationID"], "programs": self._day_programs(entry["stationID"], day),
                            "metadata": {"modified": "2026-11-25T00:00:00Z", "md5": _md5(
                                f"{entry['stationID']}-{day}-{self.revision}"), "startDate": day}})
        return json_reply(out)

    def _programs(self, body: Any) -> Reply:
        out = []
        for pid in body:
            episode = pid.startswith("EP")
            slot = int(pid[-4:])
            record = {"programID": pid, "md5": _md5(f"{pid}-{self.revision}"), "hasImageArtwork": True,
                      "titles": [{"title120": f"Show {pid[2:7]}" if episode else "Evening News"}],
                      "descriptions": {"description1000": [{"descriptionLanguage": "en",
                                                            "description": f"Programme {pid}."}]},
                      "genres": ["Drama"] if episode else ["News"],
                      "entityType": "Episode" if episode else "Show", "showType": "Series"}
            if episode:
                record["episodeTitle150"] = f"Episode {slot}"
                record["metadata"] = [{"Gracenote": {"season": 2, "episode": slot}}]
            out.append(record)
        return json_reply(out)

    def _artwork(self, body: Any) -> Reply:
        return json_reply([{"programID": key, "data": [
            {"width": "135", "height": "180", "uri": f"assets/p{key}_s.jpg", "size": "Sm", "aspect": "3x4",
             "category": "Banner-L3"},
            {"width": "240", "height": "360", "uri": f"assets/p{key}_iconic.jpg", "size": "Md", "aspect": "2x3",
             "category": "Iconic", "primary": "true"}]} for key in body])
