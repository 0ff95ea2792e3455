"""The outermost ASGI layer: CORS on every response, and the web client at ``/web/``.

Requests for the web client never reach the wire middleware or Litestar: a static file costs a
``stat`` and (when not in memory) a read in a worker thread. Everything else passes through.

- ``/`` redirects (302) to ``/web/``, ``/web`` (301) to ``/web/``;
- ``/web/`` is ``index.html``; ``/web/<file>`` a file of the folder (see ``static.py``);
- with no web client (none installed, or hosting turned off) ``/web/`` and ``/web/index.html``
  show Reelroom's own page (``landing.py``) with the server's address and how to add the app;
- other ``/web/...`` paths that are not files (``/web/ConfigurationPage``, ``robots.txt`` with
  no client) go on to the API.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from server.web import cors
from server.web.compress import CompressionCache
from server.web.locate import WebLocation, locate_web_client
from server.web.static import MemoryCache, StaticSite, safe_relative

log = logging.getLogger("reelroom.web")

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable, Callable], Awaitable[None]]
LOOKUP_SECONDS = 1.0  # how long a folder lookup stands (an install swaps the folder under us)


class WebClientHost:
    """``ctx.web``: finds the web client folder (again at most once a second) and serves it. The
    server context closes its compression pool."""

    def __init__(self, data_dir: Path, cache_dir: Path, web_dir: Path | None, host_web: bool,
                 settings: Callable[[], dict[str, Any]]) -> None:
        self.data_dir = data_dir  # <data>/web is one place the client is looked for, and installed to
        self.web_dir = web_dir  # --web-dir / REELROOM_WEB_DIR
        self.host_web = host_web  # False with --no-web / REELROOM_NO_WEB
        self.settings = settings  # the ``web`` configuration section (HostWebClient)
        self.compression = CompressionCache(cache_dir / "web")
        self.memory = MemoryCache()
        self._checked = 0.0
        self._location: WebLocation | None = None
        self._site: StaticSite | None = None

    def hosting_enabled(self) -> bool:
        if not self.host_web:
            return False
        return bool(self.settings().get("HostWebClient", True))

    def location(self) -> WebLocation:
        now = time.monotonic()
        if self._location is None or now - self._checked > LOOKUP_SECONDS:
            self._checked = now
            location = locate_web_client(self.data_dir, self.web_dir,
                                         self.hosting_enabled())
            if location != self._location:
                if location.folder is not None:
                    log.info("Hosting the web app from %s (%s)", location.folder, location.source)
                elif self._location is not None:
                    log.info("Not hosting a web app: %s", location.reason)
                self._site = StaticSite(location.folder, self.compression, self.memory) if location.folder else None
            self._location = location
        return self._location

    def site(self) -> StaticSite | None:
        self.location()
        return self._site

    def forget(self) -> None:
        """Look the folder up again on the next request (after an install)."""
        self._location = None

    def status(self) -> dict[str, Any]:
        from server.web.install import installed_info

        location = self.location()
        return {"Hosted": location.folder is not None, "Folder": str(location.folder or ""),
                "Source": location.source, "Reason": location.reason,
                "HostingEnabled": self.hosting_enabled(),
                "Installed": installed_info(self.data_dir)}

    async def install(self, source: str, sha256: str | None = None) -> dict[str, Any]:
        """Install into <data>/web in a worker thread; WebInstallError becomes a 400."""
        import asyncio

        from server.errors import BadRequestError
        from server.web.install import WebInstallError, install_web

        try:
            result = await asyncio.to_thread(install_web, source, self.data_dir, sha256)
        except WebInstallError as exc:
            raise BadRequestError(str(exc)) from exc
        self.forget()
        self.memory.clear()
        return {"Files": result.files, "Bytes": result.bytes, "Sha256": result.sha256, **self.status()}


class WebHostMiddleware:
    def __init__(self, app: ASGIApp, web: WebClientHost, cors_hosts: Callable[[], list[str] | None],
                 server_name: Callable[[], str], port: int) -> None:
        self.app = app
        self.web = web
        self.cors = cors.CorsPolicy(cors_hosts)  # ServerConfiguration.CorsHosts, read at each use
        self.server_name = server_name  # for the page shown without a web client
        self.port = port  # the bound port, for that page's address
        self.items_lane: Any = None  # server/http/items_lane.py's ItemsLane, set by server/app.py
        self.admission: Any = None  # server/http/admission.py's Admission, set by server/app.py

    def __getattr__(self, name: str) -> Any:  # the wire middleware's attributes (index, routes...)
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin_text = request_origin(scope)
        if scope["method"] == "OPTIONS" and cors.is_preflight(scope, headers := dict(scope.get("headers", ()))):
            extra = self.cors.preflight_headers(
                origin_text or "", headers[b"access-control-request-method"].decode("latin-1"),
                headers.get(b"access-control-request-headers", b"").decode("latin-1"))
            await send({"type": "http.response.start", "status": 204, "headers": extra})
            await send({"type": "http.response.body", "body": b""})
            return
        send = self.with_cors(send, origin_text)

        path: str = scope["path"]
        method = scope["method"]
        if method in ("GET", "HEAD"):
            if path == "/":
                await _redirect(send, "/web/", 302, scope)
                return
            low = path.lower()
            if low == "/web":
                await _redirect(send, "/web/", 301, scope)
                return
            if low.startswith("/web/") and await self._serve_web(scope, send, path[5:]):
                return
        await self.app(scope, receive, send)

    def with_cors(self, send: Callable[..., Any], origin: str | None) -> Callable[..., Any]:
        """``send`` adding the CORS headers of an ordinary (not preflight) response from the
        ``Origin`` header's value (``request_origin``): every response this layer passes on, and the
        Items lane's (server/http/items_lane.py)."""
        wrapped: Callable[..., Any] = cors.with_cors(send, self.cors.response_headers(origin))
        return wrapped

    async def _serve_web(self, scope: Scope, send: Callable, rest: str) -> bool:
        relative = safe_relative(rest)
        if relative is None:
            await _not_found(send, scope)
            return True
        site = self.web.site()
        if site is None:
            if relative in ("", "index.html"):
                from server.web.landing import landing_page

                body = landing_page(self.server_name(), self.port, scope, self.web.location())
                await _send_html(send, scope, body)
                return True
            return False
        if await site.serve(scope, send, relative):
            return True
        if relative.lower() in ("configurationpage", "configurationpages"):
            return False  # Jellyfin operations that live under /web
        await _not_found(send, scope)
        return True


def request_origin(scope: Scope) -> str | None:
    """The request's ``Origin`` header (the last one, as a dict of the headers would keep)."""
    origin: bytes | None = None
    for name, value in scope.get("headers", ()):
        if name == b"origin":
            origin = value
    return origin.decode("latin-1") if origin is not None else None


async def _redirect(send: Callable, location: str, status: int, scope: Scope) -> None:
    query = scope.get("query_string", b"")
    target = location.encode() + (b"?" + query if query else b"")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"location", target), (b"content-length", b"0"), (b"cache-control", b"no-cache")]})
    await send({"type": "http.response.body", "body": b""})


async def _not_found(send: Callable, scope: Scope) -> None:
    body = b'{"type":"about:blank","title":"Not Found","status":404,"detail":"No such file in the web app."}'
    await send({"type": "http.response.start", "status": 404,
                "headers": [(b"content-type", b"application/problem+json; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


async def _send_html(send: Callable, scope: Scope, body: bytes) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-cache"),
                            (b"x-content-type-options", b"nosniff")]})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
