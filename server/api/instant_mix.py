"""InstantMix: tracks sharing genres or artists with a song, album, artist, genre or playlist
(server/library/browse/related.py)."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import DtoOptions, Paging
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.guid import parse_guid
from server.wire.casing import camel_case_requested


async def _mix(ctx: ServerContext, auth: AuthInfo | None, userId: str | None, dto: DtoOptions, page: Paging,
               **seed: str | None) -> bytes:
    """A BaseItemDtoQueryResult, encoded by RelatedService.instant_mix_reply in the request's casing."""
    _start, limit = page.bounds()
    viewer = await ctx.items.viewer(auth, userId)
    return await ctx.browse.related.instant_mix_reply(viewer, dto.options(ctx.items, viewer), limit,
                                                      camel_case_requested.get(), **seed)


@operation("GetInstantMixFromItem")
async def get_instant_mix_from_item(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    return await _mix(ctx, auth, userId, dto, page, item_id=itemId)


@operation("GetInstantMixFromSong")
async def get_instant_mix_from_song(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    return await _mix(ctx, auth, userId, dto, page, item_id=itemId)


@operation("GetInstantMixFromAlbum")
async def get_instant_mix_from_album(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    return await _mix(ctx, auth, userId, dto, page, item_id=itemId)


@operation("GetInstantMixFromPlaylist")
async def get_instant_mix_from_playlist(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    return await _mix(ctx, auth, userId, dto, page, item_id=itemId)


@operation("GetInstantMixFromArtists")
async def get_instant_mix_from_artists(
    ctx: ServerContext, auth: AuthInfo | None, itemId: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    return await _mix(ctx, auth, userId, dto, page, item_id=itemId)


@operation("GetInstantMixFromArtists2")
async def get_instant_mix_from_artists2(
    ctx: ServerContext, auth: AuthInfo | None, id: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    return await _mix(ctx, auth, userId, dto, page, item_id=parse_guid(id, "id"))


@operation("GetInstantMixFromMusicGenreById")
async def get_instant_mix_from_music_genre_by_id(
    ctx: ServerContext, auth: AuthInfo | None, id: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    return await _mix(ctx, auth, userId, dto, page, genre_id=parse_guid(id, "id"))


@operation("GetInstantMixFromMusicGenreByName")
async def get_instant_mix_from_music_genre_by_name(
    ctx: ServerContext, auth: AuthInfo | None, name: str, dto: DtoOptions, page: Paging,
    userId: str | None = None,
) -> bytes:
    return await _mix(ctx, auth, userId, dto, page, genre_name=name)
