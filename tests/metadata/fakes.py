"""Fake TMDb and MusicBrainz (plus Cover Art Archive) servers on 127.0.0.1 serving canned JSON
and small generated JPEGs, recording every request they get."""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from PIL import Image

Reply = tuple[int, bytes, str]


def json_reply(data: Any, status: int = 200) -> Reply:
    return status, json.dumps(data).encode(), "application/json"


def jpeg(seed: str, size: tuple[int, int] = (60, 90)) -> bytes:
    """A small JPEG whose colour (and so content) depends on ``seed``."""
    digest = sum(seed.encode()) * 7919
    color = (digest % 256, (digest // 256) % 256, (digest // 65536) % 256)
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "JPEG", quality=80)
    return buf.getvalue()


_HELD_PORTS: list[socket.socket] = []


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens, for as long as the test process runs: the
    socket stays bound and never listens, so a connection is refused and no later server or
    fake (all on ephemeral ports) can be given the port. (Closing it at once, as before, let a
    later bind take it: an "offline" provider URL could then reach some other test's server.)"""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _HELD_PORTS.append(s)
    return s.getsockname()[1]


@dataclass
class Recorded:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    at: float
    method: str = "GET"
    body: Any = None


class FakeService:
    """Routes are exact paths or prefixes ("/t/p/") mapped to fn(path, query) -> Reply."""

    def __init__(self) -> None:
        self.routes: dict[str, Callable[[str, dict[str, str]], Reply]] = {}
        # "POST /path" -> fn(path, query, recorded request)
        self.other_routes: dict[str, Callable[[str, dict[str, str], Recorded], Reply]] = {}
        self.prefixes: dict[str, Callable[[str, dict[str, str]], Reply]] = {}
        self.requests: list[Recorded] = []
        self.delay = 0.0
        #: set to let every delayed answer go at once (``delay`` is the longest a request is held)
        self.release = threading.Event()
        #: requests answered so far (after their delay): a client that gave up on its own timeout
        #: has its request still held here
        self.answered = 0
        self.fail_status: int | None = None
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

            def do_PUT(self) -> None:  # noqa: N802
                self._answer("PUT")

            def do_DELETE(self) -> None:  # noqa: N802
                self._answer("DELETE")

            def _answer(self, method: str) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                service.requests.append(Recorded(parts.path, query, headers, time.monotonic(), method,
                                                 json.loads(raw) if raw.strip() else None))
                if service.delay:
                    service.release.wait(service.delay)
                if method == "GET":
                    status, body, ctype = service.reply(parts.path, query)
                else:
                    status, body, ctype = service.reply_other(method, parts.path, query, service.requests[-1])
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up (timeout tests)
                finally:
                    service.answered += 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def reply(self, path: str, query: dict[str, str]) -> Reply:
        if self.fail_status:
            return json_reply({"error": "unavailable"}, self.fail_status)
        fn = self.routes.get(path)
        if fn is None:
            fn = next((f for prefix, f in self.prefixes.items() if path.startswith(prefix)), None)
        if fn is None:
            return json_reply({"status_message": "not found"}, 404)
        return fn(path, query)

    def reply_other(self, method: str, path: str, query: dict[str, str], request: Recorded) -> Reply:
        if self.fail_status:
            return json_reply({"error": "unavailable"}, self.fail_status)
        fn = self.other_routes.get(f"{method} {path}")
        if fn is None:
            return json_reply({"message": "not found"}, 404)
        return fn(path, query, request)

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def start(self) -> FakeService:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()  # no request stays held
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


# ---------------------------------------------------------------- TMDb

TMDB_KEY = "test-key"
FIGHT_CLUB = {"id": 550, "title": "Fight Club", "original_title": "Fight Club", "release_date": "1999-10-15",
              "overview": "An insomniac and a soap maker form an underground club.", "poster_path": "/poster550.jpg"}


class FakeTmdb(FakeService):
    def __init__(self) -> None:
        super().__init__()
        r = self.routes
        r["/3/configuration"] = lambda p, q: self._keyed(q, {"images": {
            "base_url": self.url + "/t/p/", "secure_base_url": self.url + "/t/p/",
            "backdrop_sizes": ["w300", "original"], "logo_sizes": ["w92", "original"],
            "poster_sizes": ["w92", "w500", "original"], "profile_sizes": ["w45", "original"],
            "still_sizes": ["w92", "original"]}})
        r["/3/search/movie"] = self._search_movie
        r["/3/movie/550"] = lambda p, q: self._keyed(q, self.movie_details(q))
        r["/3/movie/550/images"] = lambda p, q: self._keyed(q, {"id": 550, "posters": [
            {"file_path": "/poster550-de.jpg", "width": 60, "height": 90, "iso_639_1": "de", "vote_average": 9.5,
             "vote_count": 40},
            {"file_path": "/poster550.jpg", "width": 60, "height": 90, "iso_639_1": "en", "vote_average": 5.2,
             "vote_count": 12},
            {"file_path": "/poster550-textless.jpg", "width": 60, "height": 90, "iso_639_1": None,
             "vote_average": 7.0, "vote_count": 3}],
            "backdrops": [{"file_path": "/backdrop550.jpg", "width": 160, "height": 90, "iso_639_1": None,
                           "vote_average": 6.0, "vote_count": 5}],
            "logos": [{"file_path": "/logo550.jpg", "width": 100, "height": 40, "iso_639_1": "en",
                       "vote_average": 5.0, "vote_count": 1}]})
        r["/3/find/tt0137523"] = lambda p, q: self._keyed(q, {"movie_results": [{"id": 550}], "tv_results": []})
        r["/3/search/tv"] = lambda p, q: self._keyed(q, {"results": [
            {"id": 1399, "name": "Game of Thrones", "first_air_date": "2011-04-17", "poster_path": "/got.jpg",
             "overview": "Nine noble families fight for control."}] if q.get("query") == "Game of Thrones" else []})
        r["/3/tv/1399"] = lambda p, q: self._keyed(q, {
            "id": 1399, "name": "Game of Thrones", "original_name": "Game of Thrones", "first_air_date": "2011-04-17",
            "last_air_date": "2019-05-19", "status": "Ended", "overview": "Nine noble families.",
            "episode_run_time": [60], "genres": [{"id": 1, "name": "Drama"}], "networks": [{"name": "HBO"}],
            "vote_average": 8.4, "external_ids": {"imdb_id": "tt0944947", "tvdb_id": 121361},
            "content_ratings": {"results": [{"iso_3166_1": "US", "rating": "TV-MA"}]},
            "keywords": {"results": [{"name": "dragon"}]},
            "credits": {"cast": [{"id": 22970, "name": "Peter Dinklage", "character": "Tyrion", "order": 0}]}})
        r["/3/tv/1399/season/1/images"] = lambda p, q: self._keyed(q, {"posters": [
            {"file_path": "/got-s1.jpg", "width": 60, "height": 90, "iso_639_1": "en"}]})
        r["/3/search/person"] = lambda p, q: self._keyed(q, {"results": [
            {"id": 287, "name": "Brad Pitt", "profile_path": "/brad.jpg"}]})
        r["/3/person/287"] = lambda p, q: self._keyed(q, {
            "id": 287, "name": "Brad Pitt", "biography": "An actor.", "birthday": "1963-12-18",
            "imdb_id": "nm0000093", "profile_path": "/brad.jpg"})
        r["/3/person/287/images"] = lambda p, q: self._keyed(q, {"profiles": [
            {"file_path": "/brad.jpg", "width": 60, "height": 90, "iso_639_1": None}]})
        r["/3/search/collection"] = lambda p, q: self._keyed(q, {"results": [
            {"id": 8091, "name": "Alien Collection", "overview": "Xenomorphs.", "poster_path": "/alien.jpg"}]})
        self.prefixes["/t/p/"] = lambda p, q: (200, jpeg(p.rsplit("/", 1)[-1]), "image/jpeg")

    def _keyed(self, query: dict[str, str], data: Any) -> Reply:
        if query.get("api_key") != TMDB_KEY:
            return json_reply({"status_code": 7, "status_message": "Invalid API key"}, 401)
        return json_reply(data)

    def _search_movie(self, path: str, query: dict[str, str]) -> Reply:
        hits: list[dict[str, Any]] = []
        if query.get("query", "").lower() == "fight club" and query.get("year") in (None, "1999"):
            hits = [FIGHT_CLUB, {"id": 1000, "title": "Fight Club: Members Only", "release_date": "2006-02-17",
                                 "poster_path": None, "overview": ""}]
        return self._keyed(query, {"page": 1, "results": hits, "total_results": len(hits)})

    def movie_details(self, query: dict[str, str]) -> dict[str, Any]:
        german = query.get("language", "").startswith("de")
        return {**FIGHT_CLUB, "imdb_id": "tt0137523", "tagline": "Mischief. Mayhem. Soap.", "runtime": 139,
                "title": "Fight Club (DE)" if german else "Fight Club", "vote_average": 8.438,
                "genres": [{"id": 18, "name": "Drama"}, {"id": 53, "name": "Thriller"}],
                "production_companies": [{"name": "Regency Enterprises"}, {"name": "Fox 2000 Pictures"}],
                "keywords": {"keywords": [{"name": "dual identity"}, {"name": "insomnia"}]},
                "release_dates": {"results": [
                    {"iso_3166_1": "DE", "release_dates": [{"certification": "18", "type": 3}]},
                    {"iso_3166_1": "US", "release_dates": [{"certification": "", "type": 1},
                                                           {"certification": "R", "type": 3}]}]},
                "credits": {
                    "cast": [{"id": 819, "name": "Edward Norton", "character": "The Narrator", "order": 0},
                             {"id": 1283, "name": "Helena Bonham Carter", "character": "Marla Singer", "order": 2},
                             {"id": 287, "name": "Brad Pitt", "character": "Tyler Durden", "order": 1}],
                    "crew": [{"id": 7467, "name": "David Fincher", "job": "Director"},
                             {"id": 7468, "name": "Chuck Palahniuk", "job": "Novel"},
                             {"id": 7469, "name": "Jim Uhls", "job": "Screenplay"},
                             {"id": 7470, "name": "Someone Else", "job": "Gaffer"}]}}


# ---------------------------------------------------------------- MusicBrainz

RELEASE_GROUP = "b1392450-e666-3926-a536-22c65f834433"
RELEASE = "0b6b4ba0-d36f-47bd-b4ea-6a5b91842d29"
ARTIST = "a74b1b7f-71a5-4011-9441-d0b5e4122711"
_CREDIT = [{"name": "Radiohead", "joinphrase": "", "artist": {"id": ARTIST, "name": "Radiohead",
                                                               "sort-name": "Radiohead"}}]


class FakeMusicBrainz(FakeService):
    """MusicBrainz's /ws/2 and the Cover Art Archive on one fake server."""

    def __init__(self) -> None:
        super().__init__()
        r = self.routes
        r["/ws/2/release-group"] = self._search_groups
        r["/ws/2/artist"] = lambda p, q: json_reply({"count": 1, "artists": [
            {"id": ARTIST, "name": "Radiohead", "sort-name": "Radiohead", "type": "Group",
             "disambiguation": "English rock band", "life-span": {"begin": "1985", "end": None}, "score": 100}]})
        r[f"/ws/2/release/{RELEASE}"] = lambda p, q: json_reply({
            "id": RELEASE, "title": "OK Computer", "date": "1997-05-21", "country": "GB", "artist-credit": _CREDIT,
            "release-group": {"id": RELEASE_GROUP, "first-release-date": "1997-05-21", "primary-type": "Album"},
            "label-info": [{"label": {"name": "Parlophone"}}],
            "genres": [{"name": "art rock", "count": 3}, {"name": "alternative rock", "count": 9}]})
        r[f"/ws/2/artist/{ARTIST}"] = lambda p, q: json_reply({
            "id": ARTIST, "name": "Radiohead", "disambiguation": "English rock band",
            "life-span": {"begin": "1985", "end": None}, "genres": [{"name": "rock", "count": 4}]})
        r[f"/release/{RELEASE}"] = lambda p, q: json_reply({"images": [
            {"image": self.url + "/img/front.jpg", "front": True, "back": False, "types": ["Front"],
             "thumbnails": {"250": self.url + "/img/front-250.jpg", "500": self.url + "/img/front-500.jpg"}},
            {"image": self.url + "/img/back.jpg", "front": False, "back": True, "types": ["Back"],
             "thumbnails": {}}]})
        self.prefixes["/img/"] = lambda p, q: (200, jpeg(p), "image/jpeg")

    def _search_groups(self, path: str, query: dict[str, str]) -> Reply:
        groups = []
        if 'releasegroup:"OK Computer"' in query.get("query", ""):
            groups = [{"id": RELEASE_GROUP, "title": "OK Computer", "primary-type": "Album", "score": 100,
                       "first-release-date": "1997-05-21", "artist-credit": _CREDIT,
                       "releases": [{"id": RELEASE, "title": "OK Computer", "status": "Official"}]}]
        return json_reply({"count": len(groups), "offset": 0, "release-groups": groups})
