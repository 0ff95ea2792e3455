"""ItemLookup: remote search (identify), applying a chosen result, external id kinds."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation
from server.context import ServerContext
from server.wire import models as w


@operation("GetMovieRemoteSearchResults")
async def get_movie_remote_search_results(ctx: ServerContext,
                                          data: JSONBody[w.MovieInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("Movie", data)


@operation("GetSeriesRemoteSearchResults")
async def get_series_remote_search_results(ctx: ServerContext,
                                           data: JSONBody[w.SeriesInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("Series", data)


@operation("GetPersonRemoteSearchResults")
async def get_person_remote_search_results(ctx: ServerContext,
                                           data: JSONBody[w.PersonLookupInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("Person", data)


@operation("GetMusicAlbumRemoteSearchResults")
async def get_music_album_remote_search_results(ctx: ServerContext,
                                                data: JSONBody[w.AlbumInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("MusicAlbum", data)


@operation("GetMusicArtistRemoteSearchResults")
async def get_music_artist_remote_search_results(ctx: ServerContext,
                                                 data: JSONBody[w.ArtistInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("MusicArtist", data)


@operation("GetMusicVideoRemoteSearchResults")
async def get_music_video_remote_search_results(
        ctx: ServerContext, data: JSONBody[w.MusicVideoInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("MusicVideo", data)


@operation("GetBookRemoteSearchResults")
async def get_book_remote_search_results(ctx: ServerContext,
                                         data: JSONBody[w.BookInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("Book", data)


@operation("GetBoxSetRemoteSearchResults")
async def get_box_set_remote_search_results(ctx: ServerContext,
                                            data: JSONBody[w.BoxSetInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("BoxSet", data)


@operation("GetTrailerRemoteSearchResults")
async def get_trailer_remote_search_results(ctx: ServerContext,
                                            data: JSONBody[w.TrailerInfoRemoteSearchQuery]) -> list[w.RemoteSearchResult]:
    return await ctx.metadata.search("Trailer", data)


@operation("GetExternalIdInfos")
async def get_external_id_infos(ctx: ServerContext, itemId: str) -> list[w.ExternalIdInfo]:
    return await ctx.metadata.external_id_infos(itemId)


@operation("ApplySearchCriteria")
async def apply_search_criteria(ctx: ServerContext, itemId: str, data: JSONBody[w.RemoteSearchResult],
                                replaceAllImages: bool = True) -> None:
    await ctx.metadata.apply(itemId, data, replaceAllImages)
