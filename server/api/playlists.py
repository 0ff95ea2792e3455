"""Playlists: all 11 operations (server/library/browse/playlists.py)."""

from __future__ import annotations

from litestar.params import JSONBody

from server.api.base import operation
from server.api.params import DtoOptions, Paging, guids
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, ForbiddenError
from server.guid import parse_guid
from server.wire import models as w
from server.wire.casing import camel_case_requested


def _caller(auth: AuthInfo | None) -> str | None:
    return auth.user_id if auth is not None else None


def _shares(users: list[w.PlaylistUserPermissions] | None) -> list[tuple[str, bool]] | None:
    if users is None:
        return None
    return [(parse_guid(u.UserId, "Users.UserId"), bool(u.CanEdit)) for u in users]


@operation("CreatePlaylist")
async def create_playlist(ctx: ServerContext, auth: AuthInfo | None, name: str | None = None,
                          ids: list[str] | None = None, userId: str | None = None, mediaType: str | None = None,
                          data: JSONBody[w.CreatePlaylistDto | None] = None) -> w.PlaylistCreationResult:
    body = data or w.CreatePlaylistDto()
    owner = body.UserId or userId
    owner_id = parse_guid(owner, "userId") if owner else _caller(auth)
    if owner_id is None:
        raise BadRequestError("userId is required when calling with an API key.")
    if auth is not None and auth.user is not None and owner_id != auth.user_id and not auth.is_admin:
        raise ForbiddenError("Only an administrator may create a playlist for another user.")
    await ctx.users.get(owner_id)
    item_ids = guids(body.Ids if body.Ids is not None else ids, "ids")
    playlist_id = await ctx.browse.playlists.create(owner_id, body.Name or name, item_ids, body.MediaType or mediaType,
                                                    _shares(body.Users) or [], body.IsPublic)
    return w.PlaylistCreationResult(Id=playlist_id)


@operation("UpdatePlaylist")
async def update_playlist(ctx: ServerContext, auth: AuthInfo | None, playlistId: str,
                          data: JSONBody[w.UpdatePlaylistDto]) -> None:
    item_ids = guids(data.Ids, "Ids") if data.Ids is not None else None
    await ctx.browse.playlists.update(parse_guid(playlistId, "playlistId"), _caller(auth), data.Name, item_ids,
                                      _shares(data.Users), data.IsPublic)


@operation("GetPlaylist")
async def get_playlist(ctx: ServerContext, auth: AuthInfo | None, playlistId: str) -> w.PlaylistDto:
    return await ctx.browse.playlists.get(parse_guid(playlistId, "playlistId"), _caller(auth))


@operation("AddItemToPlaylist")
async def add_item_to_playlist(ctx: ServerContext, auth: AuthInfo | None, playlistId: str,
                               ids: list[str] | None = None, userId: str | None = None) -> None:
    await ctx.browse.playlists.add(parse_guid(playlistId, "playlistId"), _caller(auth), guids(ids, "ids"))


@operation("RemoveItemFromPlaylist")
async def remove_item_from_playlist(ctx: ServerContext, auth: AuthInfo | None, playlistId: str,
                                    entryIds: list[str] | None = None) -> None:
    await ctx.browse.playlists.remove(parse_guid(playlistId, "playlistId"), _caller(auth),
                                      guids(entryIds, "entryIds"))


@operation("GetPlaylistItems")
async def get_playlist_items(
    ctx: ServerContext, auth: AuthInfo | None, playlistId: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    """A BaseItemDtoQueryResult, encoded by PlaylistService.items_reply in the request's casing."""
    viewer = await ctx.items.viewer(auth, userId)
    start, limit = page.bounds()
    opts = dto.options(ctx.items, viewer)
    return await ctx.browse.playlists.items_reply(
        parse_guid(playlistId, "playlistId"), _caller(auth) or viewer.user_id, opts, start, limit,
        viewer.allowed_library_ids, viewer.parental, camel_case_requested.get())


@operation("MoveItem")
async def move_item(ctx: ServerContext, auth: AuthInfo | None, playlistId: str, itemId: str, newIndex: int) -> None:
    await ctx.browse.playlists.move(parse_guid(playlistId, "playlistId"), _caller(auth),
                                    parse_guid(itemId, "itemId"), newIndex)


@operation("GetPlaylistUsers")
async def get_playlist_users(ctx: ServerContext, auth: AuthInfo | None,
                             playlistId: str) -> list[w.PlaylistUserPermissions]:
    return await ctx.browse.playlists.users(parse_guid(playlistId, "playlistId"), _caller(auth))


@operation("GetPlaylistUser")
async def get_playlist_user(ctx: ServerContext, auth: AuthInfo | None, playlistId: str,
                            userId: str) -> w.PlaylistUserPermissions:
    return await ctx.browse.playlists.user(parse_guid(playlistId, "playlistId"), _caller(auth),
                                           parse_guid(userId, "userId"))


@operation("UpdatePlaylistUser")
async def update_playlist_user(ctx: ServerContext, auth: AuthInfo | None, playlistId: str, userId: str,
                               data: JSONBody[w.UpdatePlaylistUserDto]) -> None:
    await ctx.browse.playlists.set_user(parse_guid(playlistId, "playlistId"), _caller(auth),
                                        parse_guid(userId, "userId"), bool(data.CanEdit))


@operation("RemoveUserFromPlaylist")
async def remove_user_from_playlist(ctx: ServerContext, auth: AuthInfo | None, playlistId: str, userId: str) -> None:
    await ctx.browse.playlists.remove_user(parse_guid(playlistId, "playlistId"), _caller(auth),
                                           parse_guid(userId, "userId"))
