"""Real media files for the media tests, generated once per session with tests.mediagen."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mediagen import make_audio, make_image, make_video

SONG_TAGS = {
    "title": "Highway Song",
    "artist": "AC/DC; Foo feat. Bar",
    "album": "Loud Album",
    "album_artist": "AC/DC",
    "track": "3/10",
    "disc": "1/2",
    "date": "2001-05-02",
    "genre": "Rock;Pop",
}
AUDIO_SUFFIXES = (".mp3", ".flac", ".m4a", ".ogg", ".opus")


@pytest.fixture(scope="session")
def media_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="session")
def cover_jpg(media_dir: Path) -> Path:
    return make_image(media_dir / "cover.jpg", 64, 64, color="red")


@pytest.fixture(scope="session")
def movie_mkv(media_dir: Path) -> Path:
    return make_video(
        media_dir / "movie.mkv",
        subtitles=[("eng", "Hello"), ("fre", "Bonjour")],
        chapters=True,
        tags={"title": "My Movie"},
    )


@pytest.fixture(scope="session")
def clip_mp4(media_dir: Path) -> Path:
    return make_video(media_dir / "clip.mp4", subtitles=[("eng", "Hello")], chapters=True)


@pytest.fixture(scope="session")
def songs(media_dir: Path, cover_jpg: Path) -> dict[str, Path]:
    """One tagged song per audio format; mp3, flac and m4a carry the cover."""
    return {
        suffix: make_audio(media_dir / f"song{suffix}", tags=SONG_TAGS, cover=cover_jpg)
        for suffix in AUDIO_SUFFIXES
    }
