"""Playback negotiation: which way a media source reaches a client (direct play, remux or
transcode) and the PlaybackInfo fields and stream URLs that say so."""

from server.playback.decision import PlaybackDecision, apply_decision, decide_playback
from server.playback.errors import InvalidDeviceProfile, PlaybackRequestError
from server.playback.options import PlaybackOptions
from server.playback.stream_urls import build_transcoding_url, subtitle_delivery_url

__all__ = [
    "InvalidDeviceProfile",
    "PlaybackDecision",
    "PlaybackOptions",
    "PlaybackRequestError",
    "apply_decision",
    "build_transcoding_url",
    "decide_playback",
    "subtitle_delivery_url",
]
