"""InstantMix: tracks sharing genres or artists with a song, album, artist, genre or playlist
(server/library/browse/related.py)."""

from __future__ import annotations

from server.api.base import operation
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.guid import parse_guid
from server.wire import models as w


async def _mix(ctx: ServerContext, auth: AuthInfo | None, userId: str | None, limit: int | None,
               fields: list[str] | None, enableImages: bool | None, enableUserData: bool | None,
               imageTypeLimit: int | None, enableImageTypes: list[str] | None, **seed: str | None,
               ) -> w.BaseItemDtoQueryResult:
    if limit is not None and limit < 0:
        raise BadRequestError("limit must not be negative.")
    viewer = await ctx.items.viewer(auth, userId)
    opts = ctx.items.options(viewer, fields, enable_images=enableImages, image_type_limit=imageTypeLimit,
                             enable_image_types=enableImageTypes, enable_user_data=enableUserData)
    return await ctx.browse.related.instant_mix(viewer, opts, limit, **seed)


@operation("GetInstantMixFromItem")
async def get_instant_mix_from_item(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None, limit: int | None = None,
    fields: list[str] | None = None, enableImages: bool | None = None, enableUserData: bool | None = None,
    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
) -> w.BaseItemDtoQueryResult:
    return await _mix(ctx, auth, userId, limit, fields, enableImages, enableUserData, imageTypeLimit,
                      enableImageTypes, item_id=itemId)


@operation("GetInstantMixFromSong")
async def get_instant_mix_from_song(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None, limit: int | None = None,
    fields: list[str] | None = None, enableImages: bool | None = None, enableUserData: bool | None = None,
    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
) -> w.BaseItemDtoQueryResult:
    return await _mix(ctx, auth, userId, limit, fields, enableImages, enableUserData, imageTypeLimit,
                      enableImageTypes, item_id=itemId)


@operation("GetInstantMixFromAlbum")
async def get_instant_mix_from_album(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None, limit: int | None = None,
    fields: list[str] | None = None, enableImages: bool | None = None, enableUserData: bool | None = None,
    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
) -> w.BaseItemDtoQueryResult:
    return await _mix(ctx, auth, userId, limit, fields, enableImages, enableUserData, imageTypeLimit,
                      enableImageTypes, item_id=itemId)


@operation("GetInstantMixFromPlaylist")
async def get_instant_mix_from_playlist(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None, limit: int | None = None,
    fields: list[str] | None = None, enableImages: bool | None = None, enableUserData: bool | None = None,
    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
) -> w.BaseItemDtoQueryResult:
    return await _mix(ctx, auth, userId, limit, fields, enableImages, enableUserData, imageTypeLimit,
                      enableImageTypes, item_id=itemId)


@operation("GetInstantMixFromArtists")
async def get_instant_mix_from_artists(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, userId: str | None = None, limit: int | None = None,
    fields: list[str] | None = None, enableImages: bool | None = None, enableUserData: bool | None = None,
    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
) -> w.BaseItemDtoQueryResult:
    return await _mix(ctx, auth, userId, limit, fields, enableImages, enableUserData, imageTypeLimit,
                      enableImageTypes, item_id=itemId)


@operation("GetInstantMixFromArtists2")
async def get_instant_mix_from_artists2(
    ctx: ServerContext, auth: AuthInfo | None, id: str, userId: str | None = None, limit: int | None = None,
    fields: list[str] | None = None, enableImages: bool | None = None, enableUserData: bool | None = None,
    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
) -> w.BaseItemDtoQueryResult:
    return await _mix(ctx, auth, userId, limit, fields, enableImages, enableUserData, imageTypeLimit,
                      enableImageTypes, item_id=parse_guid(id, "id"))


@operation("GetInstantMixFromMusicGenreById")
async def get_instant_mix_from_music_genre_by_id(
    ctx: ServerContext, auth: AuthInfo | None, id: str, userId: str | None = None, limit: int | None = None,
    fields: list[str] | None = None, enableImages: bool | None = None, enableUserData: bool | None = None,
    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
) -> w.BaseItemDtoQueryResult:
    return await _mix(ctx, auth, userId, limit, fields, enableImages, enableUserData, imageTypeLimit,
                      enableImageTypes, genre_id=parse_guid(id, "id"))


@operation("GetInstantMixFromMusicGenreByName")
async def get_instant_mix_from_music_genre_by_name(
    ctx: ServerContext, auth: AuthInfo | None, name: str, userId: str | None = None, limit: int | None = None,
    fields: list[str] | None = None, enableImages: bool | None = None, enableUserData: bool | None = None,
    imageTypeLimit: int | None = None, enableImageTypes: list[str] | None = None,
) -> w.BaseItemDtoQueryResult:
    return await _mix(ctx, auth, userId, limit, fields, enableImages, enableUserData, imageTypeLimit,
                      enableImageTypes, genre_name=name)
