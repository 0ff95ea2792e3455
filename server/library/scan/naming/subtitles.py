"""External subtitle files: "Movie.en.srt", "Movie.eng.forced.srt", "Movie.en.sdh.srt", "Movie.default.srt"."""

from __future__ import annotations

import os
from dataclasses import dataclass

from server.library.scan.naming.extensions import SUBTITLE_EXTENSIONS, as_media_path
from server.library.scan.naming.languages import language_code


@dataclass(frozen=True, slots=True)
class SubtitleSidecar:
    """Flags read from a subtitle file name. ``language`` is ISO 639-2/B ("eng", "ger") when known."""

    path: str
    codec: str
    language: str | None = None
    title: str | None = None
    is_forced: bool = False
    is_default: bool = False
    is_hearing_impaired: bool = False


_FORCED = ("forced", "foreign")
_DEFAULT = ("default",)
_HEARING_IMPAIRED = frozenset({"sdh", "cc", "hi"})


def subtitle_belongs_to(subtitle_path: str | os.PathLike[str], video_path: str | os.PathLike[str]) -> bool:
    """True when a subtitle file is named after the video: same stem, then nothing or ".flags"."""
    sub = as_media_path(subtitle_path)
    video = as_media_path(video_path)
    if sub.suffix.lower() not in SUBTITLE_EXTENSIONS:
        return False
    stem, video_stem = sub.stem.casefold(), video.stem.casefold()
    return stem == video_stem or stem.startswith(video_stem + ".")


def parse_subtitle_file(
    path: str | os.PathLike[str], video_stem: str | None = None
) -> SubtitleSidecar | None:
    """Language and flags of an external subtitle, or None if it is not a subtitle file or (when
    ``video_stem`` is given) not named after that video.

    Tokens are read from the end: "default" and "forced"/"foreign" set flags, "sdh"/"cc"/"hi" mark
    hearing-impaired subtitles ("hi" alone means Hindi), the first language code found is the
    language, and whatever else is left becomes the title. Without ``video_stem`` the reading
    stops at the first token that is none of these.
    """
    p = as_media_path(path)
    ext = p.suffix.lower()
    if ext not in SUBTITLE_EXTENSIONS:
        return None
    stem = p.stem
    if video_stem is not None:
        if stem.casefold() == video_stem.casefold():
            extra = ""
        elif stem.casefold().startswith(video_stem.casefold() + "."):
            extra = stem[len(video_stem) + 1 :]
        else:
            return None
        tokens = [t for t in extra.split(".") if t]
    else:
        tokens = stem.split(".")[1:]

    language: str | None = None
    forced = default = hearing_impaired = False
    leftover: list[str] = []
    for token in reversed(tokens):
        lowered = token.lower()
        code = language_code(token)
        if any(flag in lowered for flag in _DEFAULT):
            default = True
        elif any(flag in lowered for flag in _FORCED):
            forced = True
        elif code is not None and language is None:
            language = code
        elif code is not None and language == "hin":
            # "Movie.en.hi.srt": the "hi" read first was the hearing-impaired flag, not Hindi.
            hearing_impaired = True
            language = code
        elif lowered in _HEARING_IMPAIRED:
            hearing_impaired = True
        elif video_stem is None:
            break
        else:
            leftover.append(token)
    title = ".".join(reversed(leftover)) or None
    return SubtitleSidecar(
        path=str(p),
        codec=ext.lstrip("."),
        language=language,
        title=title,
        is_forced=forced,
        is_default=default,
        is_hearing_impaired=hearing_impaired,
    )
