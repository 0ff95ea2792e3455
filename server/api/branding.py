"""Branding: login disclaimer, custom CSS, and the splashscreen (``ctx.branding``,
server/system/branding.py)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.response import File

from server.api.base import operation
from server.context import ServerContext
from server.wire import models as w


@operation("GetBrandingOptions")
async def get_branding_options(ctx: ServerContext) -> w.BrandingOptions:
    return ctx.branding.options()


def _css(ctx: ServerContext) -> Response[Any]:
    return Response(content=ctx.branding.css().encode(), media_type="text/css; charset=utf-8", status_code=200)


@operation("GetBrandingCss", media_type="text/css")
async def get_branding_css(ctx: ServerContext) -> Response[Any]:
    return _css(ctx)


@operation("GetBrandingCss_2", media_type="text/css")
async def get_branding_css_2(ctx: ServerContext) -> Response[Any]:
    return _css(ctx)


@operation("GetSplashscreen", media_type="image/*")
async def get_splashscreen(ctx: ServerContext, request: Request[Any, Any, Any]) -> File:
    splash = await ctx.branding.splash()
    return File(path=splash.path, media_type=splash.media_type, content_disposition_type="inline")


@operation("UploadCustomSplashscreen")
async def upload_custom_splashscreen(ctx: ServerContext, request: Request[Any, Any, Any]) -> None:
    await ctx.branding.save_splash(await request.body())


@operation("DeleteCustomSplashscreen")
async def delete_custom_splashscreen(ctx: ServerContext) -> None:
    await ctx.branding.delete_splash()
