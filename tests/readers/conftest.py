"""The generated library of tests/library (made once per session with ffmpeg), for the reader tests."""

from tests.library.conftest import library_source  # noqa: F401  (a fixture, used by name)
