"""Artists: the artists and album artists of the music in scope, as by-name items."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import name_listing
from server.api.params import DtoOptions, NameFilters, Paging, guids, split_names
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.library.catalog.query import ItemQuery
from server.wire import models as w

_MUSIC = ("Audio", "MusicAlbum", "MusicVideo")


def _scope(minCommunityRating, filters, isFavorite, mediaTypes, genres, genreIds, officialRatings, tags, years,
           person, personIds, personTypes, studios, studioIds) -> ItemQuery:
    return ItemQuery(min_community_rating=minCommunityRating, filters=list(filters or ()),
                     media_types=list(mediaTypes or ()), genres=split_names(genres),
                     genre_ids=guids(genreIds, "genreIds"), official_ratings=split_names(officialRatings),
                     tags=split_names(tags), years=list(years or ()), person=person or None,
                     person_ids=guids(personIds, "personIds"), person_types=split_names(personTypes),
                     studios=split_names(studios), studio_ids=guids(studioIds, "studioIds"))


async def _artists(ctx: ServerContext, auth: AuthInfo | None, kind: str, dto: DtoOptions, page: Paging,
                   names: NameFilters, userId: str | None, scope: ItemQuery) -> w.BaseItemDtoQueryResult:
    favorite = None
    if scope.filters and "IsFavorite" in scope.filters:
        favorite = True
        scope.filters = [f for f in scope.filters if f != "IsFavorite"]
    return await name_listing(ctx, auth, kind, dto, page, names, userId=userId, isFavorite=favorite, scope=scope,
                              default_types=_MUSIC)


@operation("GetArtists")
async def get_artists(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging, names: NameFilters,
                      minCommunityRating: float | None = None, filters: list[str] | None = None,
                      mediaTypes: list[str] | None = None, genres: list[str] | None = None,
                      genreIds: list[str] | None = None, officialRatings: list[str] | None = None,
                      tags: list[str] | None = None, years: list[int] | None = None, person: str | None = None,
                      personIds: list[str] | None = None, personTypes: list[str] | None = None,
                      studios: list[str] | None = None, studioIds: list[str] | None = None,
                      userId: str | None = None, sortBy: list[str] | None = None) -> w.BaseItemDtoQueryResult:
    scope = _scope(minCommunityRating, filters, None, mediaTypes, genres, genreIds, officialRatings, tags, years,
                   person, personIds, personTypes, studios, studioIds)
    return await _artists(ctx, auth, "MusicArtist", dto, page, names, userId, scope)


@operation("GetAlbumArtists")
async def get_album_artists(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging,
                            names: NameFilters, minCommunityRating: float | None = None,
                            filters: list[str] | None = None, mediaTypes: list[str] | None = None,
                            genres: list[str] | None = None, genreIds: list[str] | None = None,
                            officialRatings: list[str] | None = None, tags: list[str] | None = None,
                            years: list[int] | None = None, person: str | None = None,
                            personIds: list[str] | None = None, personTypes: list[str] | None = None,
                            studios: list[str] | None = None, studioIds: list[str] | None = None,
                            userId: str | None = None, sortBy: list[str] | None = None) -> w.BaseItemDtoQueryResult:
    scope = _scope(minCommunityRating, filters, None, mediaTypes, genres, genreIds, officialRatings, tags, years,
                   person, personIds, personTypes, studios, studioIds)
    return await _artists(ctx, auth, "AlbumArtist", dto, page, names, userId, scope)


@operation("GetArtistByName")
async def get_artist_by_name(ctx: ServerContext, auth: AuthInfo | None, name: str,
                             userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("MusicArtist", name, viewer)
