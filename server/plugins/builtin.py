"""The built-in providers as plugins: bundled with Reelroom (so they work in the PyInstaller
bundle without entry-point metadata), listed by GET /Plugins, each with its configuration in a
named section (``/System/Configuration/<section>`` works too) and removable from a library's
fetcher order. They cannot be uninstalled, only disabled."""

from __future__ import annotations

import html
import importlib
import re
from collections.abc import Callable
from typing import Any

from server.guid import guid_from_text
from server.metadata.settings import DEFAULTS, provider_settings
from server.plugins.base import ConfigPage, Plugin, PluginHost
from server.version import reelroom_version

GENERATED_PAGE = "<generated settings page>"
_SECRET = ("ApiKey", "Password")


def settings_page(plugin: BuiltinPlugin) -> str:
    """A dashboard page (jellyfin-web's plugin page conventions) editing the plugin's settings
    through GET/POST /Plugins/{id}/Configuration."""
    rows = []
    for key, value in plugin.default_config().items():
        label = html.escape(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key))
        if isinstance(value, bool):
            rows.append(f'<div class="checkboxContainer"><label><input is="emby-checkbox" type="checkbox" '
                        f'data-key="{key}"/><span>{label}</span></label></div>')
        else:
            kind = "password" if key in _SECRET else "number" if isinstance(value, float) else "text"
            rows.append(f'<div class="inputContainer"><input is="emby-input" type="{kind}" data-key="{key}" '
                        f'label="{label}"/></div>')
    page_id = f"{plugin.config_section}ConfigPage"
    return f"""<div id="{page_id}" data-role="page" class="page type-interior pluginConfigurationPage"
 data-require="emby-input,emby-button,emby-checkbox">
<div data-role="content"><div class="content-primary">
<h2>{html.escape(plugin.name)}</h2><p>{html.escape(plugin.description)}</p>
<form class="reelroomSettingsForm">{''.join(rows)}
<button is="emby-button" type="submit" class="raised button-submit block"><span>Save</span></button>
</form></div></div>
<script type="text/javascript">
(function () {{
  var pluginId = "{plugin.id}";
  var page = document.querySelector("#{page_id}");
  page.addEventListener("pageshow", function () {{
    Dashboard.showLoadingMsg();
    ApiClient.getPluginConfiguration(pluginId).then(function (config) {{
      page.querySelectorAll("[data-key]").forEach(function (input) {{
        var value = config[input.getAttribute("data-key")];
        if (input.type === "checkbox") {{ input.checked = !!value; }} else {{ input.value = value == null ? "" : value; }}
      }});
      Dashboard.hideLoadingMsg();
    }});
  }});
  page.querySelector(".reelroomSettingsForm").addEventListener("submit", function (e) {{
    e.preventDefault();
    Dashboard.showLoadingMsg();
    ApiClient.getPluginConfiguration(pluginId).then(function (config) {{
      page.querySelectorAll("[data-key]").forEach(function (input) {{
        var key = input.getAttribute("data-key");
        config[key] = input.type === "checkbox" ? input.checked : input.type === "number" ? Number(input.value)
          : input.value;
      }});
      ApiClient.updatePluginConfiguration(pluginId, config).then(Dashboard.processPluginConfigurationUpdateResult);
    }});
    return false;
  }});
}})();
</script></div>
"""


class BuiltinPlugin(Plugin):
    """A built-in provider as a plugin. ``lazy_provider_kinds`` are the kinds its providers offer: the
    plugin manager builds them (and imports their module) the first time a service asks for one
    of those kinds, not at start (tests/providers/test_plugins.py checks they match)."""

    builtin = True
    factory: Callable[[Callable[[], dict[str, Any]]], list[Any]]

    def __init__(self, config, name: str, section: str, description: str, kinds: frozenset[str],
                 factory: Callable[[Callable[[], dict[str, Any]]], list[Any]]) -> None:
        self.config = config
        self.id = guid_from_text("reelroom-builtin-plugin", section)
        self.name = name
        self.version = reelroom_version()
        self.description = description
        self.config_section = section
        self.lazy_provider_kinds = kinds
        self.factory = factory

    def default_config(self) -> dict[str, Any]:
        return dict(DEFAULTS[self.config_section])

    @property
    def config_pages(self) -> tuple[ConfigPage, ...]:  # type: ignore[override]
        return (ConfigPage(name=f"{self.config_section}config", resource=GENERATED_PAGE,
                           display_name=self.name),)

    def resource(self, relative: str) -> bytes | None:
        return settings_page(self).encode() if relative == GENERATED_PAGE else None

    def providers(self, host: PluginHost) -> list[Any]:
        section = self.config_section
        return self.factory(lambda: provider_settings(self.config.get(section), section))


def _provider(module: str, name: str) -> Callable[[Callable[[], dict[str, Any]]], list[Any]]:
    """A built-in's factory: the provider class ``name`` of ``module``, imported when it is built."""

    def build(settings: Callable[[], dict[str, Any]]) -> list[Any]:
        return [getattr(importlib.import_module(module), name)(settings)]

    return build


def builtin_plugins(config, schedules_direct_client) -> list[Plugin]:
    """The built-in plugins. Each provider's module is imported when the provider is built (see
    ``BuiltinPlugin``): a server that never asks for remote metadata, subtitles or lyrics never
    loads them."""

    def listings(settings: Callable[[], dict[str, Any]]) -> list[Any]:
        from server.livetv.schedules_direct import SchedulesDirectListings

        return [SchedulesDirectListings(schedules_direct_client)]

    both = frozenset({"metadata", "image"})
    return [
        BuiltinPlugin(config, "TheMovieDb", "tmdb", "Movies, series, people and collections from TMDb (needs an "
                      "API key of your own).", both, _provider("server.metadata.providers.tmdb", "TmdbProvider")),
        BuiltinPlugin(config, "MusicBrainz", "musicbrainz", "Albums and artists from MusicBrainz, covers from the "
                      "Cover Art Archive (no key).", both,
                      _provider("server.metadata.providers.musicbrainz", "MusicBrainzProvider")),
        BuiltinPlugin(config, "TVmaze", "tvmaze", "Series, seasons, episodes and their images from TVmaze (no key).",
                      both, _provider("server.metadata.providers.tvmaze", "TvMazeProvider")),
        BuiltinPlugin(config, "Fanart.tv", "fanart", "Logos, clear art, banners and backdrops from fanart.tv "
                      "(needs an API key of your own).", frozenset({"image"}),
                      _provider("server.metadata.providers.fanart", "FanartProvider")),
        BuiltinPlugin(config, "Open Subtitles", "opensubtitles", "Subtitles from OpenSubtitles.com (needs an API "
                      "key and an account).", frozenset({"subtitles"}),
                      _provider("server.subtitles.opensubtitles", "OpenSubtitlesProvider")),
        BuiltinPlugin(config, "LrcLib", "lrclib", "Synced lyrics from LrcLib (no key).", frozenset({"lyrics"}),
                      _provider("server.subtitles.lrclib", "LrcLibProvider")),
        BuiltinPlugin(config, "Schedules Direct", "schedulesdirect", "TV listings from Schedules Direct (needs a "
                      "subscription).", frozenset({"listings"}), listings),
    ]
