"""Items: the item query (GET /Items) and a user's data on an item."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from litestar.params import JSONBody

from server.api.base import operation
from server.api.params import DtoOptions, NameFilters, Paging, guid_or_none, guids, split_names
from server.api.replies import keep, kept_reply
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.library.catalog.query import ItemQuery, blank_query
from server.wire import models as w
from server.wire.casing import camel_case_requested


@operation("GetItems", before_request=kept_reply("GetItems", sortable=True))
async def get_items(
    ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging,
    userId: str | None = None, maxOfficialRating: str | None = None, hasThemeSong: bool | None = None,
    hasThemeVideo: bool | None = None, hasSubtitles: bool | None = None, hasSpecialFeature: bool | None = None,
    hasTrailer: bool | None = None, adjacentTo: str | None = None, indexNumber: int | None = None,
    parentIndexNumber: int | None = None, hasParentalRating: bool | None = None, isHd: bool | None = None,
    is4K: bool | None = None, locationTypes: list[str] | None = None,
    excludeLocationTypes: list[str] | None = None, isMissing: bool | None = None, isUnaired: bool | None = None,
    minCommunityRating: float | None = None, minCriticRating: float | None = None,
    minPremiereDate: datetime | None = None, minDateLastSaved: datetime | None = None,
    minDateLastSavedForUser: datetime | None = None, maxPremiereDate: datetime | None = None,
    hasOverview: bool | None = None, hasImdbId: bool | None = None, hasTmdbId: bool | None = None,
    hasTvdbId: bool | None = None, isMovie: bool | None = None, isSeries: bool | None = None,
    isNews: bool | None = None, isKids: bool | None = None, isSports: bool | None = None,
    excludeItemIds: list[str] | None = None,
    recursive: bool | None = None, searchTerm: str | None = None, sortOrder: list[str] | None = None,
    parentId: str | None = None, excludeItemTypes: list[str] | None = None,
    includeItemTypes: list[str] | None = None, filters: list[str] | None = None, isFavorite: bool | None = None,
    mediaTypes: list[str] | None = None, imageTypes: list[str] | None = None, sortBy: list[str] | None = None,
    isPlayed: bool | None = None, genres: list[str] | None = None, officialRatings: list[str] | None = None,
    tags: list[str] | None = None, years: list[int] | None = None, person: str | None = None,
    personIds: list[str] | None = None, personTypes: list[str] | None = None, studios: list[str] | None = None,
    artists: list[str] | None = None, excludeArtistIds: list[str] | None = None,
    artistIds: list[str] | None = None, albumArtistIds: list[str] | None = None,
    contributingArtistIds: list[str] | None = None, albums: list[str] | None = None,
    albumIds: list[str] | None = None, ids: list[str] | None = None, videoTypes: list[str] | None = None,
    minOfficialRating: str | None = None, isLocked: bool | None = None, isPlaceHolder: bool | None = None,
    hasOfficialRating: bool | None = None, collapseBoxSetItems: bool | None = None, minWidth: int | None = None,
    minHeight: int | None = None, maxWidth: int | None = None, maxHeight: int | None = None,
    is3D: bool | None = None, seriesStatus: list[str] | None = None, nameStartsWithOrGreater: str | None = None,
    nameStartsWith: str | None = None, nameLessThan: str | None = None, studioIds: list[str] | None = None,
    genreIds: list[str] | None = None, enableTotalRecordCount: bool | None = None,
) -> bytes:
    """A BaseItemDtoQueryResult, encoded by ItemService.query_reply in the request's casing."""
    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    # Every field at its default, then the ones the request names (a page names ten of some
    # eighty): the same query as ``ItemQuery(...)`` of every parameter converted (a converter
    # maps an absent parameter to its field's default), without ~25 converter calls and the
    # ~85 keyword arguments (callgrind: the owner's instructions a handed page). The validating
    # converters (``guid_or_none``, ``guids``) run in the order the parameters were always read,
    # so the first bad one is still the one reported.
    q = blank_query()
    if parentId is not None:
        q.parent_id = guid_or_none(parentId, "parentId")
    if recursive:
        q.recursive = True
    if includeItemTypes:
        q.include_types = list(includeItemTypes)
    if excludeItemTypes:
        q.exclude_types = list(excludeItemTypes)
    if mediaTypes:
        q.media_types = list(mediaTypes)
    if ids:
        q.ids = guids(ids, "ids")
    if excludeItemIds:
        q.exclude_ids = guids(excludeItemIds, "excludeItemIds")
    if genres:
        q.genres = split_names(genres)
    if genreIds:
        q.genre_ids = guids(genreIds, "genreIds")
    if studios:
        q.studios = split_names(studios)
    if studioIds:
        q.studio_ids = guids(studioIds, "studioIds")
    if tags:
        q.tags = split_names(tags)
    if artists:
        q.artists = split_names(artists)
    if artistIds:
        q.artist_ids = guids(artistIds, "artistIds")
    if albumArtistIds:
        q.album_artist_ids = guids(albumArtistIds, "albumArtistIds")
    if contributingArtistIds:
        q.contributing_artist_ids = guids(contributingArtistIds, "contributingArtistIds")
    if excludeArtistIds:
        q.exclude_artist_ids = guids(excludeArtistIds, "excludeArtistIds")
    if albums:
        q.albums = split_names(albums)
    if albumIds:
        q.album_ids = guids(albumIds, "albumIds")
    if person:
        q.person = person
    if personIds:
        q.person_ids = guids(personIds, "personIds")
    if personTypes:
        q.person_types = split_names(personTypes)
    if years:
        q.years = list(years)
    if officialRatings:
        q.official_ratings = split_names(officialRatings)
    if filters:
        q.filters = list(filters)
    if isPlayed is not None:
        q.is_played = isPlayed
    if isFavorite is not None:
        q.is_favorite = isFavorite
    if searchTerm is not None:
        q.search_term = searchTerm
    if nameStartsWith:
        q.name_starts_with = nameStartsWith
    if nameStartsWithOrGreater:
        q.name_starts_with_or_greater = nameStartsWithOrGreater
    if nameLessThan:
        q.name_less_than = nameLessThan
    if minCommunityRating is not None:
        q.min_community_rating = minCommunityRating
    if minCriticRating is not None:
        q.min_critic_rating = minCriticRating
    if hasSubtitles is not None:
        q.has_subtitles = hasSubtitles
    if hasOverview is not None:
        q.has_overview = hasOverview
    if hasOfficialRating is not None or hasParentalRating is not None:
        q.has_official_rating = hasOfficialRating if hasOfficialRating is not None else hasParentalRating
    if hasImdbId is not None:
        q.has_imdb_id = hasImdbId
    if hasTmdbId is not None:
        q.has_tmdb_id = hasTmdbId
    if hasTvdbId is not None:
        q.has_tvdb_id = hasTvdbId
    if isHd is not None:
        q.is_hd = isHd
    if is4K is not None:
        q.is_4k = is4K
    if is3D is not None:
        q.is_3d = is3D
    if isLocked is not None:
        q.is_locked = isLocked
    if isMissing is not None:
        q.is_missing = isMissing
    if isPlaceHolder is not None:
        q.is_place_holder = isPlaceHolder
    if locationTypes:
        q.location_types = list(locationTypes)
    if excludeLocationTypes:
        q.exclude_location_types = list(excludeLocationTypes)
    if seriesStatus:
        q.series_status = list(seriesStatus)
    if videoTypes:
        q.video_types = list(videoTypes)
    if minPremiereDate is not None:
        q.min_premiere_date = minPremiereDate
    if maxPremiereDate is not None:
        q.max_premiere_date = maxPremiereDate
    if indexNumber is not None:
        q.index_number = indexNumber
    if parentIndexNumber is not None:
        q.parent_index_number = parentIndexNumber
    if minWidth is not None:
        q.min_width = minWidth
    if minHeight is not None:
        q.min_height = minHeight
    if maxWidth is not None:
        q.max_width = maxWidth
    if maxHeight is not None:
        q.max_height = maxHeight
    if sortBy:
        q.sort_by = list(sortBy)
    if sortOrder:
        q.sort_order = list(sortOrder)
    q.start_index = start
    q.limit = limit
    if enableTotalRecordCount is False:
        q.enable_total_record_count = False
    if adjacentTo:
        q.adjacent_to = guid_or_none(adjacentTo, "adjacentTo")
    if imageTypes:
        q.image_types = list(imageTypes)
    if hasTrailer is not None:
        q.has_trailer = hasTrailer
    if hasSpecialFeature is not None:
        q.has_special_feature = hasSpecialFeature
    ctx.items.scoped(q, viewer)
    camel = camel_case_requested.get()
    opts = dto.options(ctx.items, viewer)
    ctx.page_fill.want(q, opts, camel)  # (a first page: its listing is filled again after a restart)
    # encoded by a reader process (server/readers/) while the server is busy, else here; a reader
    # that wrote the reply to the client itself (the Items lane's hand-off) gives a Handed, which
    # only the lane sees (it made the offer)
    return cast(bytes, keep(ctx, await ctx.readers.items(q, opts,
                                                         lambda q, opts: ctx.items.query_reply(q, opts, camel)), viewer))


