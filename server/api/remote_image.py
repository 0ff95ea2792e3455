"""RemoteImage: images offered by providers for an item, and downloading one of them."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import Paging
from server.context import ServerContext
from server.wire import models as w


@operation("GetRemoteImages")
async def get_remote_images(ctx: ServerContext, itemId: str, page: Paging, type: str | None = None,
                            providerName: str | None = None,
                            includeAllLanguages: bool = False) -> w.RemoteImageResult:
    return await ctx.metadata.remote_images(itemId, type, page.startIndex, page.limit, providerName,
                                            includeAllLanguages)


@operation("GetRemoteImageProviders")
async def get_remote_image_providers(ctx: ServerContext, itemId: str) -> list[w.ImageProviderInfo]:
    return await ctx.metadata.image_providers(itemId)


@operation("DownloadRemoteImage")
async def download_remote_image(ctx: ServerContext, itemId: str, type: str | None = None,
                                imageUrl: str | None = None) -> None:
    await ctx.metadata.download_image(itemId, type, imageUrl)
