"""Branding: login disclaimer, custom CSS, and the splashscreen."""

from __future__ import annotations

import asyncio

from litestar import Request, Response
from litestar.response import File

from server.api.base import operation
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.resources import resources_dir
from server.wire import models as w

_IMAGE_TYPES = {b"\x89PNG": ".png", b"\xff\xd8\xff": ".jpg", b"RIFF": ".webp", b"GIF8": ".gif"}


@operation("GetBrandingOptions")
async def get_branding_options(ctx: ServerContext) -> w.BrandingOptions:
    return ctx.config.get("branding")


def _css(ctx: ServerContext) -> Response:
    css = ctx.config.get("branding").CustomCss or ""
    return Response(content=css.encode(), media_type="text/css; charset=utf-8", status_code=200)


@operation("GetBrandingCss", media_type="text/css")
async def get_branding_css(ctx: ServerContext) -> Response:
    return _css(ctx)


@operation("GetBrandingCss_2", media_type="text/css")
async def get_branding_css_2(ctx: ServerContext) -> Response:
    return _css(ctx)


def _custom_splash(ctx: ServerContext):
    for f in ctx.paths.branding_dir.glob("splashscreen.*"):
        return f
    return None


@operation("GetSplashscreen", media_type="image/*")
async def get_splashscreen(ctx: ServerContext, request: Request) -> File:
    custom = _custom_splash(ctx)
    path = custom or resources_dir() / "branding" / "splashscreen.png"
    if not path.exists():
        raise NotFoundError("No splashscreen is available.")
    media = {".png": "image/png", ".jpg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}[path.suffix]
    return File(path=path, media_type=media, content_disposition_type="inline")


@operation("UploadCustomSplashscreen")
async def upload_custom_splashscreen(ctx: ServerContext, request: Request) -> None:
    raw = await request.body()
    if raw[:4].strip().startswith(b"iVBO") or raw[:4] == b"/9j/":  # base64, as jellyfin-web uploads
        import base64

        try:
            raw = base64.b64decode(raw, validate=False)
        except ValueError:
            raise BadRequestError("The image is not valid base64.") from None
    suffix = next((ext for magic, ext in _IMAGE_TYPES.items() if raw.startswith(magic)), None)
    if suffix is None:
        raise BadRequestError("The splashscreen must be a PNG, JPEG, WebP or GIF image.")

    def save() -> None:
        ctx.paths.branding_dir.mkdir(parents=True, exist_ok=True)
        for old in ctx.paths.branding_dir.glob("splashscreen.*"):
            old.unlink()
        (ctx.paths.branding_dir / f"splashscreen{suffix}").write_bytes(raw)

    await asyncio.to_thread(save)


@operation("DeleteCustomSplashscreen")
async def delete_custom_splashscreen(ctx: ServerContext) -> None:
    custom = _custom_splash(ctx)
    if custom is not None:
        await asyncio.to_thread(custom.unlink)