@operation("GetItemUserData")
async def get_item_user_data(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                             userId: str | None = None) -> w.UserItemDataDto:
    viewer = await ctx.items.viewer_user(auth, userId)
    row = await ctx.items.target(itemId, viewer)
    return await ctx.items.user_data(viewer.user_id, row)


@operation("UpdateItemUserData")
async def update_item_user_data(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                                data: JSONBody[w.UpdateUserItemDataDto], userId: str | None = None) -> w.UserItemDataDto:
    viewer = await ctx.items.viewer_user(auth, userId)
    row = await ctx.items.target(itemId, viewer)
    if data.PlaybackPositionTicks is not None and data.PlaybackPositionTicks < 0:
        raise BadRequestError("PlaybackPositionTicks must not be negative.")
    if data.PlayCount is not None and data.PlayCount < 0:
        raise BadRequestError("PlayCount must not be negative.")
    if data.Rating is not None and not 0 <= data.Rating <= 10:
        raise BadRequestError("Rating must be between 0 and 10.")

    def change(d) -> None:
        if data.PlaybackPositionTicks is not None:
            d.playback_position_ticks = data.PlaybackPositionTicks
        if data.PlayCount is not None:
            d.play_count = data.PlayCount
        if data.IsFavorite is not None:
            d.is_favorite = data.IsFavorite
        if data.Likes is not None:
            d.likes = data.Likes
        if data.Rating is not None:
            d.rating = data.Rating
        if data.LastPlayedDate is not None:
            d.last_played_date = data.LastPlayedDate
        if data.Played is not None:
            d.played = data.Played
            if data.Played and data.PlaybackPositionTicks is None:
                d.playback_position_ticks = 0

    return await ctx.items.update_user_data(viewer.user_id, row, change)


