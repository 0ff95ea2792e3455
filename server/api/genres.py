"""Genres and MusicGenres: genres of the items in scope, as by-name items."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import name_listing
from server.api.params import DtoOptions, NameFilters, Paging, guid_or_none
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.library.catalog.by_name import MUSIC_TYPES
from server.wire import models as w

_MUSIC_DEFAULT = ("Audio", "MusicAlbum")


@operation("GetGenres")
async def get_genres(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging, names: NameFilters,
                     userId: str | None = None, sortBy: list[str] | None = None) -> w.BaseItemDtoQueryResult:
    # Under a music library (or for music types) genres are music genres, as in Jellyfin.
    parent = guid_or_none(names.parentId, "parentId")
    music = bool(names.includeItemTypes) and all(t in MUSIC_TYPES for t in names.includeItemTypes or ())
    if parent and not music:
        music = await ctx.items.collection_type_of(parent) == "music"
    return await name_listing(ctx, auth, "MusicGenre" if music else "Genre", dto, page, names, userId=userId,
                              excluded_types=() if music else ("Audio", "MusicAlbum"))


@operation("GetGenre")
async def get_genre(ctx: ServerContext, auth: AuthInfo | None, genreName: str,
                    userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("Genre", genreName, viewer)


@operation("GetMusicGenres")
async def get_music_genres(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging,
                           names: NameFilters, userId: str | None = None,
                           sortBy: list[str] | None = None) -> w.BaseItemDtoQueryResult:
    return await name_listing(ctx, auth, "MusicGenre", dto, page, names, userId=userId,
                              default_types=_MUSIC_DEFAULT)


@operation("GetMusicGenre")
async def get_music_genre(ctx: ServerContext, auth: AuthInfo | None, genreName: str,
                          userId: str | None = None) -> w.BaseItemDto:
    from server.library.catalog.query import ItemQuery

    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("MusicGenre", genreName, viewer,
                                ItemQuery(recursive=True, include_types=list(_MUSIC_DEFAULT)))
