"""Playback for handlers: PlaybackInfo, what a stream request serves, and play-state reports.

- ``PlaybackInfoService`` (``ctx.playback``) builds the item's media sources (server/library/catalog/media_sources.py, alternate
  versions included), runs the decision engine (decision.py) against the client's DeviceProfile
  and fills in TranscodingUrl, TranscodeReasons and the default streams.
- ``stream_plan`` says whether a stream request is served from the file as it is (byte ranges)
  or through ffmpeg (``progressive_args``: a remux or transcode written to a pipe).
- ``PlaybackReports`` turns start / progress / stop reports into user data (Jellyfin's resume
  rules: MinResumePct, MaxResumePct, MinResumeDurationSeconds) and into the Sessions view.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from server.db.handles import items
from server.errors import BadRequestError, NotFoundError
from server.library.catalog.media_sources import media_sources_for
from server.library.catalog.query import ItemRow, item_rows
from server.periodic import SaveEvery
from server.playback.decision import apply_decision, decide_playback
from server.playback.errors import PlaybackRequestError
from server.playback.options import PlaybackOptions
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database
    from server.events.hub import EventHub
    from server.library.catalog.items import ItemService
    from server.library.catalog.items import UserDataRecord as UserData
    from server.livetv.live import LiveStreamManager
    from server.playback.hls_service import TranscodeService
    from server.sessions.manager import SessionManager

log = logging.getLogger("reelroom.playback")

TICKS_PER_SECOND = 10_000_000

# Audio encoders for progressive (non-HLS) transcodes, by output container.
AUDIO_ENCODERS = {"mp3": "libmp3lame", "aac": "aac", "m4a": "aac", "mp4": "aac", "opus": "libopus",
                  "ogg": "libvorbis", "oga": "libvorbis", "webm": "libopus", "flac": "flac", "wav": "pcm_s16le",
                  "mka": "libopus", "ts": "aac", "mkv": "aac"}
FFMPEG_FORMATS = {"mp3": "mp3", "aac": "adts", "m4a": "ipod", "mp4": "mp4", "opus": "ogg", "ogg": "ogg",
                  "oga": "ogg", "webm": "webm", "flac": "flac", "wav": "wav", "mka": "matroska", "ts": "mpegts",
                  "mkv": "matroska", "mpegts": "mpegts"}


async def item_versions(db: Database, row: ItemRow) -> list[ItemRow]:
    """The alternate versions stored for an item (rows whose owner_id is the item, same type)."""
    def read(s: Session) -> list[ItemRow]:
        q = select(items).where(items.c.owner_id == row.id, items.c.type == row.type, items.c.extra_type.is_(None))
        return item_rows(s.execute(q))

    return await db.read(read)


def source_rows(row: ItemRow, versions: list[ItemRow]) -> dict[str, Any]:
    return {r.id: r for r in [row, *versions]}


class PlaybackInfoService:
    """``ctx.playback``: PlaybackInfo for an item (a Live TV channel's goes to ``channel_info``)."""

    def __init__(self, db: Database, items: ItemService, server_config: Callable[[], w.ServerConfiguration],
                 is_local_address: Callable[[str], bool],
                 channel_info: Callable[[Any, Any, w.PlaybackInfoDto], Awaitable[w.PlaybackInfoResponse]]) -> None:
        self.db = db
        self.items = items
        self.server_config = server_config  # RemoteClientBitrateLimit
        self.is_local_address = is_local_address
        self.channel_info = channel_info  # ChannelPlayback.playback_info

    async def info(self, auth, item_id: str, user_id: str | None, dto: w.PlaybackInfoDto,
                   remote_address: str | None = None) -> w.PlaybackInfoResponse:
        viewer = await self.items.viewer(auth, user_id)
        row = await self.items.row(item_id, viewer)
        if row.type == "TvChannel":
            return await self.channel_info(auth, row, dto)
        if row.is_folder or not row.path:
            raise BadRequestError(f"Item {item_id} has no media to play.")
        versions = await item_versions(self.db, row)
        sources = media_sources_for(row, versions)
        if dto.MediaSourceId:
            sources = [s for s in sources if s.Id == dto.MediaSourceId.replace("-", "").lower()]
            if not sources:
                raise NotFoundError(f"Item {item_id} has no media source {dto.MediaSourceId}.")
        user = viewer.user
        server = self.server_config()
        remote = remote_address is not None and not self.is_local_address(remote_address)
        play_session_id = uuid.uuid4().hex
        try:
            options = PlaybackOptions.from_request(
                row.id, dto, is_audio_item=row.media_type == "Audio", policy=user.policy if user else None,
                configuration=user.configuration if user else None, is_remote_client=remote,
                server_remote_bitrate_limit=server.RemoteClientBitrateLimit or None,
                play_session_id=play_session_id, device_id=auth.device_id if auth else None,
                api_key=auth.token if auth else None)
            decided = []
            for source in sources:
                decision = decide_playback(dto.DeviceProfile, source, options)
                decided.append((decision, apply_decision(source, decision)))
        except PlaybackRequestError as exc:
            raise BadRequestError(f"The playback request cannot be honoured: {exc}") from None
        error = None
        if not any(d.play_method for d, _ in decided):
            error = next((d.error_code for d, _ in decided if d.error_code), None) or "NoCompatibleStream"
        return w.PlaybackInfoResponse(MediaSources=[s for _, s in decided], PlaySessionId=play_session_id,
                                      ErrorCode=error)


# -- stream requests ------------------------------------------------------------------------------


@dataclass
class StreamPlan:
    path: str
    container: str | None  # the container of the reply
    direct: bool  # serve the file's bytes (ranges); else ffmpeg
    args: list[str] | None = None  # ffmpeg arguments after the binary, output to pipe:1


def _codecs(value: str | None) -> list[str]:
    return [c.strip().lower() for c in (value or "").split(",") if c.strip()]


def _stream_codec(row: ItemRow, kind: str) -> str | None:
    for s in json.loads(row.media_streams_json or "[]"):
        if s.get("Type") == kind and not s.get("IsExternal"):
            return (s.get("Codec") or "").lower() or None
    return None


def file_container(row: ItemRow) -> str | None:
    """The container a file is served as: its extension when the probe lists it (an .mp4 is
    probed as "mov,mp4,m4a,..."), else the probe's first name."""
    parts = [p for p in (row.container or "").lower().split(",") if p]
    ext = os.path.splitext(row.path or "")[1].lstrip(".").lower()
    if ext and (ext in parts or not parts):
        return ext
    return parts[0] if parts else None


def stream_plan(row: ItemRow, *, audio: bool, container: str | None, static: bool | None,
                video_codec: str | None = None, audio_codec: str | None = None, start_ticks: int | None = None,
                audio_bitrate: int | None = None, video_bitrate: int | None = None,
                max_width: int | None = None, max_height: int | None = None,
                audio_channels: int | None = None, audio_stream_index: int | None = None) -> StreamPlan:
    """Serve the file as it is when asked for it (static, no container, or the file's own
    container with codecs it has); else remux or transcode with ffmpeg to ``container``."""
    if not row.path:
        raise NotFoundError(f"Item {row.id} has no file.")
    own = (row.container or "").lower()
    wanted = (container or "").lower().lstrip(".")
    own_containers = set(own.split(","))
    v_src, a_src = _stream_codec(row, "Video"), _stream_codec(row, "Audio")
    v_want, a_want = _codecs(video_codec), _codecs(audio_codec)
    codecs_fit = (not v_want or v_src in v_want) and (not a_want or a_src in a_want)
    if static or not wanted or (wanted in own_containers and codecs_fit and not start_ticks
                                and not audio_bitrate and not video_bitrate):
        return StreamPlan(path=row.path, container=file_container(row), direct=True)
    fmt = FFMPEG_FORMATS.get(wanted)
    if fmt is None:
        raise BadRequestError(f"Reelroom cannot stream to the container {container!r}.")
    args = ["-nostdin", "-hide_banner", "-loglevel", "error"]
    if start_ticks:
        args += ["-ss", f"{start_ticks / TICKS_PER_SECOND:.3f}"]
    args += ["-i", row.path, "-map_metadata", "-1", "-map_chapters", "-1"]
    if audio:
        args += ["-vn", "-map", f"0:{audio_stream_index}" if audio_stream_index is not None else "0:a:0?"]
        codec = a_want[0] if a_want else None
        if codec and a_src == codec and not audio_bitrate:
            args += ["-c:a", "copy"]
        else:
            encoder = AUDIO_ENCODERS.get(codec or wanted) or AUDIO_ENCODERS.get(wanted, "aac")
            args += ["-c:a", encoder]
            if audio_bitrate and encoder not in ("flac", "pcm_s16le"):
                args += ["-b:a", str(min(audio_bitrate, 320_000))]
            if audio_channels:
                args += ["-ac", str(audio_channels)]
    else:
        args += ["-map", "0:v:0?", "-map", f"0:{audio_stream_index}" if audio_stream_index is not None else "0:a:0?",
                 "-sn"]
        if v_src and (not v_want or v_src in v_want) and not video_bitrate and not max_width and not max_height:
            args += ["-c:v", "copy"]
        else:
            args += ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"]
            if video_bitrate:
                args += ["-b:v", str(video_bitrate), "-maxrate", str(video_bitrate), "-bufsize", str(video_bitrate * 2)]
            if max_width or max_height:
                args += ["-vf", f"scale=w='min({max_width or 8192},iw)':h='min({max_height or 8192},ih)'"
                         ":force_original_aspect_ratio=decrease:force_divisible_by=2"]
        if a_src and (not a_want or a_src in a_want) and not audio_bitrate:
            args += ["-c:a", "copy"]
        else:
            args += ["-c:a", "aac", "-ac", str(audio_channels or 2)]
            if audio_bitrate:
                args += ["-b:a", str(min(audio_bitrate, 320_000))]
    if fmt in ("mp4", "ipod"):
        args += ["-movflags", "frag_keyframe+empty_moov+default_base_moof"]
    args += ["-f", fmt, "pipe:1"]
    return StreamPlan(path=row.path, container=wanted, direct=False, args=args)


def universal_plan(row: ItemRow, *, containers: list[str], audio_codec: str | None, max_bitrate: int | None,
                   transcoding_container: str | None, audio_bitrate: int | None,
                   max_channels: int | None, start_ticks: int | None) -> tuple[str, StreamPlan | None]:
    """Jellyfin's universal audio: ("direct", plan) when the file fits one of the client's
    containers (``container`` or ``container|codec``) and the bitrate cap, ("hls", None) when
    the client wants HLS, else ("transcode", plan)."""
    own = {c for c in (row.container or "").lower().split(",") if c}
    codec = _stream_codec(row, "Audio")
    fits = False
    for entry in containers:
        name, _, codecs = entry.lower().partition("|")
        if name in own and (not codecs or codec in codecs.split(",")):
            fits = True
            break
    if fits and (not max_bitrate or not row.bitrate or row.bitrate <= max_bitrate) and not start_ticks:
        return "direct", StreamPlan(path=row.path, container=file_container(row), direct=True)
    target = (transcoding_container or "mp3").lower()
    bitrate = audio_bitrate or (min(max_bitrate, 320_000) if max_bitrate else 192_000)
    plan = stream_plan(row, audio=True, container=target, static=False,
                       audio_codec=audio_codec.split(",")[0] if audio_codec else None, start_ticks=start_ticks,
                       audio_bitrate=bitrate, audio_channels=max_channels)
    return "transcode", plan


# -- play state ---------------------------------------------------------------------------------


def apply_stop(record: UserData, position: int | None, runtime: int | None, media_type: str, item_type: str,
               server: w.ServerConfiguration) -> None:
    """Jellyfin's rule for where a stopped play leaves the user's data."""
    min_pct = server.MinResumePct if server.MinResumePct is not None else 5
    max_pct = server.MaxResumePct if server.MaxResumePct is not None else 90
    min_duration = server.MinResumeDurationSeconds if server.MinResumeDurationSeconds is not None else 300
    if item_type == "AudioBook":
        min_pct = server.MinAudiobookResume if server.MinAudiobookResume is not None else 5
        max_pct = 100 - (server.MaxAudiobookResume if server.MaxAudiobookResume is not None else 5)
    position = max(0, position or 0)
    if not runtime or runtime <= 0:
        if position == 0:
            return
        record.playback_position_ticks = position
        return
    pct = position * 100 / runtime
    completed = False
    if pct < min_pct:
        position = 0
    elif pct >= max_pct or position >= runtime:
        completed = True
        position = 0
    elif runtime < min_duration * TICKS_PER_SECOND:
        completed = True
        position = 0
    if media_type == "Audio" and item_type != "AudioBook":
        position = 0  # music does not resume
    record.playback_position_ticks = position
    if completed:
        record.played = True


class PlaybackReports:
    """``ctx.playback_reports``: start / progress / stop reports."""

    def __init__(self, items: ItemService, sessions: SessionManager, events: EventHub,
                 transcodes: TranscodeService, live_streams: LiveStreamManager,
                 server_config: Callable[[], w.ServerConfiguration]) -> None:
        self.items = items
        self.sessions = sessions
        self.events = events
        self.transcodes = transcodes  # a stopped play session ends its HLS job; progress keeps it alive
        self.live_streams = live_streams  # a stopped live stream frees its tuner
        self.server_config = server_config  # the resume rules (MinResumePct, ...)
        self._progress_saves = SaveEvery(10.0)  # a playing video's position, per (user, item)

    async def _row(self, item_id: str | None) -> Any:
        if not item_id:
            raise BadRequestError("ItemId is required.")
        return await self.items.row(item_id)

    async def _now_playing(self, row: ItemRow, user_id: str | None) -> w.BaseItemDto | None:
        viewer = await self.items.viewer(None, None)
        opts = self.items.options(viewer, [])
        opts.user_id = user_id
        return (await self.items.dtos([row], opts))[0]

    async def start(self, auth, info: w.PlaybackStartInfo) -> None:
        row = await self._row(info.ItemId)
        if auth.user is not None:
            now = datetime.now(UTC)

            def change(record: UserData) -> None:
                record.play_count = (record.play_count or 0) + 1
                record.last_played_date = now
                if row.media_type == "Audio" and row.type != "AudioBook":
                    record.played = True

            await self.items.update_user_data(auth.user.id, row, change, reason="PlaybackStart")
        session = self.sessions.by_device(auth.device_id)
        if session is not None:
            session.now_playing = await self._now_playing(row, auth.user_id)
            session.play_state = _player_state(info)
            session.last_playback_check_in = datetime.now(UTC)
            session.extra["play_session_id"] = info.PlaySessionId
        self.events.changed("Sessions")

    async def progress(self, auth, info: w.PlaybackProgressInfo) -> None:
        row = await self._row(info.ItemId)
        session = self.sessions.by_device(auth.device_id)
        if session is not None:
            if session.now_playing is None or session.now_playing.Id != row.id:
                session.now_playing = await self._now_playing(row, auth.user_id)
            session.play_state = _player_state(info)
            session.last_playback_check_in = datetime.now(UTC)
            self.events.changed("Sessions", force=False)  # progress: at most once a period
        self._keep_alive(info.PlaySessionId)
        if auth.user is not None and info.PositionTicks is not None and row.media_type == "Video":
            # Save the position as it goes (a crash or a dropped client keeps its place), at most
            # every 10 s per user and item.
            if self._progress_saves.due((auth.user.id, row.id), time.monotonic()):
                position = info.PositionTicks

                def change(record: UserData) -> None:
                    record.playback_position_ticks = max(0, position)

                await self.items.update_user_data(auth.user.id, row, change, reason="PlaybackProgress")

    async def stop(self, auth, info: w.PlaybackStopInfo) -> w.UserItemDataDto | None:
        row = await self._row(info.ItemId)
        result = None
        if auth.user is not None and not info.Failed and row.type != "TvChannel":  # live: nothing to resume
            server = self.server_config()
            position = info.PositionTicks

            def change(record: UserData) -> None:
                apply_stop(record, position, row.run_time_ticks, row.media_type, row.type, server)

            result = await self.items.update_user_data(auth.user.id, row, change, reason="PlaybackFinished")
            self._progress_saves.forget((auth.user.id, row.id))
        session = self.sessions.by_device(auth.device_id)
        if session is not None:
            session.now_playing = None
            session.play_state = None
            session.extra.pop("play_session_id", None)
        self.events.changed("Sessions")
        if info.PlaySessionId:
            self.transcodes.on_playback_stopped(info.PlaySessionId)  # its HLS job ends with it
        if info.LiveStreamId:
            await self.live_streams.close(info.LiveStreamId)  # the tuner is free when its last viewer left
        return result

    def ping(self, play_session_id: str | None) -> None:
        self._keep_alive(play_session_id)

    def _keep_alive(self, play_session_id: str | None) -> None:
        if play_session_id:
            self.transcodes.ping(play_session_id)  # an active player's transcode is not idle


def _player_state(info: Any) -> w.PlayerStateInfo:
    return w.PlayerStateInfo(
        PositionTicks=info.PositionTicks, CanSeek=bool(info.CanSeek), IsPaused=bool(info.IsPaused),
        IsMuted=bool(info.IsMuted), VolumeLevel=info.VolumeLevel, AudioStreamIndex=info.AudioStreamIndex,
        SubtitleStreamIndex=info.SubtitleStreamIndex, MediaSourceId=info.MediaSourceId,
        PlayMethod=info.PlayMethod, RepeatMode=info.RepeatMode or "RepeatNone",
        PlaybackOrder=info.PlaybackOrder or "Default", LiveStreamId=info.LiveStreamId)