@operation("GetResumeItems", before_request=kept_reply("GetResumeItems"))
async def get_resume_items(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging,
                           userId: str | None = None, searchTerm: str | None = None, parentId: str | None = None,
                           mediaTypes: list[str] | None = None, excludeItemTypes: list[str] | None = None,
                           includeItemTypes: list[str] | None = None, enableTotalRecordCount: bool | None = None,
                           excludeActiveSessions: bool | None = None) -> w.BaseItemDtoQueryResult | bytes:
    """Partly played items (videos and audiobooks by default), last played first (encoded by
    ItemService.query_reply)."""
    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    if viewer.user is None:
        return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=start)
    q = ItemQuery(parent_id=guid_or_none(parentId, "parentId"), recursive=True, search_term=searchTerm,
                  media_types=list(mediaTypes or ()), include_types=list(includeItemTypes or ()),
                  exclude_types=list(excludeItemTypes or ()), is_resumable=True, is_played=None, is_folder=False,
                  sort_by=["DatePlayed"], sort_order=["Descending"], start_index=start, limit=limit,
                  enable_total_record_count=enableTotalRecordCount is not False)
    if not q.media_types and not q.include_types:
        q.media_types = ["Video"]
        q.include_types = []
        q.resume_audiobooks = True
    ctx.items.scoped(q, viewer)
    return keep(ctx, await ctx.items.query_reply(q, dto.options(ctx.items, viewer), camel_case_requested.get()),
                viewer)


async def name_listing(ctx: ServerContext, auth: AuthInfo | None, kind: str, dto: DtoOptions, page: Paging,
                       names: NameFilters, *, userId: str | None = None, isFavorite: bool | None = None,
                       scope: ItemQuery | None = None, default_types: tuple[str, ...] = (),
                       excluded_types: tuple[str, ...] = ()) -> w.BaseItemDtoQueryResult:
    """The shared body of the by-name listings (Genres, MusicGenres, Studios, Artists, Years).
    ``isFavorite`` overrides the one in ``names`` when given."""
    from server.library.catalog.by_name import NameQuery

    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    q = scope or ItemQuery()
    q.parent_id = guid_or_none(names.parentId, "parentId")
    q.recursive = True
    q.include_types = list(names.includeItemTypes or ()) or list(default_types)
    q.exclude_types = [*(names.excludeItemTypes or ()), *excluded_types]
    ctx.items.scoped(q, viewer)
    sort_order = names.sortOrder
    nq = NameQuery(kind=kind, scope=q, search_term=names.searchTerm, name_starts_with=names.nameStartsWith or None,
                   name_starts_with_or_greater=names.nameStartsWithOrGreater or None,
                   name_less_than=names.nameLessThan or None,
                   descending=bool(sort_order) and sort_order[0] == "Descending",
                   is_favorite=names.isFavorite if isFavorite is None else isFavorite, start_index=start,
                   limit=limit, enable_total_record_count=names.enableTotalRecordCount is not False)
    return await ctx.items.names(nq, dto.options(ctx.items, viewer))
