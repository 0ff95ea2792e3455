"""The options of one PlaybackInfo request: what the client asked for, what the user's policy
allows, the user's stream preferences, and the identity the stream URLs carry."""

from __future__ import annotations

from dataclasses import dataclass

from server.playback.errors import PlaybackRequestError
from server.playback.stream_selection import SUBTITLE_MODES
from server.wire.models import PlaybackInfoDto, UserConfiguration, UserPolicy

# Jellyfin's server defaults leave HEVC and AV1 encoding off; copying them is always possible.
DEFAULT_ENCODABLE_VIDEO_CODECS = ("h264", "vp9", "vp8", "mpeg4", "mpeg2video")


@dataclass(frozen=True, kw_only=True)
class PlaybackOptions:
    """One PlaybackInfo request: the client's choices, the user's policy and preferences, and
    the identity the stream URLs carry."""

    item_id: str
    is_audio_item: bool = False
    max_streaming_bitrate: int | None = None
    start_ticks: int = 0
    audio_stream_index: int | None = None
    subtitle_stream_index: int | None = None
    max_audio_channels: int | None = None
    enable_direct_play: bool = True
    enable_direct_stream: bool = True
    enable_transcoding: bool = True
    allow_video_stream_copy: bool = True
    allow_audio_stream_copy: bool = True
    always_burn_in_subtitle_when_transcoding: bool = False
    # User policy.
    enable_video_playback_transcoding: bool = True
    enable_audio_playback_transcoding: bool = True
    enable_playback_remuxing: bool = True
    remote_client_bitrate_limit: int | None = None
    is_remote_client: bool = False
    # User preferences.
    audio_language_preference: str | None = None
    play_default_audio_track: bool = True
    subtitle_language_preference: str | None = None
    subtitle_mode: str = "Default"
    # Server encoder.
    encodable_video_codecs: tuple[str, ...] = DEFAULT_ENCODABLE_VIDEO_CODECS
    # Identity carried by the URLs.
    device_id: str | None = None
    play_session_id: str | None = None
    api_key: str | None = None

    def __post_init__(self) -> None:
        if not self.item_id:
            raise PlaybackRequestError("item_id is required")
        for name in ("max_streaming_bitrate", "max_audio_channels", "remote_client_bitrate_limit"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise PlaybackRequestError(f"{name} must not be negative, got {value}")
        if self.start_ticks < 0:
            raise PlaybackRequestError(f"start_ticks must not be negative, got {self.start_ticks}")
        if self.subtitle_mode not in SUBTITLE_MODES:
            raise PlaybackRequestError(f"unknown SubtitleMode {self.subtitle_mode!r}")

    @classmethod
    def from_request(
        cls,
        item_id: str,
        dto: PlaybackInfoDto | None = None,
        *,
        is_audio_item: bool = False,
        policy: UserPolicy | None = None,
        configuration: UserConfiguration | None = None,
        is_remote_client: bool = False,
        server_remote_bitrate_limit: int | None = None,
        play_session_id: str | None = None,
        device_id: str | None = None,
        api_key: str | None = None,
    ) -> PlaybackOptions:
        """Options from a PlaybackInfoDto plus the user's policy and configuration."""
        dto = dto or PlaybackInfoDto()
        policy = policy or UserPolicy()
        config = configuration or UserConfiguration()
        remote_limit = policy.RemoteClientBitrateLimit or server_remote_bitrate_limit or None

        def flag(value: bool | None) -> bool:
            return True if value is None else value

        return cls(
            item_id=item_id,
            is_audio_item=is_audio_item,
            max_streaming_bitrate=dto.MaxStreamingBitrate or None,
            start_ticks=dto.StartTimeTicks or 0,
            audio_stream_index=dto.AudioStreamIndex,
            subtitle_stream_index=dto.SubtitleStreamIndex,
            max_audio_channels=dto.MaxAudioChannels or None,
            enable_direct_play=flag(dto.EnableDirectPlay),
            enable_direct_stream=flag(dto.EnableDirectStream),
            enable_transcoding=flag(dto.EnableTranscoding),
            allow_video_stream_copy=flag(dto.AllowVideoStreamCopy),
            allow_audio_stream_copy=flag(dto.AllowAudioStreamCopy),
            always_burn_in_subtitle_when_transcoding=bool(dto.AlwaysBurnInSubtitleWhenTranscoding),
            enable_video_playback_transcoding=flag(policy.EnableVideoPlaybackTranscoding),
            enable_audio_playback_transcoding=flag(policy.EnableAudioPlaybackTranscoding),
            enable_playback_remuxing=flag(policy.EnablePlaybackRemuxing),
            remote_client_bitrate_limit=remote_limit,
            is_remote_client=is_remote_client,
            audio_language_preference=config.AudioLanguagePreference or None,
            play_default_audio_track=flag(config.PlayDefaultAudioTrack),
            subtitle_language_preference=config.SubtitleLanguagePreference or None,
            subtitle_mode=config.SubtitleMode or "Default",
            device_id=device_id,
            play_session_id=play_session_id,
            api_key=api_key,
        )
