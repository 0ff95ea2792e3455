"""Genres and MusicGenres: genres of the items in scope, as by-name items."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import guid_or_none, name_listing
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.library.catalog.by_name import MUSIC_TYPES
from server.wire import models as w

_MUSIC_DEFAULT = ("Audio", "MusicAlbum")


@operation("GetGenres")
async def get_genres(ctx: ServerContext, auth: AuthInfo | None, startIndex: int | None = None,
                     limit: int | None = None, searchTerm: str | None = None, parentId: str | None = None,
                     fields: list[str] | None = None, excludeItemTypes: list[str] | None = None,
                     includeItemTypes: list[str] | None = None, isFavorite: bool | None = None,
                     imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
                     userId: str | None = None, nameStartsWithOrGreater: str | None = None,
                     nameStartsWith: str | None = None, nameLessThan: str | None = None,
                     sortBy: list[str] | None = None, sortOrder: list[str] | None = None,
                     enableImages: bool | None = None,
                     enableTotalRecordCount: bool | None = None) -> w.BaseItemDtoQueryResult:
    # Under a music library (or for music types) genres are music genres, as in Jellyfin.
    parent = guid_or_none(parentId, "parentId")
    music = bool(includeItemTypes) and all(t in MUSIC_TYPES for t in includeItemTypes or ())
    if parent and not music:
        music = await ctx.items.collection_type_of(parent) == "music"
    return await name_listing(
        ctx, auth, "MusicGenre" if music else "Genre", userId=userId, startIndex=startIndex, limit=limit,
        searchTerm=searchTerm, parentId=parentId, fields=fields, excludeItemTypes=excludeItemTypes,
        includeItemTypes=includeItemTypes, isFavorite=isFavorite, imageTypeLimit=imageTypeLimit,
        enableImageTypes=enableImageTypes, nameStartsWithOrGreater=nameStartsWithOrGreater,
        nameStartsWith=nameStartsWith, nameLessThan=nameLessThan, sortOrder=sortOrder, enableImages=enableImages,
        enableTotalRecordCount=enableTotalRecordCount, excluded_types=() if music else ("Audio", "MusicAlbum"))


@operation("GetGenre")
async def get_genre(ctx: ServerContext, auth: AuthInfo | None, genreName: str,
                    userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("Genre", genreName, viewer)


@operation("GetMusicGenres")
async def get_music_genres(ctx: ServerContext, auth: AuthInfo | None, startIndex: int | None = None,
                           limit: int | None = None, searchTerm: str | None = None, parentId: str | None = None,
                           fields: list[str] | None = None, excludeItemTypes: list[str] | None = None,
                           includeItemTypes: list[str] | None = None, isFavorite: bool | None = None,
                           imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
                           userId: str | None = None, nameStartsWithOrGreater: str | None = None,
                           nameStartsWith: str | None = None, nameLessThan: str | None = None,
                           sortBy: list[str] | None = None, sortOrder: list[str] | None = None,
                           enableImages: bool | None = None,
                           enableTotalRecordCount: bool | None = None) -> w.BaseItemDtoQueryResult:
    return await name_listing(
        ctx, auth, "MusicGenre", userId=userId, startIndex=startIndex, limit=limit, searchTerm=searchTerm,
        parentId=parentId, fields=fields, excludeItemTypes=excludeItemTypes, includeItemTypes=includeItemTypes,
        isFavorite=isFavorite, imageTypeLimit=imageTypeLimit, enableImageTypes=enableImageTypes,
        nameStartsWithOrGreater=nameStartsWithOrGreater, nameStartsWith=nameStartsWith, nameLessThan=nameLessThan,
        sortOrder=sortOrder, enableImages=enableImages, enableTotalRecordCount=enableTotalRecordCount,
        default_types=_MUSIC_DEFAULT)


@operation("GetMusicGenre")
async def get_music_genre(ctx: ServerContext, auth: AuthInfo | None, genreName: str,
                          userId: str | None = None) -> w.BaseItemDto:
    from server.library.catalog.query import ItemQuery

    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("MusicGenre", genreName, viewer,
                                ItemQuery(recursive=True, include_types=list(_MUSIC_DEFAULT)))
