"""Image: item, person, genre, music genre, studio, artist and user images (GET and HEAD),
image infos, and uploading, deleting and reordering images. Thin: ``ctx.images`` does the work
(server/images/service.py). Reading images is anonymous, as in the spec."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.response import File
from litestar.response.base import ASGIResponse

from server.api.base import operation, require_user
from server.api.params import ImageOptions
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import NotFoundError
from server.guid import normalize_guid
from server.images.service import ImageReplyData, Target, image_type_of
from server.wire import models as w


class ImageResponse(File):
    """Bytes with the image headers. A File subclass, because Litestar allows only File
    responses (or None) from HEAD handlers; HEAD replies carry the same headers, no body."""

    def __init__(self, reply: ImageReplyData) -> None:  # noqa: D107 (File.__init__ needs a path)
        self.reply = reply
        self.background = None
        self.cookies = []
        self.headers = {}
        self.status_code = reply.status

    def to_asgi_response(self, app: Any, request: Request[Any, Any, Any], **kwargs: Any) -> ASGIResponse:  # type: ignore[override]
        head = request.method == "HEAD" or self.reply.status == 304
        return ASGIResponse(body=b"" if head else self.reply.body, headers=self.reply.headers,
                            status_code=self.reply.status, is_head_response=head,
                            media_type=dict(self.reply.headers).get("content-type"))


def _item_id(value: str) -> str:
    item_id = normalize_guid(value)
    if item_id is None:
        raise NotFoundError(f"Item {value!r} not found.")
    return item_id


async def _reply(ctx: ServerContext, request: Request[Any, Any, Any], target: Target, imageType: str,
                 image: ImageOptions) -> ImageResponse:
    image_type = image_type_of(imageType)
    reply = await ctx.images.serve(
        target, image_type, image.imageIndex, tag=image.tag, fmt=image.format, accept=request.headers.get("accept"),
        if_none_match=request.headers.get("if-none-match"), head=request.method == "HEAD",
        options=image.render_options(), if_modified_since=request.headers.get("if-modified-since"))
    return ImageResponse(reply)


def _user_param(request: Request[Any, Any, Any], userId: str | None) -> str | None:
    """userId, or ``user_id`` as jellyfin-apiclient-python spells it for user images."""
    value = userId or request.query_params.get("user_id")
    if not value:
        return None
    user_id = normalize_guid(value)
    if user_id is None:
        raise NotFoundError(f"User {value!r} not found.")
    return user_id


@operation("GetItemImageInfos")
async def get_item_image_infos(ctx: ServerContext, itemId: str) -> list[w.ImageInfo]:
    return await ctx.images.image_infos(_item_id(itemId))


@operation("SetItemImage")
async def set_item_image(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str, imageType: str) -> None:
    await ctx.images.set_item_image(_item_id(itemId), image_type_of(imageType), None, await request.body())


@operation("SetItemImageByIndex")
async def set_item_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any], itemId: str, imageType: str,
                                  imageIndex: int) -> None:
    await ctx.images.set_item_image(_item_id(itemId), image_type_of(imageType), imageIndex, await request.body())


@operation("DeleteItemImage")
async def delete_item_image(ctx: ServerContext, itemId: str, imageType: str, imageIndex: int | None = None) -> None:
    await ctx.images.delete_item_image(_item_id(itemId), image_type_of(imageType), imageIndex)


@operation("DeleteItemImageByIndex")
async def delete_item_image_by_index(ctx: ServerContext, itemId: str, imageType: str, imageIndex: int) -> None:
    await ctx.images.delete_item_image(_item_id(itemId), image_type_of(imageType), imageIndex)


@operation("UpdateItemImageIndex")
async def update_item_image_index(ctx: ServerContext, itemId: str, imageType: str, imageIndex: int,
                                  newIndex: int | None = None) -> None:
    await ctx.images.move_item_image(_item_id(itemId), image_type_of(imageType), imageIndex, newIndex)


@operation("PostUserImage")
async def post_user_image(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None,
                          userId: str | None = None) -> None:
    user_id = ctx.images.user_for_change(require_user(auth), _user_param(request, userId))
    await ctx.images.set_user_image(user_id, await request.body())


@operation("DeleteUserImage")
async def delete_user_image(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None,
                            userId: str | None = None) -> None:
    user_id = ctx.images.user_for_change(require_user(auth), _user_param(request, userId))
    await ctx.images.delete_user_image(user_id)


@operation("GetItemImage")
async def get_item_image(ctx: ServerContext, request: Request[Any, Any, Any],
                         itemId: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.item_target(_item_id(itemId))
    return await _reply(ctx, request, target, imageType, image)


@operation("GetItemImageByIndex")
async def get_item_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                  itemId: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.item_target(_item_id(itemId))
    return await _reply(ctx, request, target, imageType, image)


@operation("GetItemImage2")
async def get_item_image_2(ctx: ServerContext, request: Request[Any, Any, Any],
                           itemId: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.item_target(_item_id(itemId))
    return await _reply(ctx, request, target, imageType, image)


@operation("GetPersonImage")
async def get_persons_image(ctx: ServerContext, request: Request[Any, Any, Any],
                            name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Person", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetPersonImageByIndex")
async def get_persons_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                     name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Person", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetGenreImage")
async def get_genres_image(ctx: ServerContext, request: Request[Any, Any, Any],
                           name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Genre", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetGenreImageByIndex")
async def get_genres_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                    name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Genre", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetMusicGenreImage")
async def get_music_genres_image(ctx: ServerContext, request: Request[Any, Any, Any],
                                 name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("MusicGenre", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetMusicGenreImageByIndex")
async def get_music_genres_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                          name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("MusicGenre", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetStudioImage")
async def get_studios_image(ctx: ServerContext, request: Request[Any, Any, Any],
                            name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Studio", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetStudioImageByIndex")
async def get_studios_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                     name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Studio", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetArtistImage")
async def get_artist_image(ctx: ServerContext, request: Request[Any, Any, Any],
                           name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("MusicArtist", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("GetUserImage")
async def get_user_image(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, image: ImageOptions,
                         userId: str | None = None) -> ImageResponse:
    user_id = normalize_guid(userId) if userId else (auth.user_id if auth else None)
    if user_id is None:
        raise NotFoundError("userId names no user.")
    target = await ctx.images.user_target(user_id)
    return await _reply(ctx, request, target, "Primary", image)


@operation("HeadItemImage")
async def head_item_image(ctx: ServerContext, request: Request[Any, Any, Any],
                          itemId: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.item_target(_item_id(itemId))
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadItemImageByIndex")
async def head_item_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                   itemId: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.item_target(_item_id(itemId))
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadItemImage2")
async def head_item_image_2(ctx: ServerContext, request: Request[Any, Any, Any],
                            itemId: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.item_target(_item_id(itemId))
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadPersonImage")
async def head_persons_image(ctx: ServerContext, request: Request[Any, Any, Any],
                             name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Person", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadPersonImageByIndex")
async def head_persons_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                      name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Person", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadGenreImage")
async def head_genres_image(ctx: ServerContext, request: Request[Any, Any, Any],
                            name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Genre", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadGenreImageByIndex")
async def head_genres_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                     name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Genre", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadMusicGenreImage")
async def head_music_genres_image(ctx: ServerContext, request: Request[Any, Any, Any],
                                  name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("MusicGenre", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadMusicGenreImageByIndex")
async def head_music_genres_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                           name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("MusicGenre", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadStudioImage")
async def head_studios_image(ctx: ServerContext, request: Request[Any, Any, Any],
                             name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Studio", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadStudioImageByIndex")
async def head_studios_image_by_index(ctx: ServerContext, request: Request[Any, Any, Any],
                                      name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("Studio", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadArtistImage")
async def head_artist_image(ctx: ServerContext, request: Request[Any, Any, Any],
                            name: str, imageType: str, image: ImageOptions) -> ImageResponse:
    target = await ctx.images.name_target("MusicArtist", name)
    return await _reply(ctx, request, target, imageType, image)


@operation("HeadUserImage")
async def head_user_image(ctx: ServerContext, request: Request[Any, Any, Any], auth: AuthInfo | None, image: ImageOptions,
                         userId: str | None = None) -> ImageResponse:
    user_id = normalize_guid(userId) if userId else (auth.user_id if auth else None)
    if user_id is None:
        raise NotFoundError("userId names no user.")
    target = await ctx.images.user_target(user_id)
    return await _reply(ctx, request, target, "Primary", image)
