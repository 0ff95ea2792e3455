"""SyncPlay: watch-together groups (server/syncplay/groups.py does the work; replies go out on
the participants' sockets as SyncPlayGroupUpdate and SyncPlayCommand messages)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from litestar.params import JSONBody

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.guid import normalize_guid, parse_guid
from server.library.catalog.items import Viewer
from server.wire import models as w
from server.wire.models import ENUMS

if TYPE_CHECKING:  # the SyncPlay manager and its module load on first use (ctx.syncplay)
    from server.syncplay.groups import Participant


def _me(ctx: ServerContext, auth: AuthInfo | None) -> Participant:
    auth = require_user(auth)
    if auth.user is None:
        raise BadRequestError("SyncPlay needs a user session, not an API key.")
    session = ctx.sessions.by_device(auth.device_id)
    from server.syncplay.groups import Participant

    return Participant(session_id=session.id if session else auth.device_id, device_id=auth.device_id,
                       user_id=auth.user.id, user_name=auth.user.name)


def _device(auth: AuthInfo | None) -> str:
    return require_user(auth).device_id


async def _may_see(ctx: ServerContext, user_ids: set[str], item_ids: list[str]) -> bool:
    """Whether every one of the users may see every item (their library access, Jellyfin's
    LibraryAccessDenied rule); an unknown item counts as not visible."""
    for user_id in user_ids:
        viewer = Viewer(await ctx.users.get(user_id))
        for item_id in dict.fromkeys(item_ids):
            try:
                await ctx.items.row(item_id, viewer)
            except NotFoundError:
                return False
    return True


def _queue_ids(group) -> list[str]:
    return [q.item_id for q in group.queue]


@operation("SyncPlayGetGroups")
async def get_groups(ctx: ServerContext, auth: AuthInfo | None) -> list[w.GroupInfoDto]:
    me = _me(ctx, auth)
    return [w.GroupInfoDto(**group.info()) for group in ctx.syncplay.all_groups()
            if await _may_see(ctx, {me.user_id}, _queue_ids(group))]


@operation("SyncPlayCreateGroup")
async def create_group(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.NewGroupRequestDto]) -> None:
    ctx.syncplay.create(_me(ctx, auth), data.GroupName)


@operation("SyncPlayJoinGroup")
async def join_group(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.JoinGroupRequestDto]) -> None:
    me = _me(ctx, auth)
    group_id = parse_guid(data.GroupId, "GroupId")
    group = ctx.syncplay.groups.get(group_id)
    if group is not None and not await _may_see(ctx, {me.user_id}, _queue_ids(group)):
        ctx.syncplay.deny(me.device_id, group_id)
        return
    ctx.syncplay.join(me, group_id)


async def _queue_allowed(ctx: ServerContext, device_id: str, item_ids: list[str]) -> bool:
    """A queue change names only items every member may see; else the requester is told
    LibraryAccessDenied and nothing changes."""
    group = ctx.syncplay.require_group(device_id)
    users = {p.user_id for p in group.participants.values()}
    if await _may_see(ctx, users, item_ids):
        return True
    ctx.syncplay.deny(device_id, group.id)
    return False


@operation("SyncPlayLeaveGroup")
async def leave_group(ctx: ServerContext, auth: AuthInfo | None) -> None:
    device_id = _device(auth)
    ctx.syncplay.require_group(device_id)
    ctx.syncplay.leave(device_id)


@operation("SyncPlaySetNewQueue")
async def set_new_queue(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.PlayRequestDto]) -> None:
    ids = [parse_guid(i, "PlayingQueue") for i in data.PlayingQueue or []]
    if not await _queue_allowed(ctx, _device(auth), ids):
        return
    ctx.syncplay.set_new_queue(_device(auth), ids, data.PlayingItemPosition or 0, data.StartPositionTicks or 0)


@operation("SyncPlaySetPlaylistItem")
async def set_playlist_item(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.SetPlaylistItemRequestDto]) -> None:
    ctx.syncplay.set_playlist_item(_device(auth), _playlist_item(data.PlaylistItemId, required=True))


@operation("SyncPlayRemoveFromPlaylist")
async def remove_from_playlist(ctx: ServerContext, auth: AuthInfo | None,
                               data: JSONBody[w.RemoveFromPlaylistRequestDto]) -> None:
    ids = [_playlist_item(i, required=True) for i in data.PlaylistItemIds or []]
    ctx.syncplay.remove_items(_device(auth), ids, bool(data.ClearPlaylist), bool(data.ClearPlayingItem))


@operation("SyncPlayMovePlaylistItem")
async def move_playlist_item(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.MovePlaylistItemRequestDto]) -> None:
    if data.NewIndex is None or data.NewIndex < 0:
        raise BadRequestError("NewIndex must be zero or more.")
    ctx.syncplay.move_item(_device(auth), _playlist_item(data.PlaylistItemId, required=True), data.NewIndex)


@operation("SyncPlayQueue")
async def queue(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.QueueRequestDto]) -> None:
    ids = [parse_guid(i, "ItemIds") for i in data.ItemIds or []]
    if data.Mode is not None and data.Mode not in ENUMS["GroupQueueMode"]:
        raise BadRequestError("Mode must be Queue or QueueNext.")
    if not await _queue_allowed(ctx, _device(auth), ids):
        return
    ctx.syncplay.queue_items(_device(auth), ids, data.Mode or "Queue")


@operation("SyncPlayNextItem")
async def next_item(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.NextItemRequestDto]) -> None:
    ctx.syncplay.next_item(_device(auth), _playlist_item(data.PlaylistItemId))


@operation("SyncPlayPreviousItem")
async def previous_item(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.PreviousItemRequestDto]) -> None:
    ctx.syncplay.previous_item(_device(auth), _playlist_item(data.PlaylistItemId))


@operation("SyncPlaySetRepeatMode")
async def set_repeat_mode(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.SetRepeatModeRequestDto]) -> None:
    if data.Mode not in ENUMS["GroupRepeatMode"]:
        raise BadRequestError("Mode must be RepeatOne, RepeatAll or RepeatNone.")
    ctx.syncplay.set_repeat_mode(_device(auth), data.Mode)


@operation("SyncPlaySetShuffleMode")
async def set_shuffle_mode(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.SetShuffleModeRequestDto]) -> None:
    if data.Mode not in ENUMS["GroupShuffleMode"]:
        raise BadRequestError("Mode must be Sorted or Shuffle.")
    ctx.syncplay.set_shuffle_mode(_device(auth), data.Mode)


@operation("SyncPlayUnpause")
async def unpause(ctx: ServerContext, auth: AuthInfo | None) -> None:
    ctx.syncplay.unpause(_device(auth))


@operation("SyncPlayPause")
async def pause(ctx: ServerContext, auth: AuthInfo | None) -> None:
    ctx.syncplay.pause(_device(auth))


@operation("SyncPlayStop")
async def stop(ctx: ServerContext, auth: AuthInfo | None) -> None:
    ctx.syncplay.stop(_device(auth))


@operation("SyncPlaySeek")
async def seek(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.SeekRequestDto]) -> None:
    if data.PositionTicks is None:
        raise BadRequestError("PositionTicks is required.")
    ctx.syncplay.seek(_device(auth), data.PositionTicks)


@operation("SyncPlayBuffering")
async def buffering(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.BufferRequestDto]) -> None:
    ctx.syncplay.buffering(_device(auth), _playlist_item(data.PlaylistItemId), data.PositionTicks,
                           bool(data.IsPlaying), data.When)


@operation("SyncPlayReady")
async def ready(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.ReadyRequestDto]) -> None:
    ctx.syncplay.ready(_device(auth), _playlist_item(data.PlaylistItemId), data.PositionTicks, bool(data.IsPlaying),
                       data.When)


@operation("SyncPlayPing")
async def ping(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.PingRequestDto]) -> None:
    ctx.syncplay.ping(_device(auth), int(data.Ping or 0))


@operation("SyncPlaySetIgnoreWait")
async def set_ignore_wait(ctx: ServerContext, auth: AuthInfo | None, data: JSONBody[w.IgnoreWaitRequestDto]) -> None:
    ctx.syncplay.set_ignore_wait(_device(auth), bool(data.IgnoreWait))


def _playlist_item(value: str | None, required: bool = False) -> str | None:
    if not value:
        if required:
            raise BadRequestError("PlaylistItemId is required.")
        return None
    guid = normalize_guid(value)
    if guid is None:
        raise BadRequestError(f"PlaylistItemId is not a valid id: {value!r}")
    return guid
