"""Branding (``ctx.branding``): the login disclaimer and custom CSS (the ``branding``
configuration section) and the splash screen: an uploaded image in ``<config>/branding``
(``splashscreen.<ext>``), else the one Reelroom ships. File work runs off the event loop; the only
files read or written are that folder's ``splashscreen.*`` and the shipped default."""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.errors import BadRequestError, NotFoundError

IMAGE_TYPES = {b"\x89PNG": ".png", b"\xff\xd8\xff": ".jpg", b"RIFF": ".webp", b"GIF8": ".gif"}
MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}
SPLASH_STEM = "splashscreen"


@dataclass(frozen=True)
class SplashImage:
    path: Path
    media_type: str


class BrandingService:
    """``config``: the configuration store; ``folder``: where an uploaded splash screen lives;
    ``default_splash``: the shipped image."""

    def __init__(self, config: Any, folder: Path, default_splash: Path) -> None:
        self._config = config
        self.folder = folder
        self.default_splash = default_splash

    def options(self) -> Any:
        return self._config.get("branding")

    def css(self) -> str:
        return self.options().CustomCss or ""

    def _custom(self) -> Path | None:
        """The uploaded splash screen (blocking)."""
        for path in sorted(self.folder.glob(f"{SPLASH_STEM}.*")):
            if path.suffix in MEDIA_TYPES and path.is_file():
                return path
        return None

    async def splash(self) -> SplashImage:
        """The splash screen to show: the uploaded one, else the default; 404 without either."""
        def find() -> Path | None:
            path = self._custom() or self.default_splash
            return path if path.is_file() and path.suffix in MEDIA_TYPES else None

        path = await asyncio.to_thread(find)
        if path is None:
            raise NotFoundError("No splashscreen is available.")
        return SplashImage(path, MEDIA_TYPES[path.suffix])

    async def save_splash(self, raw: bytes) -> None:
        """Store an uploaded splash screen (PNG, JPEG, WebP or GIF; base64 as jellyfin-web sends
        it is decoded first), replacing the previous one. The new file is written beside the old
        one and renamed into place, so a failed write keeps the old image."""
        if raw[:4].strip().startswith(b"iVBO") or raw[:4] == b"/9j/":  # base64, as jellyfin-web uploads
            try:
                raw = base64.b64decode(raw, validate=False)
            except (ValueError, binascii.Error):
                raise BadRequestError("The image is not valid base64.") from None
        suffix = next((ext for magic, ext in IMAGE_TYPES.items() if raw.startswith(magic)), None)
        if suffix is None:
            raise BadRequestError("The splashscreen must be a PNG, JPEG, WebP or GIF image.")

        def save() -> None:
            self.folder.mkdir(parents=True, exist_ok=True)
            target = self.folder / f"{SPLASH_STEM}{suffix}"
            tmp = self.folder / f".{SPLASH_STEM}{suffix}.tmp"
            tmp.write_bytes(raw)
            for old in self.folder.glob(f"{SPLASH_STEM}.*"):
                if old != target:
                    old.unlink(missing_ok=True)
            os.replace(tmp, target)

        await asyncio.to_thread(save)

    async def delete_splash(self) -> None:
        """Remove the uploaded splash screen (the default shows again)."""
        def delete() -> None:
            for old in self.folder.glob(f"{SPLASH_STEM}.*"):
                old.unlink(missing_ok=True)

        await asyncio.to_thread(delete)
