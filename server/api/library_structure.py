"""LibraryStructure: virtual folders (libraries), their paths and options."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation
from server.context import ServerContext
from server.wire import models as w


def _refresh(ctx: ServerContext, library_id: str, refresh: bool | None) -> None:
    if refresh:
        ctx.scanner.request_scan(library_id)


@operation("GetVirtualFolders")
async def get_virtual_folders(ctx: ServerContext) -> list[w.VirtualFolderInfo]:
    with_image = await ctx.library.with_primary_image()
    return [ctx.library.wire(info, ctx.scanner.progress.get(info.id), info.id in with_image)
            for info in await ctx.library.libraries()]


@operation("AddVirtualFolder")
async def add_virtual_folder(ctx: ServerContext, name: str | None = None, collectionType: str | None = None,
                             paths: list[str] | None = None, refreshLibrary: bool | None = None,
                             data: JSONBody[w.AddVirtualFolderDto | None] = None) -> None:
    info = await ctx.library.add(name, collectionType, paths, data.LibraryOptions if data else None)
    # Scanned even without refreshLibrary (the setup wizard sends false): the watcher only sees
    # changes, so a new library would otherwise stay empty until the next scheduled scan.
    _refresh(ctx, info.id, True)
    if ctx.scanner.watcher is not None:
        await ctx.scanner.watcher.refresh()


@operation("RemoveVirtualFolder")
async def remove_virtual_folder(ctx: ServerContext, name: str | None = None, refreshLibrary: bool | None = None) -> None:
    await ctx.library.remove(name)
    if ctx.scanner.watcher is not None:
        await ctx.scanner.watcher.refresh()


@operation("RenameVirtualFolder")
async def rename_virtual_folder(ctx: ServerContext, name: str | None = None, newName: str | None = None,
                                refreshLibrary: bool | None = None) -> None:
    info = await ctx.library.rename(name, newName)
    _refresh(ctx, info.id, refreshLibrary)


@operation("AddMediaPath")
async def add_media_path(ctx: ServerContext, data: JSONBody[w.MediaPathDto], refreshLibrary: bool | None = None) -> None:
    path = data.Path or (data.PathInfo.Path if data.PathInfo else None)
    info, _ = await ctx.library.add_path(data.Name, path)
    _refresh(ctx, info.id, True)  # as for a new library
    if ctx.scanner.watcher is not None:
        await ctx.scanner.watcher.refresh()


@operation("UpdateMediaPath")
async def update_media_path(ctx: ServerContext, data: JSONBody[w.UpdateMediaPathRequestDto]) -> None:
    await ctx.library.update_path(data.Name, data.PathInfo)


@operation("RemoveMediaPath")
async def remove_media_path(ctx: ServerContext, name: str | None = None, path: str | None = None,
                            refreshLibrary: bool | None = None) -> None:
    info, _ = await ctx.library.remove_path(name, path)
    _refresh(ctx, info.id, refreshLibrary)
    if ctx.scanner.watcher is not None:
        await ctx.scanner.watcher.refresh()


@operation("UpdateLibraryOptions")
async def update_library_options(ctx: ServerContext, data: JSONBody[w.UpdateLibraryOptionsDto]) -> None:
    await ctx.library.update_options(data.Id, data.LibraryOptions)
    if ctx.scanner.watcher is not None:
        await ctx.scanner.watcher.refresh()
