"""PlaybackInfo and OpenLiveStream for Live TV channels.

A channel's media source says ``RequiresOpening`` with the channel id as ``OpenToken`` until it
is opened (PlaybackInfo with AutoOpenLiveStream, or POST /LiveStreams/Open); an opened source
carries the ``LiveStreamId``, the MediaStreams from a bounded probe of the stream, and a
TranscodingUrl to the live HLS playlist (``/videos/{channel}/live.m3u8``) whose encoder copies the
codecs the client's HLS transcoding profile lists and transcodes the rest.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from server.wire import models as w

if TYPE_CHECKING:
    from server.auth.service import AuthInfo
    from server.livetv.live import LiveStreamManager
    from server.livetv.tuners import Channel, LiveTvService

DEFAULT_VIDEO_CODECS = ("h264",)
DEFAULT_AUDIO_CODECS = ("aac", "mp3")


def hls_codecs(profile: w.DeviceProfile | None) -> tuple[list[str], list[str]]:
    """The video and audio codecs the client takes in HLS (its transcoding profile)."""
    for tp in (profile.TranscodingProfiles or []) if profile is not None else []:
        if (tp.Type or "").lower() == "video" and (tp.Protocol or "").lower() == "hls":
            video = [c.strip().lower() for c in (tp.VideoCodec or "").split(",") if c.strip()]
            audio = [c.strip().lower() for c in (tp.AudioCodec or "").split(",") if c.strip()]
            return video or list(DEFAULT_VIDEO_CODECS), audio or list(DEFAULT_AUDIO_CODECS)
    return list(DEFAULT_VIDEO_CODECS), list(DEFAULT_AUDIO_CODECS)


def channel_source(channel, auth, profile: w.DeviceProfile | None, play_session_id: str,
                   live_id: str | None = None, media_streams: list[dict] | None = None) -> w.MediaSourceInfo:
    video, audio = hls_codecs(profile)
    query = {"DeviceId": getattr(auth, "device_id", None) or "", "MediaSourceId": channel.id,
             "PlaySessionId": play_session_id, "VideoCodec": ",".join(video), "AudioCodec": ",".join(audio),
             "SegmentContainer": "ts"}
    if live_id:
        query["LiveStreamId"] = live_id
    if auth is not None and auth.token:
        query["api_key"] = auth.token
    streams = [w.MediaStream(**s) for s in media_streams or []]
    first_audio = next((s.Index for s in streams if s.Type == "Audio"), None)
    return w.MediaSourceInfo(
        Id=channel.id, Name=channel.name, Protocol="Http", Type="Default", Container="ts",
        Path=f"/LiveTv/LiveStreamFiles/{live_id}/stream.ts" if live_id else None,
        IsRemote=False, IsInfiniteStream=True, RequiresOpening=True, RequiresClosing=True, RequiresLooping=False,
        OpenToken=channel.id, LiveStreamId=live_id, SupportsDirectPlay=False, SupportsDirectStream=False,
        SupportsTranscoding=True, SupportsProbing=False, ReadAtNativeFramerate=False, IgnoreDts=False,
        IgnoreIndex=False, GenPtsInput=False, HasSegments=False, MediaStreams=streams, MediaAttachments=[], Formats=[], RequiredHttpHeaders={},
        DefaultAudioStreamIndex=first_audio, TranscodingSubProtocol="hls", TranscodingContainer="ts",
        TranscodingUrl=f"/videos/{channel.id}/live.m3u8?{urlencode(query)}", VideoType="VideoFile",
        UseMostCompatibleTranscodingProfile=False)


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

    async def playback_info(self, auth: AuthInfo | None, row: Any, dto: w.PlaybackInfoDto) -> w.PlaybackInfoResponse:
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
