"""``ChannelPlayback`` (``ctx.channel_playback``): a Live TV channel's PlaybackInfo and opening its
live stream (POST /LiveStreams/Open), over the tuners and the shared tuner streams; the media
source itself is described by ``playback.channel_source``."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from server.livetv.playback import channel_source
from server.wire import models as w

if TYPE_CHECKING:
    from server.auth.service import AuthInfo
    from server.library.catalog.query import ItemRow
    from server.livetv.live import LiveStreamManager
    from server.livetv.tuners import Channel, LiveTvService


class ChannelPlayback:
    """``ctx.channel_playback``: a channel's PlaybackInfo and opening its live stream."""

    def __init__(self, livetv: LiveTvService, live_streams: LiveStreamManager) -> None:
        self.livetv = livetv
        self.live_streams = live_streams

    async def open(self, channel: Channel, auth: AuthInfo | None, profile: w.DeviceProfile | None,
                   play_session_id: str | None = None) -> w.MediaSourceInfo:
        """Open the channel (sharing a running tuner stream) and describe it."""
        live_id, stream = await self.live_streams.open(channel)
        try:
            media = await self.live_streams.probe(stream)
        except Exception:
            await self.live_streams.close(live_id)
            raise
        return channel_source(channel, auth, profile, play_session_id or uuid.uuid4().hex, live_id, media)

    async def playback_info(self, auth: AuthInfo | None, row: ItemRow, dto: w.PlaybackInfoDto) -> w.PlaybackInfoResponse:
        channel = await self.livetv.channel(row.id)
        play_session_id = uuid.uuid4().hex
        stream = self.live_streams.get(dto.LiveStreamId)
        if stream is not None and getattr(stream.channel, "id", None) == channel.id:
            source = channel_source(channel, auth, dto.DeviceProfile, play_session_id, dto.LiveStreamId,
                                    await self.live_streams.probe(stream))
        elif dto.AutoOpenLiveStream:
            source = await self.open(channel, auth, dto.DeviceProfile, play_session_id)
        else:
            running = self.live_streams.for_channel(channel.id)
            source = channel_source(channel, auth, dto.DeviceProfile, play_session_id, None,
                                    running.media_streams if running is not None else None)
        return w.PlaybackInfoResponse(MediaSources=[source], PlaySessionId=play_session_id)
