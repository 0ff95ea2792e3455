"""Environment: folder browsing for the admin's folder picker (allowed roots only)."""

from __future__ import annotations

import asyncio

import msgspec
from litestar import Response
from litestar.params import JSONBody

from server.api.base import operation
from server.context import ServerContext
from server.wire import models as w


@operation("GetDefaultDirectoryBrowser")
async def get_default_directory_browser() -> w.DefaultDirectoryBrowserInfoDto:
    return w.DefaultDirectoryBrowserInfoDto(Path=None)


@operation("GetDirectoryContents")
async def get_directory_contents(ctx: ServerContext, path: str | None = None, includeFiles: bool = False,
                                 includeDirectories: bool = False) -> list[w.FileSystemEntryInfo]:
    return await asyncio.to_thread(ctx.filesystem.contents, path, includeFiles, includeDirectories or not includeFiles)


@operation("GetDrives")
async def get_drives(ctx: ServerContext) -> list[w.FileSystemEntryInfo]:
    return await asyncio.to_thread(ctx.filesystem.drives)


@operation("GetNetworkShares")
async def get_network_shares() -> list[w.FileSystemEntryInfo]:
    return []


@operation("GetParentPath")
async def get_parent_path(ctx: ServerContext, path: str | None = None) -> Response[str | None]:
    parent = await asyncio.to_thread(ctx.filesystem.parent, path)
    if parent is None:
        # A root has no parent: ASP.NET answers a null string with 204 No Content.
        return Response(content=None, status_code=204)
    # A JSON string, as Jellyfin's JSON formatter writes it (jellyfin-web parses it).
    return Response(content=msgspec.json.encode(parent), status_code=200, media_type="application/json")


@operation("ValidatePath")
async def validate_path(ctx: ServerContext, data: JSONBody[w.ValidatePathDto]) -> None:
    await asyncio.to_thread(ctx.filesystem.validate, data.Path, data.IsFile, bool(data.ValidateWritable))
