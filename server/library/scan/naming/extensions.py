"""File extensions per kind of media, and classification of a path by its extension."""

from __future__ import annotations

import os
from pathlib import PurePath

from server.library.scan.naming.kinds import FileKind, MediaType


class InvalidMediaPathError(ValueError):
    """A path given to the naming functions is empty, not text, or contains a NUL byte."""


VIDEO_EXTENSIONS: frozenset[str] = frozenset(
    {
        ".001", ".3g2", ".3gp", ".amv", ".asf", ".asx", ".avi", ".bin", ".bivx", ".divx", ".dv",
        ".dvr-ms", ".f4v", ".fli", ".flv", ".ifo", ".img", ".iso", ".m2t", ".m2ts", ".m2v", ".m4v",
        ".mkv", ".mk3d", ".mov", ".mp4", ".mpe", ".mpeg", ".mpg", ".mts", ".mxf", ".nrg", ".nsv",
        ".nuv", ".ogg", ".ogm", ".ogv", ".pva", ".qt", ".rec", ".rm", ".rmvb", ".strm", ".svq3",
        ".tp", ".ts", ".ty", ".viv", ".vob", ".vp3", ".webm", ".wmv", ".wtv", ".xvid",
    }
)  # fmt: skip

AUDIO_EXTENSIONS: frozenset[str] = frozenset(
    {
        ".669", ".3gp", ".aa", ".aac", ".aax", ".ac3", ".act", ".adp", ".adplug", ".adx", ".afc",
        ".aif", ".aiff", ".alac", ".amf", ".amr", ".ape", ".ast", ".au", ".awb", ".cda", ".dmf",
        ".dsf", ".dsm", ".dsp", ".dts", ".dvf", ".eac3", ".far", ".flac", ".gdm", ".gsm", ".gym",
        ".hps", ".imf", ".it", ".m15", ".m4a", ".m4b", ".mac", ".med", ".mka", ".mmf", ".mod",
        ".mogg", ".mp2", ".mp3", ".mpa", ".mpc", ".mpp", ".mp+", ".msv", ".nmf", ".nsf", ".nsv",
        ".oga", ".ogg", ".okt", ".opus", ".ra", ".rf64", ".rm", ".s3m", ".sfx", ".shn", ".sid",
        ".stm", ".strm", ".ult", ".uni", ".vox", ".wav", ".wma", ".wv", ".xm", ".xsp", ".ymf",
    }
)  # fmt: skip

