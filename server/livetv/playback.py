"""PlaybackInfo and OpenLiveStream for Live TV channels.

A channel's media source says ``RequiresOpening`` with the channel id as ``OpenToken`` until it
is opened (PlaybackInfo with AutoOpenLiveStream, or POST /LiveStreams/Open); an opened source
carries the ``LiveStreamId``, the MediaStreams from a bounded probe of the stream, and a
TranscodingUrl to the live HLS playlist (``/videos/{channel}/live.m3u8``) whose encoder copies the
codecs the client's HLS transcoding profile lists and transcodes the rest.
"""

from __future__ import annotations

from urllib.parse import urlencode

from server.wire import models as w

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
