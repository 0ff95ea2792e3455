"""Library: deleting items, similar items, theme media and critic reviews
(server/library/browse/editing.py, related.py)."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import DtoOptions, Paging, guids
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.library.catalog.items import Viewer
from server.wire import models as w


@operation("DeleteItem")
async def delete_item(ctx: ServerContext, auth: AuthInfo | None, itemId: str) -> None:
    user = await ctx.users.get(auth.user_id) if auth is not None and auth.user_id else None
    if await _delete_recording(ctx, auth, user, itemId):
        return
    await ctx.browse.editing.delete_one_checked(itemId, user)


async def _delete_recording(ctx: ServerContext, auth: AuthInfo | None, user, item_id: str) -> bool:
    """A Live TV recording (server/livetv/items.py) is deleted with its file and timer by whoever
    may manage Live TV or delete content."""
    from server.guid import normalize_guid
    from server.livetv.items import RECORDINGS_FOLDER_ID

    key = normalize_guid(item_id)
    if key is None:
        return False
    viewer = await ctx.items.viewer(auth, None)
    try:
        row = await ctx.items.row(key, viewer)
    except NotFoundError:
        return False
    if row.library_id != RECORDINGS_FOLDER_ID or row.is_folder:
        return False
    policy = user.policy if user is not None else None
    if policy is not None and not (user.is_admin or policy.EnableLiveTvManagement or policy.EnableContentDeletion):
        raise ForbiddenError("This user may not delete recordings.")
    await ctx.recordings.delete_recording(row.id)
    return True


@operation("DeleteItems")
async def delete_items(ctx: ServerContext, auth: AuthInfo | None, ids: list[str] | None = None) -> None:
    wanted = [i for i in (ids or []) if i and i.strip()]
    if not wanted:
        raise BadRequestError("ids is required.")
    for item_id in wanted:  # the same library scope as routes with the item in their path
        await ctx.items.check_path_items(auth, {"itemId": item_id})
    user = await ctx.users.get(auth.user_id) if auth is not None and auth.user_id else None
    await ctx.browse.editing.delete(wanted, user)


@operation("GetCriticReviews")
async def get_critic_reviews(ctx: ServerContext, itemId: str) -> w.BaseItemDtoQueryResult:
    return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=0)


async def _similar(ctx: ServerContext, auth: AuthInfo | None, itemId: str, excludeArtistIds: list[str] | None,
                   userId: str | None, dto: DtoOptions, page: Paging) -> w.BaseItemDtoQueryResult:
    viewer = await ctx.items.viewer(auth, userId)
    _start, limit = page.bounds()
    opts = dto.options(ctx.items, viewer)
    return await ctx.browse.related.similar(itemId, viewer, opts, limit=limit,
                                            exclude_artist_ids=guids(excludeArtistIds, "excludeArtistIds"))


@operation("GetSimilarItems")
async def get_similar_items(ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions,
                            page: Paging, excludeArtistIds: list[str] | None = None,
                            userId: str | None = None) -> w.BaseItemDtoQueryResult:
    return await _similar(ctx, auth, itemId, excludeArtistIds, userId, dto, page)


@operation("GetSimilarAlbums")
async def get_similar_albums(ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions,
                             page: Paging, excludeArtistIds: list[str] | None = None,
                             userId: str | None = None) -> w.BaseItemDtoQueryResult:
    return await _similar(ctx, auth, itemId, excludeArtistIds, userId, dto, page)


@operation("GetSimilarArtists")
async def get_similar_artists(ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions,
                              page: Paging, excludeArtistIds: list[str] | None = None,
                              userId: str | None = None) -> w.BaseItemDtoQueryResult:
    return await _similar(ctx, auth, itemId, excludeArtistIds, userId, dto, page)


@operation("GetSimilarMovies")
async def get_similar_movies(ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions,
                             page: Paging, excludeArtistIds: list[str] | None = None,
                             userId: str | None = None) -> w.BaseItemDtoQueryResult:
    return await _similar(ctx, auth, itemId, excludeArtistIds, userId, dto, page)


@operation("GetSimilarShows")
async def get_similar_shows(ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions,
                            page: Paging, excludeArtistIds: list[str] | None = None,
                            userId: str | None = None) -> w.BaseItemDtoQueryResult:
    return await _similar(ctx, auth, itemId, excludeArtistIds, userId, dto, page)


@operation("GetSimilarTrailers")
async def get_similar_trailers(ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions,
                               page: Paging, excludeArtistIds: list[str] | None = None,
                               userId: str | None = None) -> w.BaseItemDtoQueryResult:
    return await _similar(ctx, auth, itemId, excludeArtistIds, userId, dto, page)


async def _theme(ctx: ServerContext, viewer: Viewer, itemId: str, kind: str, inherit: bool | None,
                 sortBy: list[str] | None, sortOrder: list[str] | None) -> w.ThemeMediaResult:
    opts = ctx.items.options(viewer, [])
    return await ctx.browse.related.theme(itemId, viewer, opts, kind, bool(inherit), list(sortBy or ()),
                                          list(sortOrder or ()))


@operation("GetThemeSongs")
async def get_theme_songs(ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None,
                          inheritFromParent: bool | None = None, sortBy: list[str] | None = None,
                          sortOrder: list[str] | None = None) -> w.ThemeMediaResult:
    viewer = await ctx.items.viewer(auth, userId)
    return await _theme(ctx, viewer, itemId, "songs", inheritFromParent, sortBy, sortOrder)


@operation("GetThemeVideos")
async def get_theme_videos(ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None,
                           inheritFromParent: bool | None = None, sortBy: list[str] | None = None,
                           sortOrder: list[str] | None = None) -> w.ThemeMediaResult:
    viewer = await ctx.items.viewer(auth, userId)
    return await _theme(ctx, viewer, itemId, "videos", inheritFromParent, sortBy, sortOrder)


@operation("GetThemeMedia")
async def get_theme_media(ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None,
                          inheritFromParent: bool | None = None, sortBy: list[str] | None = None,
                          sortOrder: list[str] | None = None) -> w.AllThemeMediaResult:
    viewer = await ctx.items.viewer(auth, userId)
    songs = await _theme(ctx, viewer, itemId, "songs", inheritFromParent, sortBy, sortOrder)
    videos = await _theme(ctx, viewer, itemId, "videos", inheritFromParent, sortBy, sortOrder)
    return w.AllThemeMediaResult(ThemeSongsResult=songs, ThemeVideosResult=videos,
                                 SoundtrackSongsResult=w.ThemeMediaResult(Items=[], TotalRecordCount=0, StartIndex=0,
                                                                          OwnerId=songs.OwnerId))
