"""Which audio and subtitle streams play by default, from the user's language preferences and
SubtitleMode (Default, Always, OnlyForced, None, Smart)."""

from __future__ import annotations

from collections.abc import Sequence

from server.playback.errors import PlaybackRequestError
from server.wire.models import ENUMS, MediaStream

SUBTITLE_MODES = ENUMS["SubtitlePlaybackMode"]
_UNDEFINED_LANGUAGES = frozenset({"", "und", "unknown", "undetermined", "mul", "zxx"})


def _language(stream: MediaStream) -> str:
    return (stream.Language or "").strip().lower()


def _matches(stream: MediaStream, preferred: str | None) -> bool:
    """A stream matches the preference; no preference matches every stream."""
    return not preferred or _language(stream) == preferred.strip().lower()


def audio_streams(streams: Sequence[MediaStream]) -> list[MediaStream]:
    """The audio streams, in source order."""
    return [s for s in streams if s.Type == "Audio"]


def default_audio_stream_index(
    streams: Sequence[MediaStream], preferred_language: str | None = None, play_default_track: bool = True
) -> int | None:
    """The audio stream to play when the client names none.

    With ``play_default_track`` a default-flagged stream wins regardless of language; otherwise
    the preferred language wins, then the default flag, then source order.
    """
    audio = audio_streams(streams)
    ranked = sorted(audio, key=lambda s: (not (preferred_language and _matches(s, preferred_language)),
                                          not s.IsDefault))
    if play_default_track:
        for stream in ranked:
            if stream.IsDefault:
                return stream.Index
    return ranked[0].Index if ranked else None


def resolve_audio_stream(
    streams: Sequence[MediaStream], requested: int | None, default_index: int | None
) -> MediaStream | None:
    """The requested audio stream if it exists, else the default one, else the first."""
    audio = audio_streams(streams)
    for wanted in (requested, default_index):
        if wanted is not None and wanted >= 0:
            for stream in audio:
                if stream.Index == wanted:
                    return stream
    for stream in audio:
        if stream.IsDefault:
            return stream
    return audio[0] if audio else None


def _only_forced(ranked: list[MediaStream], preferred: str | None) -> MediaStream | None:
    for stream in ranked:
        if stream.IsForced and (_matches(stream, preferred) or _language(stream) in _UNDEFINED_LANGUAGES):
            return stream
    return None


def default_subtitle_stream_index(
    streams: Sequence[MediaStream],
    mode: str = "Default",
    preferred_language: str | None = None,
    audio_language: str | None = None,
) -> int | None:
    """The subtitle stream to show when the client names none, or None for no subtitles.

    Default: external, default- or forced-flagged streams. Always: the preferred language, else
    forced ones. OnlyForced: forced streams in the preferred or an undefined language. Smart:
    the preferred language when the audio is in another language, else forced ones. None: none.
    """
    if mode not in SUBTITLE_MODES:
        raise PlaybackRequestError(f"unknown SubtitleMode {mode!r}")
    if mode == "None":
        return None
    subtitles = [s for s in streams if s.Type == "Subtitle"]
    ranked = sorted(subtitles, key=lambda s: (
        not (preferred_language and _matches(s, preferred_language)),
        not s.IsExternal, not s.IsDefault, bool(s.IsForced),
    ))
    chosen: MediaStream | None = None
    if mode == "Default":
        chosen = next((s for s in ranked if s.IsExternal or s.IsDefault or s.IsForced), None)
    elif mode == "Always":
        chosen = next((s for s in ranked if not s.IsForced and _matches(s, preferred_language)), None)
        chosen = chosen or _only_forced(ranked, preferred_language)
    elif mode == "OnlyForced":
        chosen = _only_forced(ranked, preferred_language)
    else:  # Smart
        audio = (audio_language or "").strip().lower()
        if preferred_language and audio == preferred_language.strip().lower():
            chosen = _only_forced(ranked, preferred_language)
        else:
            chosen = next((s for s in ranked if _matches(s, preferred_language)), None)
    return chosen.Index if chosen else None
