"""UserLibrary: one item, the root folder, intros, trailers, special features, latest media,
favourites and ratings."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import DtoOptions, Paging, guid_or_none
from server.api.replies import keep, kept_reply
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.library.catalog.query import ItemQuery
from server.wire import models as w
from server.wire.casing import camel_case_requested

_SPECIAL_EXCLUDED = ("Trailer", "ThemeSong", "ThemeVideo")
_LATEST_TYPES = {"movies": ("Movie",), "tvshows": ("Episode",), "music": ("Audio",), "musicvideos": ("MusicVideo",),
                 "books": ("Book", "AudioBook"), "homevideos": ("Video", "Photo"), "photos": ("Photo", "Video")}


@operation("GetItem")
async def get_item(ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None) -> bytes:
    """A BaseItemDto, encoded by ItemService.item_reply in the request's casing (a miss read by a
    reader process, server/readers/, while one runs with room, else here)."""
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.items.item_reply(itemId, viewer, camel_case_requested.get(), ctx.readers.item)


@operation("GetRootFolder")
async def get_root_folder(ctx: ServerContext, auth: AuthInfo | None, userId: str | None = None) -> w.BaseItemDto:
    viewer = await ctx.items.viewer(auth, userId)
    return ctx.items.root_folder(viewer)


@operation("GetIntros")
async def get_intros(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                     userId: str | None = None) -> w.BaseItemDtoQueryResult:
    """Reelroom has no intro (pre-roll) providers: an existing item has none."""
    viewer = await ctx.items.viewer(auth, userId)
    await ctx.items.row(itemId, viewer)
    return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=0)


async def _extras(ctx: ServerContext, auth: AuthInfo | None, item_id: str, user_id: str | None,
                  trailers: bool) -> list[w.BaseItemDto]:
    viewer = await ctx.items.viewer(auth, user_id)
    row = await ctx.items.row(item_id, viewer)
    q = ctx.items.scoped(ItemQuery(owner_id=row.id, sort_by=["SortName"]), viewer)
    rows, _ = await ctx.items.rows(q)
    rows = [r for r in rows if r.extra_type and ((r.extra_type == "Trailer") == trailers)
            and (trailers or r.extra_type not in _SPECIAL_EXCLUDED)]
    return await ctx.items.dtos(rows, ctx.items.options(viewer, all_fields=True))


@operation("GetLocalTrailers")
async def get_local_trailers(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                             userId: str | None = None) -> list[w.BaseItemDto]:
    return await _extras(ctx, auth, itemId, userId, trailers=True)


@operation("GetSpecialFeatures")
async def get_special_features(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                               userId: str | None = None) -> list[w.BaseItemDto]:
    return await _extras(ctx, auth, itemId, userId, trailers=False)


@operation("GetLatestMedia", before_request=kept_reply("GetLatestMedia"))
async def get_latest_media(ctx: ServerContext, auth: AuthInfo | None, dto: DtoOptions, page: Paging,
                           userId: str | None = None, parentId: str | None = None,
                           includeItemTypes: list[str] | None = None, isPlayed: bool | None = None,
                           groupItems: bool | None = None) -> bytes:
    """A list of BaseItemDto, encoded by ItemService.latest_reply in the request's casing."""
    viewer = await ctx.items.viewer(auth, userId)
    _start, limit = page.bounds()
    limit = 20 if limit is None else limit
    parent = guid_or_none(parentId, "parentId")
    types = list(includeItemTypes or ())
    if not types and parent:  # what Latest shows of each kind of library
        types = list(_LATEST_TYPES.get(await ctx.items.collection_type_of(parent) or "", ()))
    q = ctx.items.scoped(ItemQuery(parent_id=parent, recursive=True, include_types=types, is_played=isPlayed),
                         viewer)
    user = viewer.user
    if user is not None:
        config = user.configuration
        if isPlayed is None and config.HidePlayedInLatest is not False:
            q.is_played = False
        excludes = {x for x in (guid_or_none(e, "LatestItemsExcludes") for e in config.LatestItemsExcludes or [])
                    if x}
        if parent is None and excludes:
            q.exclude_library_ids = excludes
    return keep(ctx, await ctx.items.latest_reply(q, limit, groupItems is not False, dto.options(ctx.items, viewer),
                                                  camel_case_requested.get()), viewer)


async def _user_target(ctx: ServerContext, auth: AuthInfo | None, item_id: str, user_id: str | None):
    viewer = await ctx.items.viewer_user(auth, user_id)
    row = await ctx.items.target(item_id, viewer)
    return viewer, row


@operation("MarkFavoriteItem")
async def mark_favorite_item(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                             userId: str | None = None) -> w.UserItemDataDto:
    viewer, row = await _user_target(ctx, auth, itemId, userId)
    return await ctx.items.update_user_data(viewer.user_id, row, lambda d: setattr(d, "is_favorite", True))


@operation("UnmarkFavoriteItem")
async def unmark_favorite_item(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                               userId: str | None = None) -> w.UserItemDataDto:
    viewer, row = await _user_target(ctx, auth, itemId, userId)
    return await ctx.items.update_user_data(viewer.user_id, row, lambda d: setattr(d, "is_favorite", False))


@operation("UpdateUserItemRating")
async def update_user_item_rating(ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None,
                                  likes: bool | None = None) -> w.UserItemDataDto:
    viewer, row = await _user_target(ctx, auth, itemId, userId)
    return await ctx.items.update_user_data(viewer.user_id, row, lambda d: setattr(d, "likes", likes))


@operation("DeleteUserItemRating")
async def delete_user_item_rating(ctx: ServerContext, auth: AuthInfo | None, itemId: str,
                                  userId: str | None = None) -> w.UserItemDataDto:
    viewer, row = await _user_target(ctx, auth, itemId, userId)

    def clear(d) -> None:
        d.likes = None
        d.rating = None

    return await ctx.items.update_user_data(viewer.user_id, row, clear)