PHOTO_EXTENSIONS: frozenset[str] = frozenset(
    {".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".heic", ".heif", ".avif", ".tbn"}
)

#: Image files that may sit next to media as artwork (a subset of photo extensions).
SIDECAR_IMAGE_EXTENSIONS: frozenset[str] = frozenset(
    {".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".tbn"}
)

BOOK_EXTENSIONS: frozenset[str] = frozenset(
    {".azw", ".azw3", ".cb7", ".cbr", ".cbt", ".cbz", ".epub", ".mobi", ".pdf"}
)

SUBTITLE_EXTENSIONS: frozenset[str] = frozenset(
    {".ass", ".mks", ".sami", ".smi", ".srt", ".ssa", ".sub", ".sup", ".vtt"}
)

NFO_EXTENSIONS: frozenset[str] = frozenset({".nfo"})

# Extensions in both the audio and the video list; the library type decides.
_AMBIGUOUS = VIDEO_EXTENSIONS & AUDIO_EXTENSIONS
_AUDIO_LIBRARY_TYPES = frozenset({"music", "audiobooks"})


#: Longer names cannot exist on common file systems (255 bytes per name); refusing them keeps
#: every parser linear-time on hostile input.
MAX_NAME_CHARS = 1024
MAX_PATH_CHARS = 32768


def as_media_path(path: str | os.PathLike[str]) -> PurePath:
    """Check a path argument and return it as a PurePath; raise InvalidMediaPathError if unusable."""
    if isinstance(path, PurePath):
        text = str(path)
    elif isinstance(path, str):
        text = path
    elif isinstance(path, os.PathLike):
        text = os.fspath(path)
        if not isinstance(text, str):
            raise InvalidMediaPathError("path must be text, not bytes")
    else:
        raise InvalidMediaPathError(f"path must be text, not {type(path).__name__}")
    if not text.strip():
        raise InvalidMediaPathError("path is empty")
    if "\x00" in text:
        raise InvalidMediaPathError("path contains a NUL character")
    if len(text) > MAX_PATH_CHARS:
        raise InvalidMediaPathError(f"path is longer than {MAX_PATH_CHARS} characters")
    path = PurePath(text)
    if any(len(part) > MAX_NAME_CHARS for part in path.parts):
        raise InvalidMediaPathError(f"a path component is longer than {MAX_NAME_CHARS} characters")
    return path


def extension_of(path: str | os.PathLike[str]) -> str:
    """The lower-case extension of a path, with its dot ('' when there is none)."""
    return as_media_path(path).suffix.lower()


def is_video_file(path: str | os.PathLike[str]) -> bool:
    return extension_of(path) in VIDEO_EXTENSIONS


def is_audio_file(path: str | os.PathLike[str]) -> bool:
    return extension_of(path) in AUDIO_EXTENSIONS


def is_subtitle_file(path: str | os.PathLike[str]) -> bool:
    return extension_of(path) in SUBTITLE_EXTENSIONS


def is_book_file(path: str | os.PathLike[str]) -> bool:
    return extension_of(path) in BOOK_EXTENSIONS


def is_photo_file(path: str | os.PathLike[str]) -> bool:
    return extension_of(path) in PHOTO_EXTENSIONS


def file_kind(path: str | os.PathLike[str], collection_type: str | None = None) -> FileKind:
    """Classify a file by extension. ``collection_type`` (the spec's CollectionType, e.g. "music")
    settles extensions that are both audio and video, such as .ogg."""
    ext = extension_of(path)
    if ext in _AMBIGUOUS:
        if collection_type is not None and collection_type.lower() in _AUDIO_LIBRARY_TYPES:
            return FileKind.AUDIO
        return FileKind.VIDEO
    if ext in VIDEO_EXTENSIONS:
        return FileKind.VIDEO
    if ext in AUDIO_EXTENSIONS:
        return FileKind.AUDIO
    if ext in SUBTITLE_EXTENSIONS:
        return FileKind.SUBTITLE
    if ext in BOOK_EXTENSIONS:
        return FileKind.BOOK
    if ext in PHOTO_EXTENSIONS:
        return FileKind.PHOTO
    if ext in NFO_EXTENSIONS:
        return FileKind.NFO
    return FileKind.OTHER


_MEDIA_TYPE_BY_KIND = {
    FileKind.VIDEO: MediaType.VIDEO,
    FileKind.AUDIO: MediaType.AUDIO,
    FileKind.PHOTO: MediaType.PHOTO,
    FileKind.BOOK: MediaType.BOOK,
}


def media_type_for_path(path: str | os.PathLike[str], collection_type: str | None = None) -> MediaType:
    """The spec's MediaType for a file; subtitles, NFOs and unknown files are MediaType.UNKNOWN."""
    return _MEDIA_TYPE_BY_KIND.get(file_kind(path, collection_type), MediaType.UNKNOWN)


def strip_known_extension(name: str) -> str:
    """Drop the extension from a file name only when it is a media, subtitle, image or NFO one,
    so names such as "St. Vincent" keep their dots."""
    suffix = PurePath(name).suffix.lower() if name else ""
    if suffix and suffix in _KNOWN_EXTENSIONS:
        return name[: -len(suffix)]
    return name


_KNOWN_EXTENSIONS = (
    VIDEO_EXTENSIONS
    | AUDIO_EXTENSIONS
    | PHOTO_EXTENSIONS
    | BOOK_EXTENSIONS
    | SUBTITLE_EXTENSIONS
    | NFO_EXTENSIONS
    | {".disc"}
)
