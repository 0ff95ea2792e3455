"""Spec operations Reelroom does not implement yet: the one list of them.

Each answers 501 with a ProblemDetails body (after the same authorization as a real handler),
so no path of the spec is ever a 404. Implementing an operation means removing its line here;
tests/api/test_contract.py checks that every spec operation is either handled or listed."""

from __future__ import annotations

from litestar.handlers import BaseRouteHandler

from server.api.base import operation
from server.errors import NotImplementedYetError

NOT_IMPLEMENTED: frozenset[str] = frozenset({
    # Artists

    # Audio

    # Collection
    "AddToCollection",
    "CreateCollection",
    "RemoveFromCollection",

    # DynamicHls

    # Filter

    # Genres

    # HlsSegment

    # InstantMix
    "GetInstantMixFromAlbum",
    "GetInstantMixFromArtists",
    "GetInstantMixFromArtists2",
    "GetInstantMixFromItem",
    "GetInstantMixFromMusicGenreById",
    "GetInstantMixFromMusicGenreByName",
    "GetInstantMixFromPlaylist",
    "GetInstantMixFromSong",

    # ItemRefresh

    # ItemUpdate
    "GetMetadataEditorInfo",
    "UpdateItem",
    "UpdateItemContentType",

    # Items

    # Library
    "DeleteItem",
    "DeleteItems",
    "GetCriticReviews",
    "GetSimilarAlbums",
    "GetSimilarArtists",
    "GetSimilarItems",
    "GetSimilarMovies",
    "GetSimilarShows",
    "GetSimilarTrailers",
    "GetThemeMedia",
    "GetThemeSongs",
    "GetThemeVideos",

    # LiveTv
    "GetSchedulesDirectCountries",

    # Lyrics
    "DeleteLyrics",
    "DownloadRemoteLyrics",
    "GetLyrics",
    "GetRemoteLyrics",
    "SearchRemoteLyrics",
    "UploadLyrics",

    # MediaInfo

    # MediaSegments
    "GetItemSegments",

    # Movies
    "GetMovieRecommendations",

    # MusicGenres

    # Persons

    # Playlists
    "AddItemToPlaylist",
    "CreatePlaylist",
    "GetPlaylist",
    "GetPlaylistItems",
    "GetPlaylistUser",
    "GetPlaylistUsers",
    "MoveItem",
    "RemoveItemFromPlaylist",
    "RemoveUserFromPlaylist",
    "UpdatePlaylist",
    "UpdatePlaylistUser",

    # Playstate
    "MarkPlayedItem",
    "MarkUnplayedItem",

    # Search

    # Studios

    # Subtitle
    "DeleteSubtitle",
    "DownloadRemoteSubtitles",
    "GetFallbackFont",
    "GetFallbackFontList",
    "GetRemoteSubtitles",
    "GetSubtitle",
    "GetSubtitlePlaylist",
    "GetSubtitleWithTicks",
    "SearchRemoteSubtitles",
    "UploadSubtitle",

    # Suggestions
    "GetSuggestions",

    # Trailers
    "GetTrailers",

    # Trickplay
    "GetTrickplayHlsPlaylist",
    "GetTrickplayTileImage",

    # TvShows
    "GetEpisodes",
    "GetNextUp",
    "GetSeasons",
    "GetUpcomingEpisodes",

    # UniversalAudio

    # UserLibrary

    # UserViews

    # VideoAttachments
    "GetAttachment",

    # Videos

    # Years
})


def _stub(operation_id: str) -> BaseRouteHandler:
    async def not_implemented() -> None:
        raise NotImplementedYetError(f"{operation_id} is not implemented in Reelroom yet.")

    not_implemented.__name__ = f"not_implemented_{operation_id}"
    return operation(operation_id)(not_implemented)


def stub_handlers(missing: set[str]) -> list[BaseRouteHandler]:
    """501 handlers for the listed operations that have no real handler."""
    return [_stub(op) for op in sorted(missing & NOT_IMPLEMENTED)]
