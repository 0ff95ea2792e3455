"""Enumerations spelled exactly as the Jellyfin 10.10 API spells them."""

from __future__ import annotations

from enum import StrEnum


class MediaType(StrEnum):
    """The spec's MediaType."""

    UNKNOWN = "Unknown"
    VIDEO = "Video"
    AUDIO = "Audio"
    PHOTO = "Photo"
    BOOK = "Book"


class ExtraType(StrEnum):
    """The spec's ExtraType. UNKNOWN is a real extra whose kind is not known."""

    UNKNOWN = "Unknown"
    CLIP = "Clip"
    TRAILER = "Trailer"
    BEHIND_THE_SCENES = "BehindTheScenes"
    DELETED_SCENE = "DeletedScene"
    INTERVIEW = "Interview"
    SCENE = "Scene"
    SAMPLE = "Sample"
    THEME_SONG = "ThemeSong"
    THEME_VIDEO = "ThemeVideo"
    FEATURETTE = "Featurette"
    SHORT = "Short"


class ImageType(StrEnum):
    """The spec's ImageType."""

    PRIMARY = "Primary"
    ART = "Art"
    BACKDROP = "Backdrop"
    BANNER = "Banner"
    LOGO = "Logo"
    THUMB = "Thumb"
    DISC = "Disc"
    BOX = "Box"
    SCREENSHOT = "Screenshot"
    MENU = "Menu"
    CHAPTER = "Chapter"
    BOX_REAR = "BoxRear"
    PROFILE = "Profile"


class VideoType(StrEnum):
    """The spec's VideoType."""

    VIDEO_FILE = "VideoFile"
    ISO = "Iso"
    DVD = "Dvd"
    BLU_RAY = "BluRay"


class FileKind(StrEnum):
    """What a file in a library folder is, before any probing (Reelroom's own grouping)."""

    VIDEO = "Video"
    AUDIO = "Audio"
    PHOTO = "Photo"
    BOOK = "Book"
    SUBTITLE = "Subtitle"
    NFO = "Nfo"
    OTHER = "Other"
