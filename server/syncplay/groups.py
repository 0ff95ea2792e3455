"""SyncPlay: groups of sessions that watch the same queue together.

A group has participants (sessions, by device), a play queue of ``{ItemId, PlaylistItemId}``,
and a state: Idle (nothing playing), Waiting (someone must load or buffer before the group may
go on), Paused or Playing. The server never plays anything itself; it tells each participant's
socket what to do and when:

- ``SyncPlayGroupUpdate`` messages carry ``{GroupId, Type, Data}``: GroupJoined (GroupInfoDto),
  UserJoined / UserLeft (a user name), GroupLeft (the group id), PlayQueue (PlayQueueUpdate),
  StateUpdate (GroupStateUpdate), NotInGroup and GroupDoesNotExist.
- ``SyncPlayCommand`` messages carry a SendCommand: Unpause, Pause, Stop or Seek, with the
  position and the wall-clock time (``When``) at which every participant should act. ``When``
  lies a little in the future (the slowest participant's ping, at least a floor), so that the
  group starts together.

Anything that makes players load (a new queue, a seek, another item) puts the group in Waiting
until every participant that has not asked to be ignored reports Ready; the group then goes on
to the state it was heading for (Playing or Paused). A participant that buffers while the group
plays pauses everyone until it is ready again.

All state lives in memory, like Jellyfin's: groups end with the server. Every public method runs
on the event loop (handlers call it directly), so no locking is needed.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from server.errors import BadRequestError, ForbiddenError
from server.events.hub import EventHub

TICKS_PER_SECOND = 10_000_000
MIN_DELAY_MS = 400  # the floor of how far ahead a synchronised command is scheduled
MAX_DELAY_MS = 5000
DEFAULT_PING_MS = 500  # the least time a resuming group is given to start together
MAX_PLAYBACK_OFFSET_MS = 500  # a Ready client further off than this is sent a corrective Seek
TIME_SYNC_OFFSET_MS = 2000  # a client clock further off than this: its When is ignored


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class Participant:
    session_id: str
    device_id: str
    user_id: str
    user_name: str
    ping_ms: int = 0
    ignore_wait: bool = False


@dataclass
class QueueItem:
    item_id: str
    playlist_item_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def dto(self) -> dict[str, str]:
        return {"ItemId": self.item_id, "PlaylistItemId": self.playlist_item_id}


@dataclass
class Group:
    id: str
    name: str
    participants: dict[str, Participant] = field(default_factory=dict)  # by device id
    state: str = "Idle"
    queue: list[QueueItem] = field(default_factory=list)
    sorted_queue: list[QueueItem] = field(default_factory=list)  # the order before shuffling
    playing_index: int = -1
    position_ticks: int = 0  # where playback stood at ``position_at``
    position_at: datetime = field(default_factory=_now)
    shuffle_mode: str = "Sorted"
    repeat_mode: str = "RepeatNone"
    waiting_for: set[str] = field(default_factory=set)  # device ids that must report Ready
    resume_playing: bool = False  # what Waiting leads to
    ignore_buffering: bool = False  # an Unpause forced playback: buffering reports are ignored until next change
    last_updated: datetime = field(default_factory=_now)

    # -- facts ----------------------------------------------------------------------------

    @property
    def playing_item(self) -> QueueItem | None:
        if 0 <= self.playing_index < len(self.queue):
            return self.queue[self.playing_index]
        return None

    def current_ticks(self, at: datetime | None = None) -> int:
        if self.state != "Playing":
            return self.position_ticks
        elapsed = max(0.0, ((at or _now()) - self.position_at).total_seconds())  # not before the start
        return self.position_ticks + int(elapsed * TICKS_PER_SECOND)

    def info(self) -> dict[str, Any]:
        return {"GroupId": self.id, "GroupName": self.name, "State": self.state,
                "Participants": sorted({p.user_name for p in self.participants.values()}),
                "LastUpdatedAt": _iso(self.last_updated)}

    def queue_update(self, reason: str) -> dict[str, Any]:
        return {"Reason": reason, "LastUpdate": _iso(self.last_updated),
                "Playlist": [q.dto() for q in self.queue], "PlayingItemIndex": self.playing_index,
                "StartPositionTicks": self.current_ticks(), "IsPlaying": self.state == "Playing",
                "ShuffleMode": self.shuffle_mode, "RepeatMode": self.repeat_mode}


class SyncPlayManager:
    def __init__(self, events: EventHub) -> None:
        self.events = events
        self.groups: dict[str, Group] = {}
        self._by_device: dict[str, str] = {}  # device id -> group id

    # -- membership -----------------------------------------------------------------------

    def all_groups(self) -> list[Group]:
        return sorted(self.groups.values(), key=lambda g: g.name.casefold())

    def list_groups(self) -> list[dict[str, Any]]:
        return [g.info() for g in self.all_groups()]

    def group_of(self, device_id: str) -> Group | None:
        group_id = self._by_device.get(device_id)
        return self.groups.get(group_id) if group_id else None

    def require_group(self, device_id: str) -> Group:
        group = self.group_of(device_id)
        if group is None:
            self._update(device_id, "", "NotInGroup", "")
            raise ForbiddenError("This operation requires the session to be in a SyncPlay group.")
        return group

    def create(self, who: Participant, name: str | None) -> Group:
        self.leave(who.device_id, quiet=True)
        group = Group(id=uuid.uuid4().hex, name=(name or "").strip() or f"{who.user_name}'s group")
        self.groups[group.id] = group
        self._add(group, who)
        self._update(who.device_id, group.id, "GroupJoined", group.info())
        self._command(group, "Stop", to=[who.device_id])  # an idle group: the creator stops what it plays
        return group

    def join(self, who: Participant, group_id: str) -> Group | None:
        """Join a group. An idle group tells the newcomer to stop; a playing or paused one saves
        its position, pauses the members that are already loaded at that moment, sends the
        newcomer the queue at that position and waits for it to be Ready (then resumes if it
        was playing). Library access is checked by the caller (server/api/syncplay.py)."""
        group = self.groups.get(group_id)
        if group is None:
            self._update(who.device_id, group_id, "GroupDoesNotExist", group_id)
            return None
        if self._by_device.get(who.device_id) == group.id:
            group.participants[who.device_id].ping_ms = who.ping_ms
            self._update(who.device_id, group.id, "GroupJoined", group.info())
            return group
        self.leave(who.device_id, quiet=True)
        self._add(group, who)
        self._update(who.device_id, group.id, "GroupJoined", group.info())
        self._broadcast_update(group, "UserJoined", who.user_name, exclude=who.device_id)
        if group.state == "Idle" or group.playing_item is None:
            self._command(group, "Stop", to=[who.device_id])
            return group
        if group.state == "Playing":
            group.resume_playing = True
            self._set_position(group, group.current_ticks())  # where the group is now
        elif group.state == "Paused":
            group.resume_playing = False
        group.state = "Waiting"
        group.last_updated = _now()
        self._update(who.device_id, group.id, "PlayQueue", group.queue_update("NewPlaylist"))
        if not who.ignore_wait:
            group.waiting_for.add(who.device_id)
        ready = [d for d in group.participants if d not in group.waiting_for]
        self._command(group, "Pause", to=ready)
        if not group.waiting_for:
            self._go(group, "Ready")
        return group

    def deny(self, device_id: str, group_id: str) -> None:
        """The user may not see an item of the group's queue (or of a queue change)."""
        self._update(device_id, group_id, "LibraryAccessDenied", "")

    def leave(self, device_id: str, quiet: bool = False) -> None:
        group = self.group_of(device_id)
        if group is None:
            if not quiet:
                self._update(device_id, "", "NotInGroup", "")
            return
        who = group.participants.pop(device_id)
        self._by_device.pop(device_id, None)
        group.waiting_for.discard(device_id)
        group.last_updated = _now()
        self._update(device_id, group.id, "GroupLeft", group.id)
        if not group.participants:
            del self.groups[group.id]
            return
        self._broadcast_update(group, "UserLeft", who.user_name)
        self._maybe_release(group)

    def forget_device(self, device_id: str) -> None:
        """The session ended (logout, session end): take it out of its group."""
        if device_id in self._by_device:
            self.leave(device_id, quiet=True)

    # -- the queue ------------------------------------------------------------------------

    def set_new_queue(self, device_id: str, item_ids: list[str], index: int, start_ticks: int) -> None:
        group = self.require_group(device_id)
        if not item_ids:
            raise BadRequestError("PlayingQueue must name at least one item.")
        if not 0 <= index < len(item_ids):
            raise BadRequestError("PlayingItemPosition is outside the queue.")
        group.queue = [QueueItem(i) for i in item_ids]
        group.sorted_queue = list(group.queue)
        group.shuffle_mode = "Sorted"
        group.playing_index = index
        self._set_position(group, max(0, start_ticks))
        self._queue_changed(group, "NewPlaylist")
        self._wait_for(group, list(group.participants), resume_playing=True, reason="Play")

    def set_playlist_item(self, device_id: str, playlist_item_id: str) -> None:
        group = self.require_group(device_id)
        index = self._index_of(group, playlist_item_id)
        group.playing_index = index
        self._set_position(group, 0)
        self._queue_changed(group, "SetCurrentItem")
        self._wait_for(group, list(group.participants), resume_playing=True, reason="SetPlaylistItem")

    def next_item(self, device_id: str, playlist_item_id: str | None) -> None:
        self._step(device_id, playlist_item_id, +1, "NextItem")

    def previous_item(self, device_id: str, playlist_item_id: str | None) -> None:
        self._step(device_id, playlist_item_id, -1, "PreviousItem")

    def queue_items(self, device_id: str, item_ids: list[str], mode: str) -> None:
        group = self.require_group(device_id)
        if not item_ids:
            raise BadRequestError("ItemIds must name at least one item.")
        new = [QueueItem(i) for i in item_ids]
        if mode == "QueueNext" and group.playing_item is not None:
            at = group.playing_index + 1
            group.queue[at:at] = new
            current = group.playing_item
            sorted_at = group.sorted_queue.index(current) + 1 if current in group.sorted_queue else 0
            group.sorted_queue[sorted_at:sorted_at] = new
        else:
            group.queue.extend(new)
            group.sorted_queue.extend(new)
        if group.playing_index < 0:
            group.playing_index = 0
        self._queue_changed(group, "QueueNext" if mode == "QueueNext" else "Queue")

    def remove_items(self, device_id: str, playlist_item_ids: list[str], clear_playlist: bool,
                     clear_playing_item: bool) -> None:
        group = self.require_group(device_id)
        playing = group.playing_item
        if clear_playlist:
            keep = [playing] if playing is not None and not clear_playing_item else []
        else:
            doomed = set(playlist_item_ids)
            keep = [q for q in group.queue if q.playlist_item_id not in doomed]
        group.queue = keep
        group.sorted_queue = [q for q in group.sorted_queue if q in keep]
        if playing is not None and playing in keep:
            group.playing_index = keep.index(playing)
        else:
            group.playing_index = 0 if keep else -1
            if playing is not None:
                self._set_position(group, 0)
                if keep:
                    self._wait_for(group, list(group.participants), resume_playing=group.state == "Playing",
                                   reason="RemoveFromPlaylist")
                else:
                    self._stop(group, "RemoveFromPlaylist")
        self._queue_changed(group, "RemoveItems")

    def move_item(self, device_id: str, playlist_item_id: str, new_index: int) -> None:
        group = self.require_group(device_id)
        index = self._index_of(group, playlist_item_id)
        playing = group.playing_item
        item = group.queue.pop(index)
        new_index = max(0, min(new_index, len(group.queue)))
        group.queue.insert(new_index, item)
        if playing is not None:
            group.playing_index = group.queue.index(playing)
        self._queue_changed(group, "MoveItem")

    def set_repeat_mode(self, device_id: str, mode: str) -> None:
        group = self.require_group(device_id)
        group.repeat_mode = mode
        self._queue_changed(group, "RepeatMode")

    def set_shuffle_mode(self, device_id: str, mode: str) -> None:
        group = self.require_group(device_id)
        playing = group.playing_item
        if mode == "Shuffle":
            rest = [q for q in group.sorted_queue if q is not playing]
            random.shuffle(rest)
            group.queue = ([playing] if playing is not None else []) + rest
        else:
            group.queue = list(group.sorted_queue)
        if playing is not None:
            group.playing_index = group.queue.index(playing)
        group.shuffle_mode = mode
        self._queue_changed(group, "ShuffleMode")

    # -- playback -------------------------------------------------------------------------

    def unpause(self, device_id: str) -> None:
        group = self.require_group(device_id)
        if group.playing_item is None:
            return
        if group.state == "Playing":  # already playing: make sure this client is too
            self._command(group, "Unpause", when=group.position_at, to=[device_id])
            return
        if group.state == "Waiting":
            if group.resume_playing:
                # An unpause while the group waits to resume forces the start: those still
                # loading catch up, and buffering reports are ignored until the next change.
                group.waiting_for.clear()
                group.ignore_buffering = True
                self._go(group, "Unpause")
            else:
                group.resume_playing = True  # it was heading for Paused; now for Playing
                self._state_update(group, "Unpause")
            return
        if group.state == "Idle":  # start the current item again, once everyone has loaded it
            self._set_position(group, 0)
            self._queue_changed(group, "NewPlaylist")
            self._wait_for(group, list(group.participants), resume_playing=True, reason="Unpause")
            return
        self._wait_or_go(group, resume_playing=True, reason="Unpause")

    def pause(self, device_id: str) -> None:
        group = self.require_group(device_id)
        if group.state == "Playing":
            self._set_position(group, group.current_ticks())
        group.resume_playing = False
        if group.state != "Waiting":
            self._set_state(group, "Paused", "Pause")
        self._command(group, "Pause")

    def stop(self, device_id: str) -> None:
        group = self.require_group(device_id)
        self._stop(group, "Stop")

    def seek(self, device_id: str, position_ticks: int) -> None:
        group = self.require_group(device_id)
        if position_ticks < 0:
            raise BadRequestError("PositionTicks must not be negative.")
        if group.playing_item is None:
            return
        resume = group.resume_playing if group.state == "Waiting" else group.state == "Playing"
        self._set_position(group, position_ticks)
        self._command(group, "Seek")
        self._wait_for(group, list(group.participants), resume_playing=resume, reason="Seek")

    def buffering(self, device_id: str, playlist_item_id: str | None, position_ticks: int | None,
                  is_playing: bool, when: datetime | None = None) -> None:
        """A participant is loading or stalled. Playing: the group's position is saved and the
        others (the ready ones) pause until it is Ready; Paused: only it is told to stay paused."""
        group = self.require_group(device_id)
        if group.state == "Idle" or group.playing_item is None:
            self._command(group, "Stop", to=[device_id])
            return
        if group.state == "Playing" and group.ignore_buffering:
            return
        if not self._about_current(group, playlist_item_id):
            self._update(device_id, group.id, "PlayQueue", group.queue_update("SetCurrentItem"))
            group.waiting_for.add(device_id)
            return
        if group.state == "Playing":
            group.resume_playing = True
            group.waiting_for.add(device_id)
            self._set_position(group, group.current_ticks())
            group.state = "Waiting"
            self._command(group, "Pause", to=[d for d in group.participants if d not in group.waiting_for])
        elif group.state == "Paused":
            group.resume_playing = False
            group.waiting_for.add(device_id)
            group.state = "Waiting"
            self._command(group, "Pause", to=[device_id])
        else:  # Waiting: one more is loading
            group.waiting_for.add(device_id)
            if not group.resume_playing:
                self._command(group, "Pause", to=[device_id])
        group.last_updated = _now()
        self._state_update(group, "Buffer")

    def ready(self, device_id: str, playlist_item_id: str | None, position_ticks: int | None,
              is_playing: bool, when: datetime | None = None) -> None:
        """A participant has loaded (or recovered). Its reported position, the moment it
        reported it and whether it plays are checked against the group's: more than
        MAX_PLAYBACK_OFFSET_MS off and it is sent a corrective Seek (and still waited for); when
        everyone is ready the group resumes or stays paused, as it was heading."""
        group = self.require_group(device_id)
        if group.state == "Idle" or group.playing_item is None:
            return
        if not self._about_current(group, playlist_item_id):
            # Ready for an item the group has left behind: tell it what is playing now.
            self._update(device_id, group.id, "PlayQueue", group.queue_update("SetCurrentItem"))
            if group.state == "Waiting" and not group.participants[device_id].ignore_wait:
                group.waiting_for.add(device_id)
            return
        if group.state == "Playing":  # not waiting: make sure it has the latest state
            self._command(group, "Unpause", when=group.position_at, to=[device_id])
            return
        if group.state == "Paused":
            self._command(group, "Pause", to=[device_id])
            return
        now = _now()
        elapsed = 0.0
        if when is not None and is_playing:
            elapsed = (now - (when if when.tzinfo else when.replace(tzinfo=UTC))).total_seconds()
            if abs(elapsed) * 1000 > TIME_SYNC_OFFSET_MS:
                elapsed = 0.0  # its clock is off: do not trust its When
        reported = max(0, position_ticks or 0)
        client_ticks = reported + int(elapsed * TICKS_PER_SECOND)
        delay_ticks = group.position_ticks - client_ticks
        max_offset = MAX_PLAYBACK_OFFSET_MS * TICKS_PER_SECOND // 1000
        if group.resume_playing:
            if not is_playing and abs(delay_ticks) > max_offset:
                self._correct(group, device_id)
                return
            group.waiting_for.discard(device_id)
            if group.waiting_for:  # others are still loading: pause there when it gets there
                self._command(group, "Pause", when=now + timedelta(seconds=delay_ticks / TICKS_PER_SECOND),
                              to=[device_id])
                return
            highest = 2 * max((p.ping_ms for p in group.participants.values()), default=0)
            if delay_ticks > highest * TICKS_PER_SECOND // 1000:
                # It is behind: the others resume when it gets to where they paused.
                start = now + timedelta(seconds=delay_ticks / TICKS_PER_SECOND)
                targets = [d for d in group.participants if is_playing is False or d != device_id]
            else:
                start = now + timedelta(milliseconds=min(max(highest, DEFAULT_PING_MS), MAX_DELAY_MS))
                targets = list(group.participants)
            group.position_at = start
            group.state = "Playing"
            group.ignore_buffering = False
            group.last_updated = now
            self._command(group, "Unpause", when=start, to=targets)
            self._state_update(group, "Ready")
        else:
            if abs(group.position_ticks - reported) > max_offset:
                self._correct(group, device_id)
                return
            group.waiting_for.discard(device_id)
            if not group.waiting_for:
                group.state = "Paused"
                group.last_updated = now
                self._command(group, "Pause")
                self._state_update(group, "Ready")

    def _correct(self, group: Group, device_id: str) -> None:
        """A Ready participant is not where the group is: seek it there and wait for it again."""
        if not group.participants[device_id].ignore_wait:
            group.waiting_for.add(device_id)
        self._command(group, "Seek", when=_now(), to=[device_id])
        self._state_update(group, "Ready")

    def ping(self, device_id: str, ping_ms: int) -> None:
        group = self.group_of(device_id)
        if group is not None and device_id in group.participants:
            group.participants[device_id].ping_ms = max(0, min(ping_ms, MAX_DELAY_MS))

    def set_ignore_wait(self, device_id: str, ignore: bool) -> None:
        group = self.require_group(device_id)
        group.participants[device_id].ignore_wait = ignore
        if ignore:
            group.waiting_for.discard(device_id)
            self._maybe_release(group)

    # -- internals ------------------------------------------------------------------------

    def _add(self, group: Group, who: Participant) -> None:
        group.participants[who.device_id] = who
        self._by_device[who.device_id] = group.id
        group.last_updated = _now()

    def _index_of(self, group: Group, playlist_item_id: str) -> int:
        for i, q in enumerate(group.queue):
            if q.playlist_item_id == playlist_item_id:
                return i
        raise BadRequestError(f"No queue entry has PlaylistItemId {playlist_item_id!r}.")

    def _about_current(self, group: Group, playlist_item_id: str | None) -> bool:
        current = group.playing_item
        return current is not None and (not playlist_item_id or playlist_item_id == current.playlist_item_id)

    def _step(self, device_id: str, playlist_item_id: str | None, delta: int, reason: str) -> None:
        group = self.require_group(device_id)
        if not self._about_current(group, playlist_item_id):
            return  # a stale request (someone else already moved on)
        target = group.playing_index + delta
        if not 0 <= target < len(group.queue):
            if group.repeat_mode != "RepeatAll" or not group.queue:
                return
            target %= len(group.queue)
        group.playing_index = target
        self._set_position(group, 0)
        self._queue_changed(group, reason)
        self._wait_for(group, list(group.participants), resume_playing=True, reason=reason)

    def _stop(self, group: Group, reason: str) -> None:
        group.waiting_for.clear()
        group.resume_playing = False
        self._set_position(group, 0)
        self._set_state(group, "Idle", reason)
        self._command(group, "Stop")

    def _set_position(self, group: Group, ticks: int) -> None:
        group.position_ticks = ticks
        group.position_at = _now()

    def _wait_for(self, group: Group, devices: list[str], resume_playing: bool, reason: str) -> None:
        group.waiting_for |= {d for d in devices if d in group.participants
                              and not group.participants[d].ignore_wait}
        group.resume_playing = resume_playing
        group.ignore_buffering = False
        if group.waiting_for:
            self._set_state(group, "Waiting", reason)
        else:
            self._go(group, reason)

    def _wait_or_go(self, group: Group, resume_playing: bool, reason: str) -> None:
        group.resume_playing = resume_playing
        if group.waiting_for:
            self._set_state(group, "Waiting", reason)
        else:
            self._go(group, reason)

    def _maybe_release(self, group: Group) -> None:
        if group.state == "Waiting" and not group.waiting_for:
            self._go(group, "Ready")

    def _go(self, group: Group, reason: str) -> None:
        if group.playing_item is None:
            self._set_state(group, "Idle", reason)
            return
        if group.resume_playing:
            delay = max(MIN_DELAY_MS, 2 * max((p.ping_ms for p in group.participants.values()), default=0))
            when = _now() + timedelta(milliseconds=min(delay, MAX_DELAY_MS))
            group.position_at = when  # playback (re)starts at ``when`` from position_ticks
            group.state = "Playing"
            group.last_updated = _now()
            self._state_update(group, reason)
            self._command(group, "Unpause", when=when)
        else:
            self._set_state(group, "Paused", reason)
            self._command(group, "Pause")

    def _set_state(self, group: Group, state: str, reason: str) -> None:
        changed = group.state != state
        group.state = state
        group.last_updated = _now()
        if changed:
            self._state_update(group, reason)

    def _queue_changed(self, group: Group, reason: str) -> None:
        group.last_updated = _now()
        self._broadcast_update(group, "PlayQueue", group.queue_update(reason))

    def _state_update(self, group: Group, reason: str, to: list[str] | None = None) -> None:
        data = {"State": group.state, "Reason": reason if reason in _REQUEST_TYPES else "Ready"}
        for device_id in to if to is not None else list(group.participants):
            self._update(device_id, group.id, "StateUpdate", data)

    def _command(self, group: Group, command: str, when: datetime | None = None,
                 to: list[str] | None = None) -> None:
        playing = group.playing_item
        now = _now()
        data = {"GroupId": group.id, "PlaylistItemId": playing.playlist_item_id if playing else "0" * 32,
                "When": _iso(when or now), "PositionTicks": group.position_ticks if command != "Stop" else 0,
                "Command": command, "EmittedAt": _iso(now)}
        for device_id in group.participants if to is None else to:
            self.events.send_to_device(device_id, "SyncPlayCommand", data)

    def _broadcast_update(self, group: Group, kind: str, data: Any, exclude: str | None = None) -> None:
        for device_id in group.participants:
            if device_id != exclude:
                self._update(device_id, group.id, kind, data)

    def _update(self, device_id: str, group_id: str, kind: str, data: Any) -> None:
        self.events.send_to_device(device_id, "SyncPlayGroupUpdate",
                                   {"GroupId": group_id or "0" * 32, "Type": kind, "Data": data})


# PlaybackRequestType members (the spec's enum) a StateUpdate may name as its reason.
_REQUEST_TYPES = frozenset({
    "Play", "SetPlaylistItem", "RemoveFromPlaylist", "MovePlaylistItem", "Queue", "Unpause", "Pause", "Stop",
    "Seek", "Buffer", "Ready", "NextItem", "PreviousItem", "SetRepeatMode", "SetShuffleMode", "Ping",
    "IgnoreWait",
})
