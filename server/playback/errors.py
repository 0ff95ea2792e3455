"""Typed errors for bad playback requests; the HTTP layer maps them to 400."""

from __future__ import annotations


class PlaybackRequestError(ValueError):
    """The playback options a client sent cannot be honoured as given."""


class InvalidDeviceProfile(PlaybackRequestError):
    """The client's DeviceProfile contains a rule that has no meaning."""
