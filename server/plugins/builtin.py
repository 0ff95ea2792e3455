"""The built-in providers as plugins: bundled with Reelroom (so they work in the PyInstaller
bundle without entry-point metadata), listed by GET /Plugins, each with its configuration in a
named section (``/System/Configuration/<section>`` works too) and removable from a library's
fetcher order. They cannot be uninstalled, only disabled."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.guid import guid_from_text
from server.metadata.settings import DEFAULTS, provider_settings
from server.plugins.base import Plugin, PluginHost
from server.version import reelroom_version


class BuiltinPlugin(Plugin):
    builtin = True
    factory: Callable[[Callable[[], dict[str, Any]]], list[Any]]

    def __init__(self, config, name: str, section: str, description: str,
                 factory: Callable[[Callable[[], dict[str, Any]]], list[Any]]) -> None:
        self.config = config
        self.id = guid_from_text("reelroom-builtin-plugin", section)
        self.name = name
        self.version = reelroom_version()
        self.description = description
        self.config_section = section
        self.factory = factory

    def default_config(self) -> dict[str, Any]:
        return dict(DEFAULTS[self.config_section])

    def providers(self, host: PluginHost) -> list[Any]:
        section = self.config_section
        return self.factory(lambda: provider_settings(self.config.get(section), section))


def builtin_plugins(config, schedules_direct_client) -> list[Plugin]:
    from server.livetv.schedules_direct import SchedulesDirectListings
    from server.metadata.providers.fanart import FanartProvider
    from server.metadata.providers.musicbrainz import MusicBrainzProvider
    from server.metadata.providers.tmdb import TmdbProvider
    from server.metadata.providers.tvmaze import TvMazeProvider
    from server.subtitles.lrclib import LrcLibProvider
    from server.subtitles.opensubtitles import OpenSubtitlesProvider

    return [
        BuiltinPlugin(config, "TheMovieDb", "tmdb", "Movies, series, people and collections from TMDb (needs an "
                      "API key of your own).", lambda s: [TmdbProvider(s)]),
        BuiltinPlugin(config, "MusicBrainz", "musicbrainz", "Albums and artists from MusicBrainz, covers from the "
                      "Cover Art Archive (no key).", lambda s: [MusicBrainzProvider(s)]),
        BuiltinPlugin(config, "TVmaze", "tvmaze", "Series, seasons, episodes and their images from TVmaze (no key).",
                      lambda s: [TvMazeProvider(s)]),
        BuiltinPlugin(config, "Fanart.tv", "fanart", "Logos, clear art, banners and backdrops from fanart.tv "
                      "(needs an API key of your own).", lambda s: [FanartProvider(s)]),
        BuiltinPlugin(config, "Open Subtitles", "opensubtitles", "Subtitles from OpenSubtitles.com (needs an API "
                      "key and an account).", lambda s: [OpenSubtitlesProvider(s)]),
        BuiltinPlugin(config, "LrcLib", "lrclib", "Synced lyrics from LrcLib (no key).", lambda s: [LrcLibProvider(s)]),
        BuiltinPlugin(config, "Schedules Direct", "schedulesdirect", "TV listings from Schedules Direct (needs a "
                      "subscription).", lambda s: [SchedulesDirectListings(schedules_direct_client)]),
    ]
