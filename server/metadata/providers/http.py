"""HTTP for the providers: one lazily created httpx client per provider, JSON requests whose
failures all become ProviderError, and request spacing for services with a rate limit."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from server.metadata.providers.base import ProviderError, ProviderNotFoundError
from server.version import PRODUCT, reelroom_version

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("reelroom.metadata")


def user_agent() -> str:
    return f"{PRODUCT}/{reelroom_version()} ( https://example.invalid )"


class RequestSpacing:
    """Runs requests one at a time, each starting at least ``interval`` seconds after the
    previous one finished, so the remote side never sees two closer than ``interval``."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._lock = asyncio.Lock()
        self._next_start = 0.0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._lock:
            delay = self._next_start - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                yield
            finally:
                self._next_start = time.monotonic() + self.interval


class ProviderHttp:
    """A provider's HTTP client. Created on first use so it belongs to the running loop."""

    def __init__(self, service: str, spacing: RequestSpacing | None = None) -> None:
        self.service = service
        self.spacing = spacing
        self._client: httpx.AsyncClient | None = None

    def _get_client(self) -> httpx.AsyncClient:
        import httpx  # loaded when first needed, not at start-up
        if self._client is None:
            self._client = httpx.AsyncClient(headers={"User-Agent": user_agent(), "Accept": "application/json"},
                                             follow_redirects=True)
        return self._client

    async def get_json(self, url: str, params: dict[str, Any] | None = None, *, timeout: float = 10.0,
                       headers: dict[str, str] | None = None) -> Any:
        """GET ``url`` and decode its JSON; every failure is a ProviderError (404 a
        ProviderNotFoundError) that names the service."""
        import httpx
        client = self._get_client()
        try:
            if self.spacing is None:
                response = await client.get(url, params=params, headers=headers, timeout=httpx.Timeout(timeout))
            else:
                async with self.spacing.slot():
                    response = await client.get(url, params=params, headers=headers,
                                                timeout=httpx.Timeout(timeout))
        except httpx.TimeoutException as exc:
            raise ProviderError(f"{self.service} did not answer within {timeout:g} s") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise ProviderError(f"{self.service} is unreachable: {exc.__class__.__name__}: {exc}") from exc
        if response.status_code == 404:
            raise ProviderNotFoundError(f"{self.service} has no such record ({response.url.path})")
        if response.status_code != 200:
            error = ProviderError(f"{self.service} answered HTTP {response.status_code} for {response.url.path}")
            error.status = response.status_code
            raise error
        try:
            return response.json()
        except ValueError as exc:
            raise ProviderError(f"{self.service} sent a reply that is not JSON") from exc

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


async def fetch_bytes(client: httpx.AsyncClient, url: str, *, max_bytes: int, timeout: float) -> tuple[bytes, str]:
    """Download ``url`` (at most ``max_bytes``): (content, content type). Raises ProviderError
    (ProviderNotFoundError for 404/410)."""
    import httpx
    try:
        async with client.stream("GET", url, timeout=httpx.Timeout(timeout)) as response:
            if response.status_code in (404, 410):
                raise ProviderNotFoundError(f"{url} was not found (HTTP {response.status_code})")
            if response.status_code != 200:
                raise ProviderError(f"{url} answered HTTP {response.status_code}")
            chunks: list[bytes] = []
            total = 0
            async for chunk in response.aiter_bytes():
                total += len(chunk)
                if total > max_bytes:
                    raise ProviderError(f"{url} is larger than {max_bytes // (1024 * 1024)} MB")
                chunks.append(chunk)
            return b"".join(chunks), response.headers.get("content-type", "")
    except httpx.TimeoutException as exc:
        raise ProviderError(f"{url} did not answer within {timeout:g} s") from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise ProviderError(f"{url} is unreachable: {exc.__class__.__name__}") from exc
