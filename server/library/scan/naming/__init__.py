"""What is this file? Pure functions over paths and names, following Jellyfin 10.10's naming rules.

Nothing here touches the disk except ``disc_type_of_folder``. Enum values are spelled as the
Jellyfin API spells them (ExtraType, ImageType, VideoType, MediaType).

The names load with their own submodule on first use (a PEP 562 ``__getattr__``): a start imports
``naming.images``, ``naming.extensions`` and ``naming.kinds`` (sidecar images, the NFO reader), and
the rest (episodes, movies, music, cleaning, ...: the scan's resolver) loads with the first scan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.lazy_modules import lazy_exports

if TYPE_CHECKING:
    from server.library.scan.naming.cleaning import extract_provider_ids
    from server.library.scan.naming.episodes import (
        EpisodeInfo,
        SeriesName,
        parse_episode,
        parse_season_folder,
        parse_series_folder,
        series_folder_of,
    )
    from server.library.scan.naming.extensions import (
        InvalidMediaPathError,
        file_kind,
        is_audio_file,
        is_book_file,
        is_photo_file,
        is_subtitle_file,
        is_video_file,
        media_type_for_path,
    )
    from server.library.scan.naming.extras import classify_extra, is_extras_folder
    from server.library.scan.naming.images import SidecarImage, classify_sidecar_image
    from server.library.scan.naming.kinds import ExtraType, FileKind, ImageType, MediaType, VideoType
    from server.library.scan.naming.languages import language_code
    from server.library.scan.naming.movies import (
        ExtraFile,
        FileStack,
        MovieFolder,
        MovieName,
        MovieVersion,
        ResolvedMovie,
        disc_type_from_entries,
        disc_type_of_folder,
        is_disc_structure_folder,
        parse_movie_name,
        resolve_movie_folder,
        stack_parts,
        video_type_for_file,
    )
    from server.library.scan.naming.music import (
        TrackName,
        is_multi_disc_folder,
        parse_disc_folder,
        parse_track_filename,
    )
    from server.library.scan.naming.subtitles import SubtitleSidecar, parse_subtitle_file, subtitle_belongs_to

# Each exported name and the submodule that defines it.
_SOURCES = {
    "EpisodeInfo": "episodes",
    "ExtraFile": "movies",
    "ExtraType": "kinds",
    "FileKind": "kinds",
    "FileStack": "movies",
    "ImageType": "kinds",
    "InvalidMediaPathError": "extensions",
    "MediaType": "kinds",
    "MovieFolder": "movies",
    "MovieName": "movies",
    "MovieVersion": "movies",
    "ResolvedMovie": "movies",
    "SeriesName": "episodes",
    "SidecarImage": "images",
    "SubtitleSidecar": "subtitles",
    "TrackName": "music",
    "VideoType": "kinds",
    "classify_extra": "extras",
    "classify_sidecar_image": "images",
    "disc_type_from_entries": "movies",
    "disc_type_of_folder": "movies",
    "extract_provider_ids": "cleaning",
    "file_kind": "extensions",
    "is_audio_file": "extensions",
    "is_book_file": "extensions",
    "is_disc_structure_folder": "movies",
    "is_extras_folder": "extras",
    "is_multi_disc_folder": "music",
    "is_photo_file": "extensions",
    "is_subtitle_file": "extensions",
    "is_video_file": "extensions",
    "language_code": "languages",
    "media_type_for_path": "extensions",
    "parse_disc_folder": "music",
    "parse_episode": "episodes",
    "parse_movie_name": "movies",
    "parse_season_folder": "episodes",
    "parse_series_folder": "episodes",
    "parse_subtitle_file": "subtitles",
    "parse_track_filename": "music",
    "resolve_movie_folder": "movies",
    "series_folder_of": "episodes",
    "stack_parts": "movies",
    "subtitle_belongs_to": "subtitles",
    "video_type_for_file": "movies",
}


__getattr__, __dir__ = lazy_exports(__name__, _SOURCES)

__all__ = [
    "EpisodeInfo",
    "ExtraFile",
    "ExtraType",
    "FileKind",
    "FileStack",
    "ImageType",
    "InvalidMediaPathError",
    "MediaType",
    "MovieFolder",
    "MovieName",
    "MovieVersion",
    "ResolvedMovie",
    "SeriesName",
    "SidecarImage",
    "SubtitleSidecar",
    "TrackName",
    "VideoType",
    "classify_extra",
    "classify_sidecar_image",
    "disc_type_from_entries",
    "disc_type_of_folder",
    "extract_provider_ids",
    "file_kind",
    "is_audio_file",
    "is_book_file",
    "is_disc_structure_folder",
    "is_extras_folder",
    "is_multi_disc_folder",
    "is_photo_file",
    "is_subtitle_file",
    "is_video_file",
    "language_code",
    "media_type_for_path",
    "parse_disc_folder",
    "parse_episode",
    "parse_movie_name",
    "parse_season_folder",
    "parse_series_folder",
    "parse_subtitle_file",
    "parse_track_filename",
    "resolve_movie_folder",
    "series_folder_of",
    "stack_parts",
    "subtitle_belongs_to",
    "video_type_for_file",
]
