"""Artists: the artists and album artists of the music in scope, as by-name items."""

from __future__ import annotations

from server.api.base import operation
from server.api.items import guids, name_listing, split_names
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


async def _artists(ctx: ServerContext, auth: AuthInfo | None, kind: str, p: dict) -> w.BaseItemDtoQueryResult:
    scope = _scope(p["minCommunityRating"], p["filters"], None, p["mediaTypes"], p["genres"], p["genreIds"],
                   p["officialRatings"], p["tags"], p["years"], p["person"], p["personIds"], p["personTypes"],
                   p["studios"], p["studioIds"])
    favorite = p["isFavorite"]
    if p["filters"] and "IsFavorite" in p["filters"]:
        favorite = True
        scope.filters = [f for f in scope.filters if f != "IsFavorite"]
    return await name_listing(
        ctx, auth, kind, userId=p["userId"], startIndex=p["startIndex"], limit=p["limit"],
        searchTerm=p["searchTerm"], parentId=p["parentId"], fields=p["fields"],
        excludeItemTypes=p["excludeItemTypes"], includeItemTypes=p["includeItemTypes"], isFavorite=favorite,
        enableUserData=p["enableUserData"], imageTypeLimit=p["imageTypeLimit"],
        enableImageTypes=p["enableImageTypes"], nameStartsWithOrGreater=p["nameStartsWithOrGreater"],
        nameStartsWith=p["nameStartsWith"], nameLessThan=p["nameLessThan"], sortOrder=p["sortOrder"],
        enableImages=p["enableImages"], enableTotalRecordCount=p["enableTotalRecordCount"], scope=scope,
        default_types=_MUSIC)


@operation("GetArtists")
async def get_artists(ctx: ServerContext, auth: AuthInfo | None, minCommunityRating: float | None = None,
                      startIndex: int | None = None, limit: int | None = None, searchTerm: str | None = None,
                      parentId: str | None = None, fields: list[str] | None = None,
                      excludeItemTypes: list[str] | None = None, includeItemTypes: list[str] | None = None,
                      filters: list[str] | None = None, isFavorite: bool | None = None,
                      mediaTypes: list[str] | None = None, genres: list[str] | None = None,
                      genreIds: list[str] | None = None, officialRatings: list[str] | None = None,
                      tags: list[str] | None = None, years: list[int] | None = None,
                      enableUserData: bool | None = None, imageTypeLimit: int | None = None,
                      enableImageTypes: list[str] | None = None, person: str | None = None,
                      personIds: list[str] | None = None, personTypes: list[str] | None = None,
                      studios: list[str] | None = None, studioIds: list[str] | None = None,
                      userId: str | None = None, nameStartsWithOrGreater: str | None = None,
                      nameStartsWith: str | None = None, nameLessThan: str | None = None,
                      sortBy: list[str] | None = None, sortOrder: list[str] | None = None,
                      enableImages: bool | None = None,
                      enableTotalRecordCount: bool | None = None) -> w.BaseItemDtoQueryResult:
    return await _artists(ctx, auth, "MusicArtist", locals())


@operation("GetAlbumArtists")
async def get_album_artists(ctx: ServerContext, auth: AuthInfo | None, minCommunityRating: float | None = None,
                            startIndex: int | None = None, limit: int | None = None, searchTerm: str | None = None,
                            parentId: str | None = None, fields: list[str] | None = None,
                            excludeItemTypes: list[str] | None = None, includeItemTypes: list[str] | None = None,
                            filters: list[str] | None = None, isFavorite: bool | None = None,
                            mediaTypes: list[str] | None = None, genres: list[str] | None = None,
                            genreIds: list[str] | None = None, officialRatings: list[str] | None = None,
                            tags: list[str] | None = None, years: list[int] | None = None,
                            enableUserData: bool | None = None, imageTypeLimit: int | None = None,
                            enableImageTypes: list[str] | None = None, person: str | None = None,
                            personIds: list[str] | None = None, personTypes: list[str] | None = None,
                            studios: list[str] | None = None, studioIds: list[str] | None = None,
                            userId: str | None = None, nameStartsWithOrGreater: str | None = None,
                            nameStartsWith: str | None = None, nameLessThan: str | None = None,
                            sortBy: list[str] | None = None, sortOrder: list[str] | None = None,
                            enableImages: bool | None = None,
                            enableTotalRecordCount: bool | None = None) -> w.BaseItemDtoQueryResult:
    return await _artists(ctx, auth, "AlbumArtist", locals())


@operation("GetArtistByName")
async def get_artist_by_name(ctx: ServerContext, auth: AuthInfo | None, name: str,
                             userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.name("MusicArtist", name, viewer)
