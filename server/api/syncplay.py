"""SyncPlay: watch-together groups (server/syncplay/groups.py does the work; replies go out on
the participants' sockets as SyncPlayGroupUpdate and SyncPlayCommand messages)."""

from __future__ import annotations

from server.api.base import operation, require_user
from server.auth.service import AuthInfo
from server.context import ServerContext
from server.errors import BadRequestError
from server.guid import normalize_guid, parse_guid
from server.syncplay.groups import Participant
from server.wire import models as w
from server.wire.models import ENUMS


def _me(ctx: ServerContext, auth: AuthInfo | None) -> Participant:
    auth = require_user(auth)
    if auth.user is None:
        raise BadRequestError("SyncPlay needs a user session, not an API key.")
    session = ctx.sessions.by_device(auth.device_id)
    return Participant(session_id=session.id if session else auth.device_id, device_id=auth.device_id,
                       user_id=auth.user.id, user_name=auth.user.name)


def _device(auth: AuthInfo | None) -> str:
    return require_user(auth).device_id


@operation("SyncPlayGetGroups")
async def get_groups(ctx: ServerContext, auth: AuthInfo | None) -> list[w.GroupInfoDto]:
    require_user(auth)
    return [w.GroupInfoDto(**info) for info in ctx.syncplay.list_groups()]


@operation("SyncPlayCreateGroup")
async def create_group(ctx: ServerContext, auth: AuthInfo | None, data: w.NewGroupRequestDto) -> None:
    ctx.syncplay.create(_me(ctx, auth), data.GroupName)


@operation("SyncPlayJoinGroup")
async def join_group(ctx: ServerContext, auth: AuthInfo | None, data: w.JoinGroupRequestDto) -> None:
    ctx.syncplay.join(_me(ctx, auth), parse_guid(data.GroupId, "GroupId"))


@operation("SyncPlayLeaveGroup")
async def leave_group(ctx: ServerContext, auth: AuthInfo | None) -> None:
    device_id = _device(auth)
    ctx.syncplay.require_group(device_id)
    ctx.syncplay.leave(device_id)


@operation("SyncPlaySetNewQueue")
async def set_new_queue(ctx: ServerContext, auth: AuthInfo | None, data: w.PlayRequestDto) -> None:
    ids = [parse_guid(i, "PlayingQueue") for i in data.PlayingQueue or []]
    ctx.syncplay.set_new_queue(_device(auth), ids, data.PlayingItemPosition or 0, data.StartPositionTicks or 0)


@operation("SyncPlaySetPlaylistItem")
async def set_playlist_item(ctx: ServerContext, auth: AuthInfo | None, data: w.SetPlaylistItemRequestDto) -> None:
    ctx.syncplay.set_playlist_item(_device(auth), _playlist_item(data.PlaylistItemId, required=True))


@operation("SyncPlayRemoveFromPlaylist")
async def remove_from_playlist(ctx: ServerContext, auth: AuthInfo | None,
                               data: w.RemoveFromPlaylistRequestDto) -> None:
    ids = [_playlist_item(i, required=True) for i in data.PlaylistItemIds or []]
    ctx.syncplay.remove_items(_device(auth), ids, bool(data.ClearPlaylist), bool(data.ClearPlayingItem))


@operation("SyncPlayMovePlaylistItem")
async def move_playlist_item(ctx: ServerContext, auth: AuthInfo | None, data: w.MovePlaylistItemRequestDto) -> None:
    if data.NewIndex is None or data.NewIndex < 0:
        raise BadRequestError("NewIndex must be zero or more.")
    ctx.syncplay.move_item(_device(auth), _playlist_item(data.PlaylistItemId, required=True), data.NewIndex)


@operation("SyncPlayQueue")
async def queue(ctx: ServerContext, auth: AuthInfo | None, data: w.QueueRequestDto) -> None:
    ids = [parse_guid(i, "ItemIds") for i in data.ItemIds or []]
    if data.Mode is not None and data.Mode not in ENUMS["GroupQueueMode"]:
        raise BadRequestError("Mode must be Queue or QueueNext.")
    ctx.syncplay.queue_items(_device(auth), ids, data.Mode or "Queue")


@operation("SyncPlayNextItem")
async def next_item(ctx: ServerContext, auth: AuthInfo | None, data: w.NextItemRequestDto) -> None:
    ctx.syncplay.next_item(_device(auth), _playlist_item(data.PlaylistItemId))


@operation("SyncPlayPreviousItem")
async def previous_item(ctx: ServerContext, auth: AuthInfo | None, data: w.PreviousItemRequestDto) -> None:
    ctx.syncplay.previous_item(_device(auth), _playlist_item(data.PlaylistItemId))


@operation("SyncPlaySetRepeatMode")
async def set_repeat_mode(ctx: ServerContext, auth: AuthInfo | None, data: w.SetRepeatModeRequestDto) -> None:
    if data.Mode not in ENUMS["GroupRepeatMode"]:
        raise BadRequestError("Mode must be RepeatOne, RepeatAll or RepeatNone.")
    ctx.syncplay.set_repeat_mode(_device(auth), data.Mode)


@operation("SyncPlaySetShuffleMode")
async def set_shuffle_mode(ctx: ServerContext, auth: AuthInfo | None, data: w.SetShuffleModeRequestDto) -> None:
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
async def seek(ctx: ServerContext, auth: AuthInfo | None, data: w.SeekRequestDto) -> None:
    if data.PositionTicks is None:
        raise BadRequestError("PositionTicks is required.")
    ctx.syncplay.seek(_device(auth), data.PositionTicks)


@operation("SyncPlayBuffering")
async def buffering(ctx: ServerContext, auth: AuthInfo | None, data: w.BufferRequestDto) -> None:
    ctx.syncplay.buffering(_device(auth), _playlist_item(data.PlaylistItemId), data.PositionTicks,
                           bool(data.IsPlaying))


@operation("SyncPlayReady")
async def ready(ctx: ServerContext, auth: AuthInfo | None, data: w.ReadyRequestDto) -> None:
    ctx.syncplay.ready(_device(auth), _playlist_item(data.PlaylistItemId), data.PositionTicks, bool(data.IsPlaying))


@operation("SyncPlayPing")
async def ping(ctx: ServerContext, auth: AuthInfo | None, data: w.PingRequestDto) -> None:
    ctx.syncplay.ping(_device(auth), int(data.Ping or 0))


@operation("SyncPlaySetIgnoreWait")
async def set_ignore_wait(ctx: ServerContext, auth: AuthInfo | None, data: w.IgnoreWaitRequestDto) -> None:
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
