"""Live sessions: one per device that signed in or called recently, kept in memory, with its
capabilities and what it is playing (filled by the playback domain)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from server.auth.service import AuthInfo
from server.events.hub import EventHub
from server.wire import models as w


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class LiveSession:
    id: str
    device_id: str
    device_name: str
    client: str
    version: str
    user_id: str | None
    user_name: str | None
    remote_address: str
    last_activity: datetime = field(default_factory=_now)
    capabilities: w.ClientCapabilitiesDto | None = None
    now_playing: Any = None  # BaseItemDto, set by playback
    play_state: w.PlayerStateInfo | None = None
    last_playback_check_in: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dto(self, server_id: str, has_socket: bool) -> w.SessionInfoDto:
        caps = self.capabilities
        return w.SessionInfoDto(
            AdditionalUsers=[w.SessionUserInfo(UserId=uid, UserName=name)
                             for uid, name in self.extra.get("additional_users", {}).items()],
            PlayState=self.play_state or w.PlayerStateInfo(CanSeek=False, IsPaused=False, IsMuted=False,
                                                           RepeatMode="RepeatNone", PlaybackOrder="Default"),
            Capabilities=caps or w.ClientCapabilitiesDto(
                PlayableMediaTypes=[], SupportedCommands=[], SupportsMediaControl=False,
                SupportsPersistentIdentifier=True),
            RemoteEndPoint=self.remote_address, PlayableMediaTypes=(caps.PlayableMediaTypes if caps else None) or [],
            Id=self.id, UserId=self.user_id or "0" * 32, UserName=self.user_name, Client=self.client,
            LastActivityDate=self.last_activity, LastPlaybackCheckIn=self.last_playback_check_in or datetime(
                1, 1, 1, tzinfo=UTC), DeviceName=self.device_name, DeviceId=self.device_id,
            ApplicationVersion=self.version, NowPlayingItem=self.now_playing, IsActive=True,
            SupportsMediaControl=bool(caps and caps.SupportsMediaControl), SupportsRemoteControl=has_socket,
            NowPlayingQueue=[], NowPlayingQueueFullItems=[], HasCustomDeviceName=False, ServerId=server_id,
            SupportedCommands=(caps.SupportedCommands if caps else None) or [])


class SessionManager:
    def __init__(self, events: EventHub, server_id: str) -> None:
        self.events = events
        self.server_id = server_id
        self._by_device: dict[str, LiveSession] = {}
        self._end_listeners: list[Callable[[str], None]] = []

    def on_end(self, fn: Callable[[str], None]) -> None:
        """Call ``fn(device_id)`` when a device's session ends (sign-out, user removed)."""
        self._end_listeners.append(fn)

    def _ended(self, device_id: str) -> None:
        for fn in self._end_listeners:
            fn(device_id)

    def touch(self, auth: AuthInfo, remote_address: str) -> LiveSession:
        session = self._by_device.get(auth.device_id)
        user_id = auth.user.id if auth.user else None
        if session is None or session.user_id != user_id:
            session = LiveSession(
                id=uuid.uuid4().hex, device_id=auth.device_id, device_name=auth.device_name, client=auth.client,
                version=auth.version, user_id=user_id, user_name=auth.user.name if auth.user else None,
                remote_address=remote_address)
            self._by_device[auth.device_id] = session
            self.events.changed("Sessions")
        else:
            session.last_activity = _now()
            session.remote_address = remote_address or session.remote_address
            self.events.changed("Sessions", force=False)  # activity: at most once a period
        return session

    def end(self, device_id: str) -> None:
        if self._by_device.pop(device_id, None) is not None:
            self._ended(device_id)
            self.events.changed("Sessions")

    def end_user(self, user_id: str) -> None:
        for dev in [d for d, s in self._by_device.items() if s.user_id == user_id]:
            self._by_device.pop(dev, None)
            self._ended(dev)
            self.events.changed("Sessions")

    def by_device(self, device_id: str) -> LiveSession | None:
        return self._by_device.get(device_id)

    def by_id(self, session_id: str) -> LiveSession | None:
        return next((s for s in self._by_device.values() if s.id == session_id), None)

    def list(self, *, user_id: str | None = None, device_id: str | None = None,
             active_within_seconds: int | None = None) -> list[LiveSession]:
        out = list(self._by_device.values())
        if user_id:
            out = [s for s in out if s.user_id == user_id]
        if device_id:
            out = [s for s in out if s.device_id == device_id]
        if active_within_seconds is not None and active_within_seconds < 100 * 365 * 86400:  # else: everyone
            cutoff = _now() - timedelta(seconds=active_within_seconds)
            out = [s for s in out if s.last_activity >= cutoff]
        return sorted(out, key=lambda s: s.last_activity, reverse=True)

    def dtos(self, sessions: list[LiveSession]) -> list[w.SessionInfoDto]:
        sockets = {c.device_id for c in self.events.clients}
        return [s.to_dto(self.server_id, s.device_id in sockets) for s in sessions]
