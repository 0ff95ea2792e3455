"""Library scanning: refresh everything, report changed paths, refresh one item, and the
options a library may take."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation
from server.artwork.service import FRAME_TYPES, SCREEN_GRABBER
from server.context import ServerContext
from server.library.scan.virtual_folders import normalize_id
from server.wire import models as w


@operation("RefreshLibrary")
async def refresh_library(ctx: ServerContext) -> None:
    ctx.scanner.request_scan(None)


@operation("GetPhysicalPaths")
async def get_physical_paths(ctx: ServerContext) -> list[str]:
    return await ctx.library.physical_paths()


async def _scan_type(ctx: ServerContext, collection_type: str) -> None:
    for info in await ctx.library.libraries():
        if info.collection_type == collection_type:
            ctx.scanner.request_scan(info.id)


@operation("PostAddedMovies")
async def post_added_movies(ctx: ServerContext, tmdbId: str | None = None, imdbId: str | None = None) -> None:
    await _scan_type(ctx, "movies")


@operation("PostUpdatedMovies")
async def post_updated_movies(ctx: ServerContext, tmdbId: str | None = None, imdbId: str | None = None) -> None:
    await _scan_type(ctx, "movies")


@operation("PostAddedSeries")
async def post_added_series(ctx: ServerContext, tvdbId: str | None = None) -> None:
    await _scan_type(ctx, "tvshows")


@operation("PostUpdatedSeries")
async def post_updated_series(ctx: ServerContext, tvdbId: str | None = None) -> None:
    await _scan_type(ctx, "tvshows")


@operation("PostUpdatedMedia")
async def post_updated_media(ctx: ServerContext, data: JSONBody[w.MediaUpdateInfoDto]) -> None:
    paths = [u.Path for u in data.Updates or [] if u.Path]
    ctx.scanner.schedule_paths(await ctx.library.libraries(), paths)


@operation("RefreshItem")
async def refresh_item(ctx: ServerContext, itemId: str, metadataRefreshMode: str | None = None,
                       imageRefreshMode: str | None = None, replaceAllMetadata: bool | None = None,
                       replaceAllImages: bool | None = None, regenerateTrickplay: bool | None = None) -> None:
    await ctx.scanner.refresh_item(normalize_id(itemId))


def _fetchers(*names: str) -> list[w.LibraryOptionInfoDto]:
    return [w.LibraryOptionInfoDto(Name=n, DefaultEnabled=True) for n in names]


_TYPE_OPTIONS = {
    "movies": ("Movie", ("Primary", "Backdrop", "Logo", "Thumb", "Banner", "Disc", "Art")),
    "tvshows": ("Series", ("Primary", "Backdrop", "Logo", "Thumb", "Banner", "Art")),
    "music": ("MusicAlbum", ("Primary", "Disc")),
    "musicvideos": ("MusicVideo", ("Primary", "Backdrop", "Thumb")),
    "homevideos": ("Video", ("Primary", "Thumb")),
    "books": ("Book", ("Primary",)),
    "photos": ("Photo", ("Primary",)),
}
_EXTRA_TYPES = {"tvshows": [("Season", ("Primary", "Backdrop", "Thumb")), ("Episode", ("Primary",))],
                "music": [("MusicArtist", ("Primary", "Backdrop", "Logo")), ("Audio", ("Primary",))]}


def _metadata_fetchers(ctx: ServerContext, item_type: str) -> list[str]:
    """The active metadata providers (plugins) that know items of ``item_type``."""
    out = []
    for p in ctx.metadata.providers:
        kinds = p.metadata_kinds() if hasattr(p, "metadata_kinds") else ()
        if "metadata" in getattr(p, "provider_kinds", ("metadata",)) and (
                p.can_search(item_type) or item_type in kinds or p.external_ids(item_type)):
            out.append(p.name)
    return out


@operation("GetLibraryOptionsInfo")
async def get_library_options_info(ctx: ServerContext, libraryContentType: str | None = None,
                                   isNewLibrary: bool | None = None) -> w.LibraryOptionsResultDto:
    kinds = [libraryContentType] if libraryContentType in _TYPE_OPTIONS else list(_TYPE_OPTIONS)
    type_options: list[w.LibraryTypeOptionsDto] = []
    for kind in kinds:
        for item_type, images in [_TYPE_OPTIONS[kind], *_EXTRA_TYPES.get(kind, [])]:
            image_fetchers = [p.name for p in ctx.metadata.providers if p.image_types(item_type)]
            type_options.append(w.LibraryTypeOptionsDto(
                Type=item_type, MetadataFetchers=_fetchers(*_metadata_fetchers(ctx, item_type)),
                ImageFetchers=_fetchers(*image_fetchers, *((SCREEN_GRABBER,) if item_type in FRAME_TYPES else ())),
                SupportedImageTypes=list(images), DefaultImageOptions=[]))
    return w.LibraryOptionsResultDto(
        MetadataSavers=[w.LibraryOptionInfoDto(Name="Nfo", DefaultEnabled=False)],
        MetadataReaders=_fetchers("Nfo"),
        SubtitleFetchers=_fetchers(*(p.name for p in ctx.plugins.providers("subtitles"))),
        LyricFetchers=_fetchers(*(p.name for p in ctx.plugins.providers("lyrics"))),
        TypeOptions=type_options)
